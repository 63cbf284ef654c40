"""Bootstrap confidence intervals for the coefficients of a logistic regression (a
clinical-risk style model: 1500 patients, 8 covariates plus intercept) fitted by
iteratively reweighted least squares (8 Newton steps per fit) on 2400 bootstrap
resamples (NumPy baseline, float64).

Imitates: wizplan/ml-essence:05/logisticreg.py (LogisticRegression.fit: yhat =
sigmoid(Xtil @ w), r = yhat * (1 - yhat), XRX = (Xtil.T * r) @ Xtil, b = (Xtil.T * r) @
(Xtil @ w - (yhat - y) / r), w = solve(XRX, b)), applied to each bootstrap resample.
Writes coefs.npy (2400 x 9, float64) and ci.npy (2 x 9, the 2.5 / 97.5 percentiles).
"""
import numpy as np

N = 1500
P = 8
N_BOOT = 2400
N_NEWTON = 8


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def fit_irls(X, y):
    w = np.zeros(X.shape[1])
    for _ in range(N_NEWTON):
        eta = X @ w
        yhat = sigmoid(eta)
        r = np.clip(yhat * (1.0 - yhat), 1e-10, None)
        XR = X.T * r
        w = np.linalg.solve(XR @ X, XR @ (eta - (yhat - y) / r))
    return w


def main():
    rng = np.random.default_rng(17)
    X = np.hstack([np.ones((N, 1)), rng.standard_normal((N, P))])
    w_true = np.concatenate([[-0.5], rng.normal(0.0, 0.6, P)])
    y = (rng.random(N) < sigmoid(X @ w_true)).astype(np.float64)
    idx = rng.integers(0, N, size=(N_BOOT, N))
    coefs = np.empty((N_BOOT, P + 1))
    for b in range(N_BOOT):
        coefs[b] = fit_irls(X[idx[b]], y[idx[b]])
    ci = np.percentile(coefs, [2.5, 97.5], axis=0)
    np.save("coefs.npy", coefs)
    np.save("ci.npy", ci)
    print("full-data fit", np.round(fit_irls(X, y), 3))
    print("95% CI width", np.round(ci[1] - ci[0], 3))


if __name__ == "__main__":
    main()
