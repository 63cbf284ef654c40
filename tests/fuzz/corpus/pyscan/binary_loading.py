"""Loading raw float32 detector frames from binary files.

Writes a headerless float32 file, reads it whole with numpy.fromfile, again via
open().read() + np.frombuffer, and frame by frame with offsets.
GPU port: KvikIO (`kvikio.numpy.fromfile(path, dtype, like=cupy.empty(()))`,
or kvikio.CuFile reads straight into device buffers).
"""
import os
import tempfile

import numpy as np

FRAME_SHAPE = (256, 256)


def write_frames(path, n_frames, seed=0):
    rng = np.random.default_rng(seed)
    frames = rng.standard_normal((n_frames, *FRAME_SHAPE)).astype(np.float32)
    frames.tofile(path)
    return frames


def read_frame(path, index):
    """One frame at a byte offset, without reading the whole file."""
    count = FRAME_SHAPE[0] * FRAME_SHAPE[1]
    offset = index * count * np.dtype(np.float32).itemsize
    return np.fromfile(path, dtype=np.float32, count=count, offset=offset).reshape(FRAME_SHAPE)


def main():
    n_frames = 32
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "frames.f32")
        reference = write_frames(path, n_frames)
        size_mb = os.path.getsize(path) / 1e6

        whole = np.fromfile(path, dtype=np.float32).reshape(n_frames, *FRAME_SHAPE)

        # quick-and-dirty whole-file read (the handle is left to the GC)
        raw = np.frombuffer(open(path, "rb").read(), dtype=np.float32)

        means = []
        with open(path, "rb") as f:
            frame_bytes = FRAME_SHAPE[0] * FRAME_SHAPE[1] * 4
            while chunk := f.read(frame_bytes):
                means.append(np.frombuffer(chunk, dtype=np.float32).mean())

        last = read_frame(path, n_frames - 1)

    print(f"file {size_mb:.1f} MB, {n_frames} frames of {FRAME_SHAPE}")
    print(f"fromfile matches written data: {np.array_equal(whole, reference)}")
    print(f"frombuffer matches: {np.array_equal(raw.reshape(whole.shape), reference)}")
    print(f"per-frame means: min {min(means):+.4f} max {max(means):+.4f}")
    print(f"offset read of last frame matches: {np.array_equal(last, reference[-1])}")


if __name__ == "__main__":
    main()
