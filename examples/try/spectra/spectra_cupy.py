"""The CuPy twin of spectra.py: the same recordings (made on the host with
the same generator, then copied once), the FFT and the band sums on the GPU."""
import sys

import cupy as cp
import numpy as np


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2048
    length = int(sys.argv[2]) if len(sys.argv) > 2 else 16384
    rng = np.random.default_rng(0)
    t = np.arange(length, dtype=np.float32)
    freq = rng.uniform(0.01, 0.45, size=(n, 1)).astype(np.float32)
    x = cp.asarray(np.sin(2 * np.pi * freq * t) + rng.standard_normal((n, length), dtype=np.float32))
    power = cp.abs(cp.fft.rfft(x, axis=1)) ** 2
    edges = np.linspace(0, power.shape[1], 17).astype(int)
    bands = cp.stack([power[:, a:b].sum(axis=1) for a, b in zip(edges[:-1], edges[1:])], axis=1)
    np.save("bands.npy", cp.asnumpy(bands).astype(np.float32))
    np.save("peaks.npy", cp.asnumpy(cp.argmax(power[:, 1:], axis=1) + 1))
    print(f"n={n} length={length} mean band energy {float(bands.mean()):.4e}")


if __name__ == "__main__":
    main()
