#!/usr/bin/env python3
"""How scan's time grows with the distinct names of GPU code (issue 25): a
loop holding N assignment lines, each to a new name,

    import cupy as cp
    for i in range(10):
        a1 = cp.zeros(3)
        a2 = a1 + 1
        ...
        aN = aN-1 + 1

for N = 2k, 4k, 8k, 16k, scanned by the flow model (GPU code), in rounds
that take the sizes in turn; prints the median time of each, the whole
process's and the scan's own (its JSON summary's "seconds": no process start,
no knowledge loading), and the ratio of the largest to the smallest next to
the ratio of their sizes (8x), measured in the same run: near-linear scaling
gives a time ratio near the size ratio (less for the process, whose start
costs the same at every size), quadratic its square (64x). --shape branch puts each assignment under an
`if` (a branch joins the names), the state copied at each.

Usage: scan_names.py [--gpuopt build/src/gpuopt] [--rounds 3] [--sizes 2000,4000,8000,16000]
                     [--shape assign|branch]
Every file must be analysed to its end (no notice that the flow model's work
budget ran out): a cut-short analysis would time less than the whole."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def program(n, shape):
    lines = ["import cupy as cp", "", "for i in range(10):", "    a1 = cp.zeros(3)"]
    for k in range(2, n + 1):
        if shape == "branch":
            lines += [f"    if i > {k % 7}:", f"        a{k} = a{k - 1} + 1", "    else:", f"        a{k} = a{k - 1}"]
        else:
            lines.append(f"    a{k} = a{k - 1} + 1")
    return "\n".join(lines) + "\n"


def scan_seconds(gpuopt, path):
    """(the process's wall time, the scan's own) for one scan of path."""
    env = dict(os.environ, XDG_CACHE_HOME=tempfile.gettempdir())
    t0 = time.monotonic()
    p = subprocess.run([gpuopt, "scan", "--no-cache", "-j", "1", "-f", "json", path], capture_output=True,
                       text=True, env=env)
    took = time.monotonic() - t0
    if p.returncode not in (0, 1):
        sys.exit(f"gpuopt scan {path} failed ({p.returncode}):\n{p.stderr}")
    doc = json.loads(p.stdout)
    if doc["notices"] or doc["errors"]:
        sys.exit(f"{path} was not analysed whole: {doc['notices'] or doc['errors']}")
    return took, doc["summary"]["seconds"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuopt", default=os.path.join(os.path.dirname(__file__), "..", "build", "src", "gpuopt"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default="2000,4000,8000,16000")
    ap.add_argument("--shape", choices=["assign", "branch"], default="assign")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="gpuopt-scan-names-") as d:
        paths = {}
        for n in sizes:
            paths[n] = os.path.join(d, f"names{n}.py")
            with open(paths[n], "w") as f:
                f.write(program(n, a.shape))
        times = {n: [] for n in sizes}
        for _ in range(a.rounds):
            for n in sizes:
                times[n].append(scan_seconds(a.gpuopt, paths[n]))
    print(f"gpuopt scan, a loop of N {a.shape} lines, median of {a.rounds} rounds (process / the scan's own):")
    med = {}
    for n in sizes:
        med[n] = tuple(statistics.median(t[i] for t in times[n]) for i in (0, 1))
        print(f"  N = {n:6d}: {med[n][0]:8.3f} s / {med[n][1]:8.3f} s")
    lo, hi = sizes[0], sizes[-1]
    print(f"time ratio {hi}/{lo}: {med[hi][0] / med[lo][0]:.1f}x / {med[hi][1] / med[lo][1]:.1f}x "
          f"for {hi / lo:.0f}x the lines (linear ~{hi / lo:.0f}x, quadratic ~{(hi / lo) ** 2:.0f}x)")


if __name__ == "__main__":
    main()
