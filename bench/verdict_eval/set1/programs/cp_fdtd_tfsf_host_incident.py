"""2-D TM FDTD with a total-field/scattered-field source, 2-D fields on the GPU,
the 1-D incident-wave buffer left in NumPy and updated by Python loops.

Imitates: xcwang1999/FDTD_2D:FDTD2D.py (Sullivan-style 2-D FDTD with a PML, a
dielectric-cylinder lattice and a 1-D incident grid ``ez_inc``/``hx_inc`` stepped
element by element each time step, with a list-based absorbing boundary).

The port moves dz/ez/hx/hy and their coefficients to CuPy but keeps the incident
grid in NumPy: each time step the host spends milliseconds in two pure-Python loops
over 2048 cells while the GPU, whose own work per step is a fraction of that, has
nothing queued. The incident values reach the GPU only as scalar kernel arguments.
"""
import numpy as np
import cupy as cp

NR = NC = 2048
NSTEPS = 300
NPML = 10
IA, JA = 10, 10
IB, JB = NR - IA - 1, NC - JA - 1
T0, SPREAD = 20.0, 8.0


def pml_profiles(n, npml):
    g2 = np.ones(n); g3 = np.ones(n)
    f1 = np.zeros(n); f2 = np.ones(n); f3 = np.ones(n)
    for k in range(npml):
        xn = 0.33 * ((npml - k) / npml) ** 3
        g2[k] = g2[n - 1 - k] = 1 / (1 + xn)
        g3[k] = g3[n - 1 - k] = (1 - xn) / (1 + xn)
        xn = 0.33 * ((npml - k - 0.5) / npml) ** 3
        f1[k] = f1[n - 2 - k] = xn
        f2[k] = f2[n - 2 - k] = 1 / (1 + xn)
        f3[k] = f3[n - 2 - k] = (1 - xn) / (1 + xn)
    return g2, g3, f1, f2, f3


def cylinder_media(nr, nc, dt):
    epsz, epsr, sigma, radius = 8.854e-12, 30.0, 0.3, 20
    dy = cp.arange(nr)[:, None] % (nr // 4) - nr // 8
    dx = cp.arange(nc)[None, :] % (nc // 4) - nc // 8
    inside = dy * dy + dx * dx <= radius * radius
    gaz = cp.where(inside, 1 / (epsr + sigma * dt / epsz), 1.0).astype(cp.float32)
    gbz = cp.where(inside, sigma * dt / epsz, 0.0).astype(cp.float32)
    return gaz, gbz


def main():
    dt = 0.01 / 6e8
    gi2, gi3, fi1, fi2, fi3 = pml_profiles(NR, NPML)
    gj2, gj3, fj1, fj2, fj3 = pml_profiles(NC, NPML)
    g2 = cp.asarray(np.outer(gi2, gj2) * 0.5, dtype=cp.float32)
    g3 = cp.asarray(np.outer(gi3, gj3), dtype=cp.float32)
    fi1_d, fi2_d, fi3_d = (cp.asarray(a[:, None], dtype=cp.float32) for a in (fi1, fi2, fi3))
    fj1_d, fj2_d, fj3_d = (cp.asarray(a[None, :], dtype=cp.float32) for a in (fj1, fj2, fj3))
    gaz, gbz = cylinder_media(NR, NC, dt)

    dz, ez, iz, hx, hy, ihx, ihy = (cp.zeros((NR, NC), dtype=cp.float32) for _ in range(7))
    ez_inc = np.zeros(NC)
    hx_inc = np.zeros(NC)
    boundary_low = [0.0, 0.0]
    boundary_high = [0.0, 0.0]

    for time_step in range(1, NSTEPS + 1):
        for j in range(1, NC):
            ez_inc[j] = ez_inc[j] + 0.5 * (hx_inc[j - 1] - hx_inc[j])
        ez_inc[0] = boundary_low.pop(0); boundary_low.append(ez_inc[1])
        ez_inc[NC - 1] = boundary_high.pop(0); boundary_high.append(ez_inc[NC - 2])

        dz[1:, 1:] = g3[1:, 1:] * dz[1:, 1:] + g2[1:, 1:] * (hy[1:, 1:] - hy[:-1, 1:] - hx[1:, 1:] + hx[1:, :-1])

        ez_inc[3] = np.exp(-0.5 * ((T0 - time_step) / SPREAD) ** 2)
        dz[IA:IB + 1, JA] += 0.5 * hx_inc[JA - 1]
        dz[IA:IB + 1, JB] -= 0.5 * hx_inc[JB]

        ez[...] = gaz * (dz - iz)
        iz += gbz * ez

        for j in range(NC - 1):
            hx_inc[j] = hx_inc[j] + 0.5 * (ez_inc[j] - ez_inc[j + 1])

        curl_e = ez[:, :-1] - ez[:, 1:]
        ihx[:, :-1] += curl_e
        hx[:, :-1] = fj3_d[:, :-1] * hx[:, :-1] + fj2_d[:, :-1] * (0.5 * curl_e + fi1_d * ihx[:, :-1])
        hx[IA:IB + 1, JA - 1] += 0.5 * ez_inc[JA]
        hx[IA:IB + 1, JB] -= 0.5 * ez_inc[JB]

        curl_e = ez[:-1, :] - ez[1:, :]
        ihy[:-1, :] += curl_e
        hy[:-1, :] = fi3_d[:-1] * hy[:-1, :] - fi2_d[:-1] * (0.5 * curl_e + fj1_d * ihy[:-1, :])

    print('fdtd: %d steps, max |Ez| %.4e' % (NSTEPS, float(cp.abs(ez).max())))


if __name__ == '__main__':
    main()
