"""A compute-bound matrix loop, synchronized once: nothing to fix. # EXPECT: none"""
import cupy as cp
from gpucheck import CupyEvents, arg, report

n = arg(1, 30)
a = cp.random.rand(8192, 8192, dtype=cp.float32)
c = a @ a  # warm-up (cuBLAS handle, kernel selection)
cp.cuda.Device().synchronize()
with CupyEvents() as ev:
    for i in range(n):
        c = a @ a  # EVENTS: kernel
report(matmuls=n, kernel_event_ms=ev.ms)
