"""A jitted training step fed by host-side batching: the GPU waits while
NumPy builds each batch. JAX runs the step's copies and launches on its own
runtime threads (no Python frame there)."""
import numpy as np
import jax
import jax.numpy as jnp
from gpucheck import arg, report

n = arg(1, 200)
rng = np.random.default_rng(0)


@jax.jit
def step(w, x, y):
    def loss(w):
        return jnp.mean((jnp.tanh(x @ w) - y) ** 2)
    g = jax.grad(loss)(w)
    return w - 0.1 * g, loss(w)


w = jnp.zeros((256, 64), jnp.float32)
rows = [rng.standard_normal(256).astype(np.float32) for _ in range(4096)]
for i in range(n):
    idx = rng.integers(0, len(rows), 1024)
    x = np.stack([rows[k] * 0.5 for k in idx])  # host work the GPU waits for
    y = np.tanh(x[:, :64])
    w, l = step(w, x, y)  # EXPECT: gpu-starved
print("loss %.4f" % float(l))
report(iterations=n)
