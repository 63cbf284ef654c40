"""CuPy port of base.py (forward-Euler diffusion, 256 x 256): the same slicing update on
device arrays, but, as in danbatiste/GELib:GELib/GPU/gpu_functions.py (gpu_free_memory:
mempool.free_all_blocks() and pinned_mempool.free_all_blocks()), the memory pools are
emptied after every step, so each step's temporaries are cudaMalloc'ed and cudaFree'd
again. Writes u.npy and trace.npy."""
import numpy as np
import cupy as cp

L = 256
STEPS = 2000
MU = 0.1

mempool = cp.get_default_memory_pool()
pinned_mempool = cp.get_default_pinned_memory_pool()


def gpu_free_memory():
    mempool.free_all_blocks()
    pinned_mempool.free_all_blocks()


def main():
    u = cp.zeros((L, L))
    u[L // 2, L // 2] = 1000.0
    u[L // 4, 3 * L // 4] = 500.0
    temp = cp.zeros((L, L))
    trace = cp.empty(STEPS)
    for n in range(STEPS):
        temp[1:-1, 1:-1] = u[1:-1, 1:-1] + MU * (
            u[2:, 1:-1] - 2 * u[1:-1, 1:-1] + u[0:-2, 1:-1]
            + u[1:-1, 2:] - 2 * u[1:-1, 1:-1] + u[1:-1, 0:-2])
        u[:, :] = temp[:, :]
        temp[:, :] = 0.0
        trace[n] = u[L // 2, L // 2]
        gpu_free_memory()
    np.save("u.npy", cp.asnumpy(u))
    np.save("trace.npy", cp.asnumpy(trace))


if __name__ == "__main__":
    main()
