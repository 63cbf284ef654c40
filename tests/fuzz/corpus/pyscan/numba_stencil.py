"""Explicit heat diffusion on a 2-D plate with a Numba-compiled stencil kernel.

A 5-point Jacobi update written as explicit loops under `@numba.njit`; when
Numba is missing the same loops run as plain Python on the same small grid.
GPU port: CuPy slicing first; a custom kernel only after that, with
Numba-CUDA-MLIR for new work (or numba-cuda for existing `numba.cuda` code).
"""
import types

import numpy as np

try:
    import numba
    HAVE_NUMBA = True
except ImportError:  # plain-Python fallback: njit becomes a no-op decorator
    HAVE_NUMBA = False

    def _njit(*args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return lambda func: func

    numba = types.SimpleNamespace(njit=_njit)


@numba.njit(cache=False)
def diffuse(u, alpha, steps):
    """`steps` Jacobi sweeps of the heat equation; fixed (Dirichlet) edges."""
    ny, nx = u.shape
    cur = u.copy()
    nxt = u.copy()
    for _ in range(steps):
        for i in range(1, ny - 1):
            for j in range(1, nx - 1):
                nxt[i, j] = cur[i, j] + alpha * (
                    cur[i - 1, j] + cur[i + 1, j] + cur[i, j - 1] + cur[i, j + 1]
                    - 4.0 * cur[i, j]
                )
        cur, nxt = nxt, cur
    return cur


def diffuse_numpy(u, alpha, steps):
    """The same update with array slices (the form CuPy runs unchanged)."""
    cur = u.copy()
    for _ in range(steps):
        lap = (cur[:-2, 1:-1] + cur[2:, 1:-1] + cur[1:-1, :-2] + cur[1:-1, 2:]
               - 4.0 * cur[1:-1, 1:-1])
        nxt = cur.copy()
        nxt[1:-1, 1:-1] += alpha * lap
        cur = nxt
    return cur


def initial_plate(n):
    u = np.zeros((n, n))
    u[0, :] = 100.0                    # hot top edge
    u[n // 3: n // 2, n // 3: n // 2] = 50.0  # warm block in the middle
    return u


def main():
    n, steps, alpha = 64, 60, 0.2
    u0 = initial_plate(n)
    u = diffuse(u0, alpha, steps)
    ref = diffuse_numpy(u0, alpha, steps)

    backend = f"numba {numba.__version__}" if HAVE_NUMBA else "plain Python (numba not installed)"
    print(f"backend: {backend}")
    print(f"grid {n}x{n}, {steps} steps, alpha={alpha}")
    print(f"mean temperature {u.mean():.4f}, centre {u[n // 2, n // 2]:.4f}")
    print(f"max |kernel - numpy| = {np.abs(u - ref).max():.2e}")


if __name__ == "__main__":
    main()
