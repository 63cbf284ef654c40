"""Direct-summation N-body leapfrog run as one jitted lax.fori_loop.

Imitates pmocz/nbody-jax:nbody.py (get_acc from all pairwise separations, a leapfrog
kick-drift-kick step, and do_simulation running `jax.lax.fori_loop(0, Nt, leapfrog,
...)` inside one jitted function) with 12,288 particles and 1200 steps. The initial
conditions are drawn on the device and only the energies are read back at the end.
New code.
"""
import jax
import jax.numpy as jnp

N = 12288
NT = 1200
DT = 0.002
SOFTENING = 0.1
G = 1.0


def get_acc(pos, mass):
    dx = pos[None, :, 0] - pos[:, None, 0]
    dy = pos[None, :, 1] - pos[:, None, 1]
    dz = pos[None, :, 2] - pos[:, None, 2]
    inv_r3 = (dx * dx + dy * dy + dz * dz + SOFTENING ** 2) ** -1.5
    ax = G * (dx * inv_r3) @ mass
    ay = G * (dy * inv_r3) @ mass
    az = G * (dz * inv_r3) @ mass
    return jnp.stack([ax, ay, az], axis=1)


def leapfrog(i, state):
    pos, vel, acc, mass = state
    vel = vel + acc * DT / 2
    pos = pos + vel * DT
    acc = get_acc(pos, mass)
    vel = vel + acc * DT / 2
    return pos, vel, acc, mass


@jax.jit
def simulate(pos, vel, mass):
    acc = get_acc(pos, mass)
    pos, vel, acc, mass = jax.lax.fori_loop(0, NT, leapfrog, (pos, vel, acc, mass))
    return pos, vel


@jax.jit
def kinetic(vel, mass):
    return 0.5 * jnp.sum(mass * jnp.sum(vel ** 2, axis=1))


def main():
    k1, k2 = jax.random.split(jax.random.PRNGKey(17))
    mass = jnp.full((N,), 20.0 / N)
    pos = jax.random.normal(k1, (N, 3))
    vel = jax.random.normal(k2, (N, 3)) * 0.3
    vel = vel - jnp.mean(vel, axis=0)
    ke0 = kinetic(vel, mass)
    pos, vel = simulate(pos, vel, mass)
    ke1 = kinetic(vel, mass)
    print("kinetic energy", float(ke0), "->", float(ke1))


if __name__ == "__main__":
    main()
