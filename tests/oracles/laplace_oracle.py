"""Laplace fits of weighted GLM posteriors (logistic, Poisson), by Newton's method in NumPy,
and the KL divergence of two Gaussians in closed form."""

import numpy as np


def glm_laplace(family, Xd, y, w, prior_sd):
    """Mean and covariance of the Laplace fit of a weighted ``family`` ('logistic' or
    'poisson') posterior with a N(0, diag(prior_sd^2)) prior; ``Xd`` is the design matrix
    (intercept column included)."""
    theta = np.zeros(Xd.shape[1])
    if family == "poisson":  # start at the weighted mean rate: Newton from 0 can overshoot
        theta[-1] = np.log(np.average(y, weights=w) + 1e-12)
    for _ in range(100):
        eta = Xd @ theta
        if family == "logistic":
            mean = 1.0 / (1.0 + np.exp(-eta))
            curvature = mean * (1 - mean)
        else:
            mean = curvature = np.exp(eta)
        grad = Xd.T @ (w * (y - mean)) - theta / prior_sd**2
        H = Xd.T @ ((w * curvature)[:, None] * Xd) + np.diag(1.0 / prior_sd**2)
        step = np.linalg.solve(H, grad)
        theta += step
        if np.max(np.abs(step)) < 1e-10:
            break
    return theta, np.linalg.inv(H)


def logistic_laplace(Xd, y, w, prior_sd):
    """:func:`glm_laplace` of the logistic likelihood."""
    return glm_laplace("logistic", Xd, y, w, prior_sd)


def gaussian_kl(m0, S0, m1, S1):
    """KL(N(m0, S0) || N(m1, S1))."""
    P = m0.shape[0]
    S1_inv = np.linalg.inv(S1)
    d = m1 - m0
    _, logdet0 = np.linalg.slogdet(S0)
    _, logdet1 = np.linalg.slogdet(S1)
    return 0.5 * (np.trace(S1_inv @ S0) + d @ S1_inv @ d - P + logdet1 - logdet0)
