"""Band energies of many noisy recordings, NumPy: python3 spectra.py N LEN
writes bands.npy (the energy in 16 frequency bands of each of N recordings
of LEN samples) and peaks.npy (each recording's strongest frequency bin).
"""
import sys

import numpy as np


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2048
    length = int(sys.argv[2]) if len(sys.argv) > 2 else 16384
    rng = np.random.default_rng(0)
    t = np.arange(length, dtype=np.float32)
    freq = rng.uniform(0.01, 0.45, size=(n, 1)).astype(np.float32)
    x = np.sin(2 * np.pi * freq * t) + rng.standard_normal((n, length), dtype=np.float32)
    power = np.abs(np.fft.rfft(x, axis=1)) ** 2
    edges = np.linspace(0, power.shape[1], 17).astype(int)
    bands = np.stack([power[:, a:b].sum(axis=1) for a, b in zip(edges[:-1], edges[1:])], axis=1)
    np.save("bands.npy", bands.astype(np.float32))
    np.save("peaks.npy", np.argmax(power[:, 1:], axis=1) + 1)
    print(f"n={n} length={length} mean band energy {bands.mean():.4e}")


if __name__ == "__main__":
    main()
