"""Most likely hidden-state path of a 32-state HMM over 100,000 discrete observations
(log-space Viterbi: one vectorized max/argmax over the state-transition matrix per time
step, then backtracking), NumPy baseline.

Imitates: nikunjpanchal22/code_clone_classification:python_t4_full/Clone_5095.py
(viterbi(y, A, B, Pi): `for i in range(1, T)`: T1[:, i] = np.max(T1[:, i-1] * A.T *
B[:, y[i]], 1), T2[:, i] = np.argmax(...), then a reversed loop over T2), in log space.
Writes path.npy (int64, T) and best_logprob.npy (float64, 1).
"""
import numpy as np

N_STATES = 32
N_SYMBOLS = 16
T = 100_000


def make_hmm(rng):
    a = rng.random((N_STATES, N_STATES)) + 8.0 * np.eye(N_STATES)   # sticky states
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
    log_a, log_b = np.log(a), np.log(b)
    delta = np.log(pi) + log_b[:, obs[0]]
    back = np.empty((T, N_STATES), np.int64)
    for t in range(1, T):
        scores = delta[:, None] + log_a
        back[t] = scores.argmax(axis=0)
        delta = scores.max(axis=0) + log_b[:, obs[t]]
    path = np.empty(T, np.int64)
    path[-1] = delta.argmax()
    for t in range(T - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    np.save("path.npy", path)
    np.save("best_logprob.npy", np.array([delta.max()]))
    print(f"best log-probability {delta.max():.6f}, state changes {int((np.diff(path) != 0).sum())}")


if __name__ == "__main__":
    main()
