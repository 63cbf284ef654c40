# Every call into a library gpuopt covers has a verdict: meta-estimators run
# their estimators under cuml.accel (GPU104), helpers that stay on the CPU
# say so and name the GPU version for device data (GPU209), and a call the
# knowledge has no fact about is reported as such (GPU900), never silence.
import numpy as np
import pandas as pd
from sklearn.datasets import load_iris, make_blobs
from sklearn.metrics import accuracy_score, classification_report
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler, scale
from sklearn.svm import SVC

X, y = make_blobs(n_samples=1000)  # expect: GPU209/-
iris = load_iris()  # expect: GPU209/-
X_tr, X_te, y_tr, y_te = train_test_split(X, y)  # expect: GPU209/-
pipe = make_pipeline(StandardScaler(), SVC())  # expect: GPU104/cuml.accel GPU104/cuml.accel GPU104/cuml.accel
search = GridSearchCV(pipe, {"svc__C": [1, 10]})  # expect: GPU104/cuml.accel
scores = cross_val_score(pipe, X, y)  # expect: GPU104/cuml.accel
search.fit(X_tr, y_tr)
print(accuracy_score(y_te, search.predict(X_te)))  # expect: GPU209/-
print(classification_report(y_te, search.predict(X_te)))  # expect: GPU209/-
Xs = scale(X)  # expect: GPU900/-
pd.set_option("display.max_rows", 10)  # expect: GPU209/-
np.testing.assert_allclose(X, X)  # test helpers: known, nothing to say
try:
    pass
except np.linalg.LinAlgError:  # an exception class: no verdict needed
    pass
