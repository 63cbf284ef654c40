"""Streams a pinned host data set through the GPU chunk by chunk for a light correction.

Imitates: cupy/cupy:examples/stream/cupy_memcpy.py (host buffers page-locked with
``cupy.cuda.alloc_pinned_memory`` + ``numpy.frombuffer``, then ``ndarray.set`` to
the device and ``ndarray.get(out=...)`` back).

The host buffers are pinned, so each copy runs at full PCIe speed, but every pass
ships 4 chunks of 32 MiB in and out again around a gain-and-clip kernel that takes
a few tens of microseconds: the copies are nearly all of the GPU's busy time.
"""
import numpy
import cupy

CHUNK = 8 * 1024 * 1024          # float32 elements: 32 MiB
NCHUNKS = 4
PASSES = 100

gain_clip = cupy.ElementwiseKernel(
    'T x, T gain, T lo, T hi', 'T y',
    'y = min(max(x * gain, lo), hi)',
    'gain_clip')


def pinned_empty(shape, dtype):
    count = int(numpy.prod(shape))
    mem = cupy.cuda.alloc_pinned_memory(count * numpy.dtype(dtype).itemsize)
    return numpy.frombuffer(mem, dtype, count).reshape(shape)


def main():
    host_in = pinned_empty((NCHUNKS, CHUNK), numpy.float32)
    host_out = pinned_empty((NCHUNKS, CHUNK), numpy.float32)
    base = numpy.arange(CHUNK, dtype=numpy.float32) * numpy.float32(1e-6)
    for k in range(NCHUNKS):
        host_in[k] = base + k

    d_in = cupy.empty(CHUNK, dtype=numpy.float32)
    d_out = cupy.empty(CHUNK, dtype=numpy.float32)
    gain, lo, hi = numpy.float32(0.97), numpy.float32(0.0), numpy.float32(6.0)
    for p in range(PASSES):
        for k in range(NCHUNKS):
            d_in.set(host_in[k])
            gain_clip(d_in, gain, lo, hi, d_out)
            d_out.get(out=host_out[k])
    print('stream: %d chunk round trips, checksum %.6e'
          % (PASSES * NCHUNKS, float(host_out[:, ::4096].sum(dtype=numpy.float64))))


if __name__ == '__main__':
    main()
