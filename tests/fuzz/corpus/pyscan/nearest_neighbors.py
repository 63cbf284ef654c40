"""k-nearest-neighbour search over embedding vectors.

Exact k-NN with sklearn.neighbors.NearestNeighbors, checked against a brute-force
NumPy distance matrix (recall@k). GPU port: cuVS (brute_force for exact search,
ivf_flat / cagra for approximate search, checked by recall@k), or cuml.accel for
the sklearn call and CuPy for the NumPy version.
"""
import numpy as np
from sklearn.neighbors import NearestNeighbors


def brute_force_knn(data, queries, k):
    """Squared L2 via |q|^2 - 2 q.x + |x|^2, then a partial sort."""
    d2 = (
        np.sum(queries ** 2, axis=1)[:, None]
        - 2.0 * queries @ data.T
        + np.sum(data ** 2, axis=1)[None, :]
    )
    idx = np.argpartition(d2, k, axis=1)[:, :k]
    part = np.take_along_axis(d2, idx, axis=1)
    order = np.argsort(part, axis=1)
    idx = np.take_along_axis(idx, order, axis=1)
    return np.sqrt(np.maximum(np.take_along_axis(d2, idx, axis=1), 0.0)), idx


def recall_at_k(found, truth):
    hits = sum(len(set(f) & set(t)) for f, t in zip(found, truth))
    return hits / truth.size


def main():
    rng = np.random.default_rng(0)
    k = 10
    centers = rng.standard_normal((50, 64)) * 4.0
    data = (centers[rng.integers(0, 50, 8000)] + rng.standard_normal((8000, 64))).astype(np.float32)
    queries = (centers[rng.integers(0, 50, 500)] + rng.standard_normal((500, 64))).astype(np.float32)

    nn = NearestNeighbors(n_neighbors=k, algorithm="auto", metric="euclidean")
    nn.fit(data)
    dist_sk, idx_sk = nn.kneighbors(queries)

    dist_np, idx_np = brute_force_knn(data.astype(np.float64), queries.astype(np.float64), k)

    print(f"index {data.shape}, queries {queries.shape}, k={k}")
    print(f"recall@{k} sklearn vs brute force: {recall_at_k(idx_sk, idx_np):.4f}")
    print(f"max distance difference: {np.abs(dist_sk - dist_np).max():.2e}")
    print(f"mean distance to k-th neighbour: {dist_np[:, -1].mean():.3f}")


if __name__ == "__main__":
    main()
