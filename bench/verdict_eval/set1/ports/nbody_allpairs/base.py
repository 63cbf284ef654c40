"""All-pairs gravitational N-body with a kick-drift-kick leapfrog (NumPy baseline).

Imitates: dtroiano99/cupy_course:exercises/solutions/nbody_numpy.py (pairwise
separations by broadcasting, softened 1/r^3 matrix, accelerations as a matrix
product with the masses, leapfrog loop over a few steps).
Writes pos.npy and vel.npy (N x 3, float64) after STEPS steps.
"""
import numpy as np

N = 3000
STEPS = 12
DT = 1.0e-3
SOFTENING = 0.05
G = 1.0


def accelerations(pos, mass):
    x = pos[:, 0:1]
    y = pos[:, 1:2]
    z = pos[:, 2:3]
    dx = x.T - x
    dy = y.T - y
    dz = z.T - z
    inv_r3 = (dx * dx + dy * dy + dz * dz + SOFTENING ** 2) ** -1.5
    ax = G * ((dx * inv_r3) @ mass)
    ay = G * ((dy * inv_r3) @ mass)
    az = G * ((dz * inv_r3) @ mass)
    return np.stack((ax, ay, az), axis=1)


def main():
    rng = np.random.default_rng(20240611)
    pos = rng.standard_normal((N, 3))
    vel = 0.1 * rng.standard_normal((N, 3))
    mass = np.full(N, 20.0 / N)
    vel -= (mass[:, None] * vel).sum(axis=0) / mass.sum()  # centre-of-mass frame
    acc = accelerations(pos, mass)
    for _ in range(STEPS):
        vel += 0.5 * DT * acc
        pos += DT * vel
        acc = accelerations(pos, mass)
        vel += 0.5 * DT * acc
    np.save("pos.npy", pos)
    np.save("vel.npy", vel)
    print(f"N={N} steps={STEPS} |v|^2={float((vel * vel).sum()):.9e}")


if __name__ == "__main__":
    main()
