# A loop whose every iteration ends with stream.synchronize() leaves nothing
# pending at its exit (the copies queued before it included), so the end
# read after it is right; a loop that does not synchronize leaves the work
# queued before it pending (GPU603).
import time

import numpy as np
from numba import cuda


@cuda.jit  # expect: GPU504/numba-cuda
def step(a, b):
    i = cuda.grid(1)
    if i < a.size:
        b[i] = a[i] + 1


def solve(n_iter):
    a = np.zeros(4096)  # expect: GPU101/cupy
    stream = cuda.stream()
    start = time.time()
    d_a = cuda.to_device(a, stream)
    d_b = cuda.to_device(a, stream)
    for it in range(n_iter):
        step[16, 256, stream](d_a, d_b)
        d_a, d_b = d_b, d_a
        stream.synchronize()
    end = time.time()  # every iteration synchronized: fine
    return end - start


def solve_unsynced(n_iter):
    a = np.zeros(4096)  # expect: GPU101/cupy
    stream = cuda.stream()
    start = time.time()
    d_a = cuda.to_device(a, stream)
    d_b = cuda.to_device(a, stream)
    for it in range(n_iter):
        step[16, 256, stream](d_a, d_b)
        d_a, d_b = d_b, d_a
    end = time.time()  # expect: GPU603
    return end - start
