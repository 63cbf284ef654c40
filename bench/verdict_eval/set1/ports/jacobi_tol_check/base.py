"""Jacobi relaxation for the Laplace equation, iterated until the largest
update falls below a tolerance (NumPy baseline).

Imitates: mirzadeh/tutorials-julia:Jacobi/Jacobi.py (relax_numpy + `while err >
tol: relax; err = np.max(np.abs(u - unew)); swap`) on a modest square plate
with one hot edge.
Writes u.npy (the converged field) and history.npy (the update size every 100
iterations, zero-padded to a fixed length).
"""
import numpy as np

N = 160
TOL = 1.0e-5
MAX_ITER = 60000


def main():
    u = np.zeros((N, N))
    u[:, -1] = 1.0
    unew = u.copy()
    history = np.zeros(MAX_ITER // 100)
    err = 1.0
    it = 0
    while err > TOL and it < MAX_ITER:
        unew[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        err = np.max(np.abs(unew - u))
        if it % 100 == 0:
            history[it // 100] = err
        u, unew = unew, u
        it += 1
    np.save("u.npy", u)
    np.save("history.npy", history)
    print(f"took {it} iterations, err = {err:.5e}")


if __name__ == "__main__":
    main()
