"""A subtly wrong GPU port of diffusion.py: it keeps the field in float32 to
save memory. The answers look right (to 6 digits), but they are not the
baseline's float64 answers within float64's tolerance."""
import sys

import cupy as cp
import numpy as np


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1536
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    alpha = cp.float32(0.2)
    u = cp.zeros((n, n), dtype=cp.float32)
    u[n // 4:n // 2, n // 4:n // 2] = 100.0
    centre = cp.empty((steps, n), dtype=cp.float32)
    for k in range(steps):
        inner = u[1:-1, 1:-1]
        u[1:-1, 1:-1] = inner + alpha * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * inner)
        centre[k] = u[n // 2]
    np.save("field.npy", cp.asnumpy(u).astype(np.float64))
    np.save("centre.npy", cp.asnumpy(centre).astype(np.float64))
    print(f"n={n} steps={steps} heat={float(u.sum()):.6e}")


if __name__ == "__main__":
    main()
