"""A user's own model, written as a user would through the public mechanism: a probit
likelihood as a :class:`~skcoreset.models.SingleIndexFamily` and a small
:class:`~skcoreset.models.GLM` subclass (the tests check it, the benchmarks time it)."""

import math
from dataclasses import dataclass

import numpy as np
import scipy.stats
from numba import njit

from skcoreset.models import GLM, BinaryLabels, SingleIndexFamily

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


@njit(cache=True, inline="always")
def probit_terms(eta, y, param):
    # l = log Phi(q), q = s eta, s = 2y - 1; dl/deta = s phi(q) / Phi(q)
    s = 2.0 * y - 1.0
    q = s * eta
    log_cdf = math.log(0.5 * math.erfc(-q / _SQRT2))
    ratio = math.exp(-0.5 * q * q - _LOG_SQRT_2PI - log_cdf)
    return log_cdf, s * ratio


@njit(cache=True, inline="always")
def probit_curvature(eta, y, param):
    s = 2.0 * y - 1.0
    q = s * eta
    ratio = math.exp(-0.5 * q * q - _LOG_SQRT_2PI - math.log(0.5 * math.erfc(-q / _SQRT2)))
    return ratio * (q + ratio)


@dataclass(frozen=True, eq=False)
class Probit(GLM):
    name = "probit"
    family = SingleIndexFamily("probit", probit_terms, probit_curvature)
    labels = BinaryLabels

    def encode_targets(self, y):
        return BinaryLabels.fit(y).encode(y)

    def mean(self, eta):  # what the Bayesian estimators predict
        return scipy.stats.norm.cdf(eta)

    def simulate(self, eta, random_state, extra=None):
        return (random_state.random_sample(np.shape(eta)) < self.mean(eta)).astype(np.intp)

    # -- what makes it a first-class model once registered (register("probit", Probit)):
    # its recipes in the languages and its reference for the model contract
    likelihood = "bernoulli_probit"

    def stan_likelihood(self, y):
        row = "std_normal_lcdf((2 * y[n] - 1) * eta[n])"
        return "array[N] int<lower=0, upper=1>", y.astype(np.int64), row

    def pymc_loglik(self, pm, pt, eta, y, extras):
        # log Phi(q) as the family writes it (PyMC's normal logcdf is off by 1e-7 relative)
        return pt.log(0.5 * pt.erfc(-(2.0 * y - 1.0) * eta / _SQRT2))

    def numpyro_likelihood(self, numpyro, jax, eta, y, extras):
        # logits log Phi(eta) - log Phi(-eta): the Bernoulli's log density is log Phi(+-eta)
        log_ndtr = jax.scipy.special.log_ndtr
        bernoulli = numpyro.distributions.Bernoulli(logits=log_ndtr(eta) - log_ndtr(-eta))
        return bernoulli, jax.numpy.asarray(y)

    def reference_logpdf(self, stats, y, eta, extra):
        return stats.norm.logcdf((2.0 * y - 1.0) * eta)

    def reference_data(self, n_samples, random_state):
        X = random_state.standard_normal((n_samples, 2))
        p = scipy.stats.norm.cdf(X @ [0.8, -0.5] + 0.2)
        return X, (random_state.random_sample(n_samples) < p).astype(int)
