"""GPU port of base.py: only the step moves to the GPU. The field stays a
NumPy array (the source and the probes are handled on the host), so every
step ships z and z_old (2 x 32 MiB) to the device and the new field (32 MiB)
back, through pageable memory, for well under a millisecond of GPU
arithmetic.

Imitates: EternalGoldenBraid/AudioViz:src/audioviz/physics/wave_propagator.py
(WavePropagatorCPU/GPU.step with the roll Laplacian), ported by wrapping the
CPU step in asarray / asnumpy.
"""
import numpy as np
from cupy import asarray, asnumpy, roll

N = 2048
STEPS = 48
C2_DT2 = 0.2
DAMPING = 0.999
PROBES = (np.array([100, 1024, 1500, 2000]), np.array([1024, 300, 1500, 40]))


def laplacian(z):
    return (-4.0 * z + roll(z, 1, axis=0) + roll(z, -1, axis=0)
            + roll(z, 1, axis=1) + roll(z, -1, axis=1))


def main():
    rng = np.random.default_rng(3)
    z = 1e-3 * rng.standard_normal((N, N))
    z_old = z.copy()
    probe = np.zeros((STEPS, len(PROBES[0])))
    for k in range(STEPS):
        z[N // 2, N // 2] += np.sin(0.3 * k)          # the source, set on the host
        z_gpu, z_old_gpu = asarray(z), asarray(z_old)
        z_new = asnumpy((2.0 * z_gpu - z_old_gpu + C2_DT2 * laplacian(z_gpu)) * DAMPING)
        z_old, z = z, z_new
        probe[k] = z[PROBES]
    np.save("field.npy", z)
    np.save("probe.npy", probe)
    print(f"N={N} steps={STEPS} energy={float((z * z).sum()):.9e}")


if __name__ == "__main__":
    main()
