"""Device utilities for cp_swe_sync.py: a decorator that synchronizes the device after
every call of the wrapped program, and a plain sync used by the driver.

Imitates: C2SM/icon4py:model/common/src/icon4py/model/common/utils/device_utils.py
(sync: cp.cuda.runtime.deviceSynchronize() when the backend is a CuPy device;
synchronized_function / synchronized: a decorator that runs the wrapped program and
then calls sync).
"""
import functools

import cupy as cp


def sync(on_device=True):
    if on_device:
        cp.cuda.runtime.deviceSynchronize()


def synchronized_function(func, *, on_device=True):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        result = func(*args, **kwargs)
        sync(on_device)
        return result

    return wrapper


def synchronized(on_device=True):
    return functools.partial(synchronized_function, on_device=on_device)
