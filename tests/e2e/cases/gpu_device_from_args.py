# torch.device() of a string gpuopt cannot read (args.device, a config value)
# may be the GPU, like a bare args.device; torch.device("cpu") stays the CPU.
import argparse

import torch  # expect: GPU501/-

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda")
args = parser.parse_args()
device = torch.device(args.device)
cpu = torch.device("cpu")
name = "cpu"
cpu_by_name = torch.device(name)


def train(model, loader):
    for x in loader:
        a = x.to(device)
        print(a.sum().item())  # expect: GPU601
        b = x.to(cpu)
        print(b.sum().item())  # a CPU tensor: fine
        c = x.to(cpu_by_name)
        print(c.sum().item())  # a CPU tensor: fine
