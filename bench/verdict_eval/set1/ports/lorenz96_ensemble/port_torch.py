"""GPU port of base.py with PyTorch: the spun-up truth and the perturbed
members are prepared with NumPy as before, then the ensemble goes to the GPU
as float32 (`.float()`, PyTorch's default dtype) and is advanced there. Fast,
but Lorenz-96 is chaotic: float32 rounding (1e-7) grows to about 1e-2 within
the 60 RK4 steps, so the outputs are not the float64 baseline's.

Imitates: samhatfield/lorenz96-ensrf:python/lorenz96.py (RK4 Lorenz-96 with
rolls) ported to torch the usual way: torch.roll, from_numpy(...).float().to(device).
"""
import numpy as np
import torch

MEMBERS = 20000
NX = 40
F = 8.0
DT = 0.05
SPINUP = 500
STEPS = 60
device = torch.device("cuda")


def dxdt_np(x):
    return (np.roll(x, -1, axis=-1) - np.roll(x, 2, axis=-1)) * np.roll(x, 1, axis=-1) - x + F


def rk4_np(x):
    k1 = dxdt_np(x)
    k2 = dxdt_np(x + 0.5 * DT * k1)
    k3 = dxdt_np(x + 0.5 * DT * k2)
    k4 = dxdt_np(x + DT * k3)
    return x + (DT / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def dxdt(x):
    return (torch.roll(x, -1, dims=-1) - torch.roll(x, 2, dims=-1)) * torch.roll(x, 1, dims=-1) - x + F


def rk4(x):
    k1 = dxdt(x)
    k2 = dxdt(x + 0.5 * DT * k1)
    k3 = dxdt(x + 0.5 * DT * k2)
    k4 = dxdt(x + DT * k3)
    return x + (DT / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def main():
    truth = np.full(NX, F)
    truth[19] += 0.008
    for _ in range(SPINUP):
        truth = rk4_np(truth)
    rng = np.random.default_rng(96)
    ens0 = truth + 0.5 * rng.standard_normal((MEMBERS, NX))
    ens = torch.from_numpy(ens0).float().to(device)
    mean = torch.zeros((STEPS, NX), device=device)
    with torch.no_grad():
        for k in range(STEPS):
            ens = rk4(ens)
            mean[k] = ens.mean(dim=0)
    np.save("ensemble.npy", ens.double().cpu().numpy())
    np.save("mean.npy", mean.double().cpu().numpy())
    print(f"members={MEMBERS} steps={STEPS} spread={float(ens.std(dim=0, unbiased=False).mean()):.6f}")


if __name__ == "__main__":
    main()
