"""Action profiler used by pt_matcher_profiler_sync.py: a context manager that times a
named stage of the matcher and synchronizes the device on entry and on exit so that the
wall-clock time covers the stage's GPU work.

Imitates: TencentYoutuResearch/AdaMatcher:src/utils/profiler.py (InferenceProfiler,
the LoFTR-family profiler: `profile(action_name)` calls torch.cuda.synchronize(), starts
the action, yields, then torch.cuda.synchronize() again and stops it), kept switched on
for every image pair.
"""
import time
from collections import defaultdict
from contextlib import contextmanager

import torch


class InferenceProfiler:
    """Records the duration of actions with cuda.synchronize() around each of them."""

    def __init__(self):
        self.totals = defaultdict(float)
        self.counts = defaultdict(int)

    @contextmanager
    def profile(self, action_name):
        torch.cuda.synchronize()
        start = time.perf_counter()
        try:
            yield action_name
        finally:
            torch.cuda.synchronize()
            self.totals[action_name] += time.perf_counter() - start
            self.counts[action_name] += 1

    def summary(self):
        return ", ".join(f"{name} {1e6 * self.totals[name] / self.counts[name]:.0f} us"
                         for name in self.totals)
