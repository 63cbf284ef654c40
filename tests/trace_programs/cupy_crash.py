"""Crashes midway (a real segmentation fault) after round trips in a loop."""
import ctypes
import cupy as cp
from gpucheck import arg, report

n = arg(1, 300)
x = cp.random.rand(1 << 20)
for i in range(n):
    x = x * 0.999 + 0.001
    err = float(x[0])  # EXPECT: roundtrip-storm
report(iterations=n, crashing=True)
ctypes.string_at(0)  # SIGSEGV
