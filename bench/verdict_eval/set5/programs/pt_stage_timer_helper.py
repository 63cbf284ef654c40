"""Stage timer used by pt_stage_timer_sync.py (not run on its own).

Imitates the Timer of CloudEngineHub/LangScene-X:cogvideox_interpolation/utils/misc.py:
a context manager that calls torch.cuda.synchronize() on entry and on exit so that the
wall-clock time it records covers the GPU work of the block. New code.
"""
import time
from collections import defaultdict

import torch

TOTALS = defaultdict(float)
COUNTS = defaultdict(int)


class StageTimer:
    def __init__(self, name):
        self.name = name
        self.start = 0.0

    def __enter__(self):
        torch.cuda.synchronize()
        self.start = time.perf_counter()
        return self

    def __exit__(self, exc_type, exc, tb):
        torch.cuda.synchronize()
        TOTALS[self.name] += time.perf_counter() - self.start
        COUNTS[self.name] += 1
        return False


def report():
    for name in sorted(TOTALS):
        print(f"{name:>8}: {1e6 * TOTALS[name] / COUNTS[name]:8.1f} us x {COUNTS[name]}")
