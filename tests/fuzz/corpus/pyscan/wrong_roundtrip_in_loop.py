"""WRONG ON PURPOSE: a device-to-host copy inside a CuPy iteration loop.

Power iteration for the dominant eigenvalue of a symmetric matrix with CuPy.
GPU anti-pattern for `gpuopt scan` to find; the right version is below it.
"""
# WHAT IS WRONG: `wrong_way` calls float(...), .item(), .get() and cp.asnumpy()
# on device values in every iteration. Each one copies device -> host and
# blocks the CPU until the GPU has finished all queued work, so the GPU idles
# between tiny kernels and the loop runs at the speed of the round trips.
# THE RIGHT VERSION (`right_way`): keep the iterate, the estimates and the
# history on the device; test convergence only every `check_every` iterations
# with a single scalar copy; copy results to the host once, after the loop.
import sys

import numpy as np

try:
    import cupy as cp
except ImportError:
    cp = None


def make_matrix(n=512, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    u = rng.standard_normal(n)
    u /= np.linalg.norm(u)
    sym = a @ a.T / n + 4.0 * np.outer(u, u)   # clear dominant eigenvalue
    return cp.asarray(sym.astype(np.float32))


# ---------------------------------------------------------------- wrong way
def wrong_way(a, iters=200, tol=1e-5):
    v = cp.ones(a.shape[0], dtype=a.dtype)
    history = []
    lam_prev = 0.0
    for _ in range(iters):
        w = a @ v
        lam = float(v @ w)                          # device -> host, sync
        norm = cp.linalg.norm(w).item()             # device -> host, sync
        v = w / norm
        history.append(cp.asnumpy(v[:4]))           # device -> host copy
        if abs(lam - lam_prev) < tol * abs(lam):
            break
        lam_prev = lam
    return lam, v.get(), history


# ---------------------------------------------------------------- right way
def right_way(a, iters=200, tol=1e-5, check_every=10):
    v = cp.ones(a.shape[0], dtype=a.dtype)
    history = cp.empty((iters, 4), dtype=a.dtype)   # stays on the device
    lam = cp.zeros((), dtype=a.dtype)
    for i in range(iters):
        w = a @ v
        lam_prev, lam = lam, v @ w                  # both stay on the device
        v = w / cp.linalg.norm(w)
        history[i] = v[:4]
        # same test as wrong_way, but one scalar copy per `check_every` steps
        if (i + 1) % check_every == 0 and bool(cp.abs(lam - lam_prev) < tol * cp.abs(lam)):
            break
    return float(lam), cp.asnumpy(v), cp.asnumpy(history[: i + 1])


def main():
    if cp is None:
        print("cupy not installed: this GPU example is skipped (pip install cupy-cuda12x)")
        return 0
    try:
        cp.cuda.runtime.getDeviceCount()
    except cp.cuda.runtime.CUDARuntimeError as exc:
        print(f"cupy is installed but no CUDA device is usable ({exc}); skipped")
        return 0
    a = make_matrix()
    lam_w, _, hist_w = wrong_way(a)
    lam_r, _, hist_r = right_way(a)
    print(f"wrong way: lambda={lam_w:.5f} after {len(hist_w)} iterations")
    print(f"right way: lambda={lam_r:.5f} after {len(hist_r)} iterations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
