"""Per-frame LiDAR detection pipeline (scatter points into a bird's-eye-view grid, small
convolutional backbone, heatmap head) with every stage wrapped in a timing context
manager that synchronizes the device on entry and on exit.

Imitates: yukke42/SECOND:second/pytorch/utils/__init__.py (torch_timer: a contextmanager
that calls torch.cuda.synchronize() before and after the timed block, used around the
stages of the point-cloud detector).

Three timed stages per frame, two explicit synchronizes each: the host stalls at every
stage boundary and the GPU sits idle until the next stage's first launch arrives. The
loop is sync-bound; the stage kernels themselves are reasonably sized.
"""
import contextlib
import time
from collections import defaultdict

import torch
import torch.nn.functional as F

N_POINTS = 2_000_000
GRID = 512
FRAMES = 2000
POOL = 6


@contextlib.contextmanager
def torch_timer(name, stats):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    yield
    torch.cuda.synchronize()
    stats[name] += time.perf_counter() - t0


def main():
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(3)
    # a pool of pre-loaded sweeps: x, y in [-51.2, 51.2) m, intensity in [0, 1)
    sweeps = []
    for _ in range(POOL):
        xy = (torch.rand(N_POINTS, 2, device=dev, generator=g) - 0.5) * 102.4
        inten = torch.rand(N_POINTS, device=dev, generator=g)
        sweeps.append((xy, inten))
    w1 = torch.randn(32, 1, 3, 3, device=dev, generator=g) * 0.3
    w2 = torch.randn(32, 32, 3, 3, device=dev, generator=g) * 0.06
    w3 = torch.randn(2, 32, 1, 1, device=dev, generator=g) * 0.2
    bev = torch.zeros(GRID * GRID, device=dev)
    voxel = 102.4 / GRID
    stats = defaultdict(float)
    peak = torch.zeros((), device=dev)

    for f in range(FRAMES):
        xy, inten = sweeps[f % POOL]
        with torch_timer("voxelize", stats):
            ij = ((xy + 51.2) / voxel).long().clamp_(0, GRID - 1)
            flat = ij[:, 0] * GRID + ij[:, 1]
            bev.zero_()
            bev.index_add_(0, flat, inten)
        with torch_timer("backbone", stats):
            h = F.relu(F.conv2d(bev.view(1, 1, GRID, GRID), w1, padding=1))
            h = F.relu(F.conv2d(h, w2, padding=1))
        with torch_timer("head", stats):
            heat = torch.sigmoid(F.conv2d(h, w3))
            peak = torch.maximum(peak, heat.amax())

    print({k: round(v, 3) for k, v in stats.items()}, "peak", float(peak))


if __name__ == "__main__":
    main()
