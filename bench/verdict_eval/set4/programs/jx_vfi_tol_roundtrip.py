"""Value function iteration for an infinite-horizon job search model with Markov wage
offers, solved to a tight tolerance for eight levels of unemployment compensation (the
reservation wage as a function of c): each iteration is one jitted Bellman step that
returns the new value function and its sup-norm change, and the Python loop reads that
change back to decide whether to stop.

Imitates: phantomachine/hitotsubashi_workshop_2025:day_2/source/job_search.md (vfi:
`new_v, error = vfi_step(v, model)` inside a Python for loop, then `if error < tol:` on
the device scalar every iteration) and QuantEcon/lecture-jax:_static/lecture_specific/
successive_approx.py (the same host-side `while error > tolerance` loop around a jitted
operator).

A Bellman step is one 1000 x 1000 matrix-vector product and a few element-wise
operations, a few microseconds of GPU work, but the stopping test copies the error to
the host after every step (about 24,000 steps in all at beta = 0.998): a blocking
device-to-host read per iteration, with the GPU idle while the host waits for it,
compares and dispatches the next step: roundtrip-storm.
"""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.scipy.special import ndtr  # noqa: E402

jax.config.update("jax_enable_x64", True)

N_WAGES = 1000
RHO = 0.9              # wage persistence
NU = 0.2               # wage volatility
BETA = 0.998           # discount factor
COMPENSATIONS = tuple(0.5 + 0.25 * k for k in range(8))   # reservation wage vs c
TOL = 1e-7
MAX_ITER = 200_000


def tauchen(n, rho, sigma, m=3.0):
    """Tauchen discretisation of the AR(1) log-wage process, built on the device."""
    std_y = sigma / jnp.sqrt(1.0 - rho ** 2)
    y = jnp.linspace(-m * std_y, m * std_y, n)
    half = 0.5 * (y[1] - y[0])
    mean = rho * y[:, None]
    upper = ndtr((y[None, :] - mean + half) / sigma)
    lower = ndtr((y[None, :] - mean - half) / sigma)
    P = upper - lower
    P = P.at[:, 0].set(upper[:, 0])
    P = P.at[:, -1].set(1.0 - lower[:, -1])
    return jnp.exp(y), P


@jax.jit
def vfi_step(v, P, w_vals, c):
    """Bellman operator Tv = max{w / (1 - beta), c + beta P v} and the sup-norm change."""
    h = c + BETA * (P @ v)
    e = w_vals / (1.0 - BETA)
    new_v = jnp.maximum(e, h)
    return new_v, jnp.max(jnp.abs(new_v - v))


@jax.jit
def get_greedy(v, P, w_vals, c):
    h = c + BETA * (P @ v)
    return jnp.where(w_vals / (1.0 - BETA) >= h, 1, 0)


def vfi(P, w_vals, c):
    v = jnp.zeros_like(w_vals)
    for i in range(MAX_ITER):
        new_v, error = vfi_step(v, P, w_vals, c)
        err = float(error)
        if err < TOL:
            break
        v = new_v
    return new_v, i + 1


def main():
    w_vals, P = tauchen(N_WAGES, RHO, NU)
    for c in COMPENSATIONS:
        c_dev = jnp.asarray(c)
        v_star, n_iter = vfi(P, w_vals, c_dev)
        sigma = get_greedy(v_star, P, w_vals, c_dev)
        res_wage = float(w_vals[jnp.argmax(sigma)])
        print(f"c={c:.2f}: converged after {n_iter} iterations, reservation wage {res_wage:.4f}, "
              f"v(w_max)={float(v_star[-1]):.3f}")


if __name__ == "__main__":
    main()
