# Device->host copies and implicit synchronizes inside loops (GPU601), and
# the safe forms that must stay quiet.
import cupy as cp
import numpy as np

a = cp.random.standard_normal((256, 256), dtype=cp.float32)
v = cp.ones(256, dtype=cp.float32)
history = []
for step in range(100):
    w = a @ v
    lam = float(v @ w)  # expect: GPU601
    n = cp.linalg.norm(w).item()  # expect: GPU601
    v = w / n
    history.append(cp.asnumpy(v[:4]))  # expect: GPU601
    host = v.get()  # expect: GPU601
    print(v.sum())  # expect: GPU601
    if cp.any(v > 10):  # expect: GPU601
        break
    if step % 10 == 0:
        print("residual", float(cp.abs(w - v).max()))  # periodic check: fine
    values = v.tolist()  # expect: GPU601

while cp.linalg.norm(v) > 1e-3:  # expect: GPU601
    v = v / 2

firsts = [float(v[i]) for i in range(3)]  # three copies: too few to matter, fine
lasts = [float(v[i]) for i in range(len(v) - 8, len(v))]  # expect: GPU601

# safe: after the loop, once
total = float(v.sum())
result = cp.asnumpy(v)
scalar = v.max().item()
final = v.get()


def step_once(x):
    y = x * 2
    return y.sum().item()  # expect: GPU601


for _ in range(10):
    step_once(v)


def report(x):
    return float(x.mean())  # called once below: fine


report(v)

# a benchmark's loop over problem sizes: one check per problem is no hot path
for shape in [(256, 256), (512, 512), (1024, 1024), (2048, 2048), (4096, 4096)]:
    m = cp.random.random(shape)
    check = cp.asnumpy(m @ m)  # once per problem shape: fine
for n_rows in [256, 512, 1024, 2048, 4096]:
    m = cp.random.random((n_rows, n_rows))
    check = cp.asnumpy(m @ m)  # expect: GPU601


def flag_check(gulps):
    # the test reads the fraction back: that is the copy to report; the
    # message under it formats the value the test already waited for
    for data in gulps:
        frac = (cp.asarray(data) > 0).mean()
        if frac > 0.2:  # expect: GPU601
            print(f"high flagged fraction {frac:.3f}")
        print(f"fraction {frac:.3f}")  # expect: GPU601
