# The values the flow model follows (GPU601, GPU603, GPU604), and the ones
# it must not mistake for device data.
import time

import cupy as cp
import cupyx.scipy.sparse.linalg
import numpy as np
import scipy.signal
from numba import cuda


def cg(A, b, tol, max_iter):
    xp = cp.get_array_module(A)
    x = xp.zeros_like(b)
    r = b - xp.dot(A, x)
    p = r
    for i in range(max_iter):
        alpha = xp.vdot(r, r).item() / xp.vdot(p, A @ p)  # expect: GPU601
        x = x + alpha * p
        if xp.linalg.norm(r) < tol:  # expect: GPU601
            break
    return x


x_cpu = cg(np.eye(3), np.ones(3), 1e-6, 100)  # expect: GPU101/cupy GPU101/cupy
x_gpu = cg(cp.eye(3), cp.ones(3), 1e-6, 100)
print(np.linalg.norm(x_cpu))  # a host array: a port note, no GPU604  # expect: GPU101/cupy


def step(v):
    return v.sum(), 3


dot = cp.dot if x_gpu.size else cp.vdot
v = cp.ones(100)
for it in range(100):
    s, k = step(v)
    rho = float(s)  # expect: GPU601
    if abs(rho) < 1e-3:  # rho is a host float now: fine
        break
    if v.max() > 2 and it > 3:  # expect: GPU601
        break
    msg = f"{dot(v, v):.3f}"  # expect: GPU601
    w = cupyx.scipy.sparse.linalg.norm(v)
    print("%f" % w)  # expect: GPU601
    m = np.sqrt(v)  # NumPy hands it to cupy.sqrt: stays on the GPU, fine
    q = np.nanpercentile(v, 90)  # expect: GPU604
    h = np.asarray(v)  # expect: GPU604
    f = scipy.signal.medfilt(v)  # expect: GPU604
    if cp is np:  # comparing modules: fine
        pass
    u = cp.asarray(v)  # already on the device: fine

d = cuda.to_device(np.ones(8))  # expect: GPU101/cupy
z = np.zeros_like(d)  # expect: GPU604
for it in range(100):
    host = d.copy_to_host()  # expect: GPU601
    e = cuda.as_cuda_array(d)  # zero-copy: fine

stream = cp.cuda.Stream()
a = cp.ones((64, 64))
t0 = time.perf_counter()
with stream.auto_synchronize():
    a @ a
t1 = time.perf_counter()  # synchronized when the with ended: fine
a @ a
t2 = time.perf_counter()  # expect: GPU603
a.get()
