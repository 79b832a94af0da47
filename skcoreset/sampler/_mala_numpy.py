"""MALA steps in NumPy, for models without a numba family (``GeneralModel``).

The twin of :func:`~skcoreset.sampler._mala_kernels.mala_run` for a target given as a Python
function ``log_target(thetas) -> (lp (C,), grad (C, P))``, vectorised over the chains: the
same proposal, the same Metropolis-Hastings ratio without a triangular solve, the same dual
averaging and the same use of the random numbers: the compiled per-chain proposal and
acceptance of the kernels (``propose_chains``, ``accept_chains``) around the Python target, so
a chain's draws follow the same law, to rounding the same as the kernel's for the same target.
"""

import numpy as np

from . import _mala_kernels as kernels


def log_target(model, X, y, w, prior_prec):
    """``thetas (C, P) -> (log posterior (C,), its gradient (C, P))`` of a model of draws on
    weighted rows, under the prior N(0, diag(1 / prior_prec)): the target of
    :func:`mala_run_numpy`."""

    def target(thetas):
        ll, g = model.weighted_loglik_chains(thetas, X, y, w)
        return ll - 0.5 * (thetas * thetas) @ prior_prec, g - thetas * prior_prec

    return target


def mala_run_numpy(
    log_target, theta, logp, grad, L, LT, step, adapt, da, normals, uniforms, draws, offset, store,
    n_accept,
):  # fmt: skip
    """Advance every chain ``normals.shape[1]`` steps; the arguments are those of
    :func:`~skcoreset.sampler._mala_kernels.mala_run` with ``log_target`` in place of the
    model and its data. Returns the step size of the last step."""
    C, P = theta.shape
    u = np.empty((C, P))
    kernels.whiten_chains(L, grad, u)
    prop, up = np.empty((C, P)), np.empty((C, P))
    acc = np.empty(C)
    eps = step
    for it in range(normals.shape[1]):
        if adapt:
            eps = float(np.exp(da[kernels.DA_LOG_EPS]))
        xi = np.ascontiguousarray(normals[:, it])
        kernels.propose_chains(theta, u, xi, LT, eps, up, prop)
        with np.errstate(all="ignore"):
            lprop, gprop = log_target(prop)
        gprop = np.ascontiguousarray(gprop, dtype=np.float64)
        args = (prop, np.asarray(lprop, dtype=np.float64), gprop, up, xi, L, eps)
        kernels.accept_chains(theta, logp, grad, u, *args, uniforms[:, it].copy(), n_accept, acc)
        if store:
            draws[:, offset + it] = theta
        if adapt:
            kernels._dual_average(da, float(np.sum(acc)) / C)
    return eps
