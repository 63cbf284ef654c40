"""Hop-distance map of a large warehouse occupancy grid (8192 x 4096 cells, a quarter of
them shelving) from the loading dock, by level-synchronous breadth-first search with a
numba.cuda kernel: each launch expands the frontier by one level, and a one-element
'done' flag on the device tells the host when no cell changed.

Imitates: PratyushVM/bfs-cuda:src/simple_bfs.cu (simple_bfs: `while (!*cpu_done)`: set
the flag to true, cudaMemcpy it to the device, launch bfs_kernel for level l, cudaMemcpy
the flag back, l++) with src/bfs_kernel.cu's one-thread-per-vertex level expansion,
here on an implicit 4-connected grid graph.

The search needs ~13,000 levels; each level is one ~60 microsecond kernel between two
synchronous one-element copies (host->device, then device->host, which waits for the
kernel), so the GPU idles through every round trip: roundtrip-storm.
"""
import math
import warnings

import numpy as np
from numba import cuda

warnings.filterwarnings("ignore", message=".*under-utilization.*")

H, W = 8192, 4096
BLOCKED_FRACTION = 0.25


@cuda.jit("void(uint8[:, :], int32[:, :], int32, int32[:])")
def bfs_level(free, dist, level, done):
    x, y = cuda.grid(2)
    h, w = dist.shape
    if y < h and x < w and free[y, x] != 0 and dist[y, x] < 0:
        if ((y > 0 and dist[y - 1, x] == level) or (y + 1 < h and dist[y + 1, x] == level)
                or (x > 0 and dist[y, x - 1] == level) or (x + 1 < w and dist[y, x + 1] == level)):
            dist[y, x] = level + 1
            done[0] = 0


def main():
    rng = np.random.default_rng(5)
    free = (rng.random((H, W), dtype=np.float32) >= BLOCKED_FRACTION).astype(np.uint8)
    free[0, 0] = 1                                    # the loading dock
    dist = np.full((H, W), -1, dtype=np.int32)
    dist[0, 0] = 0

    d_free = cuda.to_device(free)
    d_dist = cuda.to_device(dist)
    done = np.ones(1, dtype=np.int32)
    d_done = cuda.to_device(done)
    block = (32, 8)
    grid = (math.ceil(W / block[0]), math.ceil(H / block[1]))

    level = 0
    while True:
        done[0] = 1
        d_done.copy_to_device(done)
        bfs_level[grid, block](d_free, d_dist, level, d_done)
        d_done.copy_to_host(done)
        if done[0]:
            break
        level += 1

    dist = d_dist.copy_to_host()
    reached = dist >= 0
    print("levels", level, "reachable cells", int(reached.sum()), "of", int(free.sum()),
          "farthest hop", int(dist.max()))


if __name__ == "__main__":
    main()
