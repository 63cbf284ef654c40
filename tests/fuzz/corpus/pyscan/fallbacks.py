from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
KMeans(init=lambda *a: 0)
PCA('mle')
PCA(n_components=-1.5e3)
import pandas as pd
pd.DataFrame({}).apply(f, axis=1, **kw)
