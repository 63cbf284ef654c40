# PyTorch calls that synchronize without a copy in sight (GPU601 in a loop;
# for GPU603 they end the GPU work before a clock read): torch.nonzero and a
# read through a boolean mask size their result on the host, torch.linalg's
# inv / svd / eigh check for errors on the host (the docs' note). A write
# through a mask (masked_fill_) and a host attribute (nbytes) do not.
import time

import torch  # expect: GPU501/-


def peel(X, t, steps):
    X = X.cuda()
    for i in range(steps):
        xs = torch.nonzero(X > t)  # expect: GPU601
        ys = (X > t).nonzero()  # expect: GPU601
        m = X > 0
        y = X[m]  # expect: GPU601
        X[m] = 0.0
        print(f"{X.nbytes / 2**20:.2f} MB")
        X = X - 1


def whiten(C, channels):
    C = C.cuda()
    for j in range(channels):
        U, S, V = torch.linalg.svd(C[j])  # expect: GPU601
        W = torch.linalg.inv(C[j])  # expect: GPU601
        W2, info = torch.linalg.inv_ex(C[j])


def timed(x):
    x = x.cuda()
    t0 = time.time()
    w = torch.linalg.inv(x @ x)
    print(time.time() - t0)
    t1 = time.time()
    y = (x * 2).cpu()
    z = y.to("cuda")
    print(time.time() - t1)
    t2 = time.time()
    z = y.to("cuda", non_blocking=True)
    print(time.time() - t2)  # expect: GPU603
