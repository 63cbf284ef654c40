"""GPU port of base.py with PyTorch: the sample and the resampling indices come from the
same seeded NumPy generator, are copied to the GPU, and the gather, the 400 medians
(n is odd, so torch.median is the exact middle value like np.median) and the sort run
there; the sorted medians come back for the percentiles.

Correct, but the GPU part is a few milliseconds: PyTorch's import, CUDA context creation
and the first-kernel set-up cost more than the whole NumPy run.

Imitates: Wade2016/protGM:utilities.py (vectorized bootstrap with an index matrix),
ported with torch.from_numpy(...).cuda().
"""
import numpy as np
import torch

N = 20_001
N_BOOT = 400


def main():
    rng = np.random.default_rng(99)
    data_h = rng.lognormal(mean=4.0, sigma=0.6, size=N)
    idx_h = rng.integers(0, N, size=(N_BOOT, N))
    data = torch.from_numpy(data_h).cuda()
    idx = torch.from_numpy(idx_h).cuda()
    medians = torch.sort(torch.median(data[idx], dim=1).values).values.cpu().numpy()
    ci = np.percentile(medians, [2.5, 97.5])
    np.save("boot_medians.npy", medians)
    np.save("ci.npy", ci)
    print(f"median={np.median(data_h):.4f} ms  95% CI=({ci[0]:.4f}, {ci[1]:.4f})")


if __name__ == "__main__":
    main()
