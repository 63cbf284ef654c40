#!/usr/bin/env python3
"""What the tracer's Python-line lookup costs, without a GPU: a loop of NVTX
push / pop (the tracer is NVTX's tool too, and charges each range to its line
by the same lookup the CUDA callbacks use) at a shallow and a deep Python
stack, under two tracer libraries taking turns, and plainly.

Usage: trace_site_lookup.py --gpuopt PATH --tracer A.so [--tracer B.so]
                            [--python PY] [--rounds 8] [--n 100000]
Prints the median ns per push + pop for each library and depth, and B / A.
Needs the nvtx package in PY (scripts/setup.sh puts it in .venv)."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

PROGRAM = """import sys, time, nvtx
depth, n = int(sys.argv[1]), int(sys.argv[2])
push, pop = nvtx.push_range, nvtx.pop_range
def loop():
    t0 = time.perf_counter()
    for _ in range(n):
        push("r"); pop()
    return time.perf_counter() - t0
def rec(d):
    return rec(d - 1) if d > 0 else loop()
loop()
print(f"{rec(depth) / n * 1e9:.1f} ns per push+pop")
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuopt", required=True)
    ap.add_argument("--tracer", action="append", required=True)
    ap.add_argument("--python", default=os.path.join(os.path.dirname(__file__), "..", ".venv", "bin", "python"))
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--depths", default="2,60")
    a = ap.parse_args()
    depths = [int(d) for d in a.depths.split(",")]
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(PROGRAM)
    res = {}
    for _ in range(a.rounds):
        for lib in ["plain", *a.tracer]:
            for d in depths:
                cmd = [a.python, f.name, str(d), str(a.n)]
                if lib != "plain":
                    cmd = [a.gpuopt, "trace", "-q", "--tracer", lib, "--", *cmd]
                p = subprocess.run(cmd, capture_output=True, text=True)
                m = re.search(r"([\d.]+) ns per", p.stdout + p.stderr)
                if not m:
                    sys.exit(f"no timing from {' '.join(cmd)}:\n{p.stderr[-2000:]}")
                res.setdefault((lib, d), []).append(float(m.group(1)))
    os.unlink(f.name)
    med = {k: statistics.median(v) for k, v in res.items()}
    print(f"median ns per NVTX push + pop over {a.rounds} interleaved rounds of {a.n}:")
    for lib in ["plain", *a.tracer]:
        print(f"  {os.path.basename(lib):28s} " + "  ".join(f"depth {d}: {med[(lib, d)]:7.1f}" for d in depths))
    if len(a.tracer) == 2:
        A, B = a.tracer
        print("  B / A: " + "  ".join(f"depth {d}: {med[(B, d)] / med[(A, d)]:.3f}" for d in depths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
