"""WRONG ON PURPOSE: timing a CuPy matmul without synchronizing the device.

Benchmarks a matrix product with time.perf_counter().
GPU anti-pattern for `gpuopt scan` to find; the right version is below it.
"""
# WHAT IS WRONG: CuPy launches kernels asynchronously. In `wrong_way` the
# second perf_counter() runs as soon as the matmul is *queued*, so it measures
# launch overhead, not the product; the first call also includes cuBLAS setup
# (no warm-up), and one sample gives no spread.
# THE RIGHT VERSION (`right_way`): warm up, call
# cp.cuda.Device().synchronize() before each clock read (or use CUDA events,
# or cupyx.profiler.benchmark), repeat, and report median and spread.
import statistics
import sys
import time

try:
    import cupy as cp
except ImportError:
    cp = None


# ---------------------------------------------------------------- wrong way
def wrong_way(a, b):
    t0 = time.perf_counter()
    c = a @ b
    t1 = time.perf_counter()            # no synchronize: kernel may still run
    return t1 - t0, c


# ---------------------------------------------------------------- right way
def right_way(a, b, warmup=3, repeats=20):
    for _ in range(warmup):
        a @ b
    cp.cuda.Device().synchronize()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        c = a @ b
        cp.cuda.Device().synchronize()  # wait for the kernel before reading
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), statistics.stdev(samples), c


def main():
    if cp is None:
        print("cupy not installed: this GPU example is skipped (pip install cupy-cuda12x)")
        return 0
    try:
        cp.cuda.runtime.getDeviceCount()
    except cp.cuda.runtime.CUDARuntimeError as exc:
        print(f"cupy is installed but no CUDA device is usable ({exc}); skipped")
        return 0
    n = 4096
    cp.random.seed(0)
    a = cp.random.standard_normal((n, n), dtype=cp.float32)
    b = cp.random.standard_normal((n, n), dtype=cp.float32)
    t_wrong, _ = wrong_way(a, b)
    t_med, t_sd, _ = right_way(a, b)
    flops = 2.0 * n ** 3
    print(f"wrong (unsynchronized, cold): {t_wrong * 1e3:.3f} ms")
    print(f"right (synchronized, median of 20): {t_med * 1e3:.3f} ms "
          f"+- {t_sd * 1e3:.3f} ({flops / t_med / 1e12:.1f} TFLOP/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
