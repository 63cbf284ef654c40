"""A compute-bound matrix loop in PyTorch, synchronized once. # EXPECT: none"""
import torch
from gpucheck import TorchEvents, arg, report

n = arg(1, 30)
a = torch.rand(8192, 8192, device="cuda")
c = a @ a
torch.cuda.synchronize()
with TorchEvents() as ev:
    for i in range(n):
        c = a @ a  # EVENTS: kernel
report(matmuls=n, kernel_event_ms=ev.ms)
