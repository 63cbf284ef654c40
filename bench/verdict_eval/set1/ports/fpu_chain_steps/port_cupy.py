"""GPU port of base.py with CuPy: the same velocity-Verlet loop, every small
update now a CUDA kernel launch on a 256-element array (about 16 launches per
step, 30,000 steps), the GPU finishing each in a few microseconds.

Imitates: aleromualdi/FPU-Integrator:fput/integrator.py (velocity Verlet over
the FPU chain) ported by swapping np for cp and keeping the Python time loop.
The initial shape is computed with NumPy and copied to the device once.
"""
import numpy as np
import cupy as cp

ATOMS = 256
STEPS = 30000
SAMPLE = 50
DT = 0.05
ALPHA = 0.25
BETA = 0.3


def bond_forces(qe):
    d = qe[1:] - qe[:-1]                      # stretch of each of the ATOMS + 1 bonds
    return d + ALPHA * (d * d) + BETA * (d * d * d)


def energy(qe, p):
    d = qe[1:] - qe[:-1]
    pot = 0.5 * (d * d) + (ALPHA / 3.0) * (d * d * d) + (BETA / 4.0) * (d * d * d * d)
    return 0.5 * cp.sum(p * p) + cp.sum(pot)


def main():
    j = np.arange(1, ATOMS + 1)
    qe_h = np.zeros(ATOMS + 2)                # positions with the two fixed ends
    qe_h[1:-1] = 6.0 * np.sin(np.pi * j / (ATOMS + 1)) + 1.5 * np.sin(3 * np.pi * j / (ATOMS + 1))
    qe = cp.asarray(qe_h)
    p = cp.zeros(ATOMS)
    energies = cp.zeros(STEPS // SAMPLE)
    fb = bond_forces(qe)
    for step in range(STEPS):
        p += (0.5 * DT) * (fb[1:] - fb[:-1])
        qe[1:-1] += DT * p
        fb = bond_forces(qe)
        p += (0.5 * DT) * (fb[1:] - fb[:-1])
        if step % SAMPLE == 0:
            energies[step // SAMPLE] = energy(qe, p)
    np.save("state.npy", cp.asnumpy(cp.stack((qe[1:-1], p))))
    energies = cp.asnumpy(energies)
    np.save("energy.npy", energies)
    print(f"atoms={ATOMS} steps={STEPS} E0={energies[0]:.12e} E_end={energies[-1]:.12e}")


if __name__ == "__main__":
    main()
