# Reinforcement-learning trainers (cleanrl's shape): the project's own
# network sent to the device with .to(device) gives device output whatever
# the model knows of its input (a replay buffer's sample), and so do the
# layers it holds (self.network(x) in get_action); a clock read right after
# an .item() has nothing pending; a NaN guard's message before sys.exit()
# is printed once; and Dask, given CuPy chunks or meta, keeps them as they
# are (no CPU function).
import sys
import math
import time

import cupy as cp
import dask.array as da  # expect: GPU111/dask
import torch  # expect: GPU501/-
import torch.nn as nn


class QNetwork(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.network = nn.Sequential(nn.Linear(n, 120), nn.ReLU(), nn.Linear(120, 2))

    def forward(self, x):
        return self.network(x)

    def get_action(self, x):
        logits = self.network(x)
        return logits.argmax(1), logits


def train(rb, writer, args):
    device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")
    q_network = QNetwork(4).to(device)
    target_network = QNetwork(4).to(device)
    optimizer = torch.optim.Adam(q_network.parameters())
    start_time = time.time()
    for global_step in range(args.total_timesteps):
        data = rb.sample(args.batch_size)
        old_val = q_network(data.observations).gather(1, data.actions).squeeze()
        _, logits = target_network.get_action(data.next_observations)
        loss = ((old_val - logits.max(1).values) ** 2).mean()
        if not math.isfinite(loss.item()):  # expect: GPU601
            print("loss is {}, stopping".format(loss.item()))
            sys.exit(1)
        if global_step % 100 == 0:
            writer.add_scalar("losses/q_values", old_val.mean().item(), global_step)
            print("SPS:", int(global_step / (time.time() - start_time)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        for tp, qp in zip(target_network.parameters(), q_network.parameters()):
            tp.data.copy_(0.005 * qp.data + 0.995 * tp.data)
        print(logits.mean().item())  # expect: GPU601


def to_device(array, device):
    return da.map_blocks(cp.asarray, array, meta=cp.array((), dtype=array.dtype))
