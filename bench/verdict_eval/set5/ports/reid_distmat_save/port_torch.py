"""PyTorch port of base.py: the distance matrix and the top-k search run on the GPU with
torch.topk; the features are made with NumPy as in the baseline. The results are handed
to np.save while they are still CUDA tensors (the bug fixed in JDAI-CV/fast-reid pull
request #509: "can't convert cuda:0 device type tensor to numpy"), so the program raises
TypeError after the GPU work and writes nothing. Writes topk.npy and topk_dist.npy."""
import numpy as np
import torch

N_QUERY, N_GALLERY, DIM, TOPK = 2000, 16000, 256, 10
dev = torch.device("cuda")


def make_features():
    rng = np.random.default_rng(2)
    ids = rng.normal(size=(1500, DIM)).astype(np.float32)
    q = ids[rng.integers(0, 1500, N_QUERY)] + 0.6 * rng.normal(size=(N_QUERY, DIM)).astype(np.float32)
    g = ids[rng.integers(0, 1500, N_GALLERY)] + 0.6 * rng.normal(size=(N_GALLERY, DIM)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    return q, g


def main():
    q, g = make_features()
    q_t = torch.from_numpy(q).to(dev)
    g_t = torch.from_numpy(g).to(dev)
    distmat = 2.0 - 2.0 * (q_t @ g_t.T)
    topk_dist, topk = torch.topk(distmat, TOPK, dim=1, largest=False, sorted=True)
    np.save("topk.npy", topk)
    np.save("topk_dist.npy", topk_dist)


if __name__ == "__main__":
    main()
