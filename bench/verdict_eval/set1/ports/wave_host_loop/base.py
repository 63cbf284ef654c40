"""Damped 2-D wave equation, leap-frog with a five-point periodic Laplacian
(np.roll), driven by a point source that the host updates every step
(NumPy baseline).

Imitates: EternalGoldenBraid/AudioViz:src/audioviz/physics/wave_propagator.py
(WavePropagatorCPU.step: laplacian from four np.roll, Z_new = 2Z - Z_old +
c2_dt2 * laplacian, times the damping; an excitation added on the host between
steps), on a 2048 x 2048 float64 field.
Writes field.npy (the final field) and probe.npy (the field at four probe
points after every step).
"""
import numpy as np

N = 2048
STEPS = 48
C2_DT2 = 0.2
DAMPING = 0.999
PROBES = (np.array([100, 1024, 1500, 2000]), np.array([1024, 300, 1500, 40]))


def laplacian(z):
    return (-4.0 * z + np.roll(z, 1, axis=0) + np.roll(z, -1, axis=0)
            + np.roll(z, 1, axis=1) + np.roll(z, -1, axis=1))


def main():
    rng = np.random.default_rng(3)
    z = 1e-3 * rng.standard_normal((N, N))
    z_old = z.copy()
    probe = np.zeros((STEPS, len(PROBES[0])))
    for k in range(STEPS):
        z[N // 2, N // 2] += np.sin(0.3 * k)          # the source, set on the host
        z_new = (2.0 * z - z_old + C2_DT2 * laplacian(z)) * DAMPING
        z_old, z = z, z_new
        probe[k] = z[PROBES]
    np.save("field.npy", z)
    np.save("probe.npy", probe)
    print(f"N={N} steps={STEPS} energy={float((z * z).sum()):.9e}")


if __name__ == "__main__":
    main()
