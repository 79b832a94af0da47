"""The Laplace fit of a weighted logistic posterior, by Newton's method in NumPy."""

import numpy as np


def logistic_laplace(Xd, y, w, prior_sd):
    """Mean and covariance of the Laplace fit of a weighted logistic posterior with a
    N(0, diag(prior_sd^2)) prior; ``Xd`` is the design matrix (intercept column included)."""
    theta = np.zeros(Xd.shape[1])
    for _ in range(100):
        eta = Xd @ theta
        p = 1.0 / (1.0 + np.exp(-eta))
        grad = Xd.T @ (w * (y - p)) - theta / prior_sd**2
        H = Xd.T @ ((w * p * (1 - p))[:, None] * Xd) + np.diag(1.0 / prior_sd**2)
        step = np.linalg.solve(H, grad)
        theta += step
        if np.max(np.abs(step)) < 1e-10:
            break
    return theta, np.linalg.inv(H)
