import sys, math, numpy as np
n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
rng = np.random.default_rng(0)
x = rng.standard_normal((n, 64))
out = np.array([math.sqrt(sum(float(v) * float(v) for v in r)) for r in x])
np.save("norms.npy", out)
