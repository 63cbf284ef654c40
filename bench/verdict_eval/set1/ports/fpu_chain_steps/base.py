"""Fermi-Pasta-Ulam-Tsingou chain (alpha + beta springs, fixed ends) integrated
with velocity Verlet, one small vectorised update per time step (NumPy baseline).

Imitates: aleromualdi/FPU-Integrator:fput/integrator.py (velocity Verlet step
p_half = p + dt/2 F(q); q += dt p_half; p = p_half + dt/2 F(q), with the
nearest-neighbour alpha/beta force), vectorised over the 256 atoms.
Writes state.npy (final q and p, 2 x 256) and energy.npy (total energy every
SAMPLE steps).
"""
import numpy as np

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
    return 0.5 * np.sum(p * p) + np.sum(pot)


def main():
    j = np.arange(1, ATOMS + 1)
    qe = np.zeros(ATOMS + 2)                  # positions with the two fixed ends
    qe[1:-1] = 6.0 * np.sin(np.pi * j / (ATOMS + 1)) + 1.5 * np.sin(3 * np.pi * j / (ATOMS + 1))
    p = np.zeros(ATOMS)
    energies = np.zeros(STEPS // SAMPLE)
    fb = bond_forces(qe)
    for step in range(STEPS):
        p += (0.5 * DT) * (fb[1:] - fb[:-1])
        qe[1:-1] += DT * p
        fb = bond_forces(qe)
        p += (0.5 * DT) * (fb[1:] - fb[:-1])
        if step % SAMPLE == 0:
            energies[step // SAMPLE] = energy(qe, p)
    np.save("state.npy", np.stack((qe[1:-1], p)))
    np.save("energy.npy", energies)
    print(f"atoms={ATOMS} steps={STEPS} E0={energies[0]:.12e} E_end={energies[-1]:.12e}")


if __name__ == "__main__":
    main()
