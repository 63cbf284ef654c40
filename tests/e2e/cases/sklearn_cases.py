from sklearn.cluster import KMeans, DBSCAN, SpectralClustering, AgglomerativeClustering
from sklearn.decomposition import PCA
from sklearn.ensemble import RandomForestClassifier, GradientBoostingClassifier
from sklearn.linear_model import Ridge
from sklearn.manifold import TSNE
from sklearn.neighbors import NearestNeighbors
from sklearn.svm import SVC
from sklearn.model_selection import train_test_split
import umap

X_train, X_test = train_test_split(X)  # expect: GPU209/-
KMeans(n_clusters=8)  # expect: GPU104/cuml.accel
KMeans(n_clusters=8, init=lambda X, k, random_state: X[:k])  # expect: GPU301/-
DBSCAN(eps=0.5, algorithm="kd_tree")  # expect: GPU301/-
DBSCAN(eps=0.5, metric="manhattan")  # expect: GPU301/-
DBSCAN(eps=0.5)  # expect: GPU104/cuml.accel
SpectralClustering(n_clusters=3)  # expect: GPU301/-
SpectralClustering(n_clusters=3, affinity="nearest_neighbors")  # expect: GPU104/cuml.accel
PCA(n_components="mle")  # expect: GPU301/-
PCA(n_components=10)  # expect: GPU104/cuml.accel
RandomForestClassifier(class_weight="balanced_subsample")  # expect: GPU301/-
RandomForestClassifier(class_weight="balanced")  # expect: GPU104/cuml.accel
RandomForestClassifier(criterion="log_loss")  # expect: GPU301/-
rf = RandomForestClassifier(n_estimators=100)  # expect: GPU104/cuml.accel
rf.fit(X_train, y_train, sample_weight=w)
rf.fit(X_train, y_train)
Ridge(positive=True)  # expect: GPU301/-
Ridge(solver="lbfgs")  # expect: GPU301/-
TSNE(n_components=3)  # expect: GPU301/-
TSNE()  # expect: GPU104/cuml.accel
SVC(probability=True)  # expect: GPU301/-
nn = NearestNeighbors(n_neighbors=5).fit(X_train)  # expect: GPU104/cuml.accel
dist, idx = nn.kneighbors(X_test)
within = nn.radius_neighbors(X_test, radius=0.3)  # expect: GPU203/-
AgglomerativeClustering(n_clusters=3)  # expect: GPU203/-
GradientBoostingClassifier()  # expect: GPU203/-
umap.UMAP(n_neighbors=15)  # expect: GPU104/cuml.accel
umap.UMAP(densmap=True)  # expect: GPU301/-
# facts read from the cuml-cu12 26.10.0 wheel by tools/check_knowledge.py
from sklearn.cluster import HDBSCAN
from sklearn.ensemble import IsolationForest
from sklearn.preprocessing import OneHotEncoder
from sklearn.neighbors import KNeighborsClassifier
RandomForestClassifier(max_samples=1000)  # expect: GPU301/-
RandomForestClassifier(max_samples=0.5)  # expect: GPU104/cuml.accel
HDBSCAN(min_cluster_size=10)  # expect: GPU104/cuml.accel
HDBSCAN(metric="manhattan")  # expect: GPU301/-
IsolationForest(n_estimators=200)  # expect: GPU104/cuml.accel
IsolationForest(warm_start=True)  # expect: GPU301/-
OneHotEncoder(handle_unknown="ignore")  # expect: GPU104/cuml.accel
OneHotEncoder(min_frequency=5)  # expect: GPU301/-
TSNE(init="spectral")  # expect: GPU301/-
KNeighborsClassifier(weights=lambda d: 1 / d)  # expect: GPU301/-
KNeighborsClassifier(weights="distance")  # expect: GPU104/cuml.accel
