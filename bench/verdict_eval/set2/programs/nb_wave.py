"""2-D acoustic wave propagation with a 4th-order finite-difference stencil, one
numba.cuda kernel launch per time step on a small padded grid (one shot).

Imitates: ar4/wave_2d_fd_perf_gpu:wave_2d_fd_perf_gpu/numba.py (VNumba.step: a Python
`for it in range(nt)` loop that launches a stencil kernel and a source-injection kernel
every time step, then swaps the two wavefield buffers).

The grid is only 96 x 96 cells, so each stencil kernel runs for a couple of microseconds
while every numba launch costs far more on the host: the time loop is launch-bound.
Unlike the original, the wavefields live on the device (no implicit copies per launch).
"""
import warnings

import numpy as np
from numba import cuda

warnings.filterwarnings("ignore", message=".*under-utilization.*")

NZ = NX = 96          # padded grid
PAD = 3
NT = 12000            # time steps
DX = 5.0
VEL = 1500.0
VMAX = 2200.0
DT = 0.4 * DX / VMAX


@cuda.jit("void(float32[:, :], float32[:, :], float32[:, :], float32[:], int32, int32)")
def fd_step(model, cur, nxt, fd, nz, nx):
    x, z = cuda.grid(2)
    if z > 1 and z < nz - 2 and x > 1 and x < nx - 2:
        lap = (fd[0] * cur[z, x]
               + fd[1] * (cur[z, x + 1] + cur[z, x - 1] + cur[z + 1, x] + cur[z - 1, x])
               + fd[2] * (cur[z, x + 2] + cur[z, x - 2] + cur[z + 2, x] + cur[z - 2, x]))
        nxt[z, x] = model[z, x] * lap + 2.0 * cur[z, x] - nxt[z, x]


@cuda.jit("void(float32[:, :], float32[:, :], float32[:], int32, int32, int32)")
def add_source(model, field, wavelet, sz, sx, it):
    if cuda.threadIdx.x == 0:
        field[sz, sx] += wavelet[it] * model[sz, sx]


def ricker(freq, dt, nt):
    t = np.arange(nt) * dt - 1.2 / freq
    a = (np.pi * freq * t) ** 2
    return ((1.0 - 2.0 * a) * np.exp(-a)).astype(np.float32)


def main():
    model = np.full((NZ, NX), VEL, np.float32)
    model[NZ // 2:, :] = VMAX                       # a flat reflector
    model = (model ** 2 * DT ** 2).astype(np.float32)
    fd = (np.array([-10.0 / 2, 4.0 / 3, -1.0 / 12], np.float32) / DX ** 2).astype(np.float32)

    d_model = cuda.to_device(model)
    d_fd = cuda.to_device(fd)
    d_wavelet = cuda.to_device(ricker(25.0, DT, NT))
    d_cur = cuda.to_device(np.zeros((NZ, NX), np.float32))
    d_nxt = cuda.to_device(np.zeros((NZ, NX), np.float32))

    block = (32, 16)
    grid = ((NX + block[0] - 1) // block[0], (NZ + block[1] - 1) // block[1])
    sz, sx = PAD + 2, NX // 2

    for it in range(NT):
        fd_step[grid, block](d_model, d_cur, d_nxt, d_fd, NZ, NX)
        add_source[1, 32](d_model, d_nxt, d_wavelet, sz, sx, it)
        d_cur, d_nxt = d_nxt, d_cur

    cuda.synchronize()
    field = d_cur.copy_to_host()
    print("final wavefield rms %.3e" % float(np.sqrt(np.mean(field[PAD:-PAD, PAD:-PAD] ** 2))))


if __name__ == "__main__":
    main()
