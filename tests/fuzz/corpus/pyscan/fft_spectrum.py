"""Spectral analysis of noisy multi-channel sensor recordings with NumPy.

FFT power spectra, an SVD of the channel matrix, a covariance eigendecomposition
and a linear solve. GPU port: CuPy (`import cupy as np` covers numpy.fft and most
of numpy.linalg); np.nanpercentile has no CuPy equivalent and stays on the CPU.
"""
import numpy as np
from numpy import fft
from numpy.linalg import svd


def make_recordings(rng, n_channels=32, n_samples=4096, fs=1000.0):
    """One sine per channel plus white noise, with a few dropped (NaN) samples."""
    t = np.arange(n_samples) / fs
    freqs = rng.uniform(20.0, 200.0, size=n_channels)
    clean = np.sin(2.0 * np.pi * freqs[:, None] * t[None, :])
    x = clean + 0.5 * rng.standard_normal((n_channels, n_samples))
    x[rng.random(x.shape) < 0.001] = np.nan
    return x, freqs, fs


def dominant_frequencies(x, fs):
    spec = fft.rfft(x, axis=1)
    power = np.abs(spec) ** 2
    f_axis = fft.rfftfreq(x.shape[1], d=1.0 / fs)
    peaks = f_axis[np.argmax(power[:, 1:], axis=1) + 1]  # skip the DC bin
    return spec, f_axis, peaks


def lowpass(spec, f_axis, cutoff, n):
    spec = spec.copy()
    spec[:, f_axis > cutoff] = 0.0
    return fft.irfft(spec, n=n, axis=1)


def main():
    rng = np.random.default_rng(0)
    x, freqs, fs = make_recordings(rng)

    # robust per-channel level, ignoring dropped samples (not in CuPy)
    p95 = np.nanpercentile(np.abs(x), 95, axis=1)

    filled = np.where(np.isnan(x), 0.0, x)
    spec, f_axis, peaks = dominant_frequencies(filled, fs)
    smooth = lowpass(spec, f_axis, 250.0, filled.shape[1])

    centered = filled - filled.mean(axis=1, keepdims=True)
    u, s, vt = svd(centered, full_matrices=False)
    explained = (s[:3] ** 2).sum() / (s ** 2).sum()

    cov = centered @ centered.T / centered.shape[1]
    w, v = np.linalg.eigh(cov)

    a = cov + 1e-3 * np.eye(cov.shape[0])
    b = rng.standard_normal(cov.shape[0])
    coef = np.linalg.solve(a, b)

    print(f"channels={x.shape[0]} samples={x.shape[1]}")
    print(f"max peak-frequency error: {np.max(np.abs(peaks - freqs)):.3f} Hz")
    print(f"top-3 singular values explain {explained:.1%} of the variance")
    print(f"covariance eigenvalues: min {w[0]:.4f} max {w[-1]:.4f}")
    print(f"solve residual: {np.linalg.norm(a @ coef - b):.2e}")
    print(f"median p95 level: {np.median(p95):.3f}; lowpass rms {smooth.std():.3f}")


if __name__ == "__main__":
    main()
