"""Monte Carlo pricing of arithmetic Asian options, each numba.cuda thread walking whole paths.

Imitates ContinuumIO/gtc2013lab:lab2/pricer_cuda.py (cu_monte_carlo_pricer: each thread
walks one path through all time steps, paths[i, j] = paths[i, j-1] * exp(c0*dt + c1*noise),
launched once over all paths) with numba's on-device xoroshiro128+ generator in place of
the cuRAND buffers, and a block reduction of the discounted payoffs. 24 strikes are
priced, each by one launch of 262,144 threads x 16 paths x 1000 steps (4.2 billion
normal draws per launch), all on device arrays; the 24 results are copied back once.
New code.
"""
import math

import numpy as np
from numba import cuda, float64
from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_normal_float64

N_THREADS = 1 << 18
PATHS_PER_THREAD = 16
N_STEPS = 1000
TPB = 256
S0, SIGMA, RATE, T = 100.0, 0.3, 0.03, 1.0
STRIKES = np.linspace(80.0, 120.0, 24)


@cuda.jit
def asian_paths(states, strike, c0, c1, disc, n_steps, out, k):
    i = cuda.grid(1)
    partial = cuda.shared.array(TPB, dtype=float64)
    payoff = 0.0
    if i < states.shape[0]:
        for _ in range(PATHS_PER_THREAD):
            s = S0
            total = 0.0
            for _ in range(n_steps):
                s *= math.exp(c0 + c1 * xoroshiro128p_normal_float64(states, i))
                total += s
            payoff += max(total / n_steps - strike, 0.0) * disc
    tid = cuda.threadIdx.x
    partial[tid] = payoff
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if tid < stride:
            partial[tid] += partial[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        cuda.atomic.add(out, k, partial[0])


def main():
    dt = T / N_STEPS
    c0 = (RATE - 0.5 * SIGMA ** 2) * dt
    c1 = SIGMA * math.sqrt(dt)
    disc = math.exp(-RATE * T)
    states = create_xoroshiro128p_states(N_THREADS, seed=7)
    d_out = cuda.to_device(np.zeros(len(STRIKES)))
    blocks = (N_THREADS + TPB - 1) // TPB
    for k, strike in enumerate(STRIKES):
        asian_paths[blocks, TPB](states, strike, c0, c1, disc, N_STEPS, d_out, k)
    prices = d_out.copy_to_host() / (N_THREADS * PATHS_PER_THREAD)
    for strike, price in zip(STRIKES, prices):
        print(f"K={strike:6.1f}  price={price:8.4f}")


if __name__ == "__main__":
    main()
