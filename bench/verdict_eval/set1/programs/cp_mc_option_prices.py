"""Monte Carlo prices of a book of European calls, averaged over independent seeds.

Imitates: cupy/cupy:examples/finance/monte_carlo.py (one ElementwiseKernel in which
every thread draws its own normal samples with an inline xorshift generator and
averages the discounted payoff; one kernel launch prices the whole book).

Each seed is a single long kernel (about four billion samples) and the results stay on
the device until one small copy at the end: the GPU is busy computing the whole time.
"""
import numpy as np
import cupy as cp

N_OPTIONS = 1000
THREADS_PER_OPTION = 8192
SAMPLES_PER_THREAD = 512
N_SEEDS = 12

mc_call = cp.ElementwiseKernel(
    'T s, T x, T t, T r, T v, int32 n_samples, int32 seed', 'T call',
    '''
    unsigned long long st0 = i + 1;
    unsigned long long st1 = 0x5c721fd808f616b6ULL + (unsigned long long)seed * 0x9E3779B97F4A7C15ULL;
    const T v_sqrt_t = v * sqrt(t);
    const T mu_t = (r - v * v / 2) * t;
    T acc = 0;
    for (int k = 0; k < n_samples; ++k) {
        unsigned long long a = st0, b = st1;
        st0 = b;
        a ^= a << 23; a ^= a >> 17; a ^= b; a ^= b >> 26;
        st1 = a;
        T u = (T)((a + b) >> 11) * (T)(1.0 / 9007199254740992.0);
        T sgn = (T)-1.4142135623730951;
        if (u > (T)0.5) { u = 1 - u; sgn = -sgn; }
        T z = sgn * erfcinv(2 * (u + (T)0.5));
        T payoff = s * exp(mu_t + v_sqrt_t * z) - x;
        acc += payoff > 0 ? payoff : 0;
    }
    call = exp(-r * t) * acc / n_samples;
    ''',
    'mc_call')


def book(n, seed=11):
    rs = cp.random.RandomState(seed)

    def rand_range(lo, hi):
        return lo + (hi - lo) * rs.random_sample(n, dtype=np.float64)

    return rand_range(5, 30), rand_range(1, 100), rand_range(0.25, 10)


def main():
    spot, strike, years = book(N_OPTIONS)
    risk_free, vol = 0.02, 0.3
    prices = cp.zeros(N_OPTIONS, dtype=cp.float64)
    per_thread = cp.empty((N_OPTIONS, THREADS_PER_OPTION), dtype=cp.float64)
    for seed in range(N_SEEDS):
        mc_call(spot[:, None], strike[:, None], years[:, None], risk_free, vol,
                np.int32(SAMPLES_PER_THREAD), np.int32(seed), per_thread)
        prices += per_thread.mean(axis=1)
    prices /= N_SEEDS
    host = cp.asnumpy(prices)
    print('mc: %d options x %d samples, mean price %.4f'
          % (N_OPTIONS, N_SEEDS * THREADS_PER_OPTION * SAMPLES_PER_THREAD, host.mean()))


if __name__ == '__main__':
    main()
