# Loops that run a copy once, not per iteration: a test harness's loop over
# its cases (two or more test functions called in turn), and a branch for
# one value of the loop's variable (the last batch). One test function
# called per batch (test_step) is still the work of every batch.
import cupy as cp


def test_equilibrium(i):
    a = cp.ones(i) * 2
    return a.get()


def test_inflow(i):
    b = cp.zeros(i) + 1
    return b.get()


def test_step(batch):
    y = cp.asarray(batch) * 2
    return float(y.sum())  # expect: GPU601


for i in range(10):
    test_equilibrium(1 + i * 8)
    test_inflow(2 + i * 8)


def evaluate(batches):
    for batch in batches:
        test_step(batch)


def last_only(batches, n):
    out = None
    for i in range(n):
        b = cp.asarray(batches[i]) * 2
        if i == n - 1:
            out = b.get()
        if i != 3:
            print(float(b.sum()))  # expect: GPU601
    return out
