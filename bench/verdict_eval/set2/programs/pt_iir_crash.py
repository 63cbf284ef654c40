"""Learnable IIR filter bank applied to multichannel audio by evaluating the difference
equation one sample at a time on the GPU; the job is then killed by its scheduler
(simulated: the process sends itself SIGTERM before it can write its results).

Imitates: Human9000/InnovativeStructure:rnn/filter.py (SimpleIIRFilter.forward: a Python
loop over time steps where each step slices the input/output, multiplies by the b/a
coefficients, sums, and writes y[..., r]).

Every sample costs one Python line that launches six tiny kernels (two multiplies, two
sums, a subtract and the indexed copy) on 64 x 8 x 5 slices: the GPU finishes each in
about a microsecond and waits for the next launch. The recurrence loop is launch-bound.
"""
import os
import signal
import sys

import torch

CHANNELS = 64
FILTERS = 8
ORDER = 4
BLOCK = 4000          # samples per block
BLOCKS = 2


def main():
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(7)
    b = torch.randn(1, FILTERS, ORDER + 1, device=dev, generator=g) * 0.1
    a = torch.randn(1, FILTERS, ORDER, device=dev, generator=g) * 0.05
    state = torch.zeros(CHANNELS, FILTERS, ORDER, device=dev)
    energies = []
    for blk in range(BLOCKS):
        x = torch.randn(CHANNELS, 1, BLOCK + ORDER, device=dev, generator=g).expand(-1, FILTERS, -1)
        y = torch.zeros(CHANNELS, FILTERS, BLOCK + ORDER, device=dev)
        y[:, :, :ORDER] = state
        for n in range(ORDER, BLOCK + ORDER):
            y[:, :, n] = (x[:, :, n - ORDER:n + 1] * b).sum(-1) - (y[:, :, n - ORDER:n] * a).sum(-1)
        state = y[:, :, -ORDER:].clone()
        energies.append(y.pow(2).mean(-1))
        print(f"block {blk} filtered", flush=True)

    # The batch scheduler's time limit hits here, before the filter outputs are saved.
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGTERM)
    torch.save(torch.stack(energies).cpu(), "iir_energies.pt")   # never reached


if __name__ == "__main__":
    main()
