"""Gravitational N-body simulation with NumPy, plus a pure-Python pair loop.

A softened-gravity leapfrog integrator over all particle pairs (broadcast NumPy),
and a nested `for i / for j` potential-energy loop on a small system, the classic
candidate to vectorize. GPU port: Warp (a `@wp.kernel` per time step) for the
simulation; vectorize the Python loop first (CuPy then runs it as is).
"""
import numpy as np

G = 1.0
SOFTENING = 0.05


def accelerations(pos, mass):
    """All-pairs softened gravity: (N, N, 3) displacement tensor."""
    d = pos[None, :, :] - pos[:, None, :]
    r2 = np.sum(d * d, axis=-1) + SOFTENING ** 2
    inv_r3 = r2 ** -1.5
    np.fill_diagonal(inv_r3, 0.0)
    return G * np.einsum("ij,ijk,j->ik", inv_r3, d, mass)


def kinetic_energy(vel, mass):
    return 0.5 * np.sum(mass[:, None] * vel * vel)


def potential_energy_loop(pos, mass):
    """Nested Python loop with element indexing: slow, easy to vectorize."""
    n = pos.shape[0]
    energy = 0.0
    dist = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            dx = pos[i, 0] - pos[j, 0]
            dy = pos[i, 1] - pos[j, 1]
            dz = pos[i, 2] - pos[j, 2]
            dist[i, j] = np.sqrt(dx * dx + dy * dy + dz * dz + SOFTENING ** 2)
            if j > i:
                energy -= G * mass[i] * mass[j] / dist[i, j]
    return energy


def potential_energy_vectorized(pos, mass):
    d = pos[None, :, :] - pos[:, None, :]
    r = np.sqrt(np.sum(d * d, axis=-1) + SOFTENING ** 2)
    iu = np.triu_indices(pos.shape[0], k=1)
    return -G * np.sum((mass[:, None] * mass[None, :] / r)[iu])


def simulate(pos, vel, mass, dt, steps):
    acc = accelerations(pos, mass)
    for _ in range(steps):
        vel += 0.5 * dt * acc
        pos += dt * vel
        acc = accelerations(pos, mass)
        vel += 0.5 * dt * acc
    return pos, vel


def main():
    rng = np.random.default_rng(0)
    n = 300
    pos = rng.standard_normal((n, 3))
    vel = 0.1 * rng.standard_normal((n, 3))
    mass = rng.uniform(0.5, 1.5, n) / n

    e0 = kinetic_energy(vel, mass) + potential_energy_vectorized(pos, mass)
    pos, vel = simulate(pos, vel, mass, dt=0.01, steps=100)
    e1 = kinetic_energy(vel, mass) + potential_energy_vectorized(pos, mass)

    small = pos[:120]
    e_loop = potential_energy_loop(small, mass[:120])
    e_vec = potential_energy_vectorized(small, mass[:120])

    print(f"particles={n}, 100 leapfrog steps")
    print(f"energy {e0:.6f} -> {e1:.6f} (relative drift {abs(e1 - e0) / abs(e0):.2e})")
    print(f"centre of mass {np.average(pos, axis=0, weights=mass).round(4)}")
    print(f"pair loop vs vectorized potential (n=120): {e_loop:.8f} vs {e_vec:.8f}")


if __name__ == "__main__":
    main()
