"""Richardson-Lucy deconvolution of a time-lapse, each result collected on the host.

Imitates: jdmanton/gpu_rl_deconv:gpu_deconv.py (Richardson-Lucy on CuPy with an
``fftconv`` helper built on ``cupy.fft.rfftn``/``irfftn``, then ``recon.get()`` to
bring the reconstruction back).

Each frame is 3072 x 2048 float32 (24 MiB) and gets 100 RL iterations on the GPU;
the finished frame goes to ``FrameStore.add`` in cp_rl_timelapse_helper.py, whose
``to_numpy`` (``cupy.asnumpy``) copies it into a fresh, pageable NumPy array.
"""
import numpy as np
import cupy as cp

from cp_rl_timelapse_helper import FrameStore

NY, NX = 3072, 2048
N_FRAMES = 16
NUM_ITERS = 100


def gaussian_psf(ny, nx, sigma):
    y = cp.fft.fftfreq(ny, 1.0 / ny).astype(cp.float32)[:, None]
    x = cp.fft.fftfreq(nx, 1.0 / nx).astype(cp.float32)[None, :]
    psf = cp.exp(-(x * x + y * y) / (2 * sigma * sigma))
    return psf / psf.sum()


def fftconv(x, H):
    return cp.fft.irfftn(cp.fft.rfftn(x) * H, x.shape)


def synthetic_frame(t, otf, rs):
    truth = cp.zeros((NY, NX), dtype=cp.float32)
    ys = rs.randint(0, NY, 4000)
    xs = rs.randint(0, NX, 4000)
    truth[ys, xs] = 100.0 + 10.0 * t
    blurred = fftconv(truth, otf)
    return cp.maximum(blurred, 0) + rs.poisson(2.0, (NY, NX)).astype(cp.float32)


def deconvolve(image, otf, otfT, HTones, num_iters):
    recon = cp.ones_like(image)
    for _ in range(num_iters):
        Hu = fftconv(recon, otf)
        ratio = image / (Hu + 1e-12)
        recon = recon * fftconv(ratio, otfT) / HTones
    return recon


def main():
    psf = gaussian_psf(NY, NX, 2.5)
    otf = cp.fft.rfftn(psf)
    otfT = cp.conj(otf)
    HTones = fftconv(cp.ones((NY, NX), dtype=cp.float32), otfT)
    rs = cp.random.RandomState(5)
    store = FrameStore()
    for t in range(N_FRAMES):
        image = synthetic_frame(t, otf, rs)
        recon = deconvolve(image, otf, otfT, HTones, NUM_ITERS)
        store.add(recon)
    peak = max(float(f.max()) for f in store.frames)
    print('rl: %d frames of %dx%d deconvolved, peak %.2f' % (len(store), NY, NX, peak))


if __name__ == '__main__':
    main()
