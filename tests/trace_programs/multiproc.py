"""Two worker processes (multiprocessing, spawn), each using the GPU: one trace per process."""
import multiprocessing as mp


def work(seed):
    import cupy as cp
    x = cp.random.rand(1 << 20)
    for i in range(200):
        x = x * 0.999 + 0.001
        v = float(x[0])  # EXPECT: roundtrip-storm
    return v


if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        print(pool.map(work, [1, 2]))
    from gpucheck import report
    report(workers=2)
