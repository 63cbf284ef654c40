"""A parent that spawns two GPU worker processes, waits for them, then keeps an EMA copy
of a deep model with a per-parameter Python loop on the GPU, and finally dies of SIGABRT.

Imitates: facebookresearch/DiT:train.py (update_ema: for every parameter,
ema.mul_(decay).add_(param, alpha=1 - decay), called after every optimizer step) and
pytorch/examples:mnist_hogwild/main.py (spawned mp.Process workers joined before the
parent carries on with its own GPU work).
"""
import copy
import os
import resource
import signal

import torch
import torch.multiprocessing as mp
import torch.nn as nn


def score_shard(rank, queue):
    """Worker: a compute-bound chain of big GEMMs, one float sent back at the end."""
    device = torch.device("cuda")
    gen = torch.Generator(device=device).manual_seed(rank)
    a = torch.randn(8192, 8192, device=device, generator=gen)
    acc = torch.zeros((), device=device)
    for _ in range(10):
        a = torch.tanh(a @ a.T * (1.0 / 90.0))
        acc += a.mean()
    queue.put((rank, float(acc)))


class Block(nn.Module):
    def __init__(self, d=256):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(self.norm(x))))


@torch.no_grad()
def update_ema(ema_params, params, decay):
    for ema_p, p in zip(ema_params, params):
        ema_p.mul_(decay).add_(p, alpha=1.0 - decay)


def main():
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    workers = [ctx.Process(target=score_shard, args=(r, queue)) for r in range(2)]
    for w in workers:
        w.start()
    scores = dict(queue.get(timeout=300) for _ in workers)
    for w in workers:
        w.join()
    print("worker scores", scores, flush=True)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(*[Block() for _ in range(32)]).to(device)
    ema = copy.deepcopy(model).requires_grad_(False)
    for p in model.parameters():
        p.grad = 1e-3 * torch.randn_like(p)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    params, ema_params = list(model.parameters()), list(ema.parameters())

    for step in range(150):
        optimizer.step()
        update_ema(ema_params, params, decay=0.999)
    torch.cuda.synchronize()
    print("ema drift", float((ema_params[0] - params[0]).abs().max()), flush=True)

    # the crash: no core file, the exit status is 128 + SIGABRT
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.kill(os.getpid(), signal.SIGABRT)


if __name__ == "__main__":
    main()
