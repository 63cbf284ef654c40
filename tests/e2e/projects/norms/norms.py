import sys, numpy as np
n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
rng = np.random.default_rng(0)
x = rng.standard_normal((n, 64))
out = np.array([np.sqrt(np.dot(r, r)) for r in x])
np.save("norms.npy", out)
