"""GPU port of base.py with CuPy: image and kernel built on the host as before,
copied to the device, convolved with cuFFT, results copied back. Correct, but
the whole job is a few milliseconds of work on one 256 x 256 image, so CUDA
context creation, CuPy's import and cuFFT plan set-up dominate the run.

Imitates: Ben0126/Matlab_call_Python_conv2D:gpu_fft_convolve2D.py (asarray,
fftn, pointwise product, ifftn, asnumpy, real part).
"""
import numpy as np
import cupy as cp

SIZE = 256
KSIZE = 21
SIGMA = 3.0


def gaussian_kernel(ksize, sigma):
    r = np.arange(ksize) - ksize // 2
    g = np.exp(-(r[:, None] ** 2 + r[None, :] ** 2) / (2.0 * sigma ** 2))
    return g / g.sum()


def main():
    rng = np.random.default_rng(7)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    image = 1.0 + (np.sin(xx / 9.0) * np.cos(yy / 13.0) > 0)
    image += 0.2 * rng.standard_normal((SIZE, SIZE))
    kernel = np.zeros((SIZE, SIZE))
    kernel[:KSIZE, :KSIZE] = gaussian_kernel(KSIZE, SIGMA)
    kernel = np.roll(kernel, (-(KSIZE // 2), -(KSIZE // 2)), axis=(0, 1))  # centre at the origin
    image_gpu = cp.asarray(image)
    kernel_gpu = cp.asarray(kernel)
    blurred = cp.real(cp.fft.ifftn(cp.fft.fftn(image_gpu) * cp.fft.fftn(kernel_gpu)))
    power = cp.abs(cp.fft.fftshift(cp.fft.fftn(blurred))) ** 2
    radius = cp.asarray(np.minimum(np.hypot(xx - SIZE // 2, yy - SIZE // 2).astype(np.int64), SIZE // 2 - 1))
    spectrum = cp.bincount(radius.ravel(), weights=power.ravel(), minlength=SIZE // 2)
    spectrum /= cp.bincount(radius.ravel(), minlength=SIZE // 2)
    np.save("blurred.npy", cp.asnumpy(blurred))
    np.save("spectrum.npy", cp.asnumpy(spectrum[:32]))
    print(f"mean={float(blurred.mean()):.9f} low-band power={float(spectrum[:8].sum()):.6e}")


if __name__ == "__main__":
    main()
