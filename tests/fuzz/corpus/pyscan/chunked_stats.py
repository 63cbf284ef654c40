"""Out-of-core column statistics over a memory-mapped array, chunk by chunk.

Streams a float32 table from a np.memmap in row blocks, merging per-chunk
mean / variance / min / max, and cross-checks with dask.array when installed.
GPU port for data larger than one GPU: Dask (dask.array backed by CuPy chunks,
Dask-CUDA for several GPUs); np.memmap itself has no CuPy equivalent.
"""
import os
import tempfile

import numpy as np

ROWS, COLS, CHUNK = 400_000, 8, 50_000


def write_table(path, seed=0):
    rng = np.random.default_rng(seed)
    out = np.memmap(path, dtype=np.float32, mode="w+", shape=(ROWS, COLS))
    for start in range(0, ROWS, CHUNK):
        block = rng.standard_normal((CHUNK, COLS)).astype(np.float32)
        out[start:start + CHUNK] = block * np.arange(1, COLS + 1) + np.arange(COLS)
    out.flush()
    del out


def chunked_moments(path):
    """Chan et al. parallel merge of (count, mean, M2) per column."""
    table = np.memmap(path, dtype=np.float32, mode="r", shape=(ROWS, COLS))
    count, mean, m2 = 0, np.zeros(COLS), np.zeros(COLS)
    lo, hi = np.full(COLS, np.inf), np.full(COLS, -np.inf)
    for start in range(0, ROWS, CHUNK):
        block = np.asarray(table[start:start + CHUNK], dtype=np.float64)
        n_b, mean_b = block.shape[0], block.mean(axis=0)
        m2_b = ((block - mean_b) ** 2).sum(axis=0)
        delta = mean_b - mean
        total = count + n_b
        mean = mean + delta * n_b / total
        m2 = m2 + m2_b + delta ** 2 * count * n_b / total
        count = total
        lo, hi = np.minimum(lo, block.min(axis=0)), np.maximum(hi, block.max(axis=0))
    return mean, np.sqrt(m2 / (count - 1)), lo, hi


def dask_check(path):
    try:
        import dask.array as da
    except ImportError:
        return None
    table = np.memmap(path, dtype=np.float32, mode="r", shape=(ROWS, COLS))
    arr = da.from_array(table, chunks=(CHUNK, COLS)).astype(np.float64)
    return da.compute(arr.mean(axis=0), arr.std(axis=0, ddof=1), scheduler="synchronous")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "table.f32")
        write_table(path)
        mean, std, lo, hi = chunked_moments(path)
        checked = dask_check(path)
        size_mb = os.path.getsize(path) / 1e6

    print(f"table {ROWS}x{COLS} float32 ({size_mb:.1f} MB), chunks of {CHUNK} rows")
    print("column means", " ".join(f"{m:.3f}" for m in mean))
    print("column stds ", " ".join(f"{v:.3f}" for v in std))
    print(f"overall range [{lo.min():.2f}, {hi.max():.2f}]")
    if checked is None:
        print("dask not installed: cross-check skipped")
    else:
        d_mean, d_std = checked
        err = max(np.abs(d_mean - mean).max(), np.abs(d_std - std).max())
        print(f"dask.array cross-check: max difference {err:.2e}")


if __name__ == "__main__":
    main()
