"""Gray-Scott reaction-diffusion on a periodic 1024 x 1024 grid, NumPy baseline.

Imitates sambcart/GrayScott:grayscott.py (two concentration fields U and V, a discrete
Laplacian, feed rate F and kill rate k, explicit time steps) with the np.roll Laplacian.
New code. Writes u.npy and v.npy.
"""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np

N = 1024
STEPS = 100
DU, DV, F, K, DT = 0.16, 0.08, 0.035, 0.065, 1.0


def laplacian(a):
    return (np.roll(a, 1, 0) + np.roll(a, -1, 0) + np.roll(a, 1, 1) + np.roll(a, -1, 1)
            - 4.0 * a)


def main():
    rng = np.random.default_rng(3)
    u = np.ones((N, N))
    v = np.zeros((N, N))
    for cy, cx in rng.integers(64, N - 64, (40, 2)):
        u[cy - 8:cy + 8, cx - 8:cx + 8] = 0.5
        v[cy - 8:cy + 8, cx - 8:cx + 8] = 0.25
    u += 0.02 * rng.random((N, N))
    for _ in range(STEPS):
        uvv = u * v * v
        u = u + DT * (DU * laplacian(u) - uvv + F * (1.0 - u))
        v = v + DT * (DV * laplacian(v) + uvv - (F + K) * v)
    np.save("u.npy", u)
    np.save("v.npy", v)


if __name__ == "__main__":
    main()
