"""Bootstrap confidence interval of the median response time of a web service from one
day of 20,001 samples: 400 resamples drawn at once as an index matrix, the median of
each, and the 2.5 / 97.5 percentiles of those medians (NumPy baseline).

Imitates: Wade2016/protGM:utilities.py (bootstrap: idx = np.random.randint(0, n,
(num_samples, n)); samples = data[idx]; stat = np.sort(statistic(samples, 1)); the CI
from the sorted statistics), with the median as the statistic.
Writes boot_medians.npy (400, float64) and ci.npy (2, float64).
"""
import numpy as np

N = 20_001
N_BOOT = 400


def main():
    rng = np.random.default_rng(99)
    data = rng.lognormal(mean=4.0, sigma=0.6, size=N)          # milliseconds
    idx = rng.integers(0, N, size=(N_BOOT, N))
    medians = np.sort(np.median(data[idx], axis=1))
    ci = np.percentile(medians, [2.5, 97.5])
    np.save("boot_medians.npy", medians)
    np.save("ci.npy", ci)
    print(f"median={np.median(data):.4f} ms  95% CI=({ci[0]:.4f}, {ci[1]:.4f})")


if __name__ == "__main__":
    main()
