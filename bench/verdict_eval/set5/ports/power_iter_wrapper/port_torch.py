"""PyTorch port of base.py: the matrix-vector product goes to the GPU through a helper
that takes NumPy arrays and returns a NumPy array, as a drop-in for np.dot. The loop is
unchanged, so the 128 MB matrix is copied from (pageable) host memory to the GPU on every
iteration. Writes vec.npy and history.npy."""
import numpy as np
import torch

N = 4096
ITERS = 250
dev = torch.device("cuda")


def make_matrix():
    rng = np.random.default_rng(5)
    basis = rng.standard_normal((N, 64))
    A = (basis * np.linspace(4.0, 0.5, 64)) @ basis.T / 64
    A[np.diag_indices(N)] += 1.0
    return A


def matvec(A, x):
    A_t = torch.as_tensor(A, device=dev)
    x_t = torch.as_tensor(x, device=dev)
    return (A_t @ x_t).cpu().numpy()


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
