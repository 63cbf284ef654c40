"""Julia-set animation rendered with CuPy, the memory pools emptied after every frame.

Imitates danbatiste/GELib: GELib/Fractal/fractal_engine.py (create_jpg_pixels builds a
fresh complex plane with linspace/meshgrid, runs a RawKernel for the fractal values and
another for the colours, into newly allocated arrays, for every frame) together with
GELib/GPU/gpu_functions.py (gpu_free_memory(): mempool.free_all_blocks() and
pinned_mempool.free_all_blocks(), called from the animation loop). Here the pools are
freed after every frame, so every frame's ~15 arrays of 8-32 MB go back to the driver
and are cudaMalloc'ed again on the next. Frame statistics stay on the device; one copy
at the end. New code.
"""
import math

import cupy as cp

RES = 2048
FRAMES = 600
ITERATIONS = 24

julia = cp.RawKernel(r'''
#include <cupy/complex.cuh>
extern "C" __global__
void julia(const complex<float>* z0, float* out, complex<float> c, int iters, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    complex<float> z = z0[i];
    int k = 0;
    for (; k < iters; ++k) {
        z = z * z + c;
        if (norm(z) > 4.0f) break;
    }
    out[i] = (float)k / iters;
}
''', 'julia')

colour = cp.ElementwiseKernel(
    'float32 v, float32 t', 'int32 rgbx',
    '''int r = (int)(255.0f * v);
       int g = (int)(255.0f * (0.5f + 0.5f * sinf(6.283f * (v + t))));
       int b = (int)(255.0f * (1.0f - v));
       rgbx = (r << 24) | (g << 16) | (b << 8) | 255;''',
    'colour')

mempool = cp.get_default_memory_pool()
pinned_mempool = cp.get_default_pinned_memory_pool()


def gpu_free_memory():
    mempool.free_all_blocks()
    pinned_mempool.free_all_blocks()


def render(t, stats, k):
    x = cp.linspace(-1.6, 1.6, RES, dtype=cp.float32)
    y = 1j * cp.linspace(-1.6, 1.6, RES, dtype=cp.float32)
    xx, yy = cp.meshgrid(x, y)
    plane = (xx + yy).astype(cp.complex64)
    values = cp.zeros(RES * RES, dtype=cp.float32)
    c = complex(0.7885 * math.cos(t), 0.7885 * math.sin(t))
    julia(((RES * RES + 255) // 256,), (256,),
          (plane, values, cp.complex64(c), cp.int32(ITERATIONS), cp.int32(RES * RES)))
    pixels = colour(values.reshape(RES, RES), cp.float32(t))
    edges = cp.abs(cp.diff(values.reshape(RES, RES), axis=1))
    stats[k, 0] = values.mean()
    stats[k, 1] = edges.mean()
    stats[k, 2] = (pixels & 0xFF00).astype(cp.float32).mean()


def main():
    stats = cp.zeros((FRAMES, 3), dtype=cp.float32)
    for k in range(FRAMES):
        t = 2 * 3.14159265 * k / FRAMES
        render(t, stats, k)
        gpu_free_memory()
    host = cp.asnumpy(stats)
    print("frames", FRAMES, "mean escape", float(host[:, 0].mean()))


if __name__ == "__main__":
    main()
