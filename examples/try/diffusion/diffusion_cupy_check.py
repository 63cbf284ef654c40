"""A flawed GPU port of diffusion.py: right answers, but it checks the whole
field for NaN on the host after every step — a device-to-host copy of the
field and a synchronize per step, which is what costs here."""
import sys

import cupy as cp
import numpy as np


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1536
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    alpha = 0.2
    u = cp.zeros((n, n))
    u[n // 4:n // 2, n // 4:n // 2] = 100.0
    centre = cp.empty((steps, n))
    for k in range(steps):
        inner = u[1:-1, 1:-1]
        u[1:-1, 1:-1] = inner + alpha * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * inner)
        centre[k] = u[n // 2]
        if np.isnan(cp.asnumpy(u)).any():
            raise FloatingPointError(f"NaN at step {k}")
    np.save("field.npy", cp.asnumpy(u))
    np.save("centre.npy", cp.asnumpy(centre))
    print(f"n={n} steps={steps} heat={float(u.sum()):.6e}")


if __name__ == "__main__":
    main()
