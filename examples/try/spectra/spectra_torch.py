"""The PyTorch twin of spectra.py: the same recordings, torch.fft on the GPU."""
import sys

import numpy as np
import torch


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2048
    length = int(sys.argv[2]) if len(sys.argv) > 2 else 16384
    dev = torch.device("cuda")
    rng = np.random.default_rng(0)
    t = np.arange(length, dtype=np.float32)
    freq = rng.uniform(0.01, 0.45, size=(n, 1)).astype(np.float32)
    x = torch.from_numpy(np.sin(2 * np.pi * freq * t) + rng.standard_normal((n, length), dtype=np.float32)).to(dev)
    power = torch.fft.rfft(x, dim=1).abs() ** 2
    edges = np.linspace(0, power.shape[1], 17).astype(int)
    bands = torch.stack([power[:, a:b].sum(dim=1) for a, b in zip(edges[:-1], edges[1:])], dim=1)
    np.save("bands.npy", bands.cpu().numpy().astype(np.float32))
    np.save("peaks.npy", (torch.argmax(power[:, 1:], dim=1) + 1).cpu().numpy())
    print(f"n={n} length={length} mean band energy {bands.mean().item():.4e}")


if __name__ == "__main__":
    main()
