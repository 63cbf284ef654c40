"""Thousands of tiny kernels in PyTorch."""
import torch
from gpucheck import arg, report

n = arg(1, 20000)
x = torch.ones(1024, device="cuda")
torch.cuda.synchronize()
for i in range(n):
    x.add_(1.0)  # EXPECT: launch-bound
torch.cuda.synchronize()
report(launches=n)
