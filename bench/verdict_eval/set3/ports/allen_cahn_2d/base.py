"""Phase separation by the Allen-Cahn equation u_t = eps^2 lap(u) + u - u^3 on a periodic
2048 x 2048 grid, explicit Euler with a 5-point Laplacian built from np.roll, from a
small random initial field (NumPy baseline, float64).

Imitates: kro0l1k/uni_projects:AISE_final_project/task3/understand_whatAC_does.py
(allen_cahn_step: laplacian from np.roll(u, 1) + np.roll(u, -1) - 2u, reaction u - u**3,
forward Euler u + dt * (eps^2 * laplacian + reaction)), in two dimensions.
Writes phase.npy (2048 x 2048, float64) and order.npy (per-step mean |u|, 36 values).
"""
import numpy as np

N = 2048
STEPS = 36
DX = 1.0
DT = 0.1
EPS2 = 1.5


def main():
    rng = np.random.default_rng(4)
    u = 0.05 * rng.standard_normal((N, N))
    order = np.empty(STEPS)
    for k in range(STEPS):
        lap = (np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0)
               + np.roll(u, 1, axis=1) + np.roll(u, -1, axis=1) - 4.0 * u) / (DX * DX)
        u = u + DT * (EPS2 * lap + u - u * u * u)
        order[k] = np.abs(u).mean()
    np.save("phase.npy", u)
    np.save("order.npy", order)
    print(f"final order parameter {order[-1]:.9f}, phase fraction {(u > 0).mean():.6f}")


if __name__ == "__main__":
    main()
