#!/usr/bin/env python3
"""The gpuopt executable exports no function of its own.

A function the executable exports takes the place of a shared library's
function of the same name for every library in the process: scan's global
`bind` once answered libcuda's call to libc's bind() inside cuInit, and
gpuopt doctor, fit and trace crashed on every GPU machine. The build hides
every symbol (-fvisibility=hidden); this reads the executable's dynamic
symbol table (nm -D --defined-only) and fails on any function in it.

Usage: check_exports.py PATH_TO_GPUOPT
"""
import subprocess
import sys

ALLOWED = {"_IO_stdin_used", "_init", "_fini", "_start", "__bss_start", "_edata", "_end", "main"}


def main():
    exe = sys.argv[1]
    out = subprocess.run(["nm", "-D", "--defined-only", exe], capture_output=True, text=True)
    if out.returncode != 0:
        print(f"check_exports: nm {exe}: {out.stderr.strip()}", file=sys.stderr)
        return 2
    bad = []
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        kind, name = parts[1], parts[2].split("@")[0]
        if kind in "TtWwi" and name not in ALLOWED and not name.startswith("__"):
            bad.append(name)
    if bad:
        print(f"check_exports: {exe} exports {len(bad)} function(s) that would take the place of a "
              f"library's: {', '.join(sorted(bad))}", file=sys.stderr)
        return 1
    print(f"check_exports: {exe} exports no function of its own")
    return 0


if __name__ == "__main__":
    sys.exit(main())
