"""Heat diffusion on a square plate (explicit finite differences), NumPy.

The CPU baseline of a `gpuopt try` example: python3 diffusion.py N STEPS
writes field.npy (the N x N temperature field after STEPS steps) and
centre.npy (the temperature along the middle row after every step).
"""
import sys

import numpy as np


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1536
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    alpha = 0.2
    u = np.zeros((n, n))
    u[n // 4:n // 2, n // 4:n // 2] = 100.0
    centre = np.empty((steps, n))
    for k in range(steps):
        inner = u[1:-1, 1:-1]
        u[1:-1, 1:-1] = inner + alpha * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * inner)
        centre[k] = u[n // 2]
    np.save("field.npy", u)
    np.save("centre.npy", centre)
    print(f"n={n} steps={steps} heat={u.sum():.6e}")


if __name__ == "__main__":
    main()
