"""WRONG ON PURPOSE: copying the same host array to the GPU on every iteration.

Scores batches of samples against a fixed weight matrix with CuPy.
GPU anti-pattern for `gpuopt scan` to find; the right version is below it.
"""
# WHAT IS WRONG: `weights_host` never changes, yet `wrong_way` calls
# cp.asarray(weights_host) inside the loop, so every iteration pays a
# host -> device copy of the whole matrix (synchronous, from pageable memory).
# THE RIGHT VERSION (`right_way`): hoist the loop-invariant transfer out of
# the loop (one cp.asarray before it) and keep the accumulators on the device;
# better still, generate or load the batches on the device too.
import sys

import numpy as np

try:
    import cupy as cp
except ImportError:
    cp = None


def make_inputs(n_batches=50, batch=1024, d=512, k=256, seed=0):
    rng = np.random.default_rng(seed)
    weights_host = rng.standard_normal((d, k)).astype(np.float32)
    batches = [rng.standard_normal((batch, d)).astype(np.float32) for _ in range(n_batches)]
    return weights_host, batches


# ---------------------------------------------------------------- wrong way
def wrong_way(weights_host, batches):
    total = 0.0
    for x_host in batches:
        w = cp.asarray(weights_host)             # same array copied every time
        x = cp.asarray(x_host)
        total += float(cp.maximum(x @ w, 0).sum())
    return total


# ---------------------------------------------------------------- right way
def right_way(weights_host, batches):
    w = cp.asarray(weights_host)                 # loop-invariant: copy once
    total = cp.zeros((), dtype=cp.float64)
    for x_host in batches:
        x = cp.asarray(x_host)
        total += cp.maximum(x @ w, 0).sum(dtype=cp.float64)
    return float(total)                          # one device -> host copy


def main():
    if cp is None:
        print("cupy not installed: this GPU example is skipped (pip install cupy-cuda12x)")
        return 0
    try:
        cp.cuda.runtime.getDeviceCount()
    except cp.cuda.runtime.CUDARuntimeError as exc:
        print(f"cupy is installed but no CUDA device is usable ({exc}); skipped")
        return 0
    weights_host, batches = make_inputs()
    a = wrong_way(weights_host, batches)
    b = right_way(weights_host, batches)
    print(f"wrong way total {a:.6e}, right way total {b:.6e}, rel diff {abs(a - b) / abs(b):.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
