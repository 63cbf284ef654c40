"""Helpers for the trace suite programs: CUDA-event timing (CuPy or PyTorch)
and the GPUOPT_CHECK line that check_suite.py reads."""
import json
import sys


def report(**facts):
    print("GPUOPT_CHECK " + json.dumps(facts), flush=True)


def arg(i, default):
    return int(sys.argv[i]) if len(sys.argv) > i else default


class CupyEvents:
    """Times a region on the current CuPy stream with CUDA events (ms)."""

    def __init__(self):
        import cupy as cp
        self.cp = cp

    def __enter__(self):
        self.a = self.cp.cuda.Event()
        self.b = self.cp.cuda.Event()
        self.a.record()
        return self

    def __exit__(self, *exc):
        self.b.record()
        self.b.synchronize()
        self.ms = self.cp.cuda.get_elapsed_time(self.a, self.b)


class TorchEvents:
    def __init__(self):
        import torch
        self.torch = torch

    def __enter__(self):
        self.a = self.torch.cuda.Event(enable_timing=True)
        self.b = self.torch.cuda.Event(enable_timing=True)
        self.a.record()
        return self

    def __exit__(self, *exc):
        self.b.record()
        self.b.synchronize()
        self.ms = self.a.elapsed_time(self.b)
