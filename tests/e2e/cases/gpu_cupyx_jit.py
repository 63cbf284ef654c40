# A cupyx.jit.rawkernel is launched by a plain call, k(grid, block, args);
# its body is device code, where a loop and a test of a thread index are no
# host round trip. The host loop around the launches is still checked.
import cupy as cp
from cupyx import jit


@jit.rawkernel()
def streaming_step(fin, fout, v, nx):
    row = jit.grid(1)
    if row < nx:
        for k in range(9):
            i = row + v[k, 0]
            if i == nx:
                i = 0
            fout[k, i] = fin[k, row]


def run(n, steps):
    fin = cp.zeros((9, n))
    fout = cp.zeros((9, n))
    v = cp.ones((9, 2), dtype=cp.int32)
    for t in range(steps):
        streaming_step((n // 128,), (128,), (fin, fout, v, n))
        fin, fout = fout, fin
        print(float(fin.sum()))  # expect: GPU601
    return fin
