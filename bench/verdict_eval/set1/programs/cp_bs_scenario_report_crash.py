"""Portfolio revaluation under volatility scenarios, one Python float per scenario, then a crash.

Imitates: cupy/cupy:examples/finance/black_scholes.py (Black-Scholes pricing of a
batch of European options in one CuPy kernel).

Every scenario prices the whole book in one fused reduction kernel that returns the
portfolio value as a 0-d device array, and ``float()`` on it brings 8 bytes back to
the host (a copy and a synchronize) before the next scenario is queued. After the
sweep the report is handed to a native extension, which dies with SIGSEGV (here
raised directly), so the process ends by signal 11.
"""
import os
import signal

import cupy
import numpy

N_OPTIONS = 16384
N_SCENARIOS = 8000

portfolio_value = cupy.ReductionKernel(
    'T s, T x, T t, T q, float64 r, float64 v',
    'T total',
    'q * bs_call(s, x, t, r, v)',
    'a + b',
    'total = a',
    '0',
    'portfolio_value',
    preamble='''
    __device__ double cnd(double d) {
        const double A1 = 0.31938153, A2 = -0.356563782, A3 = 1.781477937;
        const double A4 = -1.821255978, A5 = 1.330274429;
        const double RSQRT2PI = 0.39894228040143267793994605993438;
        double k = 1.0 / (1.0 + 0.2316419 * fabs(d));
        double c = RSQRT2PI * exp(-0.5 * d * d) *
                   (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
        return d > 0 ? 1.0 - c : c;
    }
    __device__ double bs_call(double s, double x, double t, double r, double v) {
        double sq = sqrt(t);
        double d1 = (log(s / x) + (r + 0.5 * v * v) * t) / (v * sq);
        double d2 = d1 - v * sq;
        return s * cnd(d1) - x * exp(-r * t) * cnd(d2);
    }
    ''')


def make_book(n, seed=7):
    rs = cupy.random.RandomState(seed)

    def rand_range(lo, hi):
        return lo + (hi - lo) * rs.random_sample(n, dtype=numpy.float64)

    spot = rand_range(5.0, 30.0)
    strike = rand_range(1.0, 100.0)
    years = rand_range(0.25, 10.0)
    qty = cupy.floor(rand_range(1.0, 50.0))
    return spot, strike, years, qty


def write_native_report(values):
    # Stands in for a C extension that writes the risk report and crashes.
    os.kill(os.getpid(), signal.SIGSEGV)


def main():
    spot, strike, years, qty = make_book(N_OPTIONS)
    risk_free = 0.02
    vols = numpy.linspace(0.10, 0.60, N_SCENARIOS)
    values = []
    for v in vols:
        pv = portfolio_value(spot, strike, years, qty, risk_free, float(v))
        values.append(float(pv))
    values = numpy.asarray(values)
    print('scenarios: %d, value range %.4g .. %.4g, 99%% level %.4g'
          % (len(values), values.min(), values.max(), numpy.percentile(values, 99)),
          flush=True)
    write_native_report(values)
    return 0


if __name__ == '__main__':
    main()
