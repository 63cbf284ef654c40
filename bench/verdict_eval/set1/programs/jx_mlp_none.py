"""Wide tanh MLP trained with a jitted plain-SGD update; the steps are dispatched back to
back on device-resident batches and the host waits only once, at the end.

Imitates: jax-ml/jax:examples/mnist_classifier_fromscratch.py (predict / loss with
logsumexp, `@jit def update(params, batch)` applying grad(loss) with plain SGD, called
once per batch in a Python loop), scaled up to wide bf16 layers with the batches already
on the device.
"""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

from functools import partial

import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp

LAYER_SIZES = [4096, 4096, 4096, 4096, 1024]
BATCH_SIZE = 8192
STEP_SIZE = 0.01
N_STEPS = 400


def init_random_params(key, scale, layer_sizes):
    keys = jax.random.split(key, len(layer_sizes) - 1)
    return [(scale * jax.random.normal(k, (m, n), jnp.bfloat16), jnp.zeros((n,), jnp.bfloat16))
            for k, m, n in zip(keys, layer_sizes[:-1], layer_sizes[1:])]


def predict(params, inputs):
    activations = inputs
    for w, b in params[:-1]:
        activations = jnp.tanh(jnp.dot(activations, w) + b)
    final_w, final_b = params[-1]
    logits = (jnp.dot(activations, final_w) + final_b).astype(jnp.float32)
    return logits - logsumexp(logits, axis=1, keepdims=True)


def loss(params, batch):
    inputs, targets = batch
    return -jnp.mean(predict(params, inputs) * targets)


@partial(jax.jit, donate_argnums=0)
def update(params, batch):
    grads = jax.grad(loss)(params, batch)
    return [(w - STEP_SIZE * dw, b - STEP_SIZE * db) for (w, b), (dw, db) in zip(params, grads)]


def make_batch(key):
    k_x, k_y = jax.random.split(key)
    inputs = jax.random.normal(k_x, (BATCH_SIZE, LAYER_SIZES[0]), jnp.bfloat16)
    labels = jax.random.randint(k_y, (BATCH_SIZE,), 0, LAYER_SIZES[-1])
    return inputs, jax.nn.one_hot(labels, LAYER_SIZES[-1], dtype=jnp.float32)


def main():
    key_params, key_data = jax.random.split(jax.random.key(0))
    params = init_random_params(key_params, 0.02, LAYER_SIZES)
    batches = [make_batch(k) for k in jax.random.split(key_data, 4)]

    for i in range(N_STEPS):
        params = update(params, batches[i % len(batches)])
    jax.block_until_ready(params)
    print("final loss", float(jax.jit(loss)(params, batches[0])))


if __name__ == "__main__":
    main()
