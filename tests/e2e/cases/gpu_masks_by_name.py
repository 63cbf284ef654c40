# CuPy's boolean-mask indexing through a name: `idx = abs(r) <= t` makes a
# boolean device array, and x[idx], x[:, idx], x[~idx] count its true values
# on the host (GPU601 in a loop). An integer index array, a mask of host
# data, or a torch tensor's mask (no fact) stay quiet. cupy.isnan and the
# other elementwise tests make masks too (the kb), as does .any(axis=...) of one.
import cupy as cp
import numpy as np
import torch  # expect: GPU501/-

x = cp.random.random((2, 1000))
r = cp.random.random(1000)
order = cp.arange(10)
h = np.ones(1000)  # expect: GPU101/cupy
t = torch.ones(1000, device="cuda")

for it in range(100):
    idx = abs(r) <= 0.5
    x[:, idx] -= r[idx]  # expect: GPU601 GPU601
    idx = ~idx
    both = idx & (r > 0.1)
    x[0, both] = 0  # expect: GPU601
    y = x[:, order]  # an integer index: fine
    hm = h > 0.5
    h[hm] = 0  # host data: fine
    tm = t > 0
    t[tm] = 0  # torch: fine
    keep = x[:, ~cp.isnan(r)]  # expect: GPU601
    pts = x.T[~cp.isnan(x.T).any(axis=1)]  # expect: GPU601
    counts = x.T[cp.isnan(x.T).sum(axis=1)]  # a count, no mask: fine
