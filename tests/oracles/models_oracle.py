"""Plain NumPy/SciPy versions of the likelihoods, written from the textbook formulas."""

import numpy as np
from scipy.special import expit, gammaln, log_expit


def loglik(name, eta, y, noise=1.0):
    if name == "logistic":
        # y log p + (1 - y) log(1 - p), with log p = log_expit(eta)
        return y * log_expit(eta) + (1 - y) * log_expit(-eta)
    if name == "poisson":
        return y * eta - np.exp(eta) - gammaln(y + 1)
    return -0.5 * ((y - eta) / noise) ** 2 - np.log(noise) - 0.5 * np.log(2 * np.pi)


def dloglik(name, eta, y, noise=1.0):
    if name == "logistic":
        return y - expit(eta)
    if name == "poisson":
        return y - np.exp(eta)
    return (y - eta) / noise**2


def curv(name, eta, y, noise=1.0):
    if name == "logistic":
        p = expit(eta)
        return p * (1 - p)
    if name == "poisson":
        return np.exp(eta)
    return np.full_like(eta, 1.0 / noise**2)


def log_posterior(name, theta, Xd, y, w, prior_scale, noise=1.0):
    eta = Xd @ theta
    lp = np.sum(w * loglik(name, eta, y, noise)) - 0.5 * theta @ theta / prior_scale**2
    grad = Xd.T @ (w * dloglik(name, eta, y, noise)) - theta / prior_scale**2
    return lp, grad


def neg_hessian(name, theta, Xd, y, w, prior_scale, noise=1.0):
    c = w * curv(name, Xd @ theta, y, noise)
    return Xd.T @ (c[:, None] * Xd) + np.eye(Xd.shape[1]) / prior_scale**2


def loglik_features(name, Xd, y, thetas, noise=1.0):
    """v_n = J^(-1/2) (l_n(theta_j) - mean_i l_n(theta_i))_j  (doc/algorithms.md section 1)."""
    L = loglik(name, Xd @ thetas.T, y[:, None], noise)
    return (L - L.mean(axis=1, keepdims=True)) / np.sqrt(thetas.shape[0])


def fisher_features(name, Xd, y, thetas, coords, noise=1.0):
    """v_n = sqrt(Q/J) (d l_n(theta_j) / d theta_{d_j})_j, Q = P coordinates; with a noise
    scale per draw (an array), Q = P + 1 and coordinate P is log(noise) (Gaussian)."""
    eta = Xd @ thetas.T
    D = dloglik(name, eta, y[:, None], noise)
    P = Xd.shape[1]
    per_draw = np.ndim(noise) > 0
    Xc = np.column_stack([Xd, np.zeros(len(y))])[:, coords] if per_draw else Xd[:, coords]
    F = D * Xc
    if per_draw:  # d l / d log sigma = r^2 / sigma^2 - 1
        dlog = ((y[:, None] - eta) / noise) ** 2 - 1.0
        F = np.where(coords == P, dlog, F)
    return np.sqrt((P + per_draw) / thetas.shape[0]) * F
