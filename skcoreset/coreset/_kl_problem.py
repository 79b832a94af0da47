"""The KL methods' *problem* for a GLM: the pooled candidate rows, the full data's
log-likelihood sum at any draws (exact, or estimated on the pool under a control variate), and
MALA draws from the coreset posterior pi_w.

The algorithms of :mod:`._kl` see only this interface (``loglik``, ``full``, ``draws``,
``transition``, ``laplace_draws``, ``n_params``); the estimators of :mod:`._kl_coreset` build
it from the pass over the data. Draws come from
:class:`~skcoreset.sampler._chains.MALAChains`, persistent preconditioned MALA chains started
at a Laplace fit of the data.
"""

import warnings

import numpy as np
import scipy.linalg

from ..metrics._fidelity import coreset_fit, laplace_kl
from ..models import SeparationWarning, laplace_from_blocks
from ._kl_problem_kernels import batch_sums, capped_correction
from ._taylor import joint_sums

# MALA steps after each change of the weights before draws are kept (the chains start from
# the previous target's draws, which are close).
BURN_IN = 20


# Entries (rows x draws) from which the log-likelihoods come from the threaded fused kernel
# of the projections: below, its start-up costs more than NumPy's log density; above,
# NumPy's logaddexp is the slower (measured: benchmarks/README.md, Thresholds).
_FUSED_MIN = 200_000


class Taylor:
    """Control variate of the full-data log-likelihood sum when it is estimated from rows.

    Every row's second-order Taylor expansion around ``theta0`` (where the pass measured the
    rows' derivatives) is summed exactly over all the data: ``G = sum_n w_n l_n' x_n`` and
    ``H = sum_n w_n c_n x_n x_n^T`` (``c = -l''``), accumulated block by block in the pass.
    Only the remainder ``l_n - q_n`` is then estimated from the pooled rows (Bardenet,
    Doucet & Holmes 2017). The plain estimate ``(W / B) sum_b l_b`` has the pool's own
    posterior as its target, some sqrt(N / B - 1) posterior sd from the full one: it moved a
    50-point OMP coreset of BikeTrips from KL 0.02 to 400 (pool of 10 000 of 17 379 rows). The
    remainder is third order in ``x . (theta - theta0)``, and tiny across the posterior.
    Constants are left out: they cancel in the KL gradient's covariance.

    Far from the posterior the quadratic is no model of the log-likelihood, and the
    estimate's tails are ``-(H - H_pool) / 2`` in ``theta - theta0``: where the pool's
    curvature exceeds the data's, an improper target, toward which SparseVI's weights ran
    away (to 1e16 on 20 000 logistic rows with a pool of 5000). Each part of the correction
    is unbiased whatever its factor at each ``theta``, so the quadratic part is capped: full
    within the bulk of the data's fit ``N(mean, chol chol^T)`` (``around``; by default the
    expansion point's own), ``d^2 <= t = P + 4 sqrt(2 P)`` (mean plus 4 sd of the chi-square
    of a draw of it), times ``t / d^2`` beyond, where it stays bounded. The expansion point
    itself may lie outside that bulk (a pilot's fit, some sqrt(N / n) sd from the data's
    mode): the cap is measured from the posterior, where the draws are. The linear part,
    which moves the pool's posterior back onto the data's, is kept everywhere: fading all of
    it far out gave the chains of Coreset MCMC a second, wrong target there (the pool's
    posterior, some sqrt(N / B) sd away), and they settled in it.
    """

    def __init__(self, laplace, G, H, Xd, y, weights, around=None):
        theta0 = laplace.mean
        around = laplace if around is None else around
        self.centre, chol = around.mean, around.chol
        self.theta0, self.G, self.H, self.Xd = theta0, G, np.ascontiguousarray(H), Xd
        self.model, self.y = laplace.model, y
        self.n_extra = laplace.n_extra
        # whitens theta - theta0 for the cap (transposed): one product, not a triangular solve
        P = theta0.shape[0]
        self._whiten_t = np.ascontiguousarray(
            scipy.linalg.solve_triangular(chol, np.eye(P), lower=True).T
        )
        model = self.model
        if model.family is None:  # a model of draws: each row's gradient at theta0
            self.rows_grad = model.loglik_grad_per_datum(theta0, Xd, y)
        else:
            self.eta0 = Xd @ laplace.coef_mean
            self.d, self.c = model.loglik_derivatives(self.eta0, y)
            if self.n_extra:  # each row's terms in the log extra parameter (a free one)
                self.g, self.b, self.a = model.extra_derivatives(self.eta0, y)
        # the data's sums less those of all the pooled rows at their weights: the correction
        # of the pool's own estimate, the same for every call
        G_pool, H_pool = self._pool_sums(weights)
        self.G_rest, self.H_rest = G - G_pool, np.ascontiguousarray(H - H_pool)
        self._bulk = P + 4.0 * np.sqrt(2.0 * P)

    def _pool_sums(self, weights):
        """``sum_b weights_b l_b' x_b`` and ``sum_b weights_b c_b x_b x_b^T`` over the pool
        (with a free extra parameter, in the coefficients and its log together)."""
        Xd = self.Xd
        if self.model.family is None:
            H = self.model.weighted_loglik_hessian(self.theta0, Xd, self.y, weights)
            return weights @ self.rows_grad, H
        G, H = Xd.T @ (weights * self.d), Xd.T @ (Xd * (weights * self.c)[:, None])
        if not self.n_extra:
            return G, H
        return joint_sums(G, H, Xd, weights, self.g, self.b, self.a)

    def rest(self, theta):
        """``(value, gradient, negative Hessian)`` at ``theta`` of the quadratic the control
        variate adds to the pool's estimate at its weights: ``(G - G_pool) . delta -
        delta^T (H - H_pool) delta / 2``, ``delta = theta - theta0``, without the cap (a fit
        near theta0 never reaches it)."""
        delta = theta - self.theta0
        Hd = self.H_rest @ delta
        return self.G_rest @ delta - 0.5 * (delta @ Hd), self.G_rest - Hd, self.H_rest

    def batch_terms(self, rows, v, thetas):
        """A batch's linear and quadratic Taylor sums for a model of draws: ``sum_b v_b g_b .
        delta`` and ``delta^T (sum_b v_b C_b) delta`` (``C_b`` minus row b's Hessian at
        theta0), as the kernel's ``batch_sums`` gives them for a single-index model."""
        delta = thetas - self.theta0
        Hb = self.model.weighted_loglik_hessian(self.theta0, self.Xd[rows], self.y[rows], v)
        return np.stack(
            [delta @ (v @ self.rows_grad[rows]), np.einsum("sp,pq,sq->s", delta, Hb, delta)]
        )

    def extra_batch_terms(self, rows, v, thetas):
        """A batch's Taylor terms in the log extra parameter, to add to the coefficients'
        (``batch_sums``'s): with ``t`` the log extra parameter's and ``e_b`` the predictor's
        distance from the expansion point, ``sum_b v_b g_b t`` to the linear term and
        ``sum_b v_b (2 b_b e_b t + a_b t^2)`` to the quadratic one; ``e_b`` enters through
        the batch's sum ``sum_b v_b b_b x_b``, so the cost is one product of the batch's
        rows."""
        delta = thetas - self.theta0
        t = delta[:, -1]
        u = (v * self.b[rows]) @ self.Xd[rows]
        return np.stack(
            [(v @ self.g[rows]) * t, 2.0 * t * (delta[:, :-1] @ u) + (v @ self.a[rows]) * t * t]
        )

    def projection_correction(self, projection):
        """What the control variate adds to the pooled rows' estimate of the data's projected
        sum (:class:`~skcoreset.projection.Projection`): for the log-likelihood features,
        :meth:`correction` at each draw, centred and scaled as the features are; for the
        Fisher features, the gradient of the rest's quadratic at each draw in its random
        coordinate, scaled as they are."""
        thetas = projection.joint_draws()
        J = thetas.shape[0]
        if projection.kind == "fisher":
            grads = self.G_rest - (thetas - self.theta0) @ self.H_rest  # H_rest symmetric
            if self.model.family is None:
                scale = projection._general_scale()
            else:
                scale = projection._fisher_scale(self.Xd.shape[1])
            return scale * grads[np.arange(J), projection.coords]
        fix = self.correction(thetas)
        return (fix - fix.mean()) / np.sqrt(J)

    def correction(self, thetas, batch=None):
        """What turns the rows' estimate ``sum_b weights_b l_b(theta)`` into the controlled
        one, ``sum_n w_n q_n(theta) - sum_b weights_b q_b(theta)``, for each row of
        ``thetas``: over every pooled row at its weight, or over a batch of them (Coreset
        MCMC's, new at every step) given by its Taylor terms ``batch = (sum_b v_b d_b e_b,
        sum_b v_b c_b e_b^2)`` (:func:`~._kl_problem_kernels.batch_sums`).

        Both sums are quadratics in ``theta - theta0``. The data's needs only its gradient and
        curvature sums, O(P^2) per draw; so does the whole pool's, summed once. A batch's
        goes through its linear predictors, O(P) per row and draw: its curvature sum cost
        O(P^2) per row, a large part of a small coreset's construction (measured:
        benchmarks/README.md, Thresholds).
        """
        thetas = np.ascontiguousarray(thetas, dtype=np.float64)
        if batch is None:
            G, H, batch = self.G_rest, self.H_rest, np.zeros((2, thetas.shape[0]))
        else:
            G, H = self.G, self.H
        return capped_correction(
            thetas, self.theta0, self.centre, G, H, self._whiten_t, self._bulk, batch[0],
            batch[1],
        )  # fmt: skip


class GLMProblem:
    """The *problem* of :mod:`._kl` for a GLM: candidate rows, full sums, MALA draws.

    ``Xd``, ``y``: the pooled rows (design matrix) and targets; ``full_weights``: their
    weights in the full data's sum (0 for the rows that are candidates only);
    ``full_batch``: rows drawn from the weighted ones for each estimate of that sum (None:
    all the pool), which needs the control variate ``taylor``; ``start``: the data's Laplace
    fit. When the model's extra parameter is free (``model.n_extra``: the chains sample
    it), each draw's last entry is its log: the log-likelihoods, the full sums, their
    control variate and the restarts follow it, so the weights aim at its posterior too.
    ``model`` is the posterior's, its extra parameter free.
    """

    def __init__(
        self,
        model,
        Xd,
        y,
        full_weights,
        chains,
        random_state,
        *,
        full_batch=None,
        start=None,
        taylor=None,
    ):
        self.model = model
        self.Xd = np.ascontiguousarray(Xd, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.start = start
        self.full_weights = np.ascontiguousarray(full_weights, dtype=np.float64)
        self._weighted = np.flatnonzero(self.full_weights)  # the rows batches are drawn from
        self.chains = chains
        self.rng = random_state
        self.full_batch = full_batch
        self.taylor = taylor
        self._mode = None
        self._support = None
        self._pool_out = None
        # whether the draws' last entry is log(extra)
        self._extra = bool(model.n_extra)

    def _split(self, thetas):
        """``(coefficients, each draw's extra parameter or None)`` of draws."""
        thetas = np.ascontiguousarray(thetas, dtype=np.float64)
        if not self._extra:
            return thetas, None
        return np.ascontiguousarray(thetas[:, :-1]), np.exp(thetas[:, -1])

    def _rows(self, idx):
        """The design rows and targets of the support ``idx``, gathered once while it stays
        the same (every training step of Coreset MCMC)."""
        kept = self._support
        if kept is None or kept[0].shape != idx.shape or not (kept[0] == idx).all():
            kept = self._support = (idx.copy(), self.Xd[idx], self.y[idx])
        return kept[1], kept[2]

    def loglik(self, thetas, idx, out=None):
        """The (S, len(idx)) log-likelihoods (``idx`` None: every pooled row), written in
        ``out`` (len(idx), S) when given and the fused kernel computes them."""
        Xd, y = (self.Xd, self.y) if idx is None else self._rows(idx)
        coef, extras = self._split(thetas)
        if self.model.family is None or Xd.shape[0] * thetas.shape[0] >= _FUSED_MIN:
            return self.model.loglik_matrix(Xd, y, coef, out=out, extras=extras).T
        # few draws: one BLAS product and the vectorised log density
        extra = None if extras is None else extras[:, None]
        return self.model.log_density(y[None, :], coef @ Xd.T, extra)

    def full(self, thetas, g_all=None, step=False):
        """The full data's log-likelihood sum at each row of ``thetas``, up to a constant the
        same for all of them (which the KL gradient's covariance cancels): exact, or
        estimated on the pool (``g_all``: the pool's log-likelihoods at ``thetas``, when
        the caller has them), or, for a weight ``step``, on a batch of it drawn afresh
        (``full_batch``)."""
        n = self._weighted.shape[0]
        coef, extras = self._split(thetas)
        if step and self.full_batch is not None and self.full_batch < n:
            # with replacement: unbiased all the same, and no permutation of the pool per step
            rows = self._weighted[self.rng.randint(n, size=self.full_batch)]
            taylor = self.taylor
            scale = n / self.full_batch
            if self.model.family is None:
                v = scale * self.full_weights[rows]
                ll = self.model.loglik_draws(coef, self.Xd[rows], self.y[rows]) @ v
                return ll + taylor.correction(coef, taylor.batch_terms(rows, v, coef))
            sums = batch_sums(
                self.model.family, self.Xd, self.y, rows, self.full_weights, scale,
                coef, self.model.extra_value, extras, taylor.eta0,
                taylor.d, taylor.c, np.empty((3, thetas.shape[0])),
            )  # fmt: skip
            # the batch's linear predictors serve its control variate too
            batch = sums[1:]
            if self._extra:
                v = scale * self.full_weights[rows]
                batch = batch + taylor.extra_batch_terms(rows, v, np.asarray(thetas))
            return sums[0] + taylor.correction(thetas, batch)
        if g_all is None:
            # one (N, S) array for every step's pool, not 60 MB (16 000 rows, 500 draws)
            # mapped afresh, page by page, each time (measured: benchmarks/README.md,
            # Thresholds)
            shape = (self.Xd.shape[0], thetas.shape[0])
            if self._pool_out is None or self._pool_out.shape != shape:
                self._pool_out = np.empty(shape)
            g_all = self.loglik(thetas, None, out=self._pool_out)
        r = g_all @ self.full_weights
        if self.taylor is not None:
            r += self.taylor.correction(thetas)
        return r

    def _retarget(self, idx, w):
        self.chains.set_target(*self._rows(idx), w)

    @property
    def n_params(self):
        return self.model.n_params(self.Xd.shape[1]) + self._extra

    def laplace_draws(self, n):
        z = self.rng.standard_normal((n, self.n_params))
        return self.start.mean + z @ self.start.chol.T

    def coreset_fit(self, idx, w):
        """The Laplace fit of the coreset posterior of the pooled rows ``idx`` at weights
        ``w`` (all of its parameters, the data's prior): what the keep-the-better rule and
        ``laplace_kl_`` judge a coreset by."""
        return coreset_fit(self.model, self.Xd[idx], self.y[idx], w, self.start.mean)

    def laplace_kl(self, idx, w):
        """KL of the Laplace fit of the coreset ``(idx, w)`` of the pool to the data's (inf
        when it has no proper Laplace fit, or its weights overflowed)."""
        if not np.all(np.isfinite(w)):  # weights that overflowed: the worst
            return np.inf
        keep = w > 0
        try:
            core = self.coreset_fit(idx[keep], w[keep])
        except (ValueError, np.linalg.LinAlgError):  # no proper Laplace fit: the worst
            return np.inf
        return laplace_kl(core, self.start)

    def draws(self, idx, w, n):
        if not np.any(w > 0):
            # SparseVI's start, pi_0: draws of the full posterior's Laplace fit instead. Under
            # the prior's draws the log-likelihoods of counts reach exp(|x . theta|) for wide
            # priors, and the first greedy choice and step then follow outliers (BikeTrips:
            # forward KL 10^6 at 200 points).
            return self.laplace_draws(n)
        self.restart(idx, w)
        _, acc = self.chains.advance(BURN_IN)
        self.chains.tune(acc)
        n_steps = -(-n // self.chains.n_chains)
        draws, acc = self.chains.advance(n_steps, store=True)
        self.chains.tune(acc)
        return draws.reshape(-1, draws.shape[-1])[:n]

    def restart(self, idx, w):
        """Chains restarted from the Laplace fit of the coreset posterior pi_w, and
        preconditioned with it: Newton on the M coreset rows costs little next to the MALA
        steps, and it follows pi_w as the weights move, however far (from the prior's width
        to the full posterior's) they take it."""
        Xd, y = self._rows(idx)
        fit = None
        # Newton from the last mode first (close when the weights moved little), else from the
        # data's Laplace mean, else from the model's own start. From a mode of other weights,
        # Poisson's exp(x . theta) can overflow Newton's first step into a singular Hessian:
        # on BikeTrips 153 of SparseVI's 168 restarts failed so, and the chains, left where
        # they were, drew 10^7 Mahalanobis units from pi_w.
        data_mean = None if self.start is None else self.start.mean
        for start in (self._mode, data_mean, None):
            try:
                with warnings.catch_warnings():
                    # a few weighted rows are often separable: this fit only places and
                    # shapes the chains, and the prior keeps it finite
                    warnings.simplefilter("ignore", SeparationWarning)
                    fit = laplace_from_blocks(
                        self.model, lambda: [(Xd, y, w)], theta0=start, tol=1e-8, max_iter=50
                    )
                break
            except ValueError:  # a numerically singular Hessian
                continue
        if fit is not None:
            self._mode = fit.mean
            z = self.rng.standard_normal((self.chains.n_chains, fit.mean.shape[0]))
            self.chains.reset(fit.mean + z @ fit.chol.T, fit.chol)
        self.chains.set_target(Xd, y, w)

    def transition(self, idx, w):
        self._retarget(idx, w)
        _, acc = self.chains.advance(1)
        self.chains.tune(acc, rate=0.05)
        return self.chains.theta.copy()
