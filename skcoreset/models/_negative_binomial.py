"""Negative binomial (NB2) regression with the log link: overdispersed counts.

Mean ``mu = e^eta`` and variance ``mu + alpha mu^2``; with ``r = 1 / alpha``,

    l(eta, y) = lgamma(y + r) - lgamma(r) - lgamma(y + 1) + r log(r / (r + mu))
                + y log(mu / (r + mu))
              = y (eta + log alpha) - (y + r) log1p(alpha mu)          (terms)
                + lgamma(y + r) - lgamma(y + 1)                        (offset)
                - lgamma(r)                                            (extra_offset)

The dispersion ``alpha`` is the model's extra parameter: estimated by moments from a Poisson
fit for the Laplace fit and the projections, sampled on the log scale by MALA.
"""

import math
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.special
from numba import njit

from ._family import SingleIndexFamily
from ._fastmath_kernels import fast_exp, fast_log1p
from ._glm import GLM
from ._poisson import OverdispersionWarning, PoissonModel
from ._special_kernels import digamma
from ._targets import numeric_targets

#: Smallest dispersion the moment estimate returns (the Poisson limit, alpha -> 0).
MIN_ALPHA = 1e-6


@njit(cache=True, inline="always")
def _prepare(alpha):
    # and psi(r), which d l / d log alpha needs at every row: once per call
    r = np.divide(1.0, alpha)
    return alpha, r, math.log(alpha), digamma(r)


@njit(cache=True, inline="always")
def _terms(eta, y, param):
    alpha, r, log_alpha, _ = param
    mu = fast_exp(eta)
    am = alpha * mu
    d = np.divide(y - mu, 1.0 + am)  # y - (y + r) mu / (r + mu)
    return y * (eta + log_alpha) - (y + r) * fast_log1p(am), d


@njit(cache=True, inline="always")
def _curvature(eta, y, param):
    alpha = param[0]
    mu = fast_exp(eta)
    q = 1.0 + alpha * mu
    # r mu (r + y) / (r + mu)^2
    return np.divide(mu * (1.0 + alpha * y), q * q)


@njit(cache=True, inline="always")
def _offset(y, param):
    return math.lgamma(y + param[1]) - math.lgamma(y + 1.0)


@njit(cache=True, inline="always")
def _extra_offset(alpha):
    # np.divide: alpha may underflow to 0 in a far proposal (then -inf, and it is rejected)
    return -math.lgamma(np.divide(1.0, alpha))


@njit(cache=True, inline="always")
def _dlog_extra(eta, y, param):
    # dl/d log alpha = -r dl/dr, dl/dr = psi(y + r) - psi(r) - log1p(alpha mu) + (mu - y)/(r + mu)
    alpha, r, _, digamma_r = param
    mu = fast_exp(eta)
    am = alpha * mu
    dr = digamma(y + r) - digamma_r - math.log1p(am) + np.divide((mu - y) * alpha, 1.0 + am)
    return -r * dr


FAMILY = SingleIndexFamily(
    "negative_binomial",
    _terms,
    _curvature,
    offset=_offset,
    extra_offset=_extra_offset,
    prepare=_prepare,
    dlog_extra=_dlog_extra,
)


@dataclass(frozen=True, eq=False)
class NegativeBinomialModel(GLM):
    """Negative binomial (NB2) likelihood with the log link; non-negative integer counts.

    Mean ``exp(eta)``, variance ``mu + alpha mu^2``: the model of overdispersed counts.

    Parameters
    ----------
    prior_scale : float or ndarray of shape (P,), default=1.0
        Standard deviation of the Gaussian prior on the parameters (intercept last).
    fit_intercept : bool, default=True
        Whether the design matrix gets a trailing column of ones.
    noise_scale : float or None, default=None
        The dispersion ``alpha`` (None: estimated by moments from a Poisson fit, then
        sampled by the Bayesian estimator).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import NegativeBinomialModel
    >>> model = NegativeBinomialModel(noise_scale=0.5)
    >>> model.log_density(np.array([0.0, 3.0]), np.array([0.0, 1.0])).round(4)
    array([-0.8109, -1.9846])
    """

    name = "negative_binomial"
    likelihood = "neg_binomial_2_log"
    family = FAMILY
    has_noise = True
    extra_name = "alpha"

    def encode_targets(self, y):
        y = numeric_targets(y)
        if np.any(y < 0):
            raise ValueError(
                "The negative binomial model needs non-negative counts; y has negative values."
            )
        if not np.all(y == np.round(y)):
            raise ValueError(
                "The negative binomial model needs integer counts; y has non-integer values "
                "(for rates, use model='poisson' with the exposure as sample_weight)."
            )
        return y

    def prior_level(self, y_mean, y_sd):
        return 1.0, float(np.log(max(y_mean, 1e-3)))

    def initial_intercept(self, y_mean):
        return np.log(max(y_mean, 1e-3))

    def extra_log_prior(self, y_mean, y_sd):
        """Return N(0, 2.5^2) on log alpha: 95% of the prior mass on alpha in 0.007 .. 134.

        Parameters
        ----------
        y_mean : float
            Weighted mean of the counts (unused).
        y_sd : float or None
            Their weighted standard deviation (unused).

        Returns
        -------
        mean : float
            The prior mean of log alpha, 0.
        sd : float
            Its standard deviation, 2.5.
        """
        return 0.0, 2.5

    def estimate_noise_blocks(self, blocks):
        """Estimate the dispersion ``alpha`` by moments from a Poisson fit of the same data.

        ``alpha = sum_n w_n ((y_n - mu_n)^2 - mu_n) / sum_n w_n mu_n^2`` at the Poisson mode
        (Cameron & Trivedi's moment estimator), at least 1e-6 (the Poisson limit).

        Parameters
        ----------
        blocks : callable
            ``blocks()`` yields ``(Xd, y, w)`` triples.

        Returns
        -------
        alpha : float
            The estimated dispersion.
        """
        from ._laplace import laplace_from_blocks

        poisson = PoissonModel(prior_scale=self.prior_scale, fit_intercept=self.fit_intercept)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OverdispersionWarning)  # expected here
            theta = laplace_from_blocks(poisson, blocks).mean
        num = den = 0.0
        for Xd, y, w in blocks():
            mu = np.exp(Xd @ theta)
            num += float(w @ ((y - mu) ** 2 - mu))
            den += float(w @ (mu * mu))
        alpha = num / den if den > 0 else MIN_ALPHA
        return float(max(alpha, MIN_ALPHA)) if np.isfinite(alpha) else 1.0

    def mean(self, eta):
        return np.exp(eta)

    def variance(self, mean, noise_scale=None):
        alpha = self.noise if noise_scale is None else noise_scale
        return mean + alpha * mean * mean

    def log_density(self, y, eta, noise_scale=None):
        alpha = self.noise if noise_scale is None else noise_scale
        r = 1.0 / np.asarray(alpha, dtype=np.float64)
        with np.errstate(over="ignore"):
            mu = np.exp(eta)
        return (
            scipy.special.gammaln(y + r)
            - scipy.special.gammaln(r)
            - scipy.special.gammaln(y + 1.0)
            + y * (eta + np.log(alpha))
            - (y + r) * np.log1p(alpha * mu)
        )

    def simulate(self, eta, random_state, noise_scale=None):
        alpha = self.noise if noise_scale is None else noise_scale
        r = 1.0 / np.asarray(alpha, dtype=np.float64)
        mu = np.exp(eta)
        return random_state.negative_binomial(r, r / (r + mu))
