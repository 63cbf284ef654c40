"""Bootstrap particle filter tracking a target from noisy ranges to many
landmarks, with systematic resampling every step (NumPy baseline).

Imitates: rlabbe/filterpy:filterpy/monte_carlo/resampling.py (systematic_resample:
positions = (random() + arange(N)) / N, cumulative_sum = cumsum(weights), and
the `while i < N: if positions[i] < cumulative_sum[j]` loop) together with the
landmark-range filter of rlabbe/Kalman-and-Bayesian-Filters-in-Python:
12-Particle-Filters.ipynb (predict, weight by the range likelihood, estimate,
resample), with log-weights and a constant-velocity model.
Writes estimate.npy (posterior mean per step, STEPS x 4) and particles.npy
(the final particle cloud, N x 4).
"""
import numpy as np

N = 4000
LANDMARKS = 800
STEPS = 30
DT = 0.1
RANGE_STD = 2.0


def systematic_resample(weights, offset):
    n = len(weights)
    positions = (offset + np.arange(n)) / n
    indexes = np.zeros(n, dtype=np.int64)
    cumulative_sum = np.cumsum(weights)
    cumulative_sum[-1] = 1.0                  # guard against round-off
    i, j = 0, 0
    while i < n:
        if positions[i] < cumulative_sum[j]:
            indexes[i] = j
            i += 1
        else:
            j += 1
    return indexes


def main():
    rng = np.random.default_rng(1234)
    marks = rng.uniform(-100.0, 100.0, (LANDMARKS, 2))
    truth = np.array([0.0, 0.0, 3.0, -2.0])
    ranges = np.empty((STEPS, LANDMARKS))
    for k in range(STEPS):
        truth[:2] += DT * truth[2:]
        ranges[k] = np.hypot(*(marks - truth[:2]).T) + RANGE_STD * rng.standard_normal(LANDMARKS)
    noise = rng.standard_normal((STEPS, N, 4)) * np.array([0.3, 0.3, 0.2, 0.2])
    offsets = rng.random(STEPS)
    particles = np.column_stack((rng.normal(0.0, 5.0, (N, 2)), rng.normal(0.0, 3.0, (N, 2))))
    estimate = np.zeros((STEPS, 4))
    for k in range(STEPS):
        particles[:, :2] += DT * particles[:, 2:]           # predict
        particles += noise[k]
        dx = particles[:, 0:1] - marks[None, :, 0]          # update
        dy = particles[:, 1:2] - marks[None, :, 1]
        resid = (np.sqrt(dx * dx + dy * dy) - ranges[k][None, :]) / RANGE_STD
        loglik = -0.5 * np.sum(resid * resid, axis=1)
        weights = np.exp(loglik - loglik.max())
        weights /= weights.sum()
        estimate[k] = weights @ particles                   # estimate
        particles = particles[systematic_resample(weights, offsets[k])]
    np.save("estimate.npy", estimate)
    np.save("particles.npy", particles)
    print(f"N={N} steps={STEPS} final estimate={estimate[-1]} truth={truth}")


if __name__ == "__main__":
    main()
