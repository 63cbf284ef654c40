"""Training of a 2-D Fourier Neural Operator (Darcy-flow-like: permeability field in,
pressure field out) at 128 x 128 resolution, with CPU offloading of activations: the
model's forward is wrapped in torch.autograd.graph.save_on_cpu(pin_memory=True), so every
tensor autograd saves for the backward pass is copied to pinned host memory during the
forward pass and copied back to the GPU during the backward pass.

Imitates: neuraloperator/neuraloperator:scripts/cpuoffload.md (wrap_forward_with_offload:
`with torch.autograd.graph.save_on_cpu(pin_memory=True): return forward_fn(*args,
**kwargs)`, then `model.forward = wrap_forward_with_offload(model.forward)` and an
unchanged training loop) on an FNO with spectral convolutions as in the neuralop FNO.

Each step saves about 0.75 GB of activations (the inputs of every 1x1 convolution and
GELU at 16 x 32 x 128 x 128 and of the 128-channel projection), so about 1.5 GB crosses
PCIe per step through pinned buffers (~30 ms, the device-to-host half of it in blocking
copies) against one or two milliseconds of FFTs, small einsums and 1x1 convolutions, on
a problem that fits the GPU's memory many times over: transfer-bound.
"""
from functools import wraps

import torch
import torch.nn as nn
import torch.nn.functional as F

RES = 128
BATCH = 16
WIDTH = 32
MODES = 12
N_LAYERS = 4
N_TRAIN = 64
N_STEPS = 40


class SpectralConv2d(nn.Module):
    def __init__(self, cin, cout, modes):
        super().__init__()
        self.modes = modes
        scale = 1.0 / (cin * cout)
        self.w1 = nn.Parameter(scale * torch.randn(cin, cout, modes, modes, dtype=torch.cfloat))
        self.w2 = nn.Parameter(scale * torch.randn(cin, cout, modes, modes, dtype=torch.cfloat))

    def forward(self, x):
        b, _, h, w = x.shape
        m = self.modes
        x_ft = torch.fft.rfft2(x)
        out_ft = torch.zeros(b, self.w1.shape[1], h, w // 2 + 1, dtype=torch.cfloat, device=x.device)
        out_ft[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, :m, :m], self.w1)
        out_ft[:, :, -m:, :m] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, -m:, :m], self.w2)
        return torch.fft.irfft2(out_ft, s=(h, w))


class FNO2d(nn.Module):
    def __init__(self):
        super().__init__()
        self.lift = nn.Conv2d(3, WIDTH, 1)
        self.spectral = nn.ModuleList(SpectralConv2d(WIDTH, WIDTH, MODES) for _ in range(N_LAYERS))
        self.skip = nn.ModuleList(nn.Conv2d(WIDTH, WIDTH, 1) for _ in range(N_LAYERS))
        self.proj1 = nn.Conv2d(WIDTH, 128, 1)
        self.proj2 = nn.Conv2d(128, 1, 1)

    def forward(self, a):
        x = self.lift(a)
        for spec, skip in zip(self.spectral, self.skip):
            x = F.gelu(spec(x) + skip(x))
        return self.proj2(F.gelu(self.proj1(x)))


def wrap_forward_with_offload(forward_fn):
    @wraps(forward_fn)
    def wrapped_forward(*args, **kwargs):
        with torch.autograd.graph.save_on_cpu(pin_memory=True):
            return forward_fn(*args, **kwargs)
    return wrapped_forward


def make_data(device, gen):
    """Smooth random permeability fields and a cheap surrogate 'pressure' target."""
    coarse = torch.randn(N_TRAIN, 1, RES // 8, RES // 8, device=device, generator=gen)
    perm = torch.exp(F.interpolate(coarse, size=(RES, RES), mode="bicubic", align_corners=False))
    grid = torch.linspace(0, 1, RES, device=device)
    gx, gy = torch.meshgrid(grid, grid, indexing="ij")
    inputs = torch.cat([perm, gx.expand(N_TRAIN, 1, RES, RES), gy.expand(N_TRAIN, 1, RES, RES)], dim=1)
    target = F.avg_pool2d(1.0 / perm, 9, stride=1, padding=4) * (gx * (1 - gx) * gy * (1 - gy))
    return inputs, target


def main():
    device = torch.device("cuda")
    torch.manual_seed(0)
    gen = torch.Generator(device=device).manual_seed(2)
    inputs, target = make_data(device, gen)
    model = FNO2d().to(device)
    model.forward = wrap_forward_with_offload(model.forward)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    perm = torch.randperm(N_TRAIN, device=device, generator=gen)
    running = torch.zeros((), device=device)
    for step in range(N_STEPS):
        idx = perm[(step * BATCH) % N_TRAIN:(step * BATCH) % N_TRAIN + BATCH]
        out = model(inputs[idx])
        loss = F.mse_loss(out, target[idx]) / target[idx].pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        running += loss.detach()
    print(f"steps {N_STEPS}, mean relative L2 loss {running.item() / N_STEPS:.4f}")


if __name__ == "__main__":
    main()
