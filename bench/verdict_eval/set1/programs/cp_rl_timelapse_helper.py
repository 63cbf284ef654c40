"""Array helpers for the time-lapse deconvolution (cp_rl_timelapse.py).

Imitates: StanczakDominik/Nbody:nbody/compat.py (a compat module that names
``cupy.asnumpy`` as the project's ``to_numpy`` for moving results to the host).
"""
import cupy

to_numpy = cupy.asnumpy


class FrameStore:
    """Keeps every deconvolved frame on the host, as the analysis code expects."""

    def __init__(self):
        self.frames = []

    def add(self, frame):
        self.frames.append(to_numpy(frame))

    def __len__(self):
        return len(self.frames)
