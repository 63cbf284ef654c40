"""2-D Poisson problem on a grid with SciPy sparse matrices.

Assembles a 5-point Laplacian (lil_matrix then csr_matrix), solves it directly
(spsolve) and iteratively (cg), takes a few eigenpairs (eigsh) and fits a bump
with scipy.optimize.minimize. GPU port: cupyx.scipy.sparse / sparse.linalg
(eigsh also in pylibraft); lil_matrix and scipy.optimize have no CuPy path.
"""
import numpy as np
import scipy.sparse as sp
from scipy.sparse import csr_matrix
from scipy.sparse.linalg import cg, eigsh, spsolve


def laplacian_2d(n):
    """Dirichlet 5-point Laplacian on an n x n interior grid, as CSR."""
    one_d = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    eye = sp.identity(n)
    a = sp.kron(eye, one_d) + sp.kron(one_d, eye)
    a = sp.lil_matrix(a)              # row edits are easy in LIL format
    a[0, 0] += 1e-6                   # tiny shift, as a real model might add
    return csr_matrix(a)


def source(n, cx, cy, width):
    xs = np.linspace(0.0, 1.0, n)
    gx, gy = np.meshgrid(xs, xs, indexing="ij")
    return np.exp(-((gx - cx) ** 2 + (gy - cy) ** 2) / (2.0 * width ** 2))


def fit_profile(profile):
    """Fit a Gaussian bump to a 1-D profile (scipy.optimize: CPU only)."""
    from scipy.optimize import minimize

    xs = np.linspace(0.0, 1.0, profile.size)

    def loss(p):
        amp, mu, sig = p
        model = amp * np.exp(-((xs - mu) ** 2) / (2.0 * sig ** 2))
        return np.sum((model - profile) ** 2)

    res = minimize(loss, x0=[profile.max(), 0.5, 0.2], method="Nelder-Mead",
                   options={"maxiter": 2000, "xatol": 1e-8, "fatol": 1e-12})
    return res


def main():
    n = 80
    a = laplacian_2d(n)
    h2 = (1.0 / (n + 1)) ** 2
    b = h2 * source(n, 0.4, 0.6, 0.1).ravel()

    u_direct = spsolve(a, b)
    u_cg, info = cg(a, b, atol=0.0, maxiter=2000)
    vals = eigsh(a, k=4, which="LA", return_eigenvectors=False)

    u = u_direct.reshape(n, n)
    row = u[int(0.4 * n)]
    fit = fit_profile(row / row.max())

    print(f"unknowns={a.shape[0]} nnz={a.nnz} format={a.format}")
    print(f"cg info={info}, |u_cg - u_direct|_inf = {np.abs(u_cg - u_direct).max():.2e}")
    print(f"largest eigenvalues: {np.sort(vals)[::-1].round(5)}")
    print(f"fitted bump centre {fit.x[1]:.3f} width {abs(fit.x[2]):.3f} "
          f"(converged={fit.success})")


if __name__ == "__main__":
    main()
