"""Slice-by-slice GPU filtering of a NumPy image stack through a NumPy-in/NumPy-out wrapper.

Imitates hanjinliu/impy:impy/_cupy.py (the `wrap_as_cupy` decorator, here in
cp_slice_filter_helper.py) applied to a per-slice filter that is called from a Python
loop over a stack held in ordinary (pageable) NumPy memory: every call copies a
4096 x 4096 float32 slice (64 MB) to the GPU and the 64 MB result back, for about a
hundred microseconds of filtering. New code; the stack is synthetic.
"""
import numpy as np
import cupy as cp
from cupyx.scipy import ndimage as cndi

from cp_slice_filter_helper import wrap_as_cupy

N_SLICES = 12
PASSES = 8
SIZE = 4096


@wrap_as_cupy
def background_subtract(img, size):
    smooth = cndi.uniform_filter(img, size=size)
    return cp.maximum(img - smooth, 0)


def make_stack():
    y = np.linspace(0.0, 40.0, SIZE, dtype=np.float32)
    stack = np.empty((N_SLICES, SIZE, SIZE), dtype=np.float32)
    for z in range(N_SLICES):
        stack[z] = np.sin(y + 0.3 * z)[:, None] * np.cos(0.7 * y)[None, :]
    return stack


def main():
    stack = make_stack()
    totals = np.zeros(PASSES)
    for p in range(PASSES):
        for z in range(N_SLICES):
            out = background_subtract(stack[z], 9 + 4 * p)
            totals[p] += out[::64, ::64].sum()
    print("pass totals", np.round(totals, 3))


if __name__ == "__main__":
    main()
