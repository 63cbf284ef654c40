"""Hogwild-style multi-process training: the parent spawns two worker processes (spawn
start method); each trains a classifier on the GPU and reads the loss back with
.item() after every mini-batch.

Imitates: pytorch/examples:mnist_hogwild/main.py (mp.set_start_method('spawn'), one
mp.Process per rank running train(), joined by the parent) and
pytorch/examples:mnist_hogwild/train.py (train_epoch / test_epoch: per-batch
loss.item() and .sum().item()). Each worker builds its own model on the device here
instead of sharing the parent's, and the data are synthetic tensors on the device.
"""
import sys

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 512)
        self.fc2 = nn.Linear(512, 10)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def train(rank, epochs, n_batches, batch_size):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(1 + rank)
    model = Net().to(device)
    data = torch.randn(n_batches, batch_size, 784, device=device)
    target = torch.randint(0, 10, (n_batches, batch_size), device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    model.train()
    for epoch in range(1, epochs + 1):
        epoch_loss = 0.0
        for batch_idx in range(n_batches):
            optimizer.zero_grad()
            output = model(data[batch_idx])
            loss = F.nll_loss(output, target[batch_idx])
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
        if epoch % 20 == 0:
            print(f"rank {rank}\tTrain Epoch: {epoch}\tLoss: {epoch_loss / n_batches:.6f}", flush=True)


if __name__ == "__main__":
    mp.set_start_method("spawn", force=True)
    processes = []
    for rank in range(2):
        p = mp.Process(target=train, args=(rank, 80, 25, 4096))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    sys.exit(0 if all(p.exitcode == 0 for p in processes) else 1)
