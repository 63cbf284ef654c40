"""Explicit (FTCS) diffusion of heat in a 1024 x 1024 plate whose four edges carry
prescribed heat fluxes (Neumann conditions through ghost points), 160 time steps, the
edges updated first and then the interior, in place (NumPy baseline, float64).

Imitates: sincostanx/Titech-Undergraduate:PDE/diffusion_equation/boundary_neumann.py
(fdm(T): T[1:ny-1,0] = T[1:ny-1,0] + d*(T[1:ny-1,1] + T[1:ny-1,1] - 4*T[1:ny-1,0] + ...
- 2*dx*flux) for each edge with explicit nx-1 / ny-1 indices, then the interior
T[1:ny-1,1:nx-1] update), on a larger plate.
Writes plate.npy (1024 x 1024) and mid_row.npy (the temperature along row 512).
"""
import numpy as np

NX = NY = 1024
STEPS = 160
D = 0.2                      # alpha * dt / dx^2
DX = 1.0
FLUX_W, FLUX_E, FLUX_S, FLUX_N = -10.0, 8.0, 6.0, -10.0


def fdm(T):
    nx, ny = NX, NY
    T[1:ny-1, 0] = T[1:ny-1, 0] + D * (T[1:ny-1, 1] + T[1:ny-1, 1] - 4 * T[1:ny-1, 0]
                                       + T[0:ny-2, 0] + T[2:ny, 0] - 2 * DX * FLUX_W)
    T[1:ny-1, nx-1] = T[1:ny-1, nx-1] + D * (T[1:ny-1, nx-2] + T[1:ny-1, nx-2] - 4 * T[1:ny-1, nx-1]
                                             + T[0:ny-2, nx-1] + T[2:ny, nx-1] - 2 * DX * FLUX_E)
    T[ny-1, 1:nx-1] = T[ny-1, 1:nx-1] + D * (T[ny-1, 2:nx] + T[ny-1, 0:nx-2] - 4 * T[ny-1, 1:nx-1]
                                             + T[ny-2, 1:nx-1] + T[ny-2, 1:nx-1] - 2 * DX * FLUX_N)
    T[0, 1:nx-1] = T[0, 1:nx-1] + D * (T[0, 2:nx] + T[0, 0:nx-2] - 4 * T[0, 1:nx-1]
                                       + T[1, 1:nx-1] + T[1, 1:nx-1] - 2 * DX * FLUX_S)
    T[1:ny-1, 1:nx-1] = T[1:ny-1, 1:nx-1] + D * (T[1:ny-1, 2:nx] + T[1:ny-1, 0:nx-2] - 4 * T[1:ny-1, 1:nx-1]
                                                 + T[2:ny, 1:nx-1] + T[0:ny-2, 1:nx-1])
    return T


def main():
    T = np.zeros((NY, NX))
    T[1:NY-1, 1:NX-1] = 100.0
    yy, xx = np.mgrid[0:NY, 0:NX]
    T += 50.0 * np.exp(-((xx - 700.0) ** 2 + (yy - 300.0) ** 2) / 80.0 ** 2)   # a hot spot
    for _ in range(STEPS):
        T = fdm(T)
    np.save("plate.npy", T)
    np.save("mid_row.npy", T[NY // 2].copy())
    print(f"mean temperature {T.mean():.6f}, east edge mean {T[:, -1].mean():.6f}")


if __name__ == "__main__":
    main()
