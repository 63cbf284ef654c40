"""GPU port of base.py with CuPy: the initial field comes from the same seeded NumPy
generator and is copied to the device once; the 36 explicit steps (rolls, Laplacian,
reaction, update and the order parameter, all float64) run there, the order parameter
is kept in a device vector, and two arrays come back at the end.

Imitates: kro0l1k/uni_projects:AISE_final_project/task3/understand_whatAC_does.py
(np.roll Laplacian + forward Euler), with np.roll -> cp.roll on device arrays.
"""
import cupy as cp
import numpy as np

N = 2048
STEPS = 36
DX = 1.0
DT = 0.1
EPS2 = 1.5


def main():
    rng = np.random.default_rng(4)
    u = cp.asarray(0.05 * rng.standard_normal((N, N)))
    order = cp.empty(STEPS)
    for k in range(STEPS):
        lap = (cp.roll(u, 1, axis=0) + cp.roll(u, -1, axis=0)
               + cp.roll(u, 1, axis=1) + cp.roll(u, -1, axis=1) - 4.0 * u) / (DX * DX)
        u = u + DT * (EPS2 * lap + u - u * u * u)
        order[k] = cp.abs(u).mean()
    u_h = cp.asnumpy(u)
    order_h = cp.asnumpy(order)
    np.save("phase.npy", u_h)
    np.save("order.npy", order_h)
    print(f"final order parameter {order_h[-1]:.9f}, phase fraction {(u_h > 0).mean():.6f}")


if __name__ == "__main__":
    main()
