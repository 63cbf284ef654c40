"""FFT convolution of one small image with a Gaussian kernel (NumPy baseline).

Imitates: Ben0126/Matlab_call_Python_conv2D:gpu_fft_convolve2D.py (fftn of the
signal and of the zero-padded kernel, pointwise product, ifftn, real part),
here on a single 256 x 256 image: the whole job takes milliseconds.
Writes blurred.npy (256 x 256, float64) and spectrum.npy (radially averaged
power of the blurred image, the 32 lowest-frequency bins).
"""
import numpy as np

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
    blurred = np.real(np.fft.ifftn(np.fft.fftn(image) * np.fft.fftn(kernel)))
    power = np.abs(np.fft.fftshift(np.fft.fftn(blurred))) ** 2
    radius = np.hypot(xx - SIZE // 2, yy - SIZE // 2).astype(np.int64)
    radius = np.minimum(radius, SIZE // 2 - 1)
    spectrum = np.bincount(radius.ravel(), weights=power.ravel(), minlength=SIZE // 2)
    spectrum /= np.bincount(radius.ravel(), minlength=SIZE // 2)
    np.save("blurred.npy", blurred)
    np.save("spectrum.npy", spectrum[:32])
    print(f"mean={blurred.mean():.9f} low-band power={spectrum[:8].sum():.6e}")


if __name__ == "__main__":
    main()
