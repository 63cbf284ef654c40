"""Katsevich-type filtering of helical cone-beam CT projections, chunk by chunk: forward
rebinning along kappa-curves followed by a 1-D Hilbert convolution along detector rows
(FFT on the GPU). The table speed drifts between chunks, so the kappa-curve index map is
rebuilt for every chunk on the host, column by column, in NumPy.

Imitates: Lhx627700838/pyKatsevich:pykatsevich/filter.py (fw_Kcurve_rebinning: a Python
loop over detector columns computing the w_k row-index map with NumPy; hilbert_conv_gpu:
CuPy FFT convolution of the rebinned rows with the Hilbert kernel).

The GPU part of a chunk (gather + interpolation + FFT filtering of 32 views) takes a
fraction of a millisecond; the per-column NumPy loop that precedes it takes several
milliseconds, during which the GPU has nothing queued. The loop is GPU-starved.
"""
import cupy as cp
import numpy as np

N_CHUNKS = 60
VIEWS = 32            # projections per chunk
ROWS = 64             # detector rows
COLS = 1376           # detector columns
M = 47                # kappa-curves: 2 * M + 1
KERNEL_RADIUS = 255

SCAN_RADIUS = 570.0
SCAN_DIAMETER = 1040.0
PIXEL_HEIGHT = 1.0
PITCH = 38.0


def kcurve_index_map(progress_per_turn, col_coords):
    """Row index (fractional) on the detector of each kappa-curve, for every column."""
    alpha_m = 0.426235
    psi = np.linspace(-np.pi / 2 - alpha_m, np.pi / 2 + alpha_m, 2 * M + 1)
    tan_psi = np.tan(psi)
    tan_psi[np.abs(tan_psi) < 1e-6] = 1e-6
    term = psi / tan_psi
    scale = SCAN_DIAMETER * progress_per_turn / (2 * np.pi * SCAN_RADIUS)
    wk_map = np.zeros((2 * M + 1, COLS), dtype=np.float32)
    for col in range(COLS):
        u = col_coords[col]
        w_k = -scale * (psi + term * (u / SCAN_DIAMETER))
        w_idx = w_k / PIXEL_HEIGHT + 0.5 * ROWS
        wk_map[:, col] = np.clip(w_idx, 0.0, ROWS - 2.001)
    return wk_map


def hilbert_kernel():
    n = np.arange(-KERNEL_RADIUS, KERNEL_RADIUS + 1)
    h = np.zeros(n.size, dtype=np.float32)
    nz = n != 0
    h[nz] = 1.0 / (np.pi * n[nz])
    return h


def main():
    col_coords = (np.arange(COLS) - 0.5 * (COLS - 1)) * 0.75
    h = hilbert_kernel()
    n_fft = 4096
    h_fft = cp.fft.rfft(cp.asarray(h), n=n_fft)
    col_idx = cp.arange(COLS)[None, :]

    rs = cp.random.RandomState(3)
    derivs = rs.standard_normal((N_CHUNKS, VIEWS, ROWS, COLS), dtype=cp.float32)
    filtered = cp.empty((N_CHUNKS, VIEWS, 2 * M + 1, COLS), dtype=cp.float32)

    for chunk in range(N_CHUNKS):
        pitch = PITCH * (1.0 + 0.03 * np.sin(0.4 * chunk))
        wk_map = kcurve_index_map(pitch, col_coords)
        wk = cp.asarray(wk_map)
        lo = cp.floor(wk).astype(cp.int32)
        frac = wk - lo
        proj = derivs[chunk]
        rebinned = (1.0 - frac) * proj[:, lo, col_idx] + frac * proj[:, lo + 1, col_idx]
        spec = cp.fft.rfft(rebinned, n=n_fft, axis=2)
        conv = cp.fft.irfft(spec * h_fft, n=n_fft, axis=2)
        filtered[chunk] = conv[:, :, KERNEL_RADIUS:KERNEL_RADIUS + COLS]

    flat = filtered.ravel()
    print("filtered chunks", N_CHUNKS, "rms %.4f" % float(cp.sqrt(cp.vdot(flat, flat) / flat.size)))


if __name__ == "__main__":
    main()
