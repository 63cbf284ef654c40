"""Round trips in a loop: a convergence check copies one value back every iteration."""
import cupy as cp
from gpucheck import arg, report

n = arg(1, 500)
x = cp.random.rand(1 << 20)
cp.cuda.Device().synchronize()
for i in range(n):
    x = x * 0.999 + 0.001
    err = float(x[0])  # EXPECT: roundtrip-storm
    if err < -1:
        break
report(iterations=n)
