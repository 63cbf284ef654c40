"""A small MLP trained step by step: the backward pass's kernels are launched
by PyTorch's autograd engine from its own thread (no Python frame there)."""
import torch
from gpucheck import arg, report

n = arg(1, 300)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(256, 64, device="cuda")
y = torch.randn(256, 1, device="cuda")
for i in range(n):
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()  # its kernels are launched from the autograd engine's thread
    opt.step()
torch.cuda.synchronize()
print("loss %.4f" % loss.item())
report(iterations=n)
