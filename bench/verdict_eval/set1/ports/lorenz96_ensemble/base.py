"""Ensemble forecast of the Lorenz-96 model (40 variables, F = 8) with RK4,
all members advanced together as one (members x 40) array (NumPy baseline).

Imitates: samhatfield/lorenz96-ensrf:python/lorenz96.py and python/main.py
(dXdT = (roll(X,-1) - roll(X,2)) * roll(X,1) - X + F, RK4 with DT = 0.05,
an ensemble of perturbed members around a spun-up state), vectorised over the
members.
Writes ensemble.npy (the final members, 20000 x 40) and mean.npy (the ensemble
mean after every step, STEPS x 40), float64.
"""
import numpy as np

MEMBERS = 20000
NX = 40
F = 8.0
DT = 0.05
SPINUP = 500
STEPS = 60


def dxdt(x):
    return (np.roll(x, -1, axis=-1) - np.roll(x, 2, axis=-1)) * np.roll(x, 1, axis=-1) - x + F


def rk4(x):
    k1 = dxdt(x)
    k2 = dxdt(x + 0.5 * DT * k1)
    k3 = dxdt(x + 0.5 * DT * k2)
    k4 = dxdt(x + DT * k3)
    return x + (DT / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def main():
    truth = np.full(NX, F)
    truth[19] += 0.008
    for _ in range(SPINUP):
        truth = rk4(truth)
    rng = np.random.default_rng(96)
    ens0 = truth + 0.5 * rng.standard_normal((MEMBERS, NX))
    ens = ens0.copy()
    mean = np.zeros((STEPS, NX))
    for k in range(STEPS):
        ens = rk4(ens)
        mean[k] = ens.mean(axis=0)
    np.save("ensemble.npy", ens)
    np.save("mean.npy", mean)
    print(f"members={MEMBERS} steps={STEPS} spread={float(ens.std(axis=0).mean()):.6f}")


if __name__ == "__main__":
    main()
