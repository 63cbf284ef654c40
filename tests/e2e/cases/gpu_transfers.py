# Host->device copies of loop-invariant data (GPU602); copies of data that
# changes each iteration are fine.
import cupy as cp
import numpy as np

weights_host = np.ones((64, 32), dtype=np.float32)  # expect: GPU101/cupy
batches = [np.ones((8, 64), dtype=np.float32) for _ in range(4)]  # expect: GPU101/cupy
acc = cp.zeros(32)
for x_host in batches:
    w = cp.asarray(weights_host)  # expect: GPU602
    x = cp.asarray(x_host)  # changes every iteration: fine
    lut = cp.array([1.0, 2.0, 3.0])  # expect: GPU602
    acc += (x @ w).sum(axis=0)

w_dev = cp.asarray(weights_host)  # outside the loop: fine
for i in range(3):
    chunk = np.full(4, i)  # expect: GPU101/cupy
    d = cp.asarray(chunk)  # rebuilt in the loop: fine
    again = cp.asarray(w_dev)  # already on the device: not a transfer

scale = np.float32(2.0)  # expect: GPU209/-
for i in range(3):
    weights_host = weights_host * scale
    w2 = cp.asarray(weights_host)  # changes each iteration: fine
