"""torch.cuda.synchronize() in every iteration."""
import torch
from gpucheck import arg, report

n = arg(1, 2000)
a = torch.rand(1024, 1024, device="cuda")
torch.cuda.synchronize()
for i in range(n):
    b = torch.tanh(a * 0.5)
    torch.cuda.synchronize()  # EXPECT: sync-bound
report(iterations=n)
