"""Power iteration for the leading eigenpair of a dense 4096 x 4096 covariance, NumPy baseline.

Imitates AnneHartebrodt/federated-pca-simulation:python/PCA/pi_fun.py (power_iteration_2:
b_k1 = np.dot(A, b_k); b_k1_norm = np.linalg.norm(b_k1); b_k = b_k1 / b_k1_norm, for a
fixed number of simulations). New code. Writes vec.npy and history.npy.
"""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np

N = 4096
ITERS = 250


def make_matrix():
    rng = np.random.default_rng(5)
    basis = rng.standard_normal((N, 64))
    A = (basis * np.linspace(4.0, 0.5, 64)) @ basis.T / 64
    A[np.diag_indices(N)] += 1.0
    return A


def matvec(A, x):
    return np.dot(A, x)


def main():
    A = make_matrix()
    b = np.ones(N) / np.sqrt(N)
    history = np.empty(ITERS)
    for k in range(ITERS):
        b1 = matvec(A, b)
        norm = np.linalg.norm(b1)
        b = b1 / norm
        history[k] = norm
    np.save("vec.npy", b)
    np.save("history.npy", history)


if __name__ == "__main__":
    main()
