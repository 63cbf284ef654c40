"""Round trips in a loop in PyTorch: .item() every iteration."""
import torch
from gpucheck import arg, report

n = arg(1, 500)
x = torch.rand(1 << 20, device="cuda")
torch.cuda.synchronize()
for i in range(n):
    x = x * 0.999 + 0.001
    err = x[0].item()  # EXPECT: roundtrip-storm
report(iterations=n)
