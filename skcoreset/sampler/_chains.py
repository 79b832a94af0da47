"""MALA chains that persist between calls, on a target whose weights change between calls.

The KL coreset methods move the weights of the coreset posterior after every few MALA steps;
:func:`~skcoreset.sampler._mala.sample_mala` would warm up, adapt and copy its inputs again on
every call. :class:`MALAChains` keeps the chains' state (positions, step size, preconditioner)
and advances them a few steps at a time through the same compiled kernels, so a call costs its
steps only: no warm-up, no recompilation, no Laplace fit.
"""

from dataclasses import replace

import numpy as np
from sklearn.utils import check_random_state

from . import _mala_kernels as kernels
from ._mala import TARGET_ACCEPT, default_step_size
from ._mala_numpy import log_target, mala_run_numpy

# log step-size change per unit of acceptance gap in :meth:`MALAChains.tune`.
_TUNE_RATE = 0.5


class MALAChains:
    """Preconditioned MALA chains on ``log pi_0(theta) + sum_m w_m l_m(theta)``.

    Parameters
    ----------
    model : GLM
        The likelihood: its family's compiled kernels, or for a model without one
        (``GeneralModel``) its NumPy functions through the kernels' NumPy twin.
    init : ndarray of shape (n_chains, P)
        Starting points (copied).
    prior_scale : float or ndarray of shape (P,)
        Prior standard deviations of the coefficients.
    extra : float
        The model's extra parameter, e.g. the Gaussian noise scale (ignored by the models
        without one).
    precond_chol : ndarray of shape (P, P)
        Lower Cholesky factor of the preconditioner.
    random_state : RandomState
        Source of the proposals' normals and the acceptance uniforms.
    extra_prior : (float, float) or None, default=None
        With it the last parameter is the log of the extra parameter, sampled too under
        this normal prior (mean, sd); ``extra`` is then unused. None: ``extra`` fixed.
    """

    def __init__(
        self, model, init, prior_scale, extra, precond_chol, random_state, extra_prior=None
    ):
        self.model = model
        self.family = model.family
        self.theta = np.array(init, dtype=np.float64, order="C", ndmin=2)
        C, P = self.theta.shape
        self.sample_extra = extra_prior is not None
        # as the kernels take it: None, or the (mean, precision) of the log's normal prior
        self._extra_prior = None
        if extra_prior is not None:
            s_mu, s_sd = extra_prior
            self._extra_prior = (float(s_mu), 1.0 / float(s_sd) ** 2)
        n_coef = P - self.sample_extra
        scale = np.asarray(prior_scale, dtype=np.float64)
        self.prior_prec = np.ascontiguousarray(
            replace(model, prior_scale=scale).prior_precision(n_coef)
        )
        self.extra = float(extra)
        self._set_factor(precond_chol)
        self.eps = default_step_size(P)
        self.rng = check_random_state(random_state)
        self.logp = np.empty(C)
        self.grad = np.empty((C, P))
        self._da = np.zeros(kernels.DA_SIZE)
        self._rows = None
        self._data = None

    def _set_factor(self, precond_chol):
        # exactly triangular, and its transpose: the kernels' products read the zeros
        self.L = np.ascontiguousarray(np.tril(precond_chol), dtype=np.float64)
        self.LT = np.ascontiguousarray(self.L.T)

    @property
    def n_chains(self):
        return self.theta.shape[0]

    def set_target(self, X, y, w):
        """The coreset rows (design matrix), their targets and weights; re-evaluates the
        chains' log densities and gradients at the new target."""
        self._rows = (
            np.ascontiguousarray(X, dtype=np.float64),
            np.ascontiguousarray(y, dtype=np.float64),
            np.ascontiguousarray(w, dtype=np.float64),
        )
        if self.family is None:
            self._target = log_target(self.model, *self._rows, self.prior_prec)
            self.logp[:], self.grad[:] = self._target(self.theta)
            bad = np.count_nonzero(~(np.isfinite(self.logp) & np.isfinite(self.grad).all(axis=1)))
        else:
            self._data = kernels.target_data(
                self.family, *self._rows, self.extra, self._extra_prior
            )
            self._work = kernels.chain_work(self.n_chains)
            bad = kernels.mala_init(
                self.family, self.theta, self._data, *self._fixed(), self.logp, self.grad
            )
        if bad:
            raise FloatingPointError(
                f"The coreset log posterior is not finite at {bad} of the {self.n_chains} chains."
            )

    def _fixed(self):
        return self.prior_prec, self.extra, self._extra_prior

    def advance(self, n_steps, store=False):
        """Advance every chain ``n_steps`` steps at the current step size.

        Returns the states after each step, shape (n_chains, n_steps, P), when ``store``,
        and the acceptance rate of the steps per chain.
        """
        C, P = self.theta.shape
        normals = self.rng.standard_normal((C, n_steps, P))
        uniforms = self.rng.random_sample((C, n_steps))
        draws = np.empty((C, n_steps if store else 0, P))
        accept = np.zeros(C, dtype=np.int64)
        if self.family is None:
            mala_run_numpy(
                self._target, self.theta, self.logp, self.grad, self.L, self.LT, self.eps, False,
                self._da, normals, uniforms, draws, 0, store, accept,
            )  # fmt: skip
            return draws, accept / max(n_steps, 1)
        kernels.mala_run.serial(
            self.family, self.theta, self.logp, self.grad, *self._data, *self._fixed(), self.L,
            self.LT, self.eps, False, self._da, normals, uniforms, draws, 0, store, accept,
            self._work,
        )  # fmt: skip
        return draws, accept / max(n_steps, 1)

    def tune(self, acceptance, rate=_TUNE_RATE):
        """Move the step size toward the optimal acceptance 0.574 (training phases only: a
        step size that follows the chain's history does not leave the target invariant)."""
        gap = float(acceptance.sum()) / acceptance.shape[0] - TARGET_ACCEPT
        self.eps *= float(np.exp(rate * gap))

    def reset(self, init, precond_chol):
        """New starting points (n_chains, P) and preconditioner factor; call
        :meth:`set_target` next."""
        self.theta = np.array(init, dtype=np.float64, order="C", ndmin=2)
        self._set_factor(precond_chol)
