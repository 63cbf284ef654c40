# Element-by-element Python loops over arrays (GPU605).
import numpy as np


def pairwise(x):
    n = x.shape[0]
    d = np.zeros((n, n))  # expect: GPU101/cupy
    for i in range(n):  # expect: GPU605
        for j in range(n):
            d[i, j] = np.sqrt(((x[i] - x[j]) ** 2).sum())  # expect: GPU101/cupy
    return d


def scale(values):
    out = np.empty(len(values))  # expect: GPU101/cupy
    for i in range(len(values)):  # expect: GPU605
        out[i] = values[i] * 2.0
    return out


def lines(words):
    for i in range(len(words)):  # a list, not an array: fine
        print(words[i])


for epoch in range(3):  # no element indexing: fine
    pairwise(np.ones((4, 3)))  # expect: GPU101/cupy


import numba


@numba.njit  # expect: GPU110/numba-cuda-mlir
def compiled(a):
    out = np.empty_like(a)  # expect: GPU101/cupy
    for i in range(a.shape[0]):  # compiled by Numba: not a Python loop
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] * 2
    return out


def batches(x):
    for start in range(0, x.shape[0], 64):  # block slices, not elements: fine
        for k in range(2):
            x[start:start + 64] += k
