"""Lloyd's k-means kept entirely on the GPU with CuPy.

Imitates JoshuaWu1997/HPML-Clustering:_kmeans.py (KMeans(...).fit_predict(x) with
device='cuda': distances to all centroids by one matrix product per iteration, argmin
labels, centroid update, for a fixed number of iterations; here the update is a second
matrix product with the one-hot label matrix) on 4,194,304 points of
dimension 32 with 256 clusters. Data are generated on the device; nothing is read
back until the end. New code.
"""
import cupy as cp

N, D, K = 4_194_304, 32, 256
ITERS = 60

rs = cp.random.RandomState(0)
true_centers = rs.standard_normal((K, D), dtype=cp.float32) * 4
X = true_centers[rs.randint(0, K, N)] + rs.standard_normal((N, D), dtype=cp.float32)
x_sq = (X * X).sum(axis=1, keepdims=True)
cluster_ids = cp.arange(K)


def main():
    centers = X[rs.choice(N, K, replace=False)].copy()
    for _ in range(ITERS):
        c_sq = (centers * centers).sum(axis=1)
        dist = x_sq - 2.0 * (X @ centers.T) + c_sq[None, :]
        labels = dist.argmin(axis=1)
        onehot = (labels[:, None] == cluster_ids[None, :]).astype(cp.float32)
        counts = onehot.sum(axis=0)
        sums = onehot.T @ X
        centers = sums / cp.maximum(counts, 1.0)[:, None]
    inertia = float(dist.min(axis=1).sum())
    print("k-means inertia", inertia, "non-empty", int((counts > 0).sum()))


if __name__ == "__main__":
    main()
