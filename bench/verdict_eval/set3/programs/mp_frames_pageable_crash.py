"""Two spawned worker processes denoise detector frames with a small convolutional
network on the same GPU: every batch of 16 frames (64 MiB of float32) is shipped from an
ordinary NumPy buffer with torch.from_numpy(...).to(device) and the result comes back with
.cpu(). Shard 1 contains a corrupt readout, its worker raises at the end, and the parent
exits with status 1.

Imitates: ASSISTments-IQP/LongitudinalKnowledgeTracing24:DKT/test_share.py
(mp.set_start_method('spawn'); two mp.Process workers, each builds a host tensor, moves it
with tensor.to(device) and computes on it; the parent starts and joins them).

The network is about a millisecond of GPU work per batch, while the two 64 MiB copies in
and out go through pageable memory (staged by the driver, ~10 ms a batch): the copies
dominate the workers' GPU time and pinned buffers would make them several times faster:
pageable-transfer.
"""
import sys

import numpy as np
import torch
import torch.multiprocessing as mp
import torch.nn as nn

FRAMES = 16
SIZE = 1024
N_BATCHES = 40


def make_denoiser():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(16, 1, 3, padding=1))


def worker_process(rank, device):
    model = make_denoiser().to(device).eval()
    rng = np.random.default_rng(100 + rank)
    rows = rng.standard_normal((FRAMES, 1, SIZE, 1), dtype=np.float32)
    cols = rng.standard_normal((1, 1, 1, SIZE), dtype=np.float32)
    shard = [rows * cols, rows * cols[..., ::-1]]        # two host buffers, reused in turn
    if rank == 1:
        shard[1][5, 0, 300:340, 700:760] = np.nan        # a corrupt readout in this shard
    checksum = torch.zeros((), dtype=torch.float64, device=device)
    cleaned = [None, None]
    with torch.no_grad():
        for b in range(N_BATCHES):
            frames = torch.from_numpy(shard[b % 2]).to(device)
            out = model(frames)
            checksum += out.double().sum()
            cleaned[b % 2] = out.cpu().numpy()
    total = float(checksum)
    print(f"worker {rank}: {N_BATCHES} batches, checksum {total:.6e}", flush=True)
    if not np.isfinite(total):
        raise ValueError(f"worker {rank}: non-finite output, shard is corrupt")


def main():
    mp.set_start_method("spawn", force=True)
    device = torch.device("cuda:0")
    processes = []
    for rank in range(2):
        p = mp.Process(target=worker_process, args=(rank, device))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    failed = [rank for rank, p in enumerate(processes) if p.exitcode != 0]
    if failed:
        print(f"workers {failed} failed", file=sys.stderr)
        sys.exit(1)
    print("all shards cleaned")


if __name__ == "__main__":
    main()
