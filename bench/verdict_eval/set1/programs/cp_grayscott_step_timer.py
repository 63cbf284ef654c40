"""Gray-Scott reaction-diffusion with every time step timed on the host.

Imitates: PrincetonUniversity/a100_workshop:06_cupy/code/myscript.py (a timing loop
that calls ``cp.cuda.Device(0).synchronize()`` after every GPU call so that
``perf_counter`` measures it).

Here the timed call is one fused update kernel on two 2048 x 2048 float32 fields,
a few tens of microseconds of GPU work, and the synchronize after it empties the
queue on each of the 10000 steps: the GPU waits for the host to launch the next
step every time.
"""
import time

import numpy
import cupy

N = 2048
STEPS = 10000
DU, DV, FEED, KILL, DT = 0.16, 0.08, 0.035, 0.065, 1.0

gray_scott = cupy.ElementwiseKernel(
    'raw T u, raw T v, int32 n, T du, T dv, T feed, T kill, T dt',
    'T u2, T v2',
    '''
    int r = i / n;
    int c = i - r * n;
    int up = (r == 0 ? n - 1 : r - 1) * n + c;
    int dn = (r == n - 1 ? 0 : r + 1) * n + c;
    int lf = r * n + (c == 0 ? n - 1 : c - 1);
    int rt = r * n + (c == n - 1 ? 0 : c + 1);
    T uu = u[i], vv = v[i];
    T lap_u = u[up] + u[dn] + u[lf] + u[rt] - (T)4 * uu;
    T lap_v = v[up] + v[dn] + v[lf] + v[rt] - (T)4 * vv;
    T uvv = uu * vv * vv;
    u2 = uu + dt * (du * lap_u - uvv + feed * ((T)1 - uu));
    v2 = vv + dt * (dv * lap_v + uvv - (feed + kill) * vv);
    ''',
    'gray_scott')


def initial_fields(n):
    u = cupy.ones((n, n), dtype=cupy.float32)
    v = cupy.zeros((n, n), dtype=cupy.float32)
    c = n // 2
    u[c - 32:c + 32, c - 32:c + 32] = 0.50
    v[c - 32:c + 32, c - 32:c + 32] = 0.25
    v += 0.01 * cupy.random.random_sample((n, n), dtype=cupy.float32)
    return u, v


def main():
    u, v = initial_fields(N)
    u2, v2 = cupy.empty_like(u), cupy.empty_like(v)
    args = (numpy.int32(N), numpy.float32(DU), numpy.float32(DV), numpy.float32(FEED),
            numpy.float32(KILL), numpy.float32(DT))
    step_times = []
    for step in range(STEPS):
        t0 = time.perf_counter()
        gray_scott(u, v, *args, u2, v2)
        cupy.cuda.Device().synchronize()
        step_times.append(time.perf_counter() - t0)
        u, u2 = u2, u
        v, v2 = v2, v
    st = numpy.asarray(step_times) * 1e6
    print('gray-scott: %d steps, median step %.1f us, mean V %.5f'
          % (STEPS, numpy.median(st), float(v.mean())))


if __name__ == '__main__':
    main()
