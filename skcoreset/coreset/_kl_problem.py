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

from .._parallel_kernels import in_ranges, sum_in_order
from ..metrics._fidelity import coreset_fit, laplace_kl
from ..models import SeparationWarning, laplace_from_blocks
from ..models._laplace import _Posterior
from ._kl_problem_kernels import batch_sums, capped_correction

# MALA steps after each change of the weights before draws are kept (the chains start from
# the previous target's draws, which are close).
BURN_IN = 20


# Entries (rows x draws) from which the log-likelihoods come from the threaded fused kernel
# of the projections: below, its start-up (~6 ms per call measured with 4 draws on 1000 rows,
# another job on the machine) costs more than NumPy's log density; above, NumPy's logaddexp
# (~15 ns per entry) is the slower.
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

    Far from ``theta0`` the quadratic is no model of the log-likelihood, and the estimate's
    tails are ``-(H - H_pool) / 2`` in ``theta - theta0``: where the pool's curvature exceeds
    the data's, an improper target, toward which SparseVI's weights ran away (to 1e16 on
    20 000 logistic rows with a pool of 5000). Each part of the correction is unbiased
    whatever its factor at each ``theta``, so the quadratic part is capped: full within the
    bulk of ``N(theta0, chol chol^T)``, ``d^2 <= t = P + 4 sqrt(2 P)`` (mean plus 4 sd of the
    chi-square of a draw of it), times ``t / d^2`` beyond, where it stays bounded. The linear
    part, which moves the pool's posterior back onto the data's, is kept everywhere: fading
    all of it far out gave the chains of Coreset MCMC a second, wrong target there (the
    pool's posterior, some sqrt(N / B) sd away), and they settled in it.
    """

    def __init__(self, laplace, G, H, Xd, y, weights):
        theta0, chol = laplace.mean, laplace.chol
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
        self._G_rest, self._H_rest = G - G_pool, np.ascontiguousarray(H - H_pool)
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
        Hd = self._H_rest @ delta
        return self._G_rest @ delta - 0.5 * (delta @ Hd), self._G_rest - Hd, self._H_rest

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

    def correction(self, thetas, batch=None):
        """What turns the rows' estimate ``sum_b weights_b l_b(theta)`` into the controlled
        one, ``sum_n w_n q_n(theta) - sum_b weights_b q_b(theta)``, for each row of
        ``thetas``: over every pooled row at its weight, or over a batch of them (Coreset
        MCMC's, new at every step) given by its Taylor terms ``batch = (sum_b v_b d_b e_b,
        sum_b v_b c_b e_b^2)`` (:func:`~._kl_problem_kernels.batch_sums`).

        Both sums are quadratics in ``theta - theta0``. The data's needs only its gradient and
        curvature sums, O(P^2) per draw; so does the whole pool's, summed once. A batch's
        goes through its linear predictors, O(P) per row and draw: its curvature sum cost
        O(P^2) per row, and 0.5 of the 3.5 s of a 10-point coreset of BikeTrips.
        """
        thetas = np.ascontiguousarray(thetas, dtype=np.float64)
        if batch is None:
            G, H, batch = self._G_rest, self._H_rest, np.zeros((2, thetas.shape[0]))
        else:
            G, H = self.G, self.H
        return capped_correction(
            thetas, self.theta0, G, H, self._whiten_t, self._bulk, batch[0], batch[1]
        )


class PoolPosterior(_Posterior):
    """The data's log posterior from the pooled rows at their weights, plus, when they are a
    sample of the data, the rest of the data's second-order sums (:meth:`Taylor.rest`): what
    :func:`~skcoreset.models._laplace.fit_posterior` fits the data's Laplace fit to when the
    rows that made the first one were only a stream's first. The pool is one block of
    :class:`~skcoreset.models._laplace._Posterior` (which adds the parts and the prior), the
    rest one part more."""

    def __init__(self, model, Xd, y, weights, taylor):
        super().__init__(model, lambda: [(Xd, y, weights)])
        self.taylor = taylor

    def _parts(self, theta, value):
        yield from super()._parts(theta, value)
        if self.taylor is not None:
            rest_value, rest_grad, rest_hessian = self.taylor.rest(theta)
            yield (rest_value, rest_grad) if value else rest_hessian


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
        noise = None if extras is None else extras[:, None]
        return self.model.log_density(y[None, :], coef @ Xd.T, noise_scale=noise)

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
                coef, self.model.extra, extras, taylor.eta0,
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
            # mapped afresh, page by page, each time: 28 -> 24 ms a step
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
        return coreset_fit(self.model, self.Xd[idx], self.y[idx], w)

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


# Rows of a chunk of data_summary: its temporaries (the design, the weighted design, the
# projected rows; some 2.5 MB at 20 columns, per thread) stay in cache and are reused from
# the heap, where a node's whole rows (266 000 of them in a 10^7-row fit) made 45 MB arrays
# that the system maps afresh, page by page, for each (measured 2.7 s of 13 s at 10^7 rows).
# A 262 144-row leaf, 20 features, 2 cores: 29 ms on one thread; on two, 20.5 ms in chunks of
# 16 384 rows, 25.5 ms in chunks of 32 768 (paired runs).
_SUMMARY_ROWS = 16_384


def data_summary(laplace, node):
    """``(summary, spread)`` of a node's rows.

    ``summary = [W, n, G, H.ravel()]``: the total weight, the row count, and the weighted sums
    of the log-likelihood's gradient and curvature at the Laplace mean (:class:`Taylor`; in
    the coefficients and the log extra parameter together when it is free); sums, so that the
    summaries of blocks add up to that of their union. ``spread``: each row's
    :func:`row_spread`, from the same derivatives. Computed in chunks of rows.
    """
    model = laplace.model
    if model.family is None:  # a model of draws: its own sums, each row's gradient's spread
        Xd = model.design(node.X)
        _, G = model.weighted_loglik(laplace.mean, Xd, node.y, node.weights)
        H = model.weighted_loglik_hessian(laplace.mean, Xd, node.y, node.weights)
        summary = np.concatenate([[node.weights.sum(), float(len(node))], G, H.ravel()])
        return summary, row_spread(laplace, node.X, node.y)
    P = laplace.mean.shape[0]
    n_chunks = -(-len(node) // _SUMMARY_ROWS)
    parts, spread = np.zeros((n_chunks, P + P * P)), np.empty(len(node))

    def run(k0, k1):  # chunks k0 .. k1 - 1, on one thread (with its own design array)
        design = None
        for k in range(k0, k1):
            rows = slice(k * _SUMMARY_ROWS, (k + 1) * _SUMMARY_ROWS)
            design = Xd = model.design(node.X[rows], out=design)
            y, w = node.y[rows], node.weights[rows]
            eta = Xd @ laplace.coef_mean
            d, c = model.loglik_derivatives(eta, y)
            G, H = Xd.T @ (w * d), Xd.T @ (Xd * (w * c)[:, None])
            score = None
            if laplace.n_extra:
                score, cross, curv = model.extra_derivatives(eta, y)
                G, H = joint_sums(G, H, Xd, w, score, cross, curv)
            parts[k, :P] = G
            parts[k, P:] = H.ravel()
            spread[rows] = _spread(laplace, Xd, d, c, score)

    # the chunks' NumPy and BLAS work releases the GIL: on the fit's threads (its BLAS runs
    # on one), each chunk summed alone and the sums added in order, the same bits for any
    # number of threads
    in_ranges(run, n_chunks)
    G_H = sum_in_order(parts) if n_chunks else np.zeros(P + P * P)
    summary = np.concatenate([[node.weights.sum(), float(len(node))], G_H])
    return summary, spread


def joint_sums(G, H, Xd, w, score, cross, curv):
    """The coefficients' Taylor sums ``(G, H)`` of rows extended by the log extra parameter:
    ``sum_n w_n dl_n/ds`` after ``G``, and ``H``'s last row and column ``sum_n w_n
    (-d2l_n/(deta ds)) x_n`` and ``sum_n w_n (-d2l_n/ds2)``
    (:meth:`~skcoreset.models.GLM.extra_derivatives`)."""
    P = G.shape[0]
    out = np.empty((P + 1, P + 1))
    out[:P, :P] = H
    out[:P, P] = out[P, :P] = Xd.T @ (w * cross)
    out[P, P] = w @ curv
    return np.append(G, w @ score), out


def row_spread(laplace, X, y):
    """How much each row's log-likelihood varies under the data's Laplace fit.

    The standard deviation of its second-order expansion at the mean,
    ``l_n(theta) - l_n(mu) ~ d_n e - c_n e^2 / 2`` with ``e = x_n . (theta - mu)`` normal of
    variance ``s_n^2 = x_n^T Sigma x_n``: ``sqrt(d_n^2 s_n^2 + c_n^2 s_n^4 / 2)``; with a free
    extra parameter, the first-order term is the row's whole gradient's (the log extra
    parameter's score included). Large for the rows the posterior is uncertain about (a rare
    category's, a point near the decision boundary), near 0 for rows the fit already
    explains; it is the Laplace counterpart of the norm of a row's log-likelihood projection.
    For a model of draws, the first-order term alone: ``sqrt(g_n^T Sigma g_n)`` with ``g_n``
    the row's gradient at the mean.
    """
    model = laplace.model
    if model.family is None:
        g = model.loglik_grad_per_datum(laplace.mean, model.design(X), y)
        return np.linalg.norm(g @ laplace.chol, axis=1)
    Xd = model.design(X)
    eta = Xd @ laplace.coef_mean
    d, c = model.loglik_derivatives(eta, y)
    score = model.extra_derivatives(eta, y)[0] if laplace.n_extra else None
    return _spread(laplace, Xd, d, c, score)


def _spread(laplace, Xd, d, c, score=None):
    L = laplace.chol
    XL = Xd @ L[: Xd.shape[1]]  # Sigma = L L^T: s_n^2 = ||x_n L||^2 (coefficients' block)
    s2 = np.einsum("ij,ij->i", XL, XL)
    if score is None:
        return np.sqrt(s2 * (d * d + 0.5 * (c * c) * s2))
    grad = d[:, None] * XL + score[:, None] * L[-1]  # the row's gradient, whitened
    return np.sqrt(np.einsum("ij,ij->i", grad, grad) + 0.5 * (c * c) * s2 * s2)


def split_summary(summary, P):
    """``(W, n, G, H)`` from :func:`data_summary`."""
    return summary[0], summary[1], summary[2 : 2 + P], summary[2 + P :].reshape(P, P)
