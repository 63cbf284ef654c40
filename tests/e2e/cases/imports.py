# Every import form the scanner resolves, as Python binds the names.
import numpy as np
from sklearn.cluster import KMeans
import sklearn.cluster as skc
import sklearn.decomposition
from numpy.linalg import svd
from numpy import fft as npfft
import scipy.sparse.linalg

np.fft.fft(x)  # expect: GPU101/cupy
KMeans(n_clusters=3)  # expect: GPU104/cuml.accel
skc.KMeans(n_clusters=3)  # expect: GPU104/cuml.accel
sklearn.decomposition.PCA(n_components=2)  # expect: GPU104/cuml.accel
svd(a)  # expect: GPU101/cupy
npfft.rfft(x)  # expect: GPU101/cupy
scipy.sparse.linalg.cg(A, b)  # expect: GPU102/cupy


def inside_a_function():
    import pandas as pd
    from networkx import pagerank
    frame = pd.read_csv("x.csv")  # expect: GPU103/cudf.pandas
    return pagerank(frame)  # expect: GPU105/nx-cugraph


pd.read_csv("y.csv")  # pd was bound only inside the function


def shadowed(np):
    return np.zeros(3)  # np is a parameter here, not numpy


class Model:
    from sklearn.svm import SVC

    def fit(self):
        return SVC()  # class scope is not visible from methods

    estimator = SVC(kernel="rbf")  # expect: GPU104/cuml.accel


try:
    import cupy as xp
except ImportError:
    import numpy as xp
    xp = None
