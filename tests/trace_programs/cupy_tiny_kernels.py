"""Thousands of tiny kernels: one element-wise op per launch on a small array."""
import cupy as cp
from gpucheck import arg, report

n = arg(1, 20000)
x = cp.ones(1024, dtype=cp.float32)
cp.cuda.Device().synchronize()
for i in range(n):
    x += 1.0  # EXPECT: launch-bound
cp.cuda.Device().synchronize()
report(launches=n)
