"""Gaussian kernel density estimate of a 1-D sample evaluated on a fine grid,
the grid-by-sample kernel matrix built by broadcasting, a block of grid rows at
a time (NumPy baseline).

Imitates: XiaoyingGong/KDE_kernel_density_estimation_Demo:kde_1d.py (get_kde:
(x - data) / h for every grid point and sample, Gaussian kernel, sum over the
samples; h_determination: h = 1.05 * std * n^(-1/5)).
Writes density.npy (the density on the grid) and cdf.npy (its running
trapezoid integral), float64.
"""
import numpy as np

SAMPLES = 30000
GRID = 10000
BLOCK = 500


def main():
    rng = np.random.default_rng(11)
    data = np.concatenate((rng.normal(-2.0, 0.6, SAMPLES // 3),
                           rng.normal(1.0, 1.2, SAMPLES - SAMPLES // 3)))
    h = 1.05 * np.std(data) * len(data) ** (-1 / 5)
    grid = np.linspace(data.min() - 3 * h, data.max() + 3 * h, GRID)
    density = np.empty(GRID)
    norm = 1.0 / (len(data) * h * np.sqrt(2 * np.pi))
    for start in range(0, GRID, BLOCK):
        u = (grid[start:start + BLOCK, None] - data[None, :]) / h
        density[start:start + BLOCK] = norm * np.exp(-0.5 * u * u).sum(axis=1)
    cdf = np.concatenate(([0.0], np.cumsum(0.5 * (density[1:] + density[:-1]) * np.diff(grid))))
    np.save("density.npy", density)
    np.save("cdf.npy", cdf)
    print(f"h={h:.6f} integral={cdf[-1]:.9f}")


if __name__ == "__main__":
    main()
