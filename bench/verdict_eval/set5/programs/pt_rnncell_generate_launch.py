"""Autoregressive sequence generation with nn.RNNCell stepped one time step at a time.

Imitates ksrath0re/PT_Projects:RNN_using_Cell_Explain.py (`for i in range(...):
hx = rnn(X_batch[i], hx); output.append(hx)`): the recurrent cell is called from a
Python loop per time step. Here a small cell (batch 16, hidden 128) and a linear read-out
generate 15,000 steps on the GPU, each output fed back as the next input, so every step
is a handful of kernels of a few microseconds each. New code; random weights, fixed seed.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
dev = torch.device("cuda")

STEPS = 15000
BATCH, N_IN, N_HID = 16, 32, 128

cell = nn.RNNCell(N_IN, N_HID).to(dev)
readout = nn.Linear(N_HID, N_IN).to(dev)


@torch.no_grad()
def main():
    x = torch.randn(BATCH, N_IN, device=dev)
    hx = torch.zeros(BATCH, N_HID, device=dev)
    outputs = torch.empty(STEPS, BATCH, N_IN, device=dev)
    for t in range(STEPS):
        hx = cell(x, hx)
        x = torch.tanh(readout(hx))
        outputs[t] = x
    print("generated", tuple(outputs.shape), "mean", float(outputs.mean()))


if __name__ == "__main__":
    main()
