"""A synchronize in every iteration: the GPU's queue drains each time."""
import cupy as cp
from gpucheck import arg, report

n = arg(1, 2000)
a = cp.random.rand(1024, 1024, dtype=cp.float32)
cp.cuda.Device().synchronize()
for i in range(n):
    b = cp.tanh(a * 0.5)
    cp.cuda.Device().synchronize()  # EXPECT: sync-bound
report(iterations=n)
