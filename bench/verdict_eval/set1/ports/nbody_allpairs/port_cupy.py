"""GPU port of base.py: the same all-pairs N-body leapfrog with CuPy.

Imitates: dtroiano99/cupy_course:exercises/solutions/nbody_cupy.py (the NumPy
N-body with np replaced by the GPU array module; positions, velocities and
masses stay on the device for the whole run).
Initial conditions come from the same seeded NumPy generator, go to the device
once, and the results come back once at the end.
"""
import numpy as np
import cupy

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
    return cupy.stack((ax, ay, az), axis=1)


def main():
    rng = np.random.default_rng(20240611)
    pos_h = rng.standard_normal((N, 3))
    vel_h = 0.1 * rng.standard_normal((N, 3))
    pos = cupy.asarray(pos_h)
    vel = cupy.asarray(vel_h)
    mass = cupy.full(N, 20.0 / N)
    vel -= (mass[:, None] * vel).sum(axis=0) / mass.sum()  # centre-of-mass frame
    acc = accelerations(pos, mass)
    for _ in range(STEPS):
        vel += 0.5 * DT * acc
        pos += DT * vel
        acc = accelerations(pos, mass)
        vel += 0.5 * DT * acc
    np.save("pos.npy", cupy.asnumpy(pos))
    np.save("vel.npy", cupy.asnumpy(vel))
    print(f"N={N} steps={STEPS} |v|^2={float((vel * vel).sum()):.9e}")


if __name__ == "__main__":
    main()
