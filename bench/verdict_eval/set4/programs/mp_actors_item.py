"""Distributed-prioritised-replay style actors: two spawned actor processes each step 64
copies of a small point-mass navigation environment with an epsilon-greedy Q-network on
the GPU, and send their episode returns to the parent through a queue.

Imitates: jinbeizame007/pytorch-apex:main.py (mp.set_start_method('spawn'); one
mp.Process per actor) and actor.py (Actor.select_action: the Q-network runs on cuda:0
and the greedy action is taken with `q_val.argmax().item()`), with a vector of
environments whose actions are read back one environment at a time.

Each step the Q-network is half a dozen small kernels (~30 microseconds of GPU work),
but the actor then reads the 64 greedy actions back with .item(), one blocking 8-byte
device-to-host copy per environment, so every step is ~64 round trips with the GPU idle
in between: roundtrip-storm, in both actor processes.
"""
import numpy as np
import torch
import torch.multiprocessing as mp
import torch.nn as nn

N_ACTORS = 2
N_ENVS = 64
N_STEPS = 1000
OBS_DIM = 8
N_ACTIONS = 5
MAX_EPISODE = 200


class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS_DIM, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                                 nn.Linear(256, N_ACTIONS))

    def forward(self, x):
        return self.net(x)


class PointMassEnvs:
    """Vectorised 2-D point masses that must reach a goal; actions: 4 pushes or coast."""

    PUSH = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])

    def __init__(self, n, rng):
        self.n, self.rng = n, rng
        self.pos = rng.uniform(-1, 1, (n, 2))
        self.vel = np.zeros((n, 2))
        self.goal = rng.uniform(-1, 1, (n, 2))
        self.t = np.zeros(n, dtype=int)

    def obs(self):
        return np.hstack([self.pos, self.vel, self.goal, self.goal - self.pos]).astype(np.float32)

    def step(self, actions):
        self.vel = 0.9 * self.vel + 0.05 * self.PUSH[actions]
        self.pos = np.clip(self.pos + 0.1 * self.vel, -1.5, 1.5)
        dist = np.linalg.norm(self.goal - self.pos, axis=1)
        reward = -dist
        self.t += 1
        done = (dist < 0.05) | (self.t >= MAX_EPISODE)
        if done.any():
            k = int(done.sum())
            self.pos[done] = self.rng.uniform(-1, 1, (k, 2))
            self.vel[done] = 0.0
            self.goal[done] = self.rng.uniform(-1, 1, (k, 2))
            self.t[done] = 0
        return reward, done


def actor_process(actor_id, queue, device="cuda:0"):
    torch.manual_seed(actor_id)
    rng = np.random.default_rng(actor_id)
    net = QNet().to(device).eval()
    envs = PointMassEnvs(N_ENVS, rng)
    epsilon = 0.4 ** (1 + 7 * actor_id / max(N_ACTORS - 1, 1))
    returns, ep_return = [], np.zeros(N_ENVS)
    with torch.no_grad():
        for _ in range(N_STEPS):
            state = torch.from_numpy(envs.obs()).to(device)
            greedy = net(state).argmax(dim=1)
            actions = [greedy[i].item() for i in range(N_ENVS)]
            explore = rng.random(N_ENVS) < epsilon
            actions = np.where(explore, rng.integers(0, N_ACTIONS, N_ENVS), actions)
            reward, done = envs.step(actions)
            ep_return += reward
            returns.extend(ep_return[done].tolist())
            ep_return[done] = 0.0
    queue.put((actor_id, len(returns), float(np.mean(returns)) if returns else float("nan")))


def main():
    mp.set_start_method("spawn", force=True)
    queue = mp.Queue()
    processes = [mp.Process(target=actor_process, args=(a, queue)) for a in range(N_ACTORS)]
    for p in processes:
        p.start()
    results = sorted(queue.get() for _ in processes)
    for p in processes:
        p.join()
    for actor_id, n_episodes, mean_return in results:
        print(f"actor {actor_id}: {n_episodes} episodes, mean return {mean_return:.2f}")


if __name__ == "__main__":
    main()
