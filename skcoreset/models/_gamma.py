"""Gamma regression with the log link: positive, right-skewed targets (incomes, prices, claim
sizes, durations).

Mean ``mu = e^eta`` and shape ``k`` (variance ``mu^2 / k``):

    l(eta, y) = k log k - lgamma(k) + (k - 1) log y - k eta - k y e^-eta
              = -k (eta + y e^-eta)                     (terms)
                + (k - 1) log y                         (offset)
                + k log k - lgamma(k)                   (extra_offset)

The shape is the model's extra parameter: estimated from the Pearson residuals of the fit
(whose coefficients do not depend on it) for the Laplace fit and the projections, sampled on
the log scale by MALA.
"""

import math
from dataclasses import dataclass, replace

import numpy as np
import scipy.special
from numba import njit

from ._family import SingleIndexFamily
from ._fastmath_kernels import fast_exp
from ._glm import GLM
from ._laplace import laplace_from_blocks
from ._special_kernels import digamma
from ._targets import numeric_targets


@njit(cache=True, inline="always")
def _prepare(k):
    # the shape, and the part of d l / d log k that no row changes: once per call
    return k, k * (math.log(k) + 1.0 - digamma(k))


@njit(cache=True, inline="always")
def _terms(eta, y, param):
    k = param[0]
    ye = y * fast_exp(-eta)
    return -k * (eta + ye), k * (ye - 1.0)


@njit(cache=True, inline="always")
def _curvature(eta, y, param):
    return param[0] * y * fast_exp(-eta)


@njit(cache=True, inline="always")
def _offset(y, param):
    return (param[0] - 1.0) * math.log(y)


@njit(cache=True, inline="always")
def _extra_offset(k):
    return k * math.log(k) - math.lgamma(k)


@njit(cache=True, inline="always")
def _dlog_extra(eta, y, param):
    # k dl/dk, dl/dk = log k + 1 - psi(k) + log y - eta - y e^-eta
    k, row_free = param
    return row_free + k * (math.log(y) - eta - y * fast_exp(-eta))


# built-in: tested apart (tests/test_model_contract.py), not checked at every fit
FAMILY = SingleIndexFamily(
    "gamma",
    _terms,
    _curvature,
    offset=_offset,
    extra_offset=_extra_offset,
    prepare=_prepare,
    dlog_extra=_dlog_extra,
    check_gradient=False,
)


@dataclass(frozen=True, eq=False)
class GammaModel(GLM):
    """Gamma likelihood with the log link; positive targets.

    Mean ``exp(eta)``, variance ``mean^2 / shape``: a constant coefficient of variation, the
    model of positive skewed targets (scikit-learn's ``GammaRegressor`` fits its mean).

    Parameters
    ----------
    prior_scale : float or ndarray of shape (P,), default=1.0
        Standard deviation of the Gaussian prior on the parameters (intercept last).
    fit_intercept : bool, default=True
        Whether the design matrix gets a trailing column of ones.
    extra : float or None, default=None
        The shape ``k`` (None: a parameter of the posterior, fitted with the coefficients
        from the Pearson estimate on, and sampled by the Bayesian estimator).
    extra_prior : (float, float) or None, default=None
        The normal prior ``(mean, sd)`` of ``log k`` (None: :meth:`extra_prior_at` without
        the data's scale; set from the data by :meth:`with_data_scale`).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import GammaModel
    >>> model = GammaModel(extra=2.0)
    >>> model.log_density(np.array([1.0, 3.0]), np.array([0.0, 1.0])).round(4)
    array([-0.6137, -1.7224])
    """

    name = "gamma"
    likelihood = "gamma_log"
    family = FAMILY
    has_extra = True
    extra_name = "shape"

    def encode_targets(self, y):
        y = numeric_targets(y)
        if np.any(y <= 0):
            what = "zeros" if np.all(y >= 0) else "negative values"
            raise ValueError(f"The gamma model needs positive targets; y has {what}.")
        return y

    def prior_level(self, y_mean, y_sd):
        return 1.0, float(np.log(y_mean))

    def initial_intercept(self, y_mean):
        return np.log(y_mean)

    def extra_prior_at(self, y_mean, y_sd):
        """Return the normal prior of log shape: centred on the targets' own shape.

        ``log(mean(y)^2 / var(y))``, the shape of the targets without features (the
        features can only raise it), with standard deviation 3; ``N(0, 3^2)`` when the prior
        does not follow the data.

        Parameters
        ----------
        y_mean : float
            Weighted mean of the targets.
        y_sd : float or None
            Their weighted standard deviation (None: a numeric ``prior_scale`` was given).

        Returns
        -------
        mean : float
            The prior mean of log shape.
        sd : float
            Its standard deviation, 3.
        """
        if y_sd is None or not y_sd > 0:
            return 0.0, 3.0
        return float(np.log(y_mean**2 / y_sd**2)), 3.0

    def estimate_extra_blocks(self, blocks):
        """Estimate the shape from the Pearson residuals of the fit at shape 1.

        The coefficients' mode does not depend on the shape (the score is proportional to
        it), so the fit at shape 1 gives the means; then ``1 / k = sum_n w_n ((y_n - mu_n) /
        mu_n)^2 / (W - P)``, the Pearson estimate of the dispersion.

        Parameters
        ----------
        blocks : callable
            ``blocks()`` yields ``(Xd, y, w)`` triples.

        Returns
        -------
        shape : float
            The estimated shape.
        """
        theta = laplace_from_blocks(replace(self, extra=1.0), blocks).mean
        chi2 = w_sum = 0.0
        for Xd, y, w in blocks():
            # means beyond float64 (targets near 1e308): a NaN sum, and the fallback below
            with np.errstate(over="ignore", invalid="ignore"):
                mu = np.exp(Xd @ theta)
                chi2 += float(w @ ((y - mu) / mu) ** 2)
            w_sum += float(w.sum())
        dof = w_sum - theta.shape[0]
        if not (dof > 0 and chi2 > 0 and np.isfinite(chi2)):
            return 1.0
        return float(dof / chi2)

    def mean(self, eta):
        return np.exp(eta)

    def variance(self, mean, extra=None):
        k = self.extra_value if extra is None else extra
        return mean * mean / k

    def log_density(self, y, eta, extra=None):
        k = self.extra_value if extra is None else np.asarray(extra, dtype=np.float64)
        with np.errstate(over="ignore"):
            return (
                k * np.log(k)
                - scipy.special.gammaln(k)
                + (k - 1.0) * np.log(y)
                - k * (eta + y * np.exp(-eta))
            )

    def simulate(self, eta, random_state, extra=None):
        k = self.extra_value if extra is None else np.asarray(extra, dtype=np.float64)
        return random_state.gamma(k, np.exp(eta) / k)

    # -- the exports' recipes and the test suite's reference (ModelRecipes) --------------
    # the languages' gamma of shape k and rate k / mean
    def stan_likelihood(self, y):
        return "vector<lower=0>[N]", y, "gamma_lpdf(y[n] | {0}, {0} * exp(-eta[n]))"

    def pymc_loglik(self, pm, pt, eta, y, extras):
        (shape,) = extras
        return pm.logp(pm.Gamma.dist(alpha=shape, beta=shape * pt.exp(-eta)), y)

    def numpyro_likelihood(self, numpyro, jax, eta, y, extras):
        (shape,) = extras
        rate = shape * jax.numpy.exp(-eta)
        return numpyro.distributions.Gamma(concentration=shape, rate=rate), jax.numpy.asarray(y)

    def reference_logpdf(self, stats, y, eta, extra):
        return stats.gamma.logpdf(y, extra, scale=np.exp(eta) / extra)

    def reference_data(self, n_samples, random_state):
        X = random_state.standard_normal((n_samples, 2))
        return X, random_state.gamma(3.0, np.exp(X @ [0.5, -0.3] + 1.0) / 3.0)
