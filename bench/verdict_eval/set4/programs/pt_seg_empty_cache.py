"""Training of a light inverted-residual segmentation network (depthwise 3x3 + pointwise
1x1 blocks at full 256 x 256 resolution, 8 classes) in a small hook-based runner, with
an EmptyCacheHook configured to release the CUDA cache after every iteration.

Imitates: open-mmlab/mmengine:mmengine/hooks/empty_cache_hook.py (EmptyCacheHook with
after_iter=True: `_after_iter` calls torch.cuda.empty_cache() after every training
iteration), as configured in many mmseg / mmdet configs to fight fragmentation.

Every iteration holds about forty-five 17 MB activation and gradient blocks (each over
the caching allocator's 10 MB threshold, so each is its own cudaMalloc segment);
empty_cache() hands all of them back to the driver (cudaFree, which also waits for the
device), so the next iteration cudaMalloc's every one of them again. The layers are
memory-bound and light (about ten microseconds each), so the allocator churn, not the
arithmetic, sets the pace: memory-pressure.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
RES = 256
CH = 16
N_BLOCKS = 6
N_CLASSES = 8
N_ITERS = 150


class InvertedResidual(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.dw = nn.Conv2d(ch, ch, 3, padding=1, groups=ch, bias=False)
        self.bn1 = nn.BatchNorm2d(ch)
        self.pw = nn.Conv2d(ch, ch, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(ch)

    def forward(self, x):
        y = F.relu6(self.bn1(self.dw(x)))
        return x + self.bn2(self.pw(y))


class LiteSegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, CH, 3, padding=1)
        self.blocks = nn.Sequential(*[InvertedResidual(CH) for _ in range(N_BLOCKS)])
        self.head = nn.Conv2d(CH, N_CLASSES, 1)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


class EmptyCacheHook:
    """Releases all unoccupied cached GPU memory during training."""

    def __init__(self, before_epoch=False, after_epoch=True, after_iter=False):
        self._do_before_epoch = before_epoch
        self._do_after_epoch = after_epoch
        self._do_after_iter = after_iter

    def after_train_iter(self, runner):
        if self._do_after_iter:
            torch.cuda.empty_cache()

    def after_train_epoch(self, runner):
        if self._do_after_epoch:
            torch.cuda.empty_cache()


class Runner:
    def __init__(self, model, optimizer, hooks):
        self.model, self.optimizer, self.hooks = model, optimizer, hooks
        self.iter = 0

    def call_hook(self, name):
        for hook in self.hooks:
            getattr(hook, name)(self)

    def train(self, images, masks, n_iters):
        running = torch.zeros((), device=images.device)
        for i in range(n_iters):
            k = i % images.shape[0]
            x = images[k:k + BATCH] if k + BATCH <= images.shape[0] else images[:BATCH]
            y = masks[k:k + BATCH] if k + BATCH <= masks.shape[0] else masks[:BATCH]
            logits = self.model(x)
            loss = F.cross_entropy(logits, y)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            running += loss.detach()
            self.iter += 1
            self.call_hook("after_train_iter")
        self.call_hook("after_train_epoch")
        return running / n_iters


def make_data(device, gen, n=32):
    """Images with blobs of a few colours; the mask is the colour index of each pixel."""
    centres = torch.rand(n, N_CLASSES, 2, device=device, generator=gen) * RES
    yy, xx = torch.meshgrid(torch.arange(RES, device=device), torch.arange(RES, device=device), indexing="ij")
    d2 = (yy[None, None] - centres[..., 0, None, None]) ** 2 + (xx[None, None] - centres[..., 1, None, None]) ** 2
    masks = d2.argmin(dim=1)                                          # Voronoi regions
    palette = torch.rand(N_CLASSES, 3, device=device, generator=gen)
    images = palette[masks].permute(0, 3, 1, 2).contiguous()
    images += 0.1 * torch.randn(images.shape, device=device, generator=gen)
    return images, masks


def main():
    device = torch.device("cuda")
    torch.manual_seed(0)
    gen = torch.Generator(device=device).manual_seed(4)
    images, masks = make_data(device, gen)
    model = LiteSegNet().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    runner = Runner(model, optimizer, [EmptyCacheHook(after_iter=True)])
    mean_loss = runner.train(images, masks, N_ITERS)
    print(f"iterations {N_ITERS}, mean loss {mean_loss.item():.4f}, "
          f"peak allocated {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
