"""Metropolis Monte Carlo of a Lennard-Jones fluid (500 particles in a periodic cubic
box, reduced units, T* = 1.2, rho* = 0.6): 15,000 single-particle trial moves, each
accepted or rejected from the energy change of the moved particle against all others
with the minimum-image convention and a 2.5 sigma cut-off (NumPy baseline, float64).

Imitates: wwilla7/lj-mmcmd:lj_mmcmd/mclj.py (MCLJ: trial positions, pairwise distances
with periodic boundaries, 4 eps [(s/r)^12 - (s/r)^6] energies and decision_maker's
exp(-(U_trial - U) / RT) test), here with the energy change computed for the moved
particle only. All random numbers are drawn up front so any port can replay them.
Writes positions.npy (500 x 3) and energy_trace.npy (energy every 500 moves, plus the
acceptance ratio as the last element).
"""
import numpy as np

N = 500
DENSITY = 0.6
TEMP = 1.2
N_MOVES = 15_000
MAX_DISP = 0.25
CUTOFF2 = 2.5 ** 2
BOX = (N / DENSITY) ** (1.0 / 3.0)


def wrap(x):
    return x - BOX * np.floor(x / BOX)


def particle_energy(pos, i, r):
    d = pos - r
    d -= BOX * np.round(d / BOX)
    r2 = np.sum(d * d, axis=1)
    r2[i] = np.inf
    inv6 = np.where(r2 < CUTOFF2, 1.0 / r2 ** 3, 0.0)
    return np.sum(4.0 * (inv6 * inv6 - inv6))


def total_energy(pos):
    return 0.5 * sum(particle_energy(pos, i, pos[i]) for i in range(N))


def main():
    rng = np.random.default_rng(123)
    side = int(np.ceil(N ** (1 / 3)))
    grid = np.stack(np.meshgrid(*[np.arange(side)] * 3, indexing="ij"), -1).reshape(-1, 3)[:N]
    pos = (grid + 0.5) * (BOX / side)
    who = rng.integers(0, N, N_MOVES)
    disp = rng.uniform(-MAX_DISP, MAX_DISP, (N_MOVES, 3))
    u = rng.random(N_MOVES)
    energy = total_energy(pos)
    trace, accepted = [], 0
    for k in range(N_MOVES):
        i = who[k]
        trial = wrap(pos[i] + disp[k])
        d_e = particle_energy(pos, i, trial) - particle_energy(pos, i, pos[i])
        if u[k] < np.exp(-d_e / TEMP):
            pos[i] = trial
            energy += d_e
            accepted += 1
        if (k + 1) % 500 == 0:
            trace.append(energy)
    np.save("positions.npy", pos)
    np.save("energy_trace.npy", np.array(trace + [accepted / N_MOVES]))
    print(f"final energy per particle {energy / N:.4f}, acceptance {accepted / N_MOVES:.3f}")


if __name__ == "__main__":
    main()
