"""GPU port of base.py with CuPy: the plate is built on the host as before, copied to the
device once, and the 160 FTCS steps run there with the same in-place edge-then-interior
update order; the plate and the middle row come back at the end.

In translating the edge updates the port switched from the baseline's explicit
nx-1 / nx-2 indices to negative indices and wrote the east edge one column too far in
(-2 where the baseline has nx-1, -3 where it has nx-2): the true east boundary column is
never updated and the last interior column gets the boundary formula, so the plate
near the east edge (and the heat entering through it) is wrong.

Imitates: sincostanx/Titech-Undergraduate:PDE/diffusion_equation/boundary_neumann.py
(slice-based FTCS with Neumann edges), numpy swapped for cupy.
"""
import cupy as cp
import numpy as np

NX = NY = 1024
STEPS = 160
D = 0.2
DX = 1.0
FLUX_W, FLUX_E, FLUX_S, FLUX_N = -10.0, 8.0, 6.0, -10.0


def fdm(T):
    T[1:-1, 0] = T[1:-1, 0] + D * (T[1:-1, 1] + T[1:-1, 1] - 4 * T[1:-1, 0]
                                   + T[:-2, 0] + T[2:, 0] - 2 * DX * FLUX_W)
    T[1:-1, -2] = T[1:-1, -2] + D * (T[1:-1, -3] + T[1:-1, -3] - 4 * T[1:-1, -2]
                                     + T[:-2, -2] + T[2:, -2] - 2 * DX * FLUX_E)
    T[-1, 1:-1] = T[-1, 1:-1] + D * (T[-1, 2:] + T[-1, :-2] - 4 * T[-1, 1:-1]
                                     + T[-2, 1:-1] + T[-2, 1:-1] - 2 * DX * FLUX_N)
    T[0, 1:-1] = T[0, 1:-1] + D * (T[0, 2:] + T[0, :-2] - 4 * T[0, 1:-1]
                                   + T[1, 1:-1] + T[1, 1:-1] - 2 * DX * FLUX_S)
    T[1:-1, 1:-1] = T[1:-1, 1:-1] + D * (T[1:-1, 2:] + T[1:-1, :-2] - 4 * T[1:-1, 1:-1]
                                         + T[2:, 1:-1] + T[:-2, 1:-1])
    return T


def main():
    T = np.zeros((NY, NX))
    T[1:NY-1, 1:NX-1] = 100.0
    yy, xx = np.mgrid[0:NY, 0:NX]
    T += 50.0 * np.exp(-((xx - 700.0) ** 2 + (yy - 300.0) ** 2) / 80.0 ** 2)
    T = cp.asarray(T)
    for _ in range(STEPS):
        T = fdm(T)
    T_h = cp.asnumpy(T)
    np.save("plate.npy", T_h)
    np.save("mid_row.npy", T_h[NY // 2].copy())
    print(f"mean temperature {T_h.mean():.6f}, east edge mean {T_h[:, -1].mean():.6f}")


if __name__ == "__main__":
    main()
