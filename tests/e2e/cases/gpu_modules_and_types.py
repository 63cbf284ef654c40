# Forms met on the second held-out set (GPU601), after its first fixes:
# old PyTorch's x.type(Tensor) with a CUDA tensor type picked by a flag, and
# a module whose forward calls the layers it holds (self.conv(x)) and
# returns a tuple of device tensors.
import numpy as np
import torch  # expect: GPU501/-
import torch.nn as nn
from tqdm import tqdm

cuda = torch.cuda.is_available()
Tensor = torch.cuda.FloatTensor if cuda else torch.Tensor


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.conv = nn.Sequential(nn.Linear(16, 16), nn.ReLU())
        self.adv = nn.Linear(16, 1)

    def forward(self, img):
        out = self.conv(img)
        return self.adv(out), out


disc = Discriminator()
if cuda:
    disc.cuda()


def train(loader):
    for epoch in range(10):
        for i, batch in enumerate(loader):
            real = batch["A"].type(Tensor)
            host = batch["B"].type(torch.FloatTensor)
            print("mean %f" % real.mean().item())  # expect: GPU601
            print("mean %f" % host.mean().item())  # a CPU tensor type: fine
            validity, aux = disc(real)
            acc = np.mean(aux.data.cpu().numpy())  # expect: GPU601 GPU101/cupy
            _, host_aux = disc(host)  # host data in, host data out: no GPU601 below
            acc = np.mean(host_aux.data.numpy())  # expect: GPU101/cupy


# A sampler whose schedule is made on the model's device, read through a
# property (next(self.net.parameters()).device), then stepped through with
# tqdm, zip and map(lambda ...).
class Sampler(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    @property
    def device(self):
        return next(self.net.parameters()).device

    @property
    def cpu_device(self):
        return torch.device("cpu")

    def sample(self, steps):
        sigmas = torch.arange(steps, device=self.device) ** 7
        for sigma, sigma_next in tqdm(list(zip(sigmas[:-1], sigmas[1:]))):
            sigma, sigma_next = map(lambda t: t.item(), (sigma, sigma_next))  # expect: GPU601
        for i in tqdm(range(steps - 1)):
            s = sigmas[i].item()  # expect: GPU601
        cpu = torch.arange(steps, device=self.cpu_device) ** 7
        for a, b in tqdm(list(zip(cpu[:-1], cpu[1:]))):
            a, b = map(lambda t: t.item(), (a, b))  # a CPU schedule: fine
