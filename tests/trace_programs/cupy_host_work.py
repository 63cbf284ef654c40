"""CPU work between GPU calls: the GPU waits while numpy sorts on the host."""
import numpy as np
import cupy as cp
from gpucheck import arg, report

n = arg(1, 40)
a = cp.random.rand(2048, 2048, dtype=cp.float32)
host = np.random.rand(400_000)
cp.cuda.Device().synchronize()
for i in range(n):
    y = a @ a  # EXPECT: gpu-starved
    s = np.sort(host)  # host work the GPU waits for
    a = y * (1.0 / 2048)
cp.cuda.Device().synchronize()
report(iterations=n)
