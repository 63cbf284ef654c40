"""Kalman filtering of a long four-channel position record with a constant-velocity
state-space model (8 states), written op by op in jax.numpy and run eagerly: a Python
loop over the time steps calls predict and update and stores each filtered mean and
covariance with .at[i].set(...).

Imitates: pnkraemer/code-robust-state-estimation-singular-noise:src/ckf/ckf.py
(kalman_filter: `for i, d in enumerate(data): rv = predict(rv, latent); rv = update(rv,
d, observe); ms = ms.at[i].set(rv[0]); cs = cs.at[i].set(rv[1])`, with predict / update
as A @ m, A @ C @ A.T + Q and K = C @ A.T @ jnp.linalg.inv(S)), in the version before
the loop was moved into jax.lax.scan.

Nothing is jitted, so every jnp operation (indexing and .at[].set included) is
dispatched on its own: about twenty-five tiny kernels per time step on 8 x 8 and 4 x 4
matrices, a microsecond or two of GPU work each, against tens to hundreds of
microseconds of Python and dispatch overhead per operation, for 1000 steps; the GPU
sits idle between tiny kernels: launch-bound.
"""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

N_STEPS = 1000
N_AXES = 4            # tracked coordinates; state = (position, velocity) per axis
DT = 0.05
ACCEL_STD = 0.8
MEAS_STD = 0.5


def make_model():
    one = np.array([[1.0, DT], [0.0, 1.0]])
    q = ACCEL_STD ** 2 * np.array([[DT ** 4 / 4, DT ** 3 / 2], [DT ** 3 / 2, DT ** 2]])
    A = np.kron(np.eye(N_AXES), one)
    Q = np.kron(np.eye(N_AXES), q)
    H = np.kron(np.eye(N_AXES), np.array([[1.0, 0.0]]))
    R = MEAS_STD ** 2 * np.eye(N_AXES)
    return tuple(jnp.asarray(x, dtype=jnp.float32) for x in (A, Q, H, R))


def simulate(A, Q, H, R, seed=0):
    """Ground truth and noisy measurements, generated on the host (NumPy)."""
    rng = np.random.default_rng(seed)
    A, Q, H, R = (np.asarray(x, dtype=np.float64) for x in (A, Q, H, R))
    x = np.zeros(2 * N_AXES)
    truth = np.empty((N_STEPS, 2 * N_AXES))
    chol_q = np.linalg.cholesky(Q + 1e-12 * np.eye(len(Q)))
    for t in range(N_STEPS):
        x = A @ x + chol_q @ rng.standard_normal(len(x))
        truth[t] = x
    meas = truth @ H.T + MEAS_STD * rng.standard_normal((N_STEPS, N_AXES))
    return truth.astype(np.float32), meas.astype(np.float32)


def predict(rv, latent):
    A, Q = latent
    m, C = rv
    m = A @ m
    C = A @ C @ A.T + Q
    return m, C


def update(rv, datum, observe):
    H, R = observe
    m, C = rv
    z = H @ m
    S = H @ C @ H.T + R
    K = C @ H.T @ jnp.linalg.inv(S)
    m = m + K @ (datum - z)
    C = C - K @ H @ C
    return m, C


def kalman_filter(data, init, latent, observe):
    n = data.shape[0]
    d = init[0].shape[0]
    ms = jnp.zeros((n, d))
    cs = jnp.zeros((n, d, d))
    rv = init
    for i in range(n):
        rv = predict(rv, latent)
        rv = update(rv, data[i], observe)
        ms = ms.at[i].set(rv[0])
        cs = cs.at[i].set(rv[1])
    return ms, cs


def main():
    A, Q, H, R = make_model()
    truth, meas = simulate(A, Q, H, R)
    data = jnp.asarray(meas)
    init = (jnp.zeros(2 * N_AXES), 10.0 * jnp.eye(2 * N_AXES))
    ms, cs = kalman_filter(data, init, (A, Q), (H, R))
    pos_err = ms[:, 0::2] - jnp.asarray(truth[:, 0::2])
    rmse = float(jnp.sqrt(jnp.mean(pos_err ** 2)))
    raw = float(np.sqrt(np.mean((meas - truth[:, 0::2]) ** 2)))
    print(f"steps {N_STEPS}, filtered position RMSE {rmse:.4f} (raw measurements {raw:.4f}), "
          f"final position variance {float(cs[-1, 0, 0]):.5f}")


if __name__ == "__main__":
    main()
