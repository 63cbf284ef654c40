"""Forward-Euler diffusion of a point source on a 256 x 256 grid, NumPy baseline.

Imitates serge-sans-paille/pythran:pythran/tests/cases/diffusion_numpy.py (diffuseNumpy:
tempU[1:-1, 1:-1] = u[1:-1, 1:-1] + mu * (u[2:, 1:-1] - 2 * u[1:-1, 1:-1] + ...);
u[:, :] = tempU[:, :]; tempU[:, :] = 0.0, for iterNum steps). New code. Writes u.npy
and trace.npy.
"""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np

L = 256
STEPS = 2000
MU = 0.1


def main():
    u = np.zeros((L, L))
    u[L // 2, L // 2] = 1000.0
    u[L // 4, 3 * L // 4] = 500.0
    temp = np.zeros((L, L))
    trace = np.empty(STEPS)
    for n in range(STEPS):
        temp[1:-1, 1:-1] = u[1:-1, 1:-1] + MU * (
            u[2:, 1:-1] - 2 * u[1:-1, 1:-1] + u[0:-2, 1:-1]
            + u[1:-1, 2:] - 2 * u[1:-1, 1:-1] + u[1:-1, 0:-2])
        u[:, :] = temp[:, :]
        temp[:, :] = 0.0
        trace[n] = u[L // 2, L // 2]
    np.save("u.npy", u)
    np.save("trace.npy", trace)


if __name__ == "__main__":
    main()
