#!/usr/bin/env python3
"""Peak memory of `gpuopt trace show` on a big saved trace, as a ratio to the
file's size.

Usage: trace_show_memory.py --gpuopt PATH [--size MB] [--keep] [TRACE.json]
Without TRACE, makes one of --size MB (default 85) with trace_big.py in a
temporary directory. Runs `gpuopt trace show -q TRACE` (text, then
--format json, then -o COPY: saving it again) and prints, for each, the
peak resident set size of the gpuopt process (getrusage of that child,
ru_maxrss), the wall time and peak / file size."""
import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(argv):
    """(exit status, peak RSS in bytes, wall seconds) of one run of argv."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode not in (0, 1):
        sys.exit(f"trace_show_memory: {' '.join(argv)} exited {p.returncode}: {err}")
    return p.returncode, ru.ru_maxrss * 1024, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpuopt", required=True)
    ap.add_argument("--size", type=float, default=85.0)
    ap.add_argument("--keep", action="store_true", help="leave the generated trace (its path is printed)")
    ap.add_argument("trace", nargs="?")
    a = ap.parse_args()
    tmp = None
    path = a.trace
    if not path:
        tmp = tempfile.mkdtemp(prefix="gpuopt-bigtrace-")
        path = os.path.join(tmp, "big.json")
        subprocess.run([sys.executable, os.path.join(HERE, "trace_big.py"), "--size", str(a.size), path],
                       check=True)
    size = os.path.getsize(path)
    copy = os.path.join(tempfile.mkdtemp(prefix="gpuopt-bigtrace-copy-"), "copy.json")
    try:
        for what, extra in (("--format text", ["--format", "text"]), ("--format json", ["--format", "json"]),
                            ("-o COPY", ["-o", copy])):
            rc, peak, wall = measure([a.gpuopt, "trace", "show", "-q", *extra, path])
            print(f"trace show {what}: file {size / 1e6:.1f} MB, peak RSS {peak / 1e6:.1f} MB "
                  f"= {peak / size:.2f} x the file, {wall:.2f} s")
    finally:
        if os.path.exists(copy):
            os.unlink(copy)
        os.rmdir(os.path.dirname(copy))
        if tmp and not a.keep:
            os.unlink(path)
            os.rmdir(tmp)
        elif tmp:
            print(f"kept {path}")


if __name__ == "__main__":
    main()
