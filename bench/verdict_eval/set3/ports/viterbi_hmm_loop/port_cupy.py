"""GPU port of base.py with CuPy: the HMM and the observation sequence are made on the
host as before, the log matrices go to the device, and the Viterbi recursion runs there
step by step: per time step a broadcast add, an argmax, a max, an add and the row store
into the back-pointer table, five kernels on 32 x 32 arrays, 100,000 times. The
back-pointers come back once for the host backtracking.

Imitates: nikunjpanchal22/code_clone_classification:python_t4_full/Clone_5095.py
(the per-time-step np.max / np.argmax Viterbi recursion), NumPy swapped for CuPy inside
the time loop.
"""
import cupy as cp
import numpy as np

N_STATES = 32
N_SYMBOLS = 16
T = 100_000


def make_hmm(rng):
    a = rng.random((N_STATES, N_STATES)) + 8.0 * np.eye(N_STATES)
    a /= a.sum(axis=1, keepdims=True)
    b = rng.random((N_STATES, N_SYMBOLS)) ** 3
    b /= b.sum(axis=1, keepdims=True)
    pi = np.full(N_STATES, 1.0 / N_STATES)
    return a, b, pi


def sample(rng, a, b, pi):
    u = rng.random((T, 2))
    ca, cb = np.cumsum(a, axis=1), np.cumsum(b, axis=1)
    states = np.empty(T, np.int64)
    obs = np.empty(T, np.int64)
    s = int(np.searchsorted(np.cumsum(pi), u[0, 0]))
    for t in range(T):
        if t:
            s = min(int(np.searchsorted(ca[s], u[t, 0])), N_STATES - 1)
        states[t] = s
        obs[t] = min(int(np.searchsorted(cb[s], u[t, 1])), N_SYMBOLS - 1)
    return obs


def main():
    rng = np.random.default_rng(21)
    a, b, pi = make_hmm(rng)
    obs = sample(rng, a, b, pi)
    log_a, log_b = cp.asarray(np.log(a)), cp.asarray(np.log(b))
    delta = cp.asarray(np.log(pi)) + log_b[:, int(obs[0])]
    back = cp.empty((T, N_STATES), cp.int64)
    for t in range(1, T):
        scores = delta[:, None] + log_a
        back[t] = scores.argmax(axis=0)
        delta = scores.max(axis=0) + log_b[:, int(obs[t])]
    back_h = cp.asnumpy(back)
    delta_h = cp.asnumpy(delta)
    path = np.empty(T, np.int64)
    path[-1] = delta_h.argmax()
    for t in range(T - 1, 0, -1):
        path[t - 1] = back_h[t, path[t]]
    np.save("path.npy", path)
    np.save("best_logprob.npy", np.array([delta_h.max()]))
    print(f"best log-probability {delta_h.max():.6f}, state changes {int((np.diff(path) != 0).sum())}")


if __name__ == "__main__":
    main()
