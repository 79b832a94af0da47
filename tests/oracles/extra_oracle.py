"""Plain NumPy log posteriors of the models with an extra parameter, written from the formulas
(doc/algorithms.md section 9) with scipy.stats and scipy.special, independent of the kernels.

Each returns ``f(theta) -> (log posterior, gradient)`` for ``theta = (coef, intercept, log
extra)``, the layout the Bayesian estimators sample, with the prior ``N(0, prior_scale^2)``
on the coefficients and ``N(s_mu, s_sd^2)`` on the log extra parameter.
"""

import numpy as np
import scipy.special
import scipy.stats


def _loglik_negative_binomial(eta, y, s):
    alpha = np.exp(s)
    r = 1.0 / alpha
    mu = np.exp(eta)
    ll = scipy.stats.nbinom.logpmf(y, r, r / (r + mu))
    d = r * (y - mu) / (r + mu)
    dr = (
        scipy.special.digamma(y + r)
        - scipy.special.digamma(r)
        + np.log(r)
        - np.log(r + mu)
        + (mu - y) / (r + mu)
    )
    return ll, d, -r * dr  # d l / d log alpha = -r d l / d r


def _loglik_gamma(eta, y, s):
    k = np.exp(s)
    mu = np.exp(eta)
    ll = scipy.stats.gamma.logpdf(y, k, scale=mu / k)
    d = k * (y / mu - 1.0)
    dk = np.log(k) + 1.0 - scipy.special.digamma(k) + np.log(y) - eta - y / mu
    return ll, d, k * dk


def _loglik_gaussian(eta, y, s):
    sigma = np.exp(s)
    r = y - eta
    ll = scipy.stats.norm.logpdf(y, eta, sigma)
    return ll, r / sigma**2, r * r / sigma**2 - 1.0


LOGLIK = {
    "negative_binomial": _loglik_negative_binomial,
    "gamma": _loglik_gamma,
    "gaussian": _loglik_gaussian,
}


def log_posterior(name, X, y, prior_scale, s_prior, w=None, design=False):
    """``f(theta)`` of the model ``name`` on features ``X`` (an intercept column is added,
    unless ``design``), rows weighted by ``w`` (default ones)."""
    Xd = X if design else np.column_stack([X, np.ones(len(y))])
    w = np.ones(len(y)) if w is None else np.asarray(w)
    prec = 1.0 / np.asarray(prior_scale) ** 2
    s_mu, s_sd = s_prior
    loglik = LOGLIK[name]

    def f(theta):
        beta, s = theta[:-1], theta[-1]
        ll, d, ds = loglik(Xd @ beta, y, s)
        lp = w @ ll - 0.5 * np.sum(prec * beta**2) - 0.5 * ((s - s_mu) / s_sd) ** 2
        grad = np.append(Xd.T @ (w * d) - prec * beta, w @ ds - (s - s_mu) / s_sd**2)
        return lp, grad

    return f


def neg_hessian(f, theta, h=1e-5):
    """Minus the Hessian of the log posterior ``f`` at ``theta``, by central differences of
    its gradient, symmetrised."""
    P = theta.shape[0]
    H = np.empty((P, P))
    for k in range(P):
        step = np.zeros(P)
        step[k] = h
        H[k] = -(f(theta + step)[1] - f(theta - step)[1]) / (2 * h)
    return 0.5 * (H + H.T)
