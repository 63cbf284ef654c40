"""Copies from pinned host memory, timed with events: the copies dominate the
GPU's time (transfer-bound), but they run at the pinned rate (no
pageable-transfer). # EXPECT-NOT: pageable-transfer"""
import torch
from gpucheck import TorchEvents, arg, report

mib = arg(1, 512)
host = torch.empty(mib * (1 << 20) // 4, dtype=torch.float32).pin_memory()
host.fill_(1.0)
dev = torch.empty_like(host, device="cuda")
dev.copy_(host, non_blocking=True)
torch.cuda.synchronize()
with TorchEvents() as ev:
    for _ in range(3):
        dev.copy_(host, non_blocking=True)  # EXPECT: transfer-bound # EVENTS: h2d
y = torch.tanh(dev)  # warm-up: the kernel's first launch loads it
torch.cuda.synchronize()
with TorchEvents() as k:
    for _ in range(200):
        y = torch.tanh(dev)  # EVENTS: kernel
report(h2d_bytes=host.numel() * 4 * 3, h2d_event_ms=ev.ms, kernel_event_ms=k.ms)
