"""NumPy-in, NumPy-out wrapper for CuPy functions, used by cp_slice_filter_pageable.py.

Imitates hanjinliu/impy:impy/_cupy.py (`wrap_as_cupy`: map the NumPy arguments through
cupy.asarray, call the function, hand the result back through cupy.asnumpy), a decorator
that lets GPU filters be called from NumPy code. New code; not run on its own.
"""
from functools import wraps

import cupy as cp
import numpy as np


def _to_gpu(a):
    return cp.asarray(a) if isinstance(a, np.ndarray) else a


def wrap_as_cupy(function):
    @wraps(function)
    def call(*args, **kwargs):
        args = [_to_gpu(a) for a in args]
        out = function(*args, **kwargs)
        return cp.asnumpy(out)
    return call
