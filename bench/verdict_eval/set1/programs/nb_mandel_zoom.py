"""Mandelbrot zoom rendered with numba.cuda, one 4K frame per kernel launch.

Imitates: nyu-cds/kl1405_assignment3:mandelbrot_gpu.py (a ``@cuda.jit(device=True)``
escape-time function called by a 2-D ``compute_mandel`` kernel writing into a
device image made with ``cuda.to_device``; ``copy_to_host`` at the end).

Each frame is one kernel of millions of threads iterating up to 10000 times near the
set's boundary; 16 frames are rendered into the same device image and only the last
one is copied back: the GPU computes for the whole run.
"""
import math

import numpy as np
from numba import cuda

WIDTH, HEIGHT = 3840, 2160
MAX_ITERS = 10000
N_FRAMES = 16
CENTRE_X, CENTRE_Y = -0.743643887037151, 0.131825904205330


@cuda.jit(device=True)
def mandel(x, y, max_iters):
    c = complex(x, y)
    z = 0.0j
    for i in range(max_iters):
        z = z * z + c
        if (z.real * z.real + z.imag * z.imag) >= 4:
            return i
    return max_iters


@cuda.jit
def compute_mandel(min_x, max_x, min_y, max_y, image, iters):
    height = image.shape[0]
    width = image.shape[1]
    pixel_size_x = (max_x - min_x) / width
    pixel_size_y = (max_y - min_y) / height
    x, y = cuda.grid(2)
    if x < width and y < height:
        real = min_x + x * pixel_size_x
        imag = min_y + y * pixel_size_y
        image[y, x] = mandel(real, imag, iters) % 256


def main():
    image = np.zeros((HEIGHT, WIDTH), dtype=np.uint8)
    d_image = cuda.to_device(image)
    threads = (16, 16)
    blocks = (math.ceil(WIDTH / threads[0]), math.ceil(HEIGHT / threads[1]))
    half_w = 1.5
    for frame in range(N_FRAMES):
        half_h = half_w * HEIGHT / WIDTH
        compute_mandel[blocks, threads](CENTRE_X - half_w, CENTRE_X + half_w,
                                        CENTRE_Y - half_h, CENTRE_Y + half_h, d_image, MAX_ITERS)
        half_w *= 0.6
    d_image.copy_to_host(image)
    print('mandelbrot: %d frames, last frame mean %.2f' % (N_FRAMES, image.mean()))


if __name__ == '__main__':
    main()
