"""JAX classifier training fed by a per-image NumPy augmentation pipeline on the host.

Imitates phlippe/uvadlc_notebooks_benchmarking:JAX/Tutorial5_Inception_ResNet_DenseNet.py
(per-image transforms ending in image_to_numpy(): float32 conversion, /255, minus the
channel means, divided by the channel stds; batches put together by numpy_collate's
np.stack; a jitted train_step): every image of every batch is flipped, padded,
randomly cropped and normalised in NumPy in the main process, then the batch goes to a
small jitted MLP step that takes well under a millisecond on the GPU. New code;
synthetic 32 x 32 images with a fixed seed.
"""
import numpy as np
import jax
import jax.numpy as jnp

rng = np.random.default_rng(0)
N_TRAIN, BATCH, STEPS = 8192, 256, 64
DATA = rng.integers(0, 256, (N_TRAIN, 32, 32, 3), dtype=np.uint8)
LABELS = rng.integers(0, 10, N_TRAIN)
MEANS = DATA.reshape(-1, 3).mean(axis=0) / 255.0
STDS = DATA.reshape(-1, 3).std(axis=0) / 255.0


def image_to_numpy(img):
    img = np.array(img, dtype=np.float32)
    return (img / 255.0 - MEANS) / STDS


def train_transform(img):
    if rng.random() < 0.5:
        img = img[:, ::-1, :]
    padded = np.pad(img, ((4, 4), (4, 4), (0, 0)), mode="reflect")
    dy, dx = rng.integers(0, 9, 2)
    crop = padded[dy:dy + 32, dx:dx + 32, :]
    return image_to_numpy(crop)


def numpy_collate(idx):
    imgs = np.stack([train_transform(DATA[i]) for i in idx])
    return imgs.reshape(len(idx), -1), LABELS[idx]


def init_params(key):
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (3072, 512)) * 0.02, "b1": jnp.zeros(512),
            "w2": jax.random.normal(k2, (512, 10)) * 0.02, "b2": jnp.zeros(10)}


def loss_fn(params, x, y):
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], 1))


@jax.jit
def train_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    params = jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
    return params, loss


def main():
    params = init_params(jax.random.PRNGKey(0))
    losses = []
    for step in range(STEPS):
        idx = rng.choice(N_TRAIN, BATCH, replace=False)
        x, y = numpy_collate(idx)
        params, loss = train_step(params, x, y)
        losses.append(loss)
    print("final loss", float(losses[-1]), "steps", STEPS)


if __name__ == "__main__":
    main()
