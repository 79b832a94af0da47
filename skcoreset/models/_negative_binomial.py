"""Negative binomial (NB2) regression with the log link: overdispersed counts.

Mean ``mu = e^eta`` and variance ``mu + alpha mu^2``; with ``r = 1 / alpha``,

    l(eta, y) = lgamma(y + r) - lgamma(r) - lgamma(y + 1) + r log(r / (r + mu))
                + y log(mu / (r + mu))
              = y eta - (y + r) log1p(alpha mu)                        (terms)
                + D(r, y) - lgamma(y + 1)                              (offset)

with ``D(r, y) = lgamma(y + r) - lgamma(r) - y log r``. As ``alpha -> 0`` (the Poisson limit)
``D -> 0`` while ``lgamma(y + r)`` and ``lgamma(r)`` grow as ``r log r``: computed as their
difference, ``D`` kept ``r log r`` times the machine epsilon of error (at ``alpha = 1e-16``,
80 per row). For ``r >= 100`` it is computed from Stirling's series,
``D = (r + y - 1/2) log1p(y / r) - y + c(r + y) - c(r)``, accurate to a few ulp of ``y``
however large ``r``; likewise the score in ``log alpha`` (the digamma difference
``psi(y + r) - psi(r)`` from its asymptotic series).

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
from ._laplace import laplace_from_blocks
from ._poisson import OverdispersionWarning, PoissonModel
from ._special_kernels import digamma
from ._targets import MAX_COUNT, check_target_scale, numeric_targets

#: Why counts must stay below MAX_COUNT, and what to do.
_SCALE = (
    "float64 holds no integer past 2^53, and a count's posterior spread on the log scale "
    "(1 / sqrt(count)) comes within a few ulp of the coefficients",
    "Model rates instead: y / exposure with sample_weight=exposure (model='poisson'), or "
    "model='gaussian' on log(y).",
)

#: Smallest dispersion the moment estimate returns (the Poisson limit, alpha -> 0).
MIN_ALPHA = 1e-6


#: From this size ``r = 1 / alpha`` on, ``D(r, y)`` and the digamma difference come from their
#: asymptotic series (truncation below 1e-16 relative there); below it, from lgamma and
#: digamma, whose difference then loses at most ``r log r`` ulp (5e-14).
_SERIES_R = 100.0


@njit(cache=True, inline="always")
def _prepare(alpha):
    # the row-free values every row reads: once per call
    r = np.divide(1.0, alpha)
    return alpha, r, math.log(r), digamma(r), math.lgamma(r)


@njit(cache=True, inline="always")
def _stirling_tail(x):
    # lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2), x >= 100: below 1e-21 truncated
    inv = 1.0 / x
    inv2 = inv * inv
    return inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0 - inv2 / 1680.0)))


@njit(cache=True, inline="always")
def _log1pmx_over_x2(x):
    # (log1p(x) - x) / x^2, x > -1: the series where the difference would cancel (|x| <
    # 0.01), 4e-14 relative; divided by x^2, so that r (log1p(y/r) - y/r) = y (y/r) times it
    # does not underflow for r up to 1e308
    if abs(x) < 0.01:
        return -0.5 + x * (
            1.0 / 3.0
            + x * (-0.25 + x * (0.2 + x * (-1.0 / 6.0 + x * (1.0 / 7.0 + x * (-0.125 + x / 9.0)))))
        )
    return (math.log1p(x) - x) / (x * x)


@njit(cache=True, inline="always")
def _log_gamma_ratio(y, param):
    # D(r, y) = lgamma(y + r) - lgamma(r) - y log r, without the r log r that cancels
    r = param[1]
    if r >= _SERIES_R:
        if r == math.inf:  # alpha underflowed to 0 (a far proposal): the Poisson limit
            return 0.0
        x = y / r
        # (r + y - 1/2) log1p(x) - y, the r x that cancels y taken out of r log1p(x)
        return (
            (y * x) * _log1pmx_over_x2(x)
            + (y - 0.5) * math.log1p(x)
            + (_stirling_tail(r + y) - _stirling_tail(r))
        )
    return math.lgamma(y + r) - param[4] - y * param[2]


@njit(cache=True, inline="always")
def _terms(eta, y, param):
    alpha, r = param[0], param[1]
    mu = fast_exp(eta)
    am = alpha * mu
    d = np.divide(y - mu, 1.0 + am)  # y - (y + r) mu / (r + mu)
    log1p_am = fast_log1p(am)
    # r log1p(alpha mu) -> mu as alpha -> 0; r is inf where alpha underflowed (a far proposal)
    r_term = mu if r == math.inf else r * log1p_am
    return y * eta - r_term - y * log1p_am, d


@njit(cache=True, inline="always")
def _curvature(eta, y, param):
    alpha = param[0]
    mu = fast_exp(eta)
    q = 1.0 + alpha * mu
    # r mu (r + y) / (r + mu)^2
    return np.divide(mu * (1.0 + alpha * y), q * q)


@njit(cache=True, inline="always")
def _offset(y, param):
    return _log_gamma_ratio(y, param) - math.lgamma(y + 1.0)


@njit(cache=True, inline="always")
def _dlog_extra(eta, y, param):
    # dl/d log alpha = -r dl/dr, dl/dr = psi(y + r) - psi(r) - log1p(alpha mu) + (mu - y)/(r + mu)
    alpha, r, _, digamma_r, _ = param
    mu = fast_exp(eta)
    am = alpha * mu
    if r == math.inf:  # alpha underflowed to 0: the Poisson limit, flat in alpha
        return 0.0
    if r < _SERIES_R or y > r or am > 1.0:
        # the series' terms below grow as y and mu: past r, the digammas' r log r ulp is less
        dr = digamma(y + r) - digamma_r - math.log1p(am) + np.divide((mu - y) * alpha, 1.0 + am)
        return -r * dr
    # psi(y + r) - psi(r) from psi's asymptotic series (terms to x^-6), with t = y / (r + y),
    # u = r / (r + y); the O(1) parts of r log1p(y / r), r log1p(alpha mu) and (mu - y) / (1 +
    # alpha mu) cancel exactly (r x = y, r alpha mu = mu), leaving O(alpha) terms: relative
    # accuracy however small alpha, where the difference of digammas loses r log r ulp
    s = r + y
    t, u = y / s, r / s
    inv_r = 1.0 / r
    inv_r2 = inv_r * inv_r
    u2 = u * u
    series = t * (
        0.5
        + inv_r
        * (
            (1.0 + u) / 12.0
            - inv_r2
            * ((1.0 + u) * (1.0 + u2) / 120.0 - inv_r2 * (1.0 + u) * (1.0 + u2 + u2 * u2) / 252.0)
        )
    )
    x = y / r
    # r (log1p(x) - x) = y x (...) / x^2, and r (log1p(am) - am) = mu am (...) / am^2
    return (
        (mu - y) * np.divide(am, 1.0 + am)
        - (y * x) * _log1pmx_over_x2(x)
        + (mu * am) * _log1pmx_over_x2(am)
        - series
    )


# built-in: tested apart (tests/test_model_contract.py), not checked at every fit
FAMILY = SingleIndexFamily(
    "negative_binomial",
    _terms,
    _curvature,
    offset=_offset,
    prepare=_prepare,
    dlog_extra=_dlog_extra,
    check_gradient=False,
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
    extra : float or None, default=None
        The dispersion ``alpha`` (None: a parameter of the posterior, fitted with the
        coefficients from the moment estimate of a Poisson fit on, and sampled by the
        Bayesian estimator).
    extra_prior : (float, float) or None, default=None
        The normal prior ``(mean, sd)`` of ``log alpha`` (None: :meth:`extra_prior_at`,
        N(0, 2.5^2)).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import NegativeBinomialModel
    >>> model = NegativeBinomialModel(extra=0.5)
    >>> model.log_density(np.array([0.0, 3.0]), np.array([0.0, 1.0])).round(4)
    array([-0.8109, -1.9846])
    """

    name = "negative_binomial"
    likelihood = "neg_binomial_2_log"
    family = FAMILY
    has_extra = True
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
        return check_target_scale(y, MAX_COUNT, "negative binomial", *_SCALE)

    def prior_level(self, y_mean, y_sd):
        return 1.0, float(np.log(max(y_mean, 1e-3)))

    def initial_intercept(self, y_mean):
        return np.log(max(y_mean, 1e-3))

    def extra_prior_at(self, y_mean, y_sd):
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

    def estimate_extra_blocks(self, blocks):
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

    def variance(self, mean, extra=None):
        alpha = self.extra_value if extra is None else extra
        return mean + alpha * mean * mean

    def log_density(self, y, eta, extra=None):
        alpha = np.asarray(self.extra_value if extra is None else extra, dtype=np.float64)
        y, eta, alpha = np.broadcast_arrays(np.asarray(y, dtype=np.float64), eta, alpha)
        with np.errstate(over="ignore", divide="ignore"):
            r = 1.0 / alpha
            mu = np.exp(eta)
        # y log1p(alpha mu) apart from r's: r is inf where alpha underflowed
        log1p_am = np.log1p(alpha * mu)
        return (
            log_gamma_ratio(y, r)
            - scipy.special.gammaln(y + 1.0)
            + y * eta
            - np.where(r == np.inf, mu, r * log1p_am)
            - y * log1p_am
        )

    def simulate(self, eta, random_state, extra=None):
        alpha = self.extra_value if extra is None else extra
        r = 1.0 / np.asarray(alpha, dtype=np.float64)
        mu = np.exp(eta)
        return random_state.negative_binomial(r, r / (r + mu))

    # -- the exports' recipes and the test suite's reference (ModelRecipes) --------------
    # The languages' size (Stan's phi, PyMC's and Bambi's alpha, NumPyro's concentration) is
    # r = 1 / the library's dispersion alpha.
    def stan_likelihood(self, y):
        row = "neg_binomial_2_log_lpmf(y[n] | eta[n], inv({0}))"
        return "array[N] int<lower=0>", y.astype(np.int64), row

    def pymc_loglik(self, pm, pt, eta, y, extras):
        (alpha,) = extras
        return pm.logp(pm.NegativeBinomial.dist(mu=pt.exp(eta), alpha=1.0 / alpha), y)

    # NumPyro's negative binomial takes jax.scipy.special.betaln, accurate to some 4e-7
    # relative (SciPy's to 1e-15: betaln(1.3, 8))
    export_rtol = {"numpyro": 1e-6}

    def numpyro_likelihood(self, numpyro, jax, eta, y, extras):
        (alpha,) = extras
        jnp = jax.numpy
        nb = numpyro.distributions.NegativeBinomial2(mean=jnp.exp(eta), concentration=1.0 / alpha)
        return nb, jnp.asarray(y)

    def bambi_family(self, y):
        return "negativebinomial", "log", (("alpha", True),)

    def reference_logpdf(self, stats, y, eta, extra):
        r = 1.0 / extra
        return stats.nbinom.logpmf(y, r, r / (r + np.exp(eta)))

    def reference_data(self, n_samples, random_state):
        X = random_state.standard_normal((n_samples, 2))
        mu = np.exp(X @ [0.5, -0.3] + 1.0)
        return X, random_state.negative_binomial(2.0, 2.0 / (2.0 + mu)).astype(float)


def log_gamma_ratio(y, r):
    """``lgamma(y + r) - lgamma(r) - y log r``, accurate however large ``r`` (NumPy).

    The vectorised twin of the kernels' ``D(r, y)`` (see the module's docstring): Stirling's
    series from ``r >= 100``, where the lgamma difference would cancel ``r log r``.

    Parameters
    ----------
    y : ndarray
        Non-negative counts.
    r : ndarray
        Sizes ``1 / alpha``, positive, of the shape of ``y``.

    Returns
    -------
    d : ndarray
        The values, of the shape of ``y`` (0 where ``r`` is infinite: the Poisson limit).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models._negative_binomial import log_gamma_ratio
    >>> d = log_gamma_ratio(np.array(3.0), np.array(1e16))  # y (y - 1) / (2 r) to first order
    >>> print(f"{d:.12e}")
    3.000000000000e-16
    """
    y, r = np.broadcast_arrays(np.asarray(y, dtype=np.float64), np.asarray(r, dtype=np.float64))
    out = np.zeros(y.shape)
    small = r < _SERIES_R
    ys, rs = y[small], r[small]
    out[small] = scipy.special.gammaln(ys + rs) - scipy.special.gammaln(rs) - ys * np.log(rs)
    large = ~small & np.isfinite(r)
    yl, rl = y[large], r[large]
    x = yl / rl
    # (r + y - 1/2) log1p(x) - y with the r x that cancels y taken out: r (log1p(x) - x)
    tiny = np.abs(x) < 0.01
    ratio = np.empty_like(x)  # (log1p(x) - x) / x^2
    xt = x[tiny]
    ratio[tiny] = -0.5 + xt * (1 / 3 + xt * (-0.25 + xt * (0.2 + xt * (-1 / 6 + xt / 7))))
    xb = x[~tiny]
    ratio[~tiny] = (np.log1p(xb) - xb) / (xb * xb)
    out[large] = (yl * x) * ratio + (yl - 0.5) * np.log1p(x) + (_tail(rl + yl) - _tail(rl))
    return out


def _tail(x):
    """Stirling's series of ``lgamma(x)`` past its leading terms (x >= 100), NumPy."""
    inv = 1.0 / x
    inv2 = inv * inv
    return inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0 - inv2 / 1680.0)))
