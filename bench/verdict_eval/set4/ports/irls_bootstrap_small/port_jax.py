"""GPU port of base.py with JAX: the data and the bootstrap indices come from the same
seeded NumPy generator; the 2400 resampled fits are done at once on the GPU with the
IRLS update vmapped over resamples inside one jitted function (float64 enabled, so the
results match the float64 baseline), and the coefficients come back for the
percentiles.

Correct, but the whole job is ~1 s of small NumPy calls on the CPU; the port spends
its time importing JAX, starting the GPU backend and compiling the function, far more
than the few milliseconds of GPU work.

Imitates: wizplan/ml-essence:05/logisticreg.py (IRLS logistic regression), ported with
jax.vmap over bootstrap resamples.
"""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

N = 1500
P = 8
N_BOOT = 2400
N_NEWTON = 8


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def fit_irls(X, y):
    def newton(_, w):
        eta = X @ w
        yhat = jax.nn.sigmoid(eta)
        r = jnp.clip(yhat * (1.0 - yhat), 1e-10, None)
        XR = X.T * r
        return jnp.linalg.solve(XR @ X, XR @ (eta - (yhat - y) / r))
    return jax.lax.fori_loop(0, N_NEWTON, newton, jnp.zeros(X.shape[1]))


@jax.jit
def bootstrap_fits(X, y, idx):
    return jax.vmap(lambda i: fit_irls(X[i], y[i]))(idx)


def main():
    rng = np.random.default_rng(17)
    X = np.hstack([np.ones((N, 1)), rng.standard_normal((N, P))])
    w_true = np.concatenate([[-0.5], rng.normal(0.0, 0.6, P)])
    y = (rng.random(N) < sigmoid(X @ w_true)).astype(np.float64)
    idx = rng.integers(0, N, size=(N_BOOT, N))
    coefs = np.asarray(bootstrap_fits(jnp.asarray(X), jnp.asarray(y), jnp.asarray(idx)))
    ci = np.percentile(coefs, [2.5, 97.5], axis=0)
    np.save("coefs.npy", coefs)
    np.save("ci.npy", ci)
    full = np.asarray(jax.jit(fit_irls)(jnp.asarray(X), jnp.asarray(y)))
    print("full-data fit", np.round(full, 3))
    print("95% CI width", np.round(ci[1] - ci[0], 3))


if __name__ == "__main__":
    main()
