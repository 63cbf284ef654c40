"""Checkerboard Metropolis for the 2-D Ising model in numba.cuda, synchronizing after
every colour update.

Imitates: NVIDIA/ising-gpu:basic_python/ising_basic.py (black and white half-lattices
as int8 device arrays, an ``update_lattice`` kernel per colour, and a ``sync()`` that
calls ``cuda.synchronize()`` after each colour's launch).

The lattice is 4096 x 4096; one colour update is a kernel of a few tens of
microseconds, and the ``cuda.synchronize()`` after it (3000 sweeps, 6000 calls) makes
the GPU wait for every next launch instead of running them back to back.
"""
import math

import numpy as np
from numba import cuda

N = 4096
M = 4096
SWEEPS = 3000
TCRIT = 2.26918531421
ALPHA = 0.6


@cuda.jit(device=True)
def uniform(seed, step, idx):
    h = (np.int64(idx) * np.int64(0x9E3779B1) + np.int64(step) * np.int64(0x85EBCA77)
         + np.int64(seed) * np.int64(0xC2B2AE3D)) & np.int64(0xFFFFFFFF)
    h ^= h >> 16
    h = (h * 0x7FEB352D) & 0xFFFFFFFF
    h ^= h >> 15
    h = (h * 0x846CA68B) & 0xFFFFFFFF
    h ^= h >> 16
    return (h >> 8) * (1.0 / 16777216.0)


@cuda.jit
def update_lattice(lattice, op_lattice, is_black, inv_temp, seed, step):
    n, m = lattice.shape
    tid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = tid // m
    j = tid % m
    if i >= n:
        return
    ipp = i + 1 if i + 1 < n else 0
    inn = i - 1 if i - 1 >= 0 else n - 1
    jpp = j + 1 if j + 1 < m else 0
    jnn = j - 1 if j - 1 >= 0 else m - 1
    if is_black:
        joff = jpp if i % 2 else jnn
    else:
        joff = jnn if i % 2 else jpp
    nn_sum = op_lattice[inn, j] + op_lattice[i, j] + op_lattice[ipp, j] + op_lattice[i, joff]
    lij = lattice[i, j]
    acceptance = math.exp(-2.0 * inv_temp * nn_sum * lij)
    if uniform(seed, step, tid) < acceptance:
        lattice[i, j] = -lij


@cuda.jit
def init_lattice(lattice, seed):
    n, m = lattice.shape
    tid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if tid < n * m:
        lattice[tid // m, tid % m] = 1 if uniform(seed, 0, tid) > 0.5 else -1


@cuda.jit
def row_sums(lattice, total):
    i = cuda.grid(1)
    if i < lattice.shape[0]:
        s = 0
        for j in range(lattice.shape[1]):
            s += lattice[i, j]
        cuda.atomic.add(total, 0, s)


def main():
    lattice_b = cuda.device_array((N, M // 2), dtype=np.int8)
    lattice_w = cuda.device_array((N, M // 2), dtype=np.int8)
    threads = 256
    blocks = (N * (M // 2) + threads - 1) // threads
    init_lattice[blocks, threads](lattice_b, 1234)
    init_lattice[blocks, threads](lattice_w, 4321)
    inv_temp = 1.0 / (ALPHA * TCRIT)
    halves = ((lattice_b, lattice_w, True), (lattice_w, lattice_b, False))
    for sweep in range(SWEEPS):
        for lat, op, is_black in halves:
            update_lattice[blocks, threads](lat, op, is_black, inv_temp, 42, 2 * sweep + int(is_black))
            cuda.synchronize()
    total = cuda.to_device(np.zeros(1, dtype=np.int64))
    row_sums[(N + 127) // 128, 128](lattice_b, total)
    row_sums[(N + 127) // 128, 128](lattice_w, total)
    m = total.copy_to_host()[0] / float(N * M)
    print('ising: %d sweeps of %dx%d, |m| = %.4f' % (SWEEPS, N, M, abs(m)))


if __name__ == '__main__':
    main()
