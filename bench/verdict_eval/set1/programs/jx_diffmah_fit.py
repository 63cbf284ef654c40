"""Batched fit of a halo mass-accretion-history model with a hand-rolled Adam loop that
brings the loss back to the host after every step to track the best fit.

Imitates: ArgonneCPAC/diffmah:diffmah/fitting_helpers/fit_utils.py (_jax_adam_wrapper:
a Python loop over n_step calling loss_and_grad_func, the loss collected on the host
each step, checked against the best value and the tolerance).
"""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import numpy as np
import jax
import jax.numpy as jnp

N_HALOS = 65536
N_TIMES = 128
LOG_T0 = np.log10(13.8)


def _sigmoid(x, x0, k, ymin, ymax):
    return ymin + (ymax - ymin) * jax.nn.sigmoid(k * (x - x0))


def log_mah_model(params, log_t):
    logm0, logtc, early, late = (params[:, i:i + 1] for i in range(4))
    alpha = _sigmoid(log_t[None, :], logtc, 3.5, early, late)
    return logm0 + alpha * (log_t[None, :] - LOG_T0)


def mse_loss(params, loss_data):
    log_t, target = loss_data
    diff = log_mah_model(params, log_t) - target
    return jnp.mean(diff * diff)


loss_and_grad = jax.value_and_grad(mse_loss)


@jax.jit
def adam_step(state, loss_data, step_size=0.01, b1=0.9, b2=0.999, eps=1e-8):
    params, m, v, i = state
    loss, grads = loss_and_grad(params, loss_data)
    i = i + 1.0
    m = b1 * m + (1.0 - b1) * grads
    v = b2 * v + (1.0 - b2) * grads * grads
    m_hat = m / (1.0 - b1 ** i)
    v_hat = v / (1.0 - b2 ** i)
    params = params - step_size * m_hat / (jnp.sqrt(v_hat) + eps)
    return (params, m, v, i), loss


def fit(params_init, loss_data, n_step, tol=0.0):
    state = (params_init, jnp.zeros_like(params_init), jnp.zeros_like(params_init),
             jnp.zeros((), jnp.float32))
    loss_arr = np.zeros(n_step, dtype="f4")
    best_loss, best_params = float("inf"), params_init
    for istep in range(n_step):
        state, loss = adam_step(state, loss_data)
        loss_arr[istep] = float(loss)
        if loss_arr[istep] < best_loss:
            best_loss, best_params = loss_arr[istep], state[0]
        if loss_arr[istep] < tol:
            break
    return best_params, best_loss, loss_arr


def main():
    key_true, key_noise, key_init = jax.random.split(jax.random.key(0), 3)
    log_t = jnp.linspace(np.log10(0.5), np.log10(13.8), N_TIMES)
    lo = jnp.array([11.0, 0.0, 1.5, 0.2])
    hi = jnp.array([14.0, 0.8, 3.5, 1.0])
    p_true = lo + (hi - lo) * jax.random.uniform(key_true, (N_HALOS, 4))
    target = log_mah_model(p_true, log_t) + 0.02 * jax.random.normal(key_noise, (N_HALOS, N_TIMES))
    p_init = p_true + 0.1 * jax.random.normal(key_init, (N_HALOS, 4))

    best_params, best_loss, loss_arr = fit(p_init, (log_t, target), n_step=6000)
    print(f"best loss {best_loss:.5f}, first {loss_arr[0]:.5f}, "
          f"param error {float(jnp.abs(best_params - p_true).mean()):.4f}")


if __name__ == "__main__":
    main()
