"""A small PyTorch regression model trained with mini-batches.

Code that already runs on PyTorch stays on PyTorch: the GPU work is to keep
data on the device, drop per-step host round trips (`loss.item()` every step),
and use the framework's tools (torch.compile, autocast, torch.profiler).
Exits 0 with a message when torch is not installed.
"""
import sys

import numpy as np

try:
    import torch
    import torch.nn as nn
except ImportError:
    torch = None


def make_data(n=4096, d=16, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    w = rng.standard_normal(d).astype(np.float32)
    y = np.tanh(x @ w)[:, None] + 0.05 * rng.standard_normal((n, 1)).astype(np.float32)
    return x, y.astype(np.float32)


def train(device, epochs=5, batch=256):
    torch.manual_seed(0)
    x_np, y_np = make_data()
    x = torch.from_numpy(x_np).to(device)
    y = torch.from_numpy(y_np).to(device)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = nn.MSELoss()

    history = []
    for epoch in range(epochs):
        perm = torch.randperm(x.shape[0], device=device)
        running = 0.0
        for start in range(0, x.shape[0], batch):
            idx = perm[start:start + batch]
            opt.zero_grad()
            loss = loss_fn(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
            running += loss.item()  # host sync every step: a known cost on a GPU
        history.append(running / (x.shape[0] // batch))
    with torch.no_grad():
        final = loss_fn(model(x), y).item()
    return history, final


def main():
    if torch is None:
        print("torch not installed: nothing to run (pip install torch to try this example)")
        return 0
    device = "cuda" if torch.cuda.is_available() else "cpu"
    history, final = train(device)
    print(f"torch {torch.__version__} on {device}")
    print("epoch losses:", " ".join(f"{h:.4f}" for h in history))
    print(f"final full-batch MSE: {final:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
