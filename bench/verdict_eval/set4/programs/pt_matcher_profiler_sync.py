"""Coarse-level detector-free feature matching (LoFTR-style) of 4000 image pairs: a
patchify backbone, a dense similarity matrix between the two views, dual-softmax
confidences and mutual-nearest-neighbour selection, with every stage wrapped in the
profiler of pt_matcher_profiler.py so that per-stage timings can be reported.

Imitates: TencentYoutuResearch/AdaMatcher:src/lightning/lightning_adamatcher.py
(_trainval_inference: `with self.profiler.profile("Compute coarse supervision"): ...`,
`with self.profiler.profile("AdaMatcher"): self.matcher(batch)`, `with
self.profiler.profile("Compute losses"): ...`), run with the synchronizing
InferenceProfiler (see pt_matcher_profiler.py).

Each stage is one to seven kernels of 5-40 microseconds on a 2240 x 2240 similarity
matrix, but the profiler calls torch.cuda.synchronize() on entering and leaving every
stage (twelve syncs per pair, 48,000 in all), so the GPU drains and waits at every stage
boundary for the host to wake up and launch the next stage: sync-bound.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from pt_matcher_profiler import InferenceProfiler

H, W = 320, 448
PATCH = 8
DIM = 128
N_PAIRS = 4000
BANK = 32
TEMPERATURE = 0.1
CONF_THR = 2e-4


class CoarseMatcher(nn.Module):
    def __init__(self):
        super().__init__()
        self.patchify = nn.Conv2d(1, DIM, PATCH, stride=PATCH)
        self.mix = nn.Conv2d(DIM, DIM, 1)

    def features(self, pair):
        return F.normalize(self.mix(F.relu(self.patchify(pair))), dim=1)


def make_bank(device, gen):
    """Image pairs on the device: a smooth random texture and a shifted second view,
    normalised once when the bank is built."""
    noise = torch.randn(BANK, 1, H // 4 + 4, W // 4 + 4, device=device, generator=gen)
    tex = F.interpolate(noise, scale_factor=4, mode="bicubic", align_corners=False)
    shifts = torch.randint(1, 4, (BANK, 2), generator=torch.Generator().manual_seed(5)).tolist()
    view0 = tex[:, :, :H, :W]
    view1 = torch.stack([tex[b, :, dy:dy + H, dx:dx + W] for b, (dy, dx) in enumerate(shifts)])
    bank = torch.stack([view0, view1], dim=1)                      # (BANK, 2, 1, H, W)
    return ((bank - bank.mean()) / bank.std()).contiguous()


def main():
    device = torch.device("cuda")
    torch.manual_seed(0)
    gen = torch.Generator(device=device).manual_seed(1)
    model = CoarseMatcher().to(device).eval()
    bank = make_bank(device, gen)
    profiler = InferenceProfiler()
    n_matches = torch.zeros((), dtype=torch.int64, device=device)

    with torch.no_grad():
        for k in range(N_PAIRS):
            pair = bank[k % BANK]                                   # (2, 1, H, W) view
            with profiler.profile("backbone"):
                feat = model.features(pair)
            with profiler.profile("coarse similarity"):
                f0 = feat[0].flatten(1).t()
                f1 = feat[1].flatten(1)
                sim = torch.mm(f0, f1).div_(TEMPERATURE)
            with profiler.profile("softmax rows"):
                p_row = F.softmax(sim, dim=1)
            with profiler.profile("softmax cols + confidence"):
                conf = F.softmax(sim, dim=0) * p_row
            with profiler.profile("mutual nearest"):
                mask = (conf == conf.max(dim=1, keepdim=True).values) \
                    & (conf == conf.max(dim=0, keepdim=True).values) & (conf > CONF_THR)
            with profiler.profile("match count"):
                n_matches += mask.sum()

    print(f"pairs {N_PAIRS}, mean mutual matches per pair {n_matches.item() / N_PAIRS:.1f}")
    print("stage times:", profiler.summary())


if __name__ == "__main__":
    main()
