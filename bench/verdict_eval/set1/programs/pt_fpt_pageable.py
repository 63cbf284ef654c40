"""Patch-token image classifier fed from an in-memory NumPy image set: every step the
batch is shipped host->device with torch.from_numpy(x).to(device) out of ordinary
(pageable) NumPy memory, never pinned.

Imitates: kzl/universal-computation:universal_computation/datasets/dataset.py
(Dataset.get_batch: get_batch_np() returns NumPy arrays, which are shipped every step
with torch.from_numpy(x).to(device=self.device, dtype=torch.float32)).
"""
import numpy as np
import torch
import torch.nn.functional as F


class NumpyImageDataset:
    def __init__(self, n_images, size, n_classes, device, seed=0):
        rng = np.random.default_rng(seed)
        self.images = rng.standard_normal((n_images, 3, size, size), dtype=np.float32)
        self.labels = rng.integers(0, n_classes, size=n_images)
        self.device = device
        self._ind = 0

    def get_batch_np(self, batch_size):
        n_batches = self.images.shape[0] // batch_size
        i = self._ind % n_batches
        sl = slice(i * batch_size, (i + 1) * batch_size)
        return self.images[sl], self.labels[sl]

    def get_batch(self, batch_size):
        x, y = self.get_batch_np(batch_size)
        x = torch.from_numpy(x).to(device=self.device, dtype=torch.float32)
        y = torch.from_numpy(y).to(device=self.device, dtype=torch.long)
        self._ind += 1
        return x, y


class PatchClassifier(torch.nn.Module):
    def __init__(self, dim=192, patch=16, n_classes=10):
        super().__init__()
        self.embed = torch.nn.Conv2d(3, dim, patch, stride=patch)
        self.mlp1 = torch.nn.Linear(dim, dim)
        self.mlp2 = torch.nn.Linear(dim, dim)
        self.out = torch.nn.Linear(dim, n_classes)

    def forward(self, x):
        tokens = self.embed(x).flatten(2).transpose(1, 2)
        tokens = tokens + self.mlp2(F.gelu(self.mlp1(tokens)))
        return self.out(tokens.mean(dim=1))


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dataset = NumpyImageDataset(n_images=256, size=224, n_classes=10, device=device)
    torch.manual_seed(0)
    model = PatchClassifier().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch_size = 64  # 64 x 3 x 224 x 224 float32 = 36.75 MiB per step

    for step in range(200):
        x, y = dataset.get_batch(batch_size)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"last loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
