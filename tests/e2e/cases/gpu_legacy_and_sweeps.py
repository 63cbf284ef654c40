# Forms met on the second held-out set (GPU601, GPU602, GPU603): old
# PyTorch code that picks a typed CUDA tensor (torch.cuda.FloatTensor) by a
# flag, a numba.cuda kernel launched on a NumPy array, map(float, ...) of a
# device array, and a sweep over a hand-written list of functions.
import time

import numpy as np
import cupy as cp
import torch  # expect: GPU501/-
from numba import cuda

use_cuda = torch.cuda.is_available()
Tensor = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor
model = torch.nn.Linear(8, 1)
if use_cuda:
    model.cuda()


def train(loader):
    for epoch in range(10):
        for i, (imgs, _) in enumerate(loader):
            valid = Tensor(imgs.size(0), 1).fill_(1.0)  # made on the device: fine
            ones = Tensor(np.ones((imgs.size(0), 1)))  # expect: GPU602 GPU101/cupy
            # new noise each batch: no GPU602
            z = Tensor(np.random.normal(0, 1, (imgs.size(0), 8)))  # expect: GPU101/cupy
            loss = ((model(z) - valid) ** 2 + ones).mean()
            loss.backward()
            print("loss %f" % loss.item())  # expect: GPU601


@cuda.jit  # expect: GPU504/numba-cuda
def fill(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = i


host = np.zeros(1 << 20)  # expect: GPU101/cupy
dev = cuda.to_device(host)
t0 = time.time()
fill[1024, 1024](host)
t1 = time.time()  # the NumPy array was copied back after the launch: fine
fill[1024, 1024](dev)
t2 = time.time()  # expect: GPU603

x = cp.random.random((512, 512))
for func in [cp.sin, cp.cos, cp.tan, cp.exp, cp.sqrt]:
    lo, hi = map(float, cp.percentile(func(x), [1, 99]))  # one per case compared: fine
y = cp.sqrt(x)
lo, hi = map(float, cp.percentile(y, [1, 99]))
t3 = time.time()  # map(float, ...) waited for the GPU: fine
for n in range(1000):
    lo, hi = map(float, cp.percentile(x[n % 512], [1, 99]))  # expect: GPU601
