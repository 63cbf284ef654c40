"""Crank-Nicolson time stepping of 1-D diffusion for a batch of 4096 independent rods with
different conductivity profiles (the coarse physics solver of a surrogate model), each
implicit step solved with a batched Thomas algorithm written as a Python loop over the
grid points.

Imitates: csohara/Practice_Module:src/peds_model/T_Alg.py (thomas_algorithm: batched
tensors of shape (B, N); forward elimination `for i in range(1, N)` updating b[:, i] and
f[:, i] column by column, then back substitution `for i in reversed(range(N - 1))`).

Every grid point costs a handful of element-wise kernels on one 4096-element column, a
couple of microseconds of GPU work each, while each PyTorch launch costs several times
that on the host: over 10,000 tiny kernels per solve, launch-bound.
"""
import torch

BATCH = 4096
N = 1024
N_STEPS = 14
DT = 2.0e-5
DTYPE = torch.float64


def thomas_algorithm(a, b, c, f):
    """Solves a batch of tridiagonal systems; a: sub-, b: main, c: super-diagonal, f: rhs."""
    B, N = b.shape
    b, f = b.clone(), f.clone()
    u = torch.zeros_like(f)
    for i in range(1, N):
        w = a[:, i - 1] / b[:, i - 1]
        b[:, i] = b[:, i] - w * c[:, i - 1]
        f[:, i] = f[:, i] - w * f[:, i - 1]
    u[:, -1] = f[:, -1] / b[:, -1]
    for i in reversed(range(N - 1)):
        u[:, i] = (f[:, i] - c[:, i] * u[:, i + 1]) / b[:, i]
    return u


def main():
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(3)
    x = torch.linspace(0.0, 1.0, N, device=dev, dtype=DTYPE)
    h = 1.0 / (N - 1)
    # per-rod conductivity: smooth random profile, strictly positive
    modes = torch.randn(BATCH, 4, device=dev, dtype=DTYPE, generator=g)
    kappa = 1.0 + 0.4 * torch.tanh(sum(modes[:, k:k + 1] * torch.sin((k + 1) * torch.pi * x) for k in range(4)))
    k_face = 0.5 * (kappa[:, 1:] + kappa[:, :-1])                       # (B, N-1)
    r = DT / (2.0 * h * h)
    # (I - r K) u^{n+1} = (I + r K) u^n, Dirichlet u = 0 at both ends
    lower = -r * k_face[:, :]                                            # a[:, i-1] couples i to i-1
    upper = -r * k_face[:, :]
    diag = torch.ones(BATCH, N, device=dev, dtype=DTYPE)
    diag[:, 1:-1] += r * (k_face[:, 1:] + k_face[:, :-1])
    upper[:, 0] = 0.0
    lower[:, -1] = 0.0

    u = torch.exp(-((x - 0.5) / 0.1) ** 2).expand(BATCH, N).contiguous()
    for _ in range(N_STEPS):
        lap = torch.zeros_like(u)
        lap[:, 1:-1] = k_face[:, 1:] * (u[:, 2:] - u[:, 1:-1]) - k_face[:, :-1] * (u[:, 1:-1] - u[:, :-2])
        rhs = u + r * lap
        rhs[:, 0] = 0.0
        rhs[:, -1] = 0.0
        u = thomas_algorithm(lower, diag, upper, rhs)

    print("rods", BATCH, "points", N, "steps", N_STEPS,
          "mean heat %.6e" % u.mean().item(), "max %.6e" % u.max().item())


if __name__ == "__main__":
    main()
