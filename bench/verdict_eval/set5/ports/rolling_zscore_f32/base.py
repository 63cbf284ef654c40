"""Rolling mean and rolling standard deviation by cumulative sums, NumPy baseline.

Imitates quantfinlib/screamer:reference_impls/numpy.py (RollingMean__numpy__cumsum:
ans = np.cumsum(array); ans[w:] = ans[w:] - ans[:-w]; ans / w) extended to the rolling
standard deviation from the cumulative sum of squares, over 8 price-like series of
2**21 samples with a 500-sample window. New code. Writes mean.npy and std.npy.
"""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np

N_SERIES, LENGTH, W = 8, 1 << 21, 500


def make_series():
    rng = np.random.default_rng(11)
    steps = rng.standard_normal((N_SERIES, LENGTH)) * 0.5
    return 1000.0 + np.cumsum(steps, axis=1)


def rolling_sum(a, w):
    c = np.cumsum(a, axis=1)
    c[:, w:] = c[:, w:] - c[:, :-w]
    return c[:, w - 1:]


def main():
    x = make_series()
    mean = rolling_sum(x, W) / W
    var = rolling_sum(x * x, W) / W - mean * mean
    std = np.sqrt(np.maximum(var, 0.0) * W / (W - 1))
    np.save("mean.npy", mean)
    np.save("std.npy", std)


if __name__ == "__main__":
    main()
