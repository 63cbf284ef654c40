"""Rotating shallow-water dynamical core on a doubly periodic 2048 x 2048 C-grid, stepped
with forward-backward time integration: each stencil program is one CuPy kernel, and
every program is wrapped in a decorator that synchronizes the device after the call.

Imitates: C2SM/icon4py:model/driver/src/icon4py/model/driver/driver.py (the time loop
calls the dycore programs and then device_utils.sync(self.backend) every step) together
with device_utils.synchronized_function (see cp_swe_sync_helper.py), which the
benchmarking code wraps around each stencil program.

Each stencil is 10-25 microseconds of GPU work, but after each one the host waits in
cudaDeviceSynchronize and only then launches the next, so the GPU idles at every
program boundary (five syncs a step for 6000 steps): sync-bound.
"""
import cupy as cp
import numpy as np

from cp_swe_sync_helper import sync, synchronized

NX = NY = 2048
N_STEPS = 6000
DX = 5.0e3
DT = 20.0
G = 9.81
F0 = 1.0e-4
H0 = 100.0
NU = 0.02                  # Shapiro-like smoothing weight

_fluxes = cp.ElementwiseKernel(
    'raw float32 h, raw float32 u, raw float32 v, int32 nx, int32 ny',
    'float32 fx, float32 fy',
    '''
    int x = i % nx, y = i / nx;
    int xp = (x + 1) % nx, yp = (y + 1) % ny;
    fx = 0.5f * (h[i] + h[y * nx + xp]) * u[i];
    fy = 0.5f * (h[i] + h[yp * nx + x]) * v[i];
    ''', 'swe_fluxes')

_continuity = cp.ElementwiseKernel(
    'raw float32 h, raw float32 fx, raw float32 fy, float32 c, int32 nx, int32 ny',
    'float32 h_new',
    '''
    int x = i % nx, y = i / nx;
    int xm = (x + nx - 1) % nx, ym = (y + ny - 1) % ny;
    h_new = h[i] - c * (fx[i] - fx[y * nx + xm] + fy[i] - fy[ym * nx + x]);
    ''', 'swe_continuity')

_momentum = cp.ElementwiseKernel(
    'raw float32 h, raw float32 u, raw float32 v, float32 gc, float32 fdt, int32 nx, int32 ny',
    'float32 u_new, float32 v_new',
    '''
    int x = i % nx, y = i / nx;
    int xp = (x + 1) % nx, yp = (y + 1) % ny, xm = (x + nx - 1) % nx, ym = (y + ny - 1) % ny;
    float v_at_u = 0.25f * (v[i] + v[y * nx + xp] + v[ym * nx + x] + v[ym * nx + xp]);
    float u_at_v = 0.25f * (u[i] + u[yp * nx + x] + u[y * nx + xm] + u[yp * nx + xm]);
    u_new = u[i] - gc * (h[y * nx + xp] - h[i]) + fdt * v_at_u;
    v_new = v[i] - gc * (h[yp * nx + x] - h[i]) - fdt * u_at_v;
    ''', 'swe_momentum')

_smooth = cp.ElementwiseKernel(
    'raw float32 h, float32 nu, int32 nx, int32 ny',
    'float32 h_out',
    '''
    int x = i % nx, y = i / nx;
    int xp = (x + 1) % nx, yp = (y + 1) % ny, xm = (x + nx - 1) % nx, ym = (y + ny - 1) % ny;
    h_out = h[i] + nu * (h[y * nx + xp] + h[y * nx + xm] + h[yp * nx + x] + h[ym * nx + x] - 4.0f * h[i]);
    ''', 'swe_smooth')


@synchronized()
def compute_fluxes(h, u, v, fx, fy):
    _fluxes(h, u, v, np.int32(NX), np.int32(NY), fx, fy)


@synchronized()
def update_height(h, fx, fy, h_new):
    _continuity(h, fx, fy, np.float32(DT / DX), np.int32(NX), np.int32(NY), h_new)


@synchronized()
def update_momentum(h, u, v, u_new, v_new):
    _momentum(h, u, v, np.float32(G * DT / DX), np.float32(F0 * DT), np.int32(NX), np.int32(NY), u_new, v_new)


@synchronized()
def smooth_height(h, h_out):
    _smooth(h, np.float32(NU), np.int32(NX), np.int32(NY), h_out)


def main():
    y, x = cp.meshgrid(cp.arange(NY, dtype=cp.float32), cp.arange(NX, dtype=cp.float32), indexing="ij")
    h = H0 + 2.0 * cp.exp(-(((x - NX / 2) / 60.0) ** 2 + ((y - NY / 2) / 60.0) ** 2))
    h = h.astype(cp.float32)
    u = cp.zeros_like(h)
    v = cp.zeros_like(h)
    fx, fy, h_new, u_new, v_new = (cp.empty_like(h) for _ in range(5))

    for step in range(N_STEPS):
        compute_fluxes(h, u, v, fx, fy)
        update_height(h, fx, fy, h_new)
        update_momentum(h_new, u, v, u_new, v_new)
        smooth_height(h_new, h)
        u, u_new = u_new, u
        v, v_new = v_new, v
        sync()

    energy = 0.5 * (h * (u * u + v * v)).sum() + 0.5 * G * ((h - H0) ** 2).sum()
    print("steps", N_STEPS, "mass %.6e" % float(h.sum(dtype=cp.float64)), "energy %.6e" % float(energy))


if __name__ == "__main__":
    main()
