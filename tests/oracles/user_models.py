"""A user's own model, written as a user would through the public mechanism: a probit
likelihood as a :class:`~skcoreset.models.SingleIndexFamily` and a small
:class:`~skcoreset.models.GLM` subclass (the tests check it, the benchmarks time it)."""

import math
from dataclasses import dataclass

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
