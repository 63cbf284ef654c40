"""Frame interpolation loop with every stage wrapped in a synchronizing timer.

Imitates CloudEngineHub/LangScene-X:cogvideox_interpolation/utils/misc.py (a `Timer`
whose __enter__ and __exit__ both call torch.cuda.synchronize()) used around each stage
of a per-frame pipeline. The timer lives in pt_stage_timer_helper.py. A small latent
encoder, a blend of two latents and a decoder run for 6000 frame pairs; each stage is
one or two kernels of some tens of microseconds, and each is fenced by two
synchronizes. New code; synthetic frames with a fixed seed.
"""
import torch

from pt_stage_timer_helper import StageTimer, report

torch.manual_seed(0)
dev = torch.device("cuda")

N_PAIRS = 6000
B, D, H = 512, 1024, 1024

enc = torch.randn(D, H, device=dev) / D ** 0.5
dec = torch.randn(H, D, device=dev) / H ** 0.5
frames = torch.randn(2, B, D, device=dev)


@torch.no_grad()
def main():
    acc = torch.zeros(B, D, device=dev)
    for k in range(N_PAIRS):
        t = (k % 7) / 7.0
        with StageTimer("encode"):
            z = torch.tanh(frames.reshape(2 * B, D) @ enc)
        with StageTimer("blend"):
            zt = torch.lerp(z[:B], z[B:], t)
        with StageTimer("decode"):
            out = zt @ dec
        with StageTimer("accum"):
            acc.add_(out, alpha=1e-3)
    print("checksum", float(acc.abs().mean()))
    report()


if __name__ == "__main__":
    main()
