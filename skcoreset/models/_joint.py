"""The posterior of a model whose extra parameter is free, as a function of one vector.

A single-index model with a free extra parameter (the negative binomial dispersion, the gamma
shape, the Gaussian noise scale: ``extra=None``) has the posterior parameters
``theta = (coefficients, s)``, ``s`` the log of the extra parameter, with the normal prior
``model.extra_prior`` on ``s``. :class:`JointExtra` presents that posterior with the
interface the Laplace fit evaluates (weighted log-likelihood, gradient, Hessian, prior), so
that one Newton iteration finds the joint mode and the joint curvature, for data in memory,
in blocks or in dask chunks alike. The extra parameter is then a parameter of the fit like the
coefficients - its mode, its spread and its correlation with them - where a moment estimate
held fixed had put the projections' draws, and with them every coreset, up to 15 posterior
standard deviations away from the data's dispersion (heavy-tailed counts).
"""

from dataclasses import replace

import numpy as np

from .._parallel_kernels import row_weights
from . import _glm_kernels as kernels


class JointExtra:
    """A model with a free extra parameter, evaluated at ``theta = (coefficients, log extra)``.

    Everything but the evaluation of the posterior (``design``, ``encode_targets``,
    ``name``, ...) is the model's own.

    Parameters
    ----------
    model : GLM
        A single-index model with an extra parameter (``has_extra``), whose ``extra_prior``
        is the prior of its log; its ``extra`` is not read.
    """

    #: The joint log-likelihood need not be concave (the dispersion's is not): the Laplace fit
    #: falls back to quasi-Newton steps where the Hessian is not positive definite.
    log_concave = False

    def __init__(self, model):
        self.base = replace(model, extra=None)

    def __getattr__(self, name):
        if name == "base":  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.base, name)

    def at(self, theta):
        """``(model, coefficients)``: the model with the extra parameter of ``theta`` fixed
        (None where it is not a positive finite number)."""
        theta = np.asarray(theta, dtype=np.float64)
        with np.errstate(over="ignore"):
            extra = float(np.exp(theta[-1]))
        if not (np.isfinite(extra) and extra > 0):
            return None, theta[:-1]
        return replace(self.base, extra=extra), np.ascontiguousarray(theta[:-1])

    def n_params(self, n_columns):
        return self.base.n_params(n_columns) + 1

    def weighted_loglik(self, theta, Xd, y, w):
        model, beta = self.at(theta)
        if model is None:  # an overflowed step: rejected by Newton's line search
            return -np.inf, np.full(theta.shape[0], np.nan)
        ll, grad = model.weighted_loglik(beta, Xd, y, w)
        score = kernels.weighted_dlog_extra(
            model.family, Xd @ beta, y, row_weights(w), model.extra_value
        )
        return ll, np.append(grad, score)

    def weighted_loglik_hessian(self, theta, Xd, y, w):
        model, beta = self.at(theta)
        P = beta.shape[0]
        H = np.empty((P + 1, P + 1))
        H[:P, :P] = model.weighted_loglik_hessian(beta, Xd, y, w)
        _, cross, curv = model.extra_derivatives(Xd @ beta, y)
        H[:P, P] = H[P, :P] = Xd.T @ (w * cross)
        H[P, P] = w @ curv
        return H

    def weighted_loglik_grad_hessian(self, theta, Xd, y, w):
        model, beta = self.at(theta)
        if model is None:
            P = theta.shape[0]
            return -np.inf, np.full(P, np.nan), np.full((P, P), np.nan)
        ll, grad, H_beta = model.weighted_loglik_grad_hessian(beta, Xd, y, w)
        P = beta.shape[0]
        score, cross, curv = model.extra_derivatives(Xd @ beta, y)
        H = np.empty((P + 1, P + 1))
        H[:P, :P] = H_beta
        H[:P, P] = H[P, :P] = Xd.T @ (w * cross)
        H[P, P] = w @ curv
        return ll, np.append(grad, w @ score), H

    def add_log_prior(self, theta, ll, grad):
        theta = np.asarray(theta, dtype=np.float64)
        lp, g = self.base.add_log_prior(theta[:-1], ll, grad[:-1])
        mean, sd = self.base.extra_prior
        z = (theta[-1] - mean) / sd
        return lp - 0.5 * z * z, np.append(g, grad[-1] - z / sd)

    def add_prior_hessian(self, H):
        P = H.shape[0] - 1
        H[np.diag_indices(P)] += self.base.prior_precision(P)
        H[P, P] += 1.0 / self.base.extra_prior[1] ** 2
        return H

    def prior_precision(self, n_params):
        """The prior precision of each parameter, the log extra parameter's last."""
        return np.append(
            self.base.prior_precision(n_params - 1), 1.0 / self.base.extra_prior[1] ** 2
        )

    def check_fit(self, blocks, theta):
        model, beta = self.at(theta)
        model.check_fit(blocks, beta)
