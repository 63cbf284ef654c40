"""A3C-style actor processes, spawned, each rendering and preprocessing its own frames.

Imitates AliJavadiGithub/Asynchronous-Advantage-Actor-Critic: A3C/multiprocessing_advanced.py
and A3C/main.py (mp.set_start_method('spawn'); one mp.Process per worker, each stepping its
own environment in a `while not done` loop; Pong frames reduced to a 4 x 42 x 42 input).
Here each of two spawned workers owns a small convolutional policy on the GPU and a
NumPy paddle-and-ball game: every step renders four 210 x 160 RGB frames (frame skip),
max-pools the last two, converts to grey, area-downsamples to 42 x 42 and pushes the
result onto a frame stack on the host, then asks the GPU for an action. New code.
"""
import numpy as np
import torch
import torch.multiprocessing as mp
import torch.nn as nn

N_WORKERS = 2
STEPS = 700
FRAME_SKIP = 4


class Policy(nn.Module):
    def __init__(self, n_actions=6):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 32, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(32, 32, 3, stride=2, padding=1)
        self.fc = nn.Linear(32 * 11 * 11, n_actions)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        return self.fc(x.flatten(1))


class PaddleGame:
    def __init__(self, rng):
        self.rng = rng
        self.ball = np.array([105.0, 80.0])
        self.vel = np.array([2.0, 3.0])
        self.paddle = 80.0

    def render(self):
        frame = np.zeros((210, 160, 3), dtype=np.uint8)
        frame[:, :, 2] = 40 + (np.arange(160) // 8).astype(np.uint8)[None, :]
        y, x = self.ball.astype(int)
        frame[max(y - 2, 0):y + 2, max(x - 2, 0):x + 2] = 236
        p = int(self.paddle)
        frame[190:194, max(p - 8, 0):p + 8] = (92, 186, 92)
        frame += self.rng.integers(0, 3, frame.shape, dtype=np.uint8)
        return frame

    def step(self, action):
        self.paddle = float(np.clip(self.paddle + (action - 2.5) * 2.0, 8, 152))
        frames = []
        reward = 0.0
        for _ in range(FRAME_SKIP):
            self.ball += self.vel
            if not 2 <= self.ball[1] <= 158:
                self.vel[1] = -self.vel[1]
            if self.ball[0] <= 2:
                self.vel[0] = -self.vel[0]
            if self.ball[0] >= 188:
                reward += 1.0 if abs(self.ball[1] - self.paddle) < 10 else -1.0
                self.vel[0] = -self.vel[0]
            frames.append(self.render())
        return np.maximum(frames[-2], frames[-1]), reward


def preprocess(frame):
    grey = frame.astype(np.float32) @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    grey = grey[:210, :160].reshape(42, 5, 40, 4).mean(axis=(1, 3))
    grey = np.repeat(grey, 42 // 40 + 1, axis=1)[:, :42]
    return (grey - grey.mean()) / (grey.std() + 1e-5)


def worker(rank):
    torch.manual_seed(rank)
    rng = np.random.default_rng(rank)
    dev = torch.device("cuda")
    policy = Policy().to(dev)
    game = PaddleGame(rng)
    stack = np.zeros((4, 42, 42), dtype=np.float32)
    score = 0.0
    with torch.no_grad():
        for _ in range(STEPS):
            obs = torch.from_numpy(stack).to(dev).unsqueeze(0)
            probs = torch.softmax(policy(obs), dim=1)
            action = torch.multinomial(probs, 1).item()
            frame, reward = game.step(action)
            stack = np.concatenate([stack[1:], preprocess(frame)[None]], axis=0)
            score += reward
    print(f"worker {rank}: score {score}")


if __name__ == "__main__":
    mp.set_start_method("spawn")
    procs = [mp.Process(target=worker, args=(r,)) for r in range(N_WORKERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    if any(p.exitcode != 0 for p in procs):
        raise SystemExit(1)
