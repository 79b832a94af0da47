"""MALA steps in NumPy, for models without a numba family (``GeneralModel``).

The twin of :func:`~skcoreset.sampler._mala_kernels.mala_run` for a target given as a Python
function ``log_target(thetas) -> (lp (C,), grad (C, P))``, vectorised over the chains: the
same proposal, the same Metropolis-Hastings ratio without a triangular solve, the same dual
averaging (its compiled update is called as a Python function), the same use of the random
numbers, so a chain's draws follow the same law. A user's NumPy log-likelihood costs far more
per step than the few array operations here.
"""

import numpy as np

from . import _mala_kernels as K


def log_target(model, X, y, w, prior_prec):
    """``thetas (C, P) -> (log posterior (C,), its gradient (C, P))`` of a model of draws on
    weighted rows, under the prior N(0, diag(1 / prior_prec)): the target of
    :func:`mala_run_numpy`."""

    def target(thetas):
        ll, g = model.weighted_loglik_chains(thetas, X, y, w)
        return ll - 0.5 * (thetas * thetas) @ prior_prec, g - thetas * prior_prec

    return target


def mala_run_numpy(
    log_target, theta, logp, grad, L, step, adapt, da, normals, uniforms, draws, offset, store,
    n_accept,
):  # fmt: skip
    """Advance every chain ``normals.shape[1]`` steps; the arguments are those of
    :func:`~skcoreset.sampler._mala_kernels.mala_run` with ``log_target`` in place of the
    model and its data. Returns the step size of the last step."""
    L = np.tril(L)
    u = grad @ L  # L^T g, one row per chain
    eps = step
    for it in range(normals.shape[1]):
        if adapt:
            eps = float(np.exp(da[K.DA_LOG_EPS]))
        xi = normals[:, it]
        prop = theta + (0.5 * eps * eps * u + eps * xi) @ L.T
        with np.errstate(all="ignore"):
            lprop, gprop = log_target(prop)
            uprop = gprop @ L
            h = 0.5 * eps * (u + uprop)
            log_alpha = lprop - logp - np.sum(h * (xi + 0.5 * h), axis=1)
        finite = (
            np.isfinite(lprop)
            & np.isfinite(gprop).all(axis=1)
            & np.isfinite(prop).all(axis=1)
            & np.isfinite(log_alpha)
        )
        acc = np.where(finite, np.exp(np.minimum(np.where(finite, log_alpha, 0.0), 0.0)), 0.0)
        take = uniforms[:, it] < acc
        theta[take], grad[take], u[take], logp[take] = (
            prop[take],
            gprop[take],
            uprop[take],
            lprop[take],
        )
        n_accept += take
        if store:
            draws[:, offset + it] = theta
        if adapt:
            K._dual_average(da, float(np.sum(acc)) / acc.shape[0])
    return eps
