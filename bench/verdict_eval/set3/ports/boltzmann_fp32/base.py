"""Thermodynamics of a sampled energy landscape: from 4 million sampled conformation
energies, the partition function, mean energy and heat capacity at 64 temperatures by
direct Boltzmann sums (NumPy baseline, float64).

Imitates: ravidosa/notes:academics/assignments/code/phy112l_lab3/utils.py (E_avg, E2_avg,
C and F: sums of E * exp(-E/T) and exp(-E/T) over the energy levels, heat capacity
(<E^2> - <E>^2) / T^2, free energy -T log Z), applied to many temperatures.
The exponents reach ~500, fine in float64 (max ~709).
Writes log_z.npy, mean_energy.npy and heat_capacity.npy (64 values each, float64).
"""
import numpy as np

N_SAMPLES = 4_000_000
TEMPERATURES = np.linspace(0.5, 5.0, 64)


def sample_energies(rng):
    """Energies of sampled conformations: a broad low-energy basin plus a rugged tail."""
    basin = -250.0 + rng.gamma(4.0, 12.0, N_SAMPLES)
    return np.minimum(basin, -20.0) + 0.5 * rng.standard_normal(N_SAMPLES)


def main():
    energies = sample_energies(np.random.default_rng(8))
    log_z = np.empty(len(TEMPERATURES))
    mean_e = np.empty(len(TEMPERATURES))
    heat_c = np.empty(len(TEMPERATURES))
    for k, t in enumerate(TEMPERATURES):
        w = np.exp(-energies / t)
        z = w.sum()
        e1 = (w * energies).sum() / z
        e2 = (w * energies * energies).sum() / z
        log_z[k] = np.log(z)
        mean_e[k] = e1
        heat_c[k] = (e2 - e1 * e1) / (t * t)
    np.save("log_z.npy", log_z)
    np.save("mean_energy.npy", mean_e)
    np.save("heat_capacity.npy", heat_c)
    print(f"log Z(T={TEMPERATURES[0]:.2f})={log_z[0]:.6f}  <E>={mean_e[0]:.6f}  Cv peak={heat_c.max():.6f}")


if __name__ == "__main__":
    main()
