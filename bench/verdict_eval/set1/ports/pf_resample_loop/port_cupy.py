"""GPU port of base.py with CuPy: particles, landmarks, ranges and the noise go
to the device once and the predict / likelihood / estimate steps run there,
but systematic resampling keeps filterpy's Python while loop and reads the
device cumulative sum one element at a time with .item(): about 8,000
device-to-host copies (each a synchronisation) per step, 240,000 in all,
while the GPU sits idle.

Imitates: rlabbe/filterpy:filterpy/monte_carlo/resampling.py (systematic_resample)
and rlabbe/Kalman-and-Bayesian-Filters-in-Python:12-Particle-Filters.ipynb,
ported by moving the arrays to CuPy and adding .item() where a host scalar is
needed.
"""
import numpy as np
import cupy as cp

N = 4000
LANDMARKS = 800
STEPS = 30
DT = 0.1
RANGE_STD = 2.0


def systematic_resample(weights, offset):
    n = len(weights)
    positions = (offset + np.arange(n)) / n
    indexes = np.zeros(n, dtype=np.int64)
    cumulative_sum = cp.cumsum(weights)
    cumulative_sum[-1] = 1.0                  # guard against round-off
    i, j = 0, 0
    while i < n:
        if positions[i] < cumulative_sum[j].item():
            indexes[i] = j
            i += 1
        else:
            j += 1
    return cp.asarray(indexes)


def main():
    rng = np.random.default_rng(1234)
    marks_h = rng.uniform(-100.0, 100.0, (LANDMARKS, 2))
    truth = np.array([0.0, 0.0, 3.0, -2.0])
    ranges_h = np.empty((STEPS, LANDMARKS))
    for k in range(STEPS):
        truth[:2] += DT * truth[2:]
        ranges_h[k] = np.hypot(*(marks_h - truth[:2]).T) + RANGE_STD * rng.standard_normal(LANDMARKS)
    noise_h = rng.standard_normal((STEPS, N, 4)) * np.array([0.3, 0.3, 0.2, 0.2])
    offsets = rng.random(STEPS)
    particles_h = np.column_stack((rng.normal(0.0, 5.0, (N, 2)), rng.normal(0.0, 3.0, (N, 2))))
    marks, ranges, noise = cp.asarray(marks_h), cp.asarray(ranges_h), cp.asarray(noise_h)
    particles = cp.asarray(particles_h)
    estimate = cp.zeros((STEPS, 4))
    for k in range(STEPS):
        particles[:, :2] += DT * particles[:, 2:]           # predict
        particles += noise[k]
        dx = particles[:, 0:1] - marks[None, :, 0]          # update
        dy = particles[:, 1:2] - marks[None, :, 1]
        resid = (cp.sqrt(dx * dx + dy * dy) - ranges[k][None, :]) / RANGE_STD
        loglik = -0.5 * cp.sum(resid * resid, axis=1)
        weights = cp.exp(loglik - loglik.max())
        weights /= weights.sum()
        estimate[k] = weights @ particles                   # estimate
        particles = particles[systematic_resample(weights, offsets[k])]
    estimate = cp.asnumpy(estimate)
    np.save("estimate.npy", estimate)
    np.save("particles.npy", cp.asnumpy(particles))
    print(f"N={N} steps={STEPS} final estimate={estimate[-1]} truth={truth}")


if __name__ == "__main__":
    main()
