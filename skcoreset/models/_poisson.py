"""Poisson regression with the log link: ``l(eta, y) = y eta - e^eta - log y!``."""

import math
from dataclasses import dataclass

import numpy as np
import scipy.special
from numba import njit

from .._warnings import warn
from ._family import SingleIndexFamily
from ._fastmath_kernels import fast_exp
from ._glm import GLM
from ._targets import MAX_COUNT, check_target_scale, numeric_targets

#: Why counts must stay below MAX_COUNT, and what to do.
_SCALE = (
    "float64 holds no integer past 2^53, and a count's posterior spread on the log scale "
    "(1 / sqrt(count)) comes within a few ulp of the coefficients",
    "Model rates instead: y / exposure with sample_weight=exposure (model='poisson'), or "
    "model='gaussian' on log(y).",
)

#: Pearson dispersion above which counts are called overdispersed (besides being significant).
OVERDISPERSION = 2.0


class OverdispersionWarning(UserWarning):
    """The counts vary far more than a Poisson likelihood allows.

    Issued by every Laplace fit of the Poisson model (the coresets' projection, the Bayesian
    Poisson regression's start, the fidelity measures) when the Pearson dispersion at the
    mode, ``sum_n w_n (y_n - mu_n)^2 / mu_n / (W - P)``, is above 2 and more than 5 standard
    errors (``sqrt(2 / (W - P))``) above 1, its value under the model. A Poisson posterior is
    then falsely certain (its standard deviations too small by about the square root of the
    dispersion); a negative binomial likelihood, whose variance ``mu + alpha mu^2`` grows
    with the mean, is the usual remedy.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skcoreset.models import OverdispersionWarning, get_model, laplace_approximation
    >>> rng = np.random.default_rng(0)
    >>> y = rng.negative_binomial(1, 0.1, 500).astype(float)  # mean 9, variance 90
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     lap = laplace_approximation(get_model("poisson"), np.zeros((500, 1)), y)
    >>> [w.category.__name__ for w in caught]
    ['OverdispersionWarning']
    """


def pearson_dispersion(blocks, theta):
    """``(dispersion, degrees of freedom)`` of weighted counts at ``theta``, over the blocks
    (NaN when there are no more weighted rows than parameters)."""
    chi2 = w_sum = 0.0
    for Xd, y, w in blocks():
        with np.errstate(over="ignore"):
            mu = np.exp(Xd @ theta)
        chi2 += float(w @ ((y - mu) ** 2 / np.maximum(mu, 1e-300)))
        w_sum += float(w.sum())
    dof = w_sum - theta.shape[0]
    return (chi2 / dof if dof > 0 else np.nan), dof


@njit(cache=True, inline="always")
def _terms(eta, y, param):
    mu = fast_exp(eta)
    return y * eta - mu, y - mu


@njit(cache=True, inline="always")
def _curvature(eta, y, param):
    return fast_exp(eta)


@njit(cache=True, inline="always")
def _offset(y, param):
    return -math.lgamma(y + 1.0)


# built-in: tested apart (tests/test_model_contract.py), not checked at every fit
FAMILY = SingleIndexFamily("poisson", _terms, _curvature, offset=_offset, check_gradient=False)


@dataclass(frozen=True, eq=False)
class PoissonModel(GLM):
    """Poisson likelihood with the log link; non-negative targets (counts, or rates).

    Parameters
    ----------
    prior_scale : float or ndarray of shape (P,), default=1.0
        Standard deviation of the Gaussian prior on the parameters (intercept last).
    fit_intercept : bool, default=True
        Whether the design matrix gets a trailing column of ones.
    extra : float or None, default=None
        Unused (the model has no extra parameter).
    extra_prior : None
        Unused (no extra parameter).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import PoissonModel
    >>> model = PoissonModel()
    >>> model.mean(np.array([0.0, 1.0])).round(4)
    array([1.    , 2.7183])
    """

    name = "poisson"
    likelihood = "poisson_log"
    family = FAMILY

    def encode_targets(self, y):
        y = numeric_targets(y)
        if np.any(y < 0):
            raise ValueError("The Poisson model needs non-negative targets; y has negative values.")
        return check_target_scale(y, MAX_COUNT, "Poisson", *_SCALE)

    def check_fit(self, blocks, theta):
        dispersion, dof = pearson_dispersion(blocks, theta)
        if dof <= 0:
            return  # no more weighted rows than parameters: the fit says nothing of it
        if dispersion > max(OVERDISPERSION, 1.0 + 5.0 * np.sqrt(2.0 / dof)):
            warn(
                f"The counts are overdispersed: their Pearson dispersion at the Poisson fit is "
                f"{dispersion:.3g}, where a Poisson likelihood gives 1, so the Poisson "
                "posterior is falsely certain (its standard deviations too small by about "
                f"{np.sqrt(dispersion):.2g}x). Use the negative binomial likelihood, whose "
                "variance mu + alpha mu^2 grows with the mean: model='negative_binomial', "
                "BayesianNegativeBinomialRegression.",
                OverdispersionWarning,
            )

    def prior_level(self, y_mean, y_sd):
        # log scale: unit coefficient scale, the intercept at the log of the mean count
        return 1.0, float(np.log(max(y_mean, 1e-3)))

    def initial_intercept(self, y_mean):
        # the constant-rate fit, exp(eta) = mean(y): avoids huge first Newton steps
        return np.log(max(y_mean, 1e-3))

    def mean(self, eta):
        return np.exp(eta)

    def variance(self, mean, extra=None):
        return mean

    def log_density(self, y, eta, extra=None):
        with np.errstate(over="ignore"):
            return y * eta - np.exp(eta) - scipy.special.gammaln(y + 1.0)

    def simulate(self, eta, random_state, extra=None):
        return random_state.poisson(np.exp(eta))

    # -- the exports' recipes and the test suite's reference (ModelRecipes) --------------
    # Rates (targets not all integers, which the model takes: y / exposure) have the
    # library's density y eta - exp(eta) - lgamma(y + 1), which the languages' Poisson
    # distributions do not give (Stan refuses real targets, PyMC floors them, NumPyro gives
    # -inf): the recipes write it out for them.
    def stan_likelihood(self, y):
        if _rates(y):
            return "vector<lower=0>[N]", y, "(y[n] * eta[n] - exp(eta[n]) - lgamma(y[n] + 1))"
        return "array[N] int<lower=0>", y.astype(np.int64), "poisson_log_lpmf(y[n] | eta[n])"

    def pymc_loglik(self, pm, pt, eta, y, extras):
        if _rates(y):
            return y * eta - pt.exp(eta) - pt.gammaln(y + 1.0)
        return pm.logp(pm.Poisson.dist(mu=pt.exp(eta)), y)

    def numpyro_likelihood(self, numpyro, jax, eta, y, extras):
        if _rates(y):
            return _numpyro_poisson_rate(numpyro, jax)(eta), jax.numpy.asarray(y)
        return numpyro.distributions.Poisson(rate=jax.numpy.exp(eta)), jax.numpy.asarray(y)

    def bambi_family(self, y):
        if _rates(y):
            raise NotImplementedError(
                "These Poisson targets are rates (not all integers), whose density the "
                "library's Poisson model takes but Bambi's Poisson family does not (PyMC's "
                "Poisson floors them). Use to_pymc, to_numpyro or to_stan, which write the "
                "library's density."
            )
        return "poisson", "log", ()

    def reference_logpdf(self, stats, y, eta, extra):
        return stats.poisson.logpmf(y, np.exp(eta))

    def reference_data(self, n_samples, random_state):
        X = random_state.standard_normal((n_samples, 2))
        return X, random_state.poisson(np.exp(X @ [0.5, -0.3] + 1.0)).astype(float)


def _rates(y):
    """Whether Poisson targets are rates (not all integers)."""
    return not np.all(y == np.round(y))


def _numpyro_poisson_rate(numpyro, jax):
    """The library's Poisson density on the non-negative reals, ``y eta - exp(eta) -
    lgamma(y + 1)``, as a NumPyro distribution of log rate ``eta`` (its draws are counts)."""
    dist, jnp = numpyro.distributions, jax.numpy

    class PoissonRate(dist.Distribution):
        arg_constraints = {"log_rate": dist.constraints.real}
        support = dist.constraints.nonnegative

        def __init__(self, log_rate, *, validate_args=None):
            self.log_rate = log_rate
            super().__init__(jnp.shape(log_rate), validate_args=validate_args)

        def sample(self, key, sample_shape=()):
            return dist.Poisson(jnp.exp(self.log_rate)).sample(key, sample_shape)

        def log_prob(self, value):
            eta = self.log_rate
            return value * eta - jnp.exp(eta) - jax.scipy.special.gammaln(value + 1.0)

    return PoissonRate
