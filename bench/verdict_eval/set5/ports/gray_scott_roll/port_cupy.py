"""CuPy port of base.py (Gray-Scott, np.roll Laplacian): the same float64 arithmetic on
device arrays, one copy in and two copies out. Writes u.npy and v.npy."""
import numpy as np
import cupy as cp

N = 1024
STEPS = 100
DU, DV, F, K, DT = 0.16, 0.08, 0.035, 0.065, 1.0


def laplacian(a):
    return (cp.roll(a, 1, 0) + cp.roll(a, -1, 0) + cp.roll(a, 1, 1) + cp.roll(a, -1, 1)
            - 4.0 * a)


def main():
    rng = np.random.default_rng(3)
    u = np.ones((N, N))
    v = np.zeros((N, N))
    for cy, cx in rng.integers(64, N - 64, (40, 2)):
        u[cy - 8:cy + 8, cx - 8:cx + 8] = 0.5
        v[cy - 8:cy + 8, cx - 8:cx + 8] = 0.25
    u += 0.02 * rng.random((N, N))
    u = cp.asarray(u)
    v = cp.asarray(v)
    for _ in range(STEPS):
        uvv = u * v * v
        u = u + DT * (DU * laplacian(u) - uvv + F * (1.0 - u))
        v = v + DT * (DV * laplacian(v) + uvv - (F + K) * v)
    np.save("u.npy", cp.asnumpy(u))
    np.save("v.npy", cp.asnumpy(v))


if __name__ == "__main__":
    main()
