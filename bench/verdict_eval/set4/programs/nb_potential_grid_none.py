"""Two-dimensional electrostatic potential of 8192 point charges on a 2048 x 2048 grid
(the log potential -q log r of line charges), recomputed by direct summation after each
small advection step of the charges in a rotating flow. One numba.cuda thread per grid
point loops over all charges, staged through shared memory in tiles; the charges, the
grid and the running peak potential stay on the device until the end.

Imitates: hsaunders1904/PyHPC:src/pyhpc/potential/_calculate_grid_impls/_cuda_kernel.py
(potential_cuda: one thread per (i, j) grid point, `for k in range(num_particles)`
accumulating -charges[k] * log(dist)) driven as in src/pyhpc/potential/_simulate.py
(particles moved between potential evaluations), written with numba.cuda.

Each evaluation is 34 billion charge-point interactions, tens of milliseconds of
arithmetic per launch, with two launches per step and one copy at the end:
compute-bound, nothing to fix.
"""
import math

import numpy as np
from numba import cuda, float32

GRID = 2048
N_CHARGES = 8192
N_STEPS = 40
TILE = 256
DT = 0.01
EPS2 = 1e-8


@cuda.jit(fastmath=True)
def potential_kernel(px, py, q, inv_res, grid):
    sx = cuda.shared.array(TILE, float32)
    sy = cuda.shared.array(TILE, float32)
    sq = cuda.shared.array(TILE, float32)
    col, row = cuda.grid(2)
    tid = cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.x
    x = float32(col) * inv_res
    y = float32(row) * inv_res
    acc = float32(0.0)
    for base in range(0, px.shape[0], TILE):
        sx[tid] = px[base + tid]
        sy[tid] = py[base + tid]
        sq[tid] = q[base + tid]
        cuda.syncthreads()
        for k in range(TILE):
            dx = x - sx[k]
            dy = y - sy[k]
            acc -= sq[k] * float32(0.5) * math.log(dx * dx + dy * dy + float32(EPS2))
        cuda.syncthreads()
    if row < grid.shape[0] and col < grid.shape[1]:
        grid[row, col] = acc


@cuda.jit
def advect_and_track(px, py, dt, grid, peak):
    k = cuda.grid(1)
    if k < px.shape[0]:
        # solid-body rotation about the centre of the unit square, slightly sheared
        ux = -(py[k] - float32(0.5)) * float32(1.0 + 0.3 * (px[k] - 0.5))
        uy = (px[k] - float32(0.5))
        px[k] = min(max(px[k] + dt * ux, float32(0.0)), float32(1.0))
        py[k] = min(max(py[k] + dt * uy, float32(0.0)), float32(1.0))
    if k == 0:
        peak[0] = max(peak[0], grid[grid.shape[0] // 2, grid.shape[1] // 2])


def main():
    rng = np.random.default_rng(11)
    px = cuda.to_device(rng.uniform(0.2, 0.8, N_CHARGES).astype(np.float32))
    py = cuda.to_device(rng.uniform(0.2, 0.8, N_CHARGES).astype(np.float32))
    q = cuda.to_device(rng.choice([-1.0, 1.0], N_CHARGES).astype(np.float32))
    grid = cuda.device_array((GRID, GRID), dtype=np.float32)
    peak = cuda.to_device(np.full(1, -np.inf, dtype=np.float32))
    threads = (16, 16)                      # 256 threads = one tile of charges per block
    blocks = (GRID // threads[0], GRID // threads[1])
    inv_res = np.float32(1.0 / (GRID - 1))
    for _ in range(N_STEPS):
        potential_kernel[blocks, threads](px, py, q, inv_res, grid)
        advect_and_track[(N_CHARGES + 255) // 256, 256](px, py, np.float32(DT), grid, peak)
    field = grid.copy_to_host()
    print(f"grid {GRID}^2, charges {N_CHARGES}, steps {N_STEPS}, "
          f"potential range [{field.min():.2f}, {field.max():.2f}], centre peak {peak.copy_to_host()[0]:.3f}")


if __name__ == "__main__":
    main()
