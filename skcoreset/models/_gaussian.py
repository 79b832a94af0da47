"""Gaussian-linear regression: ``N(y | eta, sigma^2)``, the noise scale sigma the extra
parameter (estimated for the Laplace fit, sampled on the log scale by MALA)."""

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ._family import SingleIndexFamily
from ._glm import GLM
from ._targets import MAX_SQUARED_TARGET, check_target_scale, numeric_targets

#: Why y must stay below MAX_SQUARED_TARGET, and what to do.
_SCALE = (
    "it squares the residuals (and the 'auto' prior the targets' spread), which overflow "
    "float64 past about 1e154",
    "Rescale y (divide it by a power of ten, or standardise it): the coefficients and the "
    "scale follow it.",
)

_LOG_2PI = math.log(2.0 * math.pi)


@njit(cache=True, inline="always")
def _prepare(sigma):
    return np.divide(1.0, sigma * sigma)


@njit(cache=True, inline="always")
def _terms(eta, y, inv_var):
    r = y - eta
    return -0.5 * (r * r) * inv_var, r * inv_var


@njit(cache=True, inline="always")
def _curvature(eta, y, inv_var):
    return inv_var


@njit(cache=True, inline="always")
def _extra_offset(sigma):
    return -math.log(sigma) - 0.5 * _LOG_2PI


@njit(cache=True, inline="always")
def _dlog_extra(eta, y, inv_var):
    r = y - eta
    return r * r * inv_var - 1.0


# built-in: tested apart (tests/test_model_contract.py), not checked at every fit
FAMILY = SingleIndexFamily(
    "gaussian",
    _terms,
    _curvature,
    extra_offset=_extra_offset,
    prepare=_prepare,
    dlog_extra=_dlog_extra,
    check_gradient=False,
)


@dataclass(frozen=True, eq=False)
class GaussianModel(GLM):
    """Gaussian-linear likelihood ``N(y | x @ theta, sigma^2)``.

    Parameters
    ----------
    prior_scale : float or ndarray of shape (P,), default=1.0
        Standard deviation of the Gaussian prior on the parameters (intercept last).
    fit_intercept : bool, default=True
        Whether the design matrix gets a trailing column of ones.
    extra : float or None, default=None
        The noise standard deviation sigma, the model's extra parameter, named
        ``noise_scale`` in the estimators' attributes and the exports (None: a parameter of
        the posterior, fitted with the coefficients and sampled).
    extra_prior : (float, float) or None, default=None
        The normal prior ``(mean, sd)`` of ``log sigma`` (None: :meth:`extra_prior_at`
        without the data's scale; set from the data by :meth:`with_data_scale`).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import GaussianModel
    >>> model = GaussianModel()
    >>> model.mean(np.array([0.0, 1.0])).round(4)
    array([0., 1.])
    """

    name = "gaussian"
    likelihood = "normal"
    family = FAMILY
    has_extra = True
    extra_name = "noise_scale"

    def encode_targets(self, y):
        return check_target_scale(numeric_targets(y), MAX_SQUARED_TARGET, "Gaussian", *_SCALE)

    def extra_prior_at(self, y_mean, y_sd):
        # centred on log sd(y) when the prior follows the data, so that targets in the
        # thousands need no rescaling; N(0, 3^2) otherwise
        centre = np.log(y_sd) if y_sd is not None and y_sd > 0 else 0.0
        return float(centre), 3.0

    def extra_derivatives(self, eta, y):
        # exact, where the base class takes central differences: l = -r^2 / (2 s^2) - log s,
        # so dl/dlog s = r^2 / s^2 - 1, and its curvatures 2 r / s^2 and 2 r^2 / s^2
        # (exact sums keep a weighted fit and one of repeated rows the same to rounding)
        r = np.asarray(y, dtype=np.float64) - np.asarray(eta, dtype=np.float64)
        q = r / (self.extra_value * self.extra_value)
        rq = r * q
        return rq - 1.0, 2.0 * q, 2.0 * rq

    def prior_level(self, y_mean, y_sd):
        # the response's own scale (its level if it is constant), the intercept at its mean
        return (y_sd or max(abs(y_mean), 1.0)), y_mean

    def estimate_extra_blocks(self, blocks):
        """Estimate the noise as the weighted least-squares residual standard deviation.

        The residual sum of squares is divided by the degrees of freedom (weighted rows minus
        parameters). With no more (weighted) rows than parameters the residuals are zero and
        say nothing about the noise: the spread of y itself is used instead (1 if y is
        constant), so the posterior stays proper instead of collapsing onto an interpolating
        fit.

        Parameters
        ----------
        blocks : callable
            ``blocks()`` yields ``(Xd, y, w)`` triples; it is called twice (the fit, then the
            residuals).

        Returns
        -------
        extra : float
            The estimated noise standard deviation.
        """
        A = b = None
        w_sum = wy_sum = 0.0
        y_max = 0.0
        for Xd, y, w in blocks():
            Ab, bb = Xd.T @ (w[:, None] * Xd), Xd.T @ (w * y)
            A, b = (Ab, bb) if A is None else (A + Ab, b + bb)
            w_sum += w.sum()
            wy_sum += (w * y).sum()
            y_max = max(y_max, np.abs(y).max(initial=0.0))
        n_params = A.shape[0]
        dof = w_sum - n_params
        beta = None
        if dof > 0:
            A = A.copy()
            A[np.diag_indices_from(A)] += 1e-10 * max(np.trace(A), 1.0)
            beta = np.linalg.solve(A, b)
        y_mean = wy_sum / w_sum if w_sum > 0 else 0.0  # weights of 1e-300 may sum to 0
        rss = spread = 0.0
        for Xd, y, w in blocks():
            if beta is not None:
                rss += np.sum(w * (y - Xd @ beta) ** 2)
            spread += (w * (y - y_mean) ** 2).sum()
        sigma = np.sqrt(rss / dof) if beta is not None else 0.0
        if not np.isfinite(sigma) or sigma <= 1e-8 * max(y_max, 1e-300):
            spread = np.sqrt(spread / w_sum) if w_sum > 0 else 0.0
            sigma = spread if spread > 0 else 1.0
        return float(sigma)

    def mean(self, eta):
        return eta

    def variance(self, mean, extra=None):
        sigma = self.extra_value if extra is None else extra
        return np.broadcast_to(np.square(sigma), np.broadcast(mean, sigma).shape)

    def log_density(self, y, eta, extra=None):
        sigma = self.extra_value if extra is None else extra
        r = (y - eta) / sigma
        return -0.5 * r * r - np.log(sigma) - 0.5 * _LOG_2PI

    def simulate(self, eta, random_state, extra=None):
        sigma = self.extra_value if extra is None else extra
        return eta + sigma * random_state.standard_normal(np.shape(eta))

    # -- the exports' recipes and the test suite's reference (ModelRecipes) --------------
    def stan_likelihood(self, y):
        return "vector[N]", y, "normal_lpdf(y[n] | eta[n], {0})"

    def pymc_loglik(self, pm, pt, eta, y, extras):
        (sigma,) = extras
        return pm.logp(pm.Normal.dist(mu=eta, sigma=sigma), y)

    def numpyro_likelihood(self, numpyro, jax, eta, y, extras):
        (sigma,) = extras
        return numpyro.distributions.Normal(eta, sigma), jax.numpy.asarray(y)

    def bambi_family(self, y):
        return "gaussian", "identity", (("sigma", False),)

    def reference_logpdf(self, stats, y, eta, extra):
        return stats.norm.logpdf(y, eta, extra)

    def reference_data(self, n_samples, random_state):
        X = random_state.standard_normal((n_samples, 2))
        # off the unit scale: the priors that follow y's scale are exercised
        return X, 10.0 + 3.0 * (X @ [1.0, -0.5] + 0.7 * random_state.standard_normal(n_samples))
