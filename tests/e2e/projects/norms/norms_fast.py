import sys, numpy as np
n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
rng = np.random.default_rng(0)
x = rng.standard_normal((n, 64))
np.save("norms.npy", np.sqrt(np.einsum("ij,ij->i", x, x)))
