# A timing loop over two backends (GPU603): the start read of each round
# comes after that round's setup, queued on the GPU; the end read is what
# measures. And CuPy's boolean-mask indexing (GPU601): x[x > 0] counts the
# true values on the host to size the result, a synchronize in every
# iteration of a loop, where an integer index does not wait.
import time

import cupy as cp
import numpy as np

durations = {}
for xp in (np, cp):
    data = xp.random.random((1024, 1024))
    markers = xp.zeros(data.shape)
    markers[data < 0.05] = 1
    tstart = time.time()  # the start of an interval: fine
    labels = data @ markers
    dur = time.time() - tstart  # expect: GPU603
    durations[xp.__name__] = dur
    float(labels.sum())

x = cp.random.random((1 << 20,))
idx = cp.arange(1024)
for step in range(1000):
    x[(x > 0.5) & (x < 0.9)] = 0  # expect: GPU601
    x[idx] = 1  # an integer index: fine
    x = cp.where(x > 0.99, 0, x)  # no count, no wait: fine
