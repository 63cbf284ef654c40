"""Cleaning a noisy physiological signal with scipy.signal and scipy.ndimage.

Band-pass (Butterworth + filtfilt) and notch filtering, Welch spectrum, peak
detection, a spectrogram smoothed with scipy.ndimage, and a median filter.
GPU port: CuPy with cupyx.scipy.signal and cupyx.scipy.ndimage (same names).
"""
import numpy as np
import scipy.ndimage
from scipy import signal
from scipy.ndimage import gaussian_filter1d


def synthetic_pulse(fs=500.0, seconds=60.0, bpm=72.0, seed=0):
    """Sharp periodic beats + baseline wander + 50 Hz mains hum + noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(fs * seconds)) / fs
    beat_times = np.arange(0.5, seconds, 60.0 / bpm)
    beats = np.zeros_like(t)
    beats[np.searchsorted(t, beat_times)] = 1.0
    pulse = gaussian_filter1d(beats, sigma=0.01 * fs) * 40.0
    wander = 0.8 * np.sin(2 * np.pi * 0.2 * t)
    hum = 0.3 * np.sin(2 * np.pi * 50.0 * t)
    return t, pulse + wander + hum + 0.2 * rng.standard_normal(t.size), len(beat_times)


def main():
    fs = 500.0
    t, x, n_beats = synthetic_pulse(fs=fs)

    b, a = signal.butter(4, [0.5, 40.0], btype="bandpass", fs=fs)
    clean = signal.filtfilt(b, a, x)
    bn, an = signal.iirnotch(50.0, Q=30.0, fs=fs)
    clean = signal.filtfilt(bn, an, clean)
    clean = scipy.ndimage.median_filter(clean, size=3)

    freqs, psd = signal.welch(x, fs=fs, nperseg=2048)
    hum_bin = np.argmin(np.abs(freqs - 50.0))
    freqs_c, psd_c = signal.welch(clean, fs=fs, nperseg=2048)

    peaks, _ = signal.find_peaks(clean, height=0.5 * clean.max(), distance=int(0.3 * fs))
    rate = 60.0 * fs / np.median(np.diff(peaks))

    f_s, t_s, sxx = signal.spectrogram(clean, fs=fs, nperseg=256)
    sxx_smooth = scipy.ndimage.uniform_filter(sxx, size=(3, 5))

    print(f"samples={x.size} ({t[-1]:.0f} s at {fs:.0f} Hz)")
    print(f"50 Hz power before/after: {psd[hum_bin]:.2e} / {psd_c[hum_bin]:.2e}")
    print(f"beats detected {peaks.size} of {n_beats}, heart rate {rate:.1f} bpm")
    print(f"spectrogram {sxx.shape}, peak band {f_s[np.argmax(sxx_smooth.mean(axis=1))]:.1f} Hz")


if __name__ == "__main__":
    main()
