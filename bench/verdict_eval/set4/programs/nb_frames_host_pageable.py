"""Binarisation of a looping 4K (2160 x 3840, BGR) video clip with a numba.cuda kernel,
one frame at a time: the kernel takes the NumPy frame and a NumPy output frame directly,
computes the luma of every pixel and writes black or white into the output.

Imitates: tppope/ppds22:cuda.py (main: `for frame in tqdm(video):
my_kernel_image[(blocks_per_grid_x, blocks_per_grid_y), threads_per_block](frame)`, a
2-D grid over the pixels with luma 0.299 R + 0.587 G + 0.114 B thresholded to 0 / 255,
launched on host NumPy arrays), here with a separate output frame.

Because both arguments are host arrays, Numba copies each 25 MB frame and its output
buffer to the device before every launch and copies both back after it, all through
ordinary pageable memory (about 100 MB of synchronous copies per frame against ~20
microseconds of kernel time); staging the clip once in pinned or device memory would
remove almost all of it: pageable-transfer.
"""
import math
import warnings

import numpy as np
from numba import cuda

warnings.filterwarnings("ignore", message=".*Host array used in CUDA kernel.*")

H, W = 2160, 3840
CLIP_FRAMES = 6
N_FRAMES = 150
THRESHOLD = 100.0


@cuda.jit
def binarize_kernel(frame, out):
    row, col = cuda.grid(2)
    if row < frame.shape[0] and col < frame.shape[1]:
        b = frame[row, col, 0]
        g = frame[row, col, 1]
        r = frame[row, col, 2]
        luma = 0.299 * r + 0.587 * g + 0.114 * b
        v = 0 if luma < THRESHOLD else 255
        out[row, col, 0] = v
        out[row, col, 1] = v
        out[row, col, 2] = v


def make_clip(rng):
    """A short synthetic clip: a textured scene with a bright blob, panning sideways."""
    yy, xx = np.ogrid[0:H, 0:W]
    lum = 60.0 + 40.0 * np.sin(xx / 37.0) * np.cos(yy / 53.0)
    lum = lum + 150.0 * np.exp(-(((xx - 1900.0) / 500.0) ** 2 + ((yy - 1080.0) / 400.0) ** 2))
    lum = np.clip(lum, 0, 240).astype(np.uint8) + rng.integers(0, 16, size=(H, W), dtype=np.uint8)
    scene = np.stack([lum, lum, lum], axis=-1)
    return [np.ascontiguousarray(np.roll(scene, 160 * k, axis=1)) for k in range(CLIP_FRAMES)]


def main():
    rng = np.random.default_rng(3)
    clip = make_clip(rng)
    outputs = [np.empty_like(f) for f in clip]
    threads = (16, 16)
    blocks = (math.ceil(H / threads[0]), math.ceil(W / threads[1]))
    white = 0
    for n in range(N_FRAMES):
        k = n % CLIP_FRAMES
        binarize_kernel[blocks, threads](clip[k], outputs[k])
        if k == 0:
            white += int(outputs[k][::8, ::8, 0].sum() // 255)
    print(f"frames {N_FRAMES}, {H}x{W}, white pixels in sampled frames {white}")


if __name__ == "__main__":
    main()
