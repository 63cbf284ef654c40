import numpy as np
import scipy.optimize
from scipy import sparse, signal, ndimage, stats
from scipy.sparse.linalg import eigsh, eigs, spsolve

a = np.linalg.solve(m, b)  # expect: GPU101/cupy
p = np.nanpercentile(x, 95)  # expect: GPU201/-
q = np.nanquantile(x, 0.5)  # expect: GPU201/-
g = np.geomspace(1, 100, 5)  # expect: GPU201/-
np.testing.assert_allclose(a, b)
raw = np.fromfile("data.bin", dtype=np.float32)  # expect: GPU108/kvikio
txt = np.fromfile("data.txt", sep=",")  # expect: GPU301/-
res = scipy.optimize.minimize(f, x0)  # expect: GPU202/-
A = sparse.csr_matrix(dense)  # expect: GPU102/cupy
L = sparse.lil_matrix((10, 10))  # expect: GPU202/-
x = spsolve(A, b)  # expect: GPU102/cupy
vals = eigs(A, k=3)  # expect: GPU202/-
b, a = signal.butter(4, 0.1)  # expect: GPU102/cupy
smooth = ndimage.gaussian_filter(img, 2)  # expect: GPU102/cupy
z = stats.zscore(x)  # expect: GPU102/cupy
t = stats.ttest_ind(x, y)  # expect: GPU202/-
rng = np.random.default_rng(0)  # expect: GPU208/-
state = np.random.get_state()  # expect: GPU208/-
