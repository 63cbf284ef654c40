"""Re-identification ranking: query-gallery distance matrix and top-k matches, NumPy baseline.

Imitates JDAI-CV/fast-reid:demo/visualize_result.py (features of the query and gallery
sets, a query x gallery distance matrix, `distmat = distmat.numpy()`, then the ranked
gallery indices per query). New code; synthetic L2-normalised features. Writes
topk.npy and topk_dist.npy.
"""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np

N_QUERY, N_GALLERY, DIM, TOPK = 2000, 16000, 256, 10


def make_features():
    rng = np.random.default_rng(2)
    ids = rng.normal(size=(1500, DIM)).astype(np.float32)
    q = ids[rng.integers(0, 1500, N_QUERY)] + 0.6 * rng.normal(size=(N_QUERY, DIM)).astype(np.float32)
    g = ids[rng.integers(0, 1500, N_GALLERY)] + 0.6 * rng.normal(size=(N_GALLERY, DIM)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    return q, g


def main():
    q, g = make_features()
    distmat = 2.0 - 2.0 * (q @ g.T)
    part = np.argpartition(distmat, TOPK, axis=1)[:, :TOPK]
    part_d = np.take_along_axis(distmat, part, axis=1)
    order = np.argsort(part_d, axis=1, kind="stable")
    topk = np.take_along_axis(part, order, axis=1)
    np.save("topk.npy", topk)
    np.save("topk_dist.npy", np.take_along_axis(part_d, order, axis=1))


if __name__ == "__main__":
    main()
