"""Customer segmentation with scikit-learn: scaling, PCA, KMeans, a classifier.

Scales synthetic features, reduces them with PCA, clusters with KMeans and
AgglomerativeClustering, and trains a random forest balanced per bootstrap sample.
GPU port: `python -m cuml.accel cluster_pca.py` (cuml.accel), then cuML.
RandomForest with class_weight="balanced_subsample" falls back to the CPU ("balanced"
runs on the GPU in cuML 26.10); AgglomerativeClustering is not accelerated at all.
"""
import numpy as np
import sklearn.decomposition as skd
import sklearn.ensemble
from sklearn.cluster import AgglomerativeClustering, KMeans
from sklearn.datasets import make_classification
from sklearn.metrics import adjusted_rand_score, balanced_accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler


def make_data(seed=0):
    # imbalanced classes: the reason for class_weight="balanced_subsample" below
    return make_classification(
        n_samples=4000, n_features=20, n_informative=8, n_redundant=4,
        n_classes=3, n_clusters_per_class=1, weights=[0.7, 0.2, 0.1],
        class_sep=2.0, random_state=seed,
    )


def main():
    x, y = make_data()
    x_scaled = StandardScaler().fit_transform(x)

    pca = skd.PCA(n_components=5, random_state=0)
    x_red = pca.fit_transform(x_scaled)

    km = KMeans(n_clusters=3, n_init=10, random_state=0)
    km_labels = km.fit_predict(x_red)

    # O(n^2) memory: run the hierarchical clustering on a subsample
    sub = np.random.default_rng(0).choice(len(x_red), size=600, replace=False)
    agg_labels = AgglomerativeClustering(n_clusters=3, linkage="ward").fit_predict(x_red[sub])

    x_tr, x_te, y_tr, y_te = train_test_split(
        x_scaled, y, test_size=0.25, stratify=y, random_state=0)
    forest = sklearn.ensemble.RandomForestClassifier(
        n_estimators=60, max_depth=12, class_weight="balanced_subsample",
        n_jobs=2, random_state=0)
    forest.fit(x_tr, y_tr)
    score = balanced_accuracy_score(y_te, forest.predict(x_te))

    print(f"samples={x.shape[0]} features={x.shape[1]} classes={np.bincount(y).tolist()}")
    print(f"PCA explained variance (5 comps): {pca.explained_variance_ratio_.sum():.3f}")
    print(f"KMeans inertia {km.inertia_:.1f}, ARI vs labels {adjusted_rand_score(y, km_labels):.3f}")
    print(f"Agglomerative ARI on subsample: {adjusted_rand_score(y[sub], agg_labels):.3f}")
    print(f"RandomForest balanced accuracy: {score:.3f}")


if __name__ == "__main__":
    main()
