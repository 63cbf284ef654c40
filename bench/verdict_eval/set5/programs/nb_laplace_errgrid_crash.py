"""Jacobi relaxation with numba.cuda, the per-block error grid read back every sweep.

Imitates numba/numba:numba/cuda/tests/cudapy/test_laplace.py (jocabi_relax_core writes
each block's largest change into an error grid; the host loop `while error > tol and
iter < iter_max` copies that grid back with copy_to_host after every sweep and takes
np.abs(error_grid).max()). Here the 2048 x 2048 Laplace problem runs until the iteration
cap, 16,000 sweeps, each ending in a blocking copy of the 128 x 128 error grid; plain
Jacobi needs millions of sweeps at this size, so the tolerance is never met and the
solver raises RuntimeError (exit status 1) after all the GPU work. New code.
"""
import numpy as np
from numba import cuda, float64

TPB = 16
NN = NM = 2048
TOL = 1.0e-6
ITER_MAX = 16000


@cuda.jit
def jacobi_relax(A, Anew, error):
    err_sm = cuda.shared.array((TPB, TPB), dtype=float64)
    ty = cuda.threadIdx.x
    tx = cuda.threadIdx.y
    i, j = cuda.grid(2)
    n, m = A.shape
    err_sm[ty, tx] = 0.0
    if 1 <= j < n - 1 and 1 <= i < m - 1:
        Anew[j, i] = 0.25 * (A[j, i + 1] + A[j, i - 1] + A[j - 1, i] + A[j + 1, i])
        err_sm[ty, tx] = abs(Anew[j, i] - A[j, i])
    cuda.syncthreads()
    t = TPB // 2
    while t > 0:
        if ty < t:
            err_sm[ty, tx] = max(err_sm[ty, tx], err_sm[ty + t, tx])
        t //= 2
        cuda.syncthreads()
    t = TPB // 2
    while t > 0:
        if tx < t and ty == 0:
            err_sm[ty, tx] = max(err_sm[ty, tx], err_sm[ty, tx + t])
        t //= 2
        cuda.syncthreads()
    if tx == 0 and ty == 0:
        error[cuda.blockIdx.y, cuda.blockIdx.x] = err_sm[0, 0]


def solve():
    A = np.zeros((NN, NM))
    A[:, 0] = 1.0
    blockdim = (TPB, TPB)
    griddim = (NM // TPB, NN // TPB)
    error_grid = np.zeros((griddim[1], griddim[0]))
    dA = cuda.to_device(A)
    dAnew = cuda.to_device(A)
    derror = cuda.to_device(error_grid)
    error, it = 1.0, 0
    while error > TOL and it < ITER_MAX:
        jacobi_relax[griddim, blockdim](dA, dAnew, derror)
        derror.copy_to_host(error_grid)
        error = np.abs(error_grid).max()
        dA, dAnew = dAnew, dA
        it += 1
    if error > TOL:
        raise RuntimeError(f"Jacobi did not converge: error {error:.3e} after {it} sweeps")
    return dA.copy_to_host()


if __name__ == "__main__":
    solve()
