"""2-D TE FDTD in numba.cuda on a small waveguide grid, Ey lines recorded at probes.

Imitates: bmguiana/OIDT:GPU/FDTD_2D_TE/s-parameter_extraction/fdtd_main.py (a time
loop that launches ``update_ex``/``update_ey``/``update_hz``/``update_source`` kernels
and then one ``map_efield_yline``-style kernel per probe line every step, with the
source value taken from a host array as a scalar argument).

The grid is 128 x 128, so each kernel runs a few microseconds, shorter than it takes
to launch it from Python; six probe lines are recorded by a kernel launched from a
loop, which makes the probe launch the most frequent one (6 per step, 2500 steps).
"""
import math

import numpy as np
from numba import cuda

NX = NY = 128
NT = 2500
PROBE_COLS = (20, 36, 52, 76, 92, 108)
TPB = (8, 32)


@cuda.jit
def update_ex(ex, hz, cb):
    i, j = cuda.grid(2)
    if i < ex.shape[0] and j > 0 and j < ex.shape[1]:
        ex[i, j] += cb * (hz[i, j] - hz[i, j - 1])


@cuda.jit
def update_ey(ey, hz, cb):
    i, j = cuda.grid(2)
    if i > 0 and i < ey.shape[0] and j < ey.shape[1]:
        ey[i, j] -= cb * (hz[i, j] - hz[i - 1, j])


@cuda.jit
def update_hz(ex, ey, hz, db):
    i, j = cuda.grid(2)
    if i < hz.shape[0] - 1 and j < hz.shape[1] - 1:
        hz[i, j] += db * (ex[i, j + 1] - ex[i, j] - ey[i + 1, j] + ey[i, j])


@cuda.jit
def update_source(hz, value, col, row_lo, row_hi):
    i, j = cuda.grid(2)
    if i == col and j >= row_lo and j < row_hi:
        hz[i, j] += value


@cuda.jit
def record_line(rec, ey, n, col):
    j = cuda.grid(1)
    if j < ey.shape[1]:
        rec[n, j] = ey[col, j]


def gaussian_source(nt, t0=60.0, spread=18.0):
    n = np.arange(nt)
    return (np.exp(-0.5 * ((n - t0) / spread) ** 2) * np.sin(0.25 * n)).astype(np.float32)


def main():
    ex = np.zeros((NX, NY), dtype=np.float32)
    d_ex = cuda.to_device(ex)
    d_ey = cuda.to_device(np.zeros_like(ex))
    d_hz = cuda.to_device(np.zeros_like(ex))
    d_probes = [cuda.device_array((NT, NY), dtype=np.float32) for _ in PROBE_COLS]
    j_src = gaussian_source(NT)
    cb, db = np.float32(0.5), np.float32(0.5)
    bpg = (math.ceil(NX / TPB[0]), math.ceil(NY / TPB[1]))
    bpg_line = math.ceil(NY / 128)

    for n in range(NT):
        update_ex[bpg, TPB](d_ex, d_hz, cb)
        update_ey[bpg, TPB](d_ey, d_hz, cb)
        update_hz[bpg, TPB](d_ex, d_ey, d_hz, db)
        update_source[bpg, TPB](d_hz, j_src[n], 16, 40, 88)
        for p, col in enumerate(PROBE_COLS):
            record_line[bpg_line, 128](d_probes[p], d_ey, n, col)

    lines = [d.copy_to_host() for d in d_probes]
    energy = [float((l ** 2).sum()) for l in lines]
    print('fdtd2d: %d steps, probe energies %s' % (NT, ' '.join('%.3e' % e for e in energy)))


if __name__ == '__main__':
    main()
