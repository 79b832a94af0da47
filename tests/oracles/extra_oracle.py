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


LOGLIK = {"negative_binomial": _loglik_negative_binomial, "gamma": _loglik_gamma}


def log_posterior(name, X, y, prior_scale, s_prior):
    """``f(theta)`` of the model ``name`` on features ``X`` (an intercept column is added)."""
    Xd = np.column_stack([X, np.ones(len(y))])
    prec = 1.0 / np.asarray(prior_scale) ** 2
    s_mu, s_sd = s_prior
    loglik = LOGLIK[name]

    def f(theta):
        beta, s = theta[:-1], theta[-1]
        ll, d, ds = loglik(Xd @ beta, y, s)
        lp = ll.sum() - 0.5 * np.sum(prec * beta**2) - 0.5 * ((s - s_mu) / s_sd) ** 2
        grad = np.append(Xd.T @ d - prec * beta, ds.sum() - (s - s_mu) / s_sd**2)
        return lp, grad

    return f
