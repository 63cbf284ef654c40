"""Forced two-dimensional turbulence (Kolmogorov flow with linear drag) on a 2048 x 2048
periodic grid, integrated pseudo-spectrally in vorticity form with a low-storage
Runge-Kutta / Crank-Nicolson IMEX scheme. The whole run is one jitted fori_loop.

Imitates: google/jax-cfd:jax_cfd/spectral/equations.py (NavierStokes2D.explicit_terms:
velocity from the vorticity spectrum, irfftn of velocity and vorticity gradients,
advection rfftn'ed and dealiased, plus the Kolmogorov forcing; implicit_terms /
implicit_solve for viscosity and drag) stepped as in jax_cfd/spectral/time_stepping.py
(crank_nicolson_rk4).

Every step is 25 FFTs of a 2048^2 field plus fused element-wise work, hundreds of
microseconds of GPU time per step with no host involvement; the state is created on the
device and only three scalars come back at the end. Compute-bound: nothing worth fixing.
"""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

N = 2048
N_STEPS = 1500
DT = 5.0e-4
VISCOSITY = 1.0e-3
DRAG = 0.1
FORCING_K = 4

# low-storage CN/RK4 coefficients (Carpenter & Kennedy), as used by crank_nicolson_rk4
ALPHAS = (0.0, 0.1496590219993, 0.3704009573644, 0.6222557631345, 0.9582821306748, 1.0)
BETAS = (0.0, -0.4178904745, -1.192151694643, -1.697784692471, -1.514183444257)
GAMMAS = (0.1496590219993, 0.3792103129999, 0.8229550293869, 0.6994504559488, 0.1530572479681)


def spectral_operators():
    ky = jnp.fft.fftfreq(N, 1.0 / N).astype(jnp.float32)
    kx = jnp.fft.rfftfreq(N, 1.0 / N).astype(jnp.float32)
    KY, KX = jnp.meshgrid(ky, kx, indexing="ij")
    k2 = KX * KX + KY * KY
    inv_k2 = jnp.where(k2 > 0, 1.0 / jnp.where(k2 > 0, k2, 1.0), 0.0)
    dealias = ((jnp.abs(KX) < N / 3) & (jnp.abs(KY) < N / 3)).astype(jnp.float32)
    linear = -VISCOSITY * k2 - DRAG
    y = jnp.arange(N, dtype=jnp.float32) * (2 * jnp.pi / N)
    forcing = jnp.broadcast_to((-FORCING_K * jnp.cos(FORCING_K * y))[:, None], (N, N))
    return KX, KY, inv_k2, dealias, linear, jnp.fft.rfft2(forcing)


def run(key):
    KX, KY, inv_k2, dealias, linear, forcing_hat = spectral_operators()

    def explicit_terms(w_hat):
        psi_hat = w_hat * inv_k2
        u = jnp.fft.irfft2(1j * KY * psi_hat, s=(N, N))
        v = jnp.fft.irfft2(-1j * KX * psi_hat, s=(N, N))
        wx = jnp.fft.irfft2(1j * KX * w_hat, s=(N, N))
        wy = jnp.fft.irfft2(1j * KY * w_hat, s=(N, N))
        return dealias * jnp.fft.rfft2(-(u * wx + v * wy)) + forcing_hat

    def step(_, w_hat):
        h = jnp.zeros_like(w_hat)
        for k in range(len(BETAS)):
            h = explicit_terms(w_hat) + BETAS[k] * h
            mu = 0.5 * DT * (ALPHAS[k + 1] - ALPHAS[k])
            w_hat = (w_hat + GAMMAS[k] * DT * h + mu * linear * w_hat) / (1.0 - mu * linear)
        return w_hat

    # random large-scale initial vorticity, built on the device
    noise = jax.random.normal(key, (N, N), jnp.float32)
    band = jnp.exp(-((jnp.sqrt(KX * KX + KY * KY) - 8.0) / 3.0) ** 2)
    w_hat = jnp.fft.rfft2(noise) * band
    w_hat = w_hat / jnp.sqrt(jnp.mean(jnp.abs(jnp.fft.irfft2(w_hat, s=(N, N))) ** 2))
    w_hat = jax.lax.fori_loop(0, N_STEPS, step, w_hat)

    w = jnp.fft.irfft2(w_hat, s=(N, N))
    psi_hat = w_hat * inv_k2
    u = jnp.fft.irfft2(1j * KY * psi_hat, s=(N, N))
    v = jnp.fft.irfft2(-1j * KX * psi_hat, s=(N, N))
    return 0.5 * jnp.mean(u * u + v * v), 0.5 * jnp.mean(w * w), jnp.max(jnp.abs(w))


def main():
    energy, enstrophy, wmax = jax.jit(run)(jax.random.PRNGKey(0))
    print("grid", N, "steps", N_STEPS, "energy %.5f enstrophy %.4f max|w| %.3f"
          % (float(energy), float(enstrophy), float(wmax)))


if __name__ == "__main__":
    main()
