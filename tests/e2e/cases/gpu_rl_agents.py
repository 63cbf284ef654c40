# Reinforcement-learning trainers (cleanrl's shape): the project's own
# network sent to the device with .to(device) gives device output whatever
# the model knows of its input (a replay buffer's sample), and so do the
# layers it holds (self.network(x) in get_action); a clock read right after
# an .item() has nothing pending; a NaN guard's message before sys.exit()
# is printed once; and Dask, given CuPy chunks or meta, keeps them as they
# are (no CPU function).
import sys
import math

import numpy as np
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


# PPO's iteration: a rollout that waits on every step (its action goes to a
# CPU environment: the interface, not a round trip), then minibatch updates;
# what the iteration reads back once beside them is not what makes it slow.
def ppo(envs, args, writer):
    policy = nn.Linear(4, 2).cuda()
    obs = torch.zeros(8, 4, device="cuda")
    for iteration in range(args.num_iterations):
        for step in range(args.num_steps):
            action = policy(obs).argmax(1)
            next_obs, reward, done, trunc, info = envs.step(action.cpu().numpy())
            obs = torch.as_tensor(next_obs, device="cuda")
        for start in range(0, 64, 8):
            loss = policy(obs).sum()
            loss.backward()
            frac = loss.item()  # expect: GPU601
        writer.add_scalar("losses/value_loss", loss.item(), iteration)


def greedy(envs, q, obs, steps):
    q = q.cuda()
    for step in range(steps):
        actions = q(obs.cuda()).argmax(1).cpu().numpy()
        obs, reward, done, trunc, info = envs.step(actions)
        obs = torch.tensor(obs)
        print(q(obs.cuda()).max().item())  # expect: GPU601


# A search that stops at its first hit does not make the loop around it
# wait every iteration: the outer loop's own copy is still per cluster.
def merge(W, n, thresh):
    t = 0
    W = W.cuda()
    while t < n:
        c = W @ W.T
        order = np.argsort(c[t].cpu().numpy())  # expect: GPU601 GPU101/cupy
        for j in range(n):
            if c[t, j] < thresh:  # expect: GPU601
                break
        t += 1
