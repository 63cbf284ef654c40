# Clock reads after GPU work with no synchronize (GPU603), and the right ways.
import time
import timeit

import cupy as cp
from cupyx.profiler import benchmark

a = cp.random.random((512, 512))
b = cp.random.random((512, 512))

t0 = time.perf_counter()
c = a @ b
t1 = time.perf_counter()  # expect: GPU603

t0 = time.time()
c = a @ b
cp.cuda.Device().synchronize()
t1 = time.time()  # synchronized: fine

start = time.perf_counter()
d = cp.fft.fft(a)
cp.cuda.Stream.null.synchronize()
elapsed = time.perf_counter() - start  # synchronized through the stream: fine

start = time.perf_counter()
e = cp.sum(a)
host = e.get()  # a copy back waits for the GPU too
elapsed = time.perf_counter() - start  # fine


def matmul(x, y):
    return x @ y


def timed(x, y):
    s = time.perf_counter()
    z = matmul(x, y)
    return time.perf_counter() - s, z  # expect: GPU603


print(timeit.timeit(lambda: a @ b, number=10))  # expect: GPU603
print(benchmark(matmul, (a, b), n_repeat=10))
timed(a, b)


def estimate(x):
    """To be written: the exercise's GPU version."""
    raise NotImplementedError("TODO")


def estimate_lazy(x):
    return x @ x


a2 = cp.random.random((256, 256))
estimate(a2)  # a stub: what it will do is not known, maybe a copy back
t0 = time.perf_counter()  # fine
estimate_lazy(a2)
t1 = time.perf_counter()  # expect: GPU603

# A long run's progress in minutes (a tutorial's "Time elapsed: 3.2 min"):
# a few queued kernels against minutes, not a measurement; the same
# interval in seconds is one.
start_time = time.time()
for epoch in range(10):
    c = a @ b
    print("Time elapsed: %.2f min" % ((time.time() - start_time) / 60))
    print(f"{(time.time() - start_time) / 3600:.1f} h so far")
for epoch in range(10):
    c = a @ b
    print("took", time.time() - start_time, "s")  # expect: GPU603
