# A module moved to the GPU in place (model.to(device) alone) keeps its
# parameters there: clip_grad_norm_ of them returns a device tensor, which
# an f-string copies back every step. A loop over a model's parameters is
# once per tensor (an export); inside a training step the step's loop is the
# hot one. A device-agnostic synchronize chain (cuda / mps / cpu) ends the
# CUDA work on the CUDA branch; the other ways run on another device.
import time

import torch  # expect: GPU501/-
import torch.nn as nn


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


def train(steps, device="cuda"):
    model = GPT()
    model.to(device)
    opt = torch.optim.AdamW(model.parameters())
    for step in range(steps):
        t0 = time.time()
        x = torch.randn(4, 4, device=device)
        loss = model(x).sum()
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        for p in model.parameters():
            print(p.grad.norm().item())  # expect: GPU601
        if device == "mps":
            torch.mps.synchronize()
        elif device == "cuda":
            torch.cuda.synchronize()
        t1 = time.time()
        print(f"step {step} | norm {norm:.4f} | {(t1 - t0) * 1000:.1f} ms")  # expect: GPU601


def export():
    model = GPT()
    model.to("cuda")
    return {name: p.cpu() for name, p in model.named_parameters()}
