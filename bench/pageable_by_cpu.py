#!/usr/bin/env python3
"""Does a pageable copy's rate depend on which CPU makes it?

On the H200 VMs, pageable copies (host<->device through the driver's staging
buffer, which the CPU fills or empties) move by 20-50% from one process to
the next, for gpuopt fit and CuPy alike, while pinned copies repeat to 1-2%
(bench/results/README.md, sessions 10 and 12): a process is "fast" or "slow"
at every size. This asks whether the CPU the process runs on is what decides.

One process pins itself to each CPU in turn (os.sched_setaffinity), twice
(CPUs in order, then in reverse, so a drift of the machine over time is told
apart from the CPU), and times on each a 256 MiB NumPy array copied to the
device and back with CuPy between CUDA events (the median of 3 copies).
--processes N repeats that in N fresh processes (a new buffer, new pages).
Prints a table of GB/s per CPU, per pass and process; --out saves it as JSON.

Usage: python3 bench/pageable_by_cpu.py [--processes 2] [--mib 256] [--out FILE.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def one_process(mib):
    import cupy
    import numpy as np
    n = mib << 20
    host = np.ones(n, np.uint8)
    dev = cupy.empty(n, cupy.uint8)
    stream = cupy.cuda.Stream(non_blocking=True)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()

    def rate(direction):
        times = []
        for _ in range(3):
            start.record(stream)
            if direction == "h2d":
                cupy.cuda.runtime.memcpyAsync(dev.data.ptr, host.ctypes.data, n, 1, stream.ptr)
            else:
                cupy.cuda.runtime.memcpyAsync(host.ctypes.data, dev.data.ptr, n, 2, stream.ptr)
            end.record(stream)
            end.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
        return n / statistics.median(times) / 1e9

    cpus = sorted(os.sched_getaffinity(0))
    rate("h2d"), rate("d2h")  # warm-up: the staging buffers, the pages
    passes = []
    for order in (cpus, cpus[::-1]):
        got = {}
        for c in order:
            os.sched_setaffinity(0, {c})
            got[c] = {"h2d": rate("h2d"), "d2h": rate("d2h")}
        passes.append(got)
    os.sched_setaffinity(0, set(cpus))
    return {"cpus": cpus, "passes": [{str(c): v for c, v in p.items()} for p in passes]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--out")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        json.dump(one_process(a.mib), sys.stdout)
        return 0
    runs = []
    for _ in range(a.processes):
        p = subprocess.run([sys.executable, __file__, "--one", "--mib", str(a.mib)], capture_output=True,
                           text=True, timeout=600)
        if p.returncode:
            sys.stderr.write(f"pageable_by_cpu: a process failed (exit {p.returncode}):\n{p.stderr[-2000:]}\n")
            return 1
        runs.append(json.loads(p.stdout))
    cpus = runs[0]["cpus"]
    head = "".join(f"  p{i + 1}/{j + 1} h2d  d2h" for i in range(len(runs)) for j in range(2))
    print(f"pageable {a.mib} MiB copies, GB/s, per CPU (process/pass):")
    print("cpu" + head)
    for c in cpus:
        row = "".join(f"  {r['passes'][j][str(c)]['h2d']:7.2f} {r['passes'][j][str(c)]['d2h']:5.2f}"
                      for r in runs for j in range(2))
        print(f"{c:3d}{row}")
    for d in ("h2d", "d2h"):
        for i, r in enumerate(runs):
            v = [p[str(c)][d] for p in r["passes"] for c in cpus]
            print(f"{d} process {i + 1}: min {min(v):.2f}, median {statistics.median(v):.2f}, max {max(v):.2f} GB/s")
    if a.out:
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"mib": a.mib, "runs": runs}, f, indent=1)
        os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
