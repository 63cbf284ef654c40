"""Batched quadrotor simulator stepped from Python that times every step by blocking
until the new state is ready.

Imitates: utiasDSL/crazyflow:benchmark/main.py (profile_gym_env_step: per step
`tstart = time.perf_counter(); envs.step(action); jax.block_until_ready(...)`,
`times.append(time.perf_counter() - tstart)`, then analyze_timings on the list).
"""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import time

import numpy as np
import jax
import jax.numpy as jnp

N_WORLDS = 1 << 20
FREQ = 500.0
SUBSTEPS = 2
DT = 1.0 / (FREQ * SUBSTEPS)
MASS, GRAVITY, ARM = 0.027, 9.81, 0.046
KP_ATT, KD_ATT = 0.02, 0.002
INERTIA = jnp.array([1.4e-5, 1.4e-5, 2.2e-5])


def rotate_thrust(rpy, thrust):
    """World-frame acceleration from a body z-axis thrust (ZYX Euler angles)."""
    r, p, y = rpy[:, 0], rpy[:, 1], rpy[:, 2]
    ax = (jnp.cos(y) * jnp.sin(p) * jnp.cos(r) + jnp.sin(y) * jnp.sin(r)) * thrust
    ay = (jnp.sin(y) * jnp.sin(p) * jnp.cos(r) - jnp.cos(y) * jnp.sin(r)) * thrust
    az = jnp.cos(p) * jnp.cos(r) * thrust
    return jnp.stack([ax, ay, az], axis=1) / MASS


@jax.jit
def step(state, cmd):
    pos, vel, rpy, ang_vel = state
    thrust, rpy_target = cmd[:, 0], cmd[:, 1:4]
    for _ in range(SUBSTEPS):
        torque = KP_ATT * (rpy_target - rpy) - KD_ATT * ang_vel
        ang_vel = ang_vel + DT * torque * ARM / INERTIA
        rpy = rpy + DT * ang_vel
        acc = rotate_thrust(rpy, thrust) - jnp.array([0.0, 0.0, GRAVITY])
        vel = vel + DT * acc
        pos = pos + DT * vel
        pos = pos.at[:, 2].set(jnp.maximum(pos[:, 2], 0.0))
    return pos, vel, rpy, ang_vel


def analyze_timings(times, n_steps, n_worlds, freq):
    total = np.sum(times)
    print(f"Avg step time: {np.mean(times):.2e}s, std: {np.std(times):.2e}\n"
          f"FPS: {n_steps * n_worlds / total:.3e}, "
          f"Real time factor: {(n_steps / freq) * n_worlds / total:.2e}")


def profile_step(n_steps):
    key = jax.random.key(42)
    zeros = jnp.zeros((N_WORLDS, 3), jnp.float32)
    state = (zeros + jnp.array([0.0, 0.0, 1.0]), zeros, zeros, zeros)
    cmd = jnp.concatenate([
        jnp.full((N_WORLDS, 1), 0.3, jnp.float32),
        0.05 * jax.random.normal(key, (N_WORLDS, 3), jnp.float32),
    ], axis=1)

    state = step(state, cmd)  # compile
    jax.block_until_ready(state)

    times = []
    for _ in range(n_steps):
        tstart = time.perf_counter()
        state = step(state, cmd)
        jax.block_until_ready(state)
        times.append(time.perf_counter() - tstart)
    analyze_timings(times, n_steps, N_WORLDS, FREQ)
    return state


if __name__ == "__main__":
    final = profile_step(10000)
    print("mean height", float(final[0][:, 2].mean()))
