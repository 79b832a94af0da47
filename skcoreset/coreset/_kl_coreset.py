"""Coreset estimators that optimise the weights against KL(pi_w || pi) with posterior draws.

Like the greedy Hilbert methods, they build a pool of candidates in one pass over the blocks,
together with the data's total weight, row count and Taylor sums; the algorithm of :mod:`._kl`
then runs on the pool in ``_finalize``. The pool has two parts: rows sampled with
probabilities proportional to their ``sample_weight`` (Efraimidis-Spirakis keys), and the rows
of largest weight x spread (:func:`~._taylor.row_spread`), which a uniform sample misses
when they are few (a rare category's). Both are candidates; the sampled part alone also gives
the full-data log-likelihood sum at each draw, exactly when the pool is all the rows, otherwise
estimated under a control variate. Memory is bounded by the pool. The pool, its sums and the
chains make the *problem* the algorithms work on (:mod:`._kl_problem`).
"""

from numbers import Integral, Real

import numpy as np
from scipy.linalg import solve_triangular

from .._logging import phase
from .._sklearn_compat import Interval, StrOptions
from .._warnings import warn
from ..hilbert._common import row_norms_and_sum
from ..hilbert._omp import _omp, pool_search
from ..models import laplace_approximation
from ..models._laplace import laplace_of_all_rows, pilot_of_rows, pilot_rows
from ..projection import Projection
from ..sampler._chains import MALAChains
from . import _kl
from ._base import BaseCoreset, CoresetQualityWarning
from ._construction import Context, check_overflow
from ._growth import grow
from ._kl_problem import (
    BURN_IN,
    GLMProblem,
    Taylor,
)
from ._merge_reduce import Node, largest
from ._taylor import data_summary, row_spread, split_summary

# n_candidates='auto': the pool of the greedy Hilbert methods, max(10 000, 50 n_points) rows.
_POOL_MIN = 10_000
_POOL_PER_POINT = 50

# Pooled rows added as candidates for their spread: a quarter of the uniform sample's.
_SPREAD_SHARE = 4

# full_batch='auto': pooled rows of the full-data term of each weight step.
_FULL_BATCH = 1000

# An optimised coreset is worse than its start when its Laplace KL to the data's Laplace fit
# exceeds the start's by more than this: below, the difference is the noise of the draws and
# of the Laplace criterion itself, which a method aiming at the posterior, not at its Laplace
# fit, may trade for a closer posterior (Coreset MCMC: 0.01 against OMP's 1e-12 on 8000
# Gaussian rows). The failures it guards against are 10^4 - 10^5 nats.
_WORSE_NATS = 0.1
# The kept coreset's Laplace fit this many times wider (in standard deviations) than the
# data's in some direction warns: its points leave that direction to the prior (a separable
# or unidentified support). One such direction alone is about ratio^2 / 2 = 50 nats of KL.
_WIDER = 10.0


# Independent projections the OMP start is chosen among (by the Laplace KL of its coreset).
_STARTS = 4
# A start whose Laplace KL is below this (nats) ends the search. The KL between Gaussians fitted
# to two independent default MALA runs on the same posterior is about P (P + 3) / (4 ESS):
# 0.06 nats at P = 21 and 2 000 effective draws, so a start 60x below that is as good as any
# for what the draws can show. At the default sizes the starts of 10^4-10^6-row sets (Phishing,
# DS1, ijcnn1, MAGIC, the synthetic 20-feature data) have 1e-4 to 3e-4 and the best of four
# differs from the first by less than 2x; elec2 and credit (2e-3 to 4e-2) still get four.
_GOOD_START_KL = 1e-3
# Rows the start may swap in, one per direction it leaves to the prior (see _identify).
_IDENTIFY = 5

# SparseVI's stops before the size is reached that are not the user's budget
_EARLY_STOPS = {
    "no_correlation": "no candidate correlates with the residual under the coreset posterior",
    "nonfinite_loglik": "the log-likelihoods overflowed at the draws of the coreset posterior "
    "or of the data's Laplace fit",
}


class _KLCoreset(BaseCoreset):
    """Shared construction of the KL coreset estimators (do not use directly)."""

    #: How it builds multilevel coresets (:mod:`._multilevel_kl`): weights against KL.
    _multilevel = "kl"

    #: The start of the weights (a parameter of QNC and Coreset MCMC); SparseVI grows its
    #: coreset from none, and is compared with OMP's start.
    init = "omp"

    # a leaf's summary builds its float64 design chunk by chunk, from float32 rows as stored:
    # only the pooled rows are then copied to float64, not the block (measured:
    # benchmarks/README.md, Thresholds)
    _leaf_dtype = (np.float64, np.float32)

    _parameter_constraints: dict = {
        **BaseCoreset._parameter_constraints,
        "n_candidates": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "n_chains": [Interval(Integral, 2, None, closed="left")],
        "max_seconds": [Interval(Real, 0, None, closed="neither"), None],
        "full_batch": [Interval(Integral, 2, None, closed="left"), StrOptions({"auto"}), None],
        "verbose": ["verbose"],
    }

    # -- the hooks of the block construction ------------------------------------------------
    def _begin(self, data, model, random_state, summarised=False):
        """The Laplace fit every block is summarised at (its second-order sums: the control
        variate's, :class:`Taylor`; its rows' spreads: the pool's keys): of all the data, or
        for a fit of many blocks (``summarised``) of a sample of them (a pilot), the data's
        fit then made from the sums (:func:`~._taylor.fit_from_sums`). The data's fit is
        where the chains start and their preconditioner."""
        with phase(self, "Laplace fit"):
            if summarised:
                laplace, indices, pilot = pilot_of_rows(data, model, random_state)
            else:
                (laplace, indices), pilot = laplace_of_all_rows(data, model, random_state), False
        return Context(
            model,
            laplace=laplace,
            laplace_indices=indices,
            laplace_weight=data.total_weight,
            pilot=pilot,
        )

    def _pilot_size(self, n_rows, block_rows):
        return pilot_rows(n_rows, block_rows) if n_rows > block_rows else None

    def _begin_exact(self, data, model, random_state):
        # every row kept: CoresetMCMC's chains then sample the exact posterior with this
        # generator
        return Context(model, random_state=random_state)

    def _pool_size(self):
        """``(uniform, spread)``: the pool's rows sampled proportional to weight, and the
        rows of the largest weight x spread (:func:`row_spread`) added as candidates."""
        if self.n_candidates == "auto":
            size = max(_POOL_MIN, _POOL_PER_POINT * self._target_size)
        else:
            size = int(self.n_candidates)
        size = max(size, self._target_size)
        # the papers' uniform start chooses no candidate
        return size, 0 if self.init == "uniform" else size // _SPREAD_SHARE

    def _capacity(self):
        return sum(self._pool_size())

    def _summarize(self, node, context, random_state):
        """The node's second-order sums (:func:`data_summary`, ``Node.taylor``: what the
        control variate and a stream's data fit need); per row, the key of a sample
        proportional to weight and the log of weight x spread."""
        laplace = context.laplace
        spread = node.spread  # the construction's, when it summarised the node
        if node.taylor is None:
            node.taylor, spread = data_summary(laplace, node)
        if node.keys is None:
            if spread is None:
                spread = row_spread(laplace, node.X, node.y)
            check_overflow(spread)
            u = random_state.random_sample(len(node))
            with np.errstate(divide="ignore"):
                keys = [np.log(u) / node.weights, np.log(node.weights * spread)]
            node.keys = np.column_stack(keys)
        return node

    def _reduce(self, node, context, random_state):
        node = self._summarize(node, context, random_state)
        return node.subset(self._pool_rows(node))

    def _pool_rows(self, node):
        """The rows of both parts of the pool (sorted positions, each row once)."""
        uniform, spread = self._pool_size()
        # a mask, not np.union1d, which sorts the two parts again (measured: benchmarks/README.md,
        # Thresholds)
        pooled = np.zeros(len(node), dtype=bool)
        pooled[largest(node.keys[:, 0], uniform)] = True
        pooled[largest(node.keys[:, 1], spread)] = True
        return np.flatnonzero(pooled)

    def _finalize(self, node, context, random_state):
        if len(node) <= self._target_size:
            return node
        node = self._summarize(node, context, random_state)
        # the data's fit, and its second-order sums at the expansion point of the last pass
        # (the first fit's mean, or a point that confirmed the data's fit)
        data_fit, expansion = context.data_fit, context.expansion
        sums = node.taylor if context.sums is None else context.sums
        model = expansion.model
        total, count, G, H = split_summary(sums, expansion.mean.shape[0])
        # the pool is every row: exact full sums, controlled only when drawn in batches
        exact = len(node) == int(count)
        if exact:
            full_weights = node.weights
        else:
            # the uniform part estimates the full data's sums, as a sample proportional to
            # weight; the rows added for their spread are candidates only (weight 0 there)
            node = node.subset(self._pool_rows(node))
            sampled = np.zeros(len(node), dtype=bool)
            sampled[largest(node.keys[:, 0], self._pool_size()[0])] = True
            full_weights = np.where(sampled, total / np.count_nonzero(sampled), 0.0)
        Xd = model.design(node.X)
        taylor = None
        if not exact or self._full_batch() is not None:
            # the control variate of every parameter the chains sample, a free extra
            # parameter's log included (Taylor sums in the coefficients and it together)
            taylor = Taylor(expansion, G, H, Xd, node.y, full_weights, around=data_fit)
        # the chains sample all the posterior's parameters (a free extra parameter's log
        # last), so that the weights aim at its posterior as well as the coefficients'
        mean, chol = data_fit.mean, data_fit.chol
        init = mean + 0.1 * random_state.standard_normal((self.n_chains, mean.shape[0])) @ chol.T
        chains = _chains(data_fit, init, random_state)
        problem = GLMProblem(
            data_fit.free_model,
            Xd,
            node.y,
            full_weights,
            chains,
            random_state,
            full_batch=self._full_batch(),
            start=data_fit,
            taylor=taylor,
        )
        # on one BLAS thread, as every fit, stream and dask client step of BaseCoreset runs
        # (one_blas_thread): the matrices of the loop are small, and BLAS threads left
        # spinning after each call slowed its Laplace fits (11 x 11 inverses) many times
        # over beside the threaded log-likelihood kernel (measured: benchmarks/README.md,
        # Thresholds)
        with phase(self, f"{type(self).__name__} on {len(node)} candidates"):
            idx, w, info = self._select(problem, node, total, random_state)
            start = info.pop("start", None)
            if start is None:  # SparseVI's own start is no coreset: the others' start instead
                start = self._initial_support(problem, node, random_state)
            idx, w, kls = self._keep_better(problem, (idx, w), start)
        keep = w > 0
        idx, w = idx[keep], w[keep]
        info.update(kls, problem=problem, laplace=data_fit)
        if self.n_points == "auto":
            with phase(self, "size: grown until the posterior is within the target"):
                phase_one = node.weights if exact else self._phase_one(node)
                idx, w, info = self._grow(problem, node, phase_one, idx, w, info, random_state)
        self._warn_if_worse(info)
        self._warn_if_wide(problem, idx, w)
        return Node(
            indices=node.indices[idx],
            weights=w,
            X=node.X[idx],
            y=node.y[idx],
            taylor=node.taylor,
            info=info,
        )

    def _phase_one(self, node):
        """Each pooled row's weight in an estimate of the data's sums (0 for a row that
        estimates nothing): the rows of the largest weight x spread (the pool's second part,
        the most of every node's and so of all the data) stand for themselves; the rest of the
        pool's sample proportional to weight, for the data less them, at Horvitz-Thompson
        weights given the sample's last key (that row left out, its key the threshold)."""
        uniform, spread = self._pool_size()
        weights = np.zeros(len(node))
        take_all = largest(node.keys[:, 1], spread)
        order = np.argsort(-node.keys[:, 0], kind="stable")[: min(uniform, len(node))]
        if order.shape[0] >= 2:
            t = -node.keys[order[-1], 0]  # the threshold of the rest of the sample
            rest = order[:-1]
            weights[rest] = node.weights[rest] / -np.expm1(-node.weights[rest] * t)
        weights[take_all] = node.weights[take_all]
        return weights

    @staticmethod
    def _grow(problem, node, phase_one, idx, w, info, random_state):
        """``(idx, w, info)``: the coreset of pooled rows ``idx`` at weights ``w``, grown
        until its posterior is within the target (:func:`~._growth.grow`) from the pooled
        rows at their weights ``phase_one`` in an estimate of the data's sums, sampled anew
        proportionally to each row's spread under the data's fit times that weight
        (two-phase: the pool's draw, then this one)."""
        sampled = np.flatnonzero(phase_one > 0)
        weights = phase_one[sampled]
        norms = row_spread(problem.start, node.X[sampled], node.y[sampled]) * weights
        with np.errstate(divide="ignore"):
            keys = np.log(random_state.random_sample(len(sampled))) / norms
        # positions in the pool stand for the rows' indices while they grow
        pool = Node(sampled, weights, node.X[sampled], node.y[sampled], keys=keys)
        coreset = Node(idx, w, node.X[idx], node.y[idx], info=info)
        grown = grow(coreset, pool, norms, problem.start, len(pool))
        return grown.indices, grown.weights, grown.info

    def _keep_better(self, problem, result, start):
        """``(support, weights, KLs)``: the optimised coreset, or its start when the optimised
        one is worse (by more than ``_WORSE_NATS``) by the Laplace KL of each coreset's
        posterior to the data's own Laplace fit, which the construction already has: a
        criterion that needs no full posterior. Both KLs are reported (``start_laplace_kl_``,
        ``laplace_kl_``, the kept one's); a worse result warns and is dropped."""
        kl_result, kl_start = (self._laplace_kl(problem, *coreset) for coreset in (result, start))
        if not np.all(np.isfinite(start[1])):
            if np.all(np.isfinite(result[1])):
                return *result, {"laplace_kl": kl_result, "start_laplace_kl": kl_start}
            raise ValueError(
                f"{type(self).__name__}'s weights overflowed (not finite), from its start on: "
                "the log-likelihoods of the data are too large at its posterior's draws. "
                "Standardise X (e.g. sklearn.preprocessing.StandardScaler), and use more "
                "points than the model's parameters."
            )
        if kl_result <= kl_start + _WORSE_NATS:
            return *result, {"laplace_kl": kl_result, "start_laplace_kl": kl_start}
        worse = {"laplace_kl": kl_start, "start_laplace_kl": kl_start, "worse": kl_result}
        return *start, worse

    def _warn_if_worse(self, info):
        """A :class:`CoresetQualityWarning` when the optimised weights were dropped for their
        start (:meth:`_keep_better`), unless the coreset then grew (``n_points='auto'``):
        the grown coreset's own figure is what its warning judges."""
        if "worse" not in info or "grown_from" in info:
            return
        warn(
            f"{type(self).__name__}'s optimised weights ended further from the data's Laplace "
            f"fit (KL {info['worse']:.3g}) than the coreset they started from (KL "
            f"{info['start_laplace_kl']:.3g}): the start is kept. More points, more n_draws or "
            "OMPCoreset may do better.",
            CoresetQualityWarning,
        )

    def _widest(self, problem, idx, w):
        """``(ratio, direction)``: the largest ratio of standard deviations, over all
        directions, of the coreset ``(idx, w)``'s Laplace fit to the data's (the square root
        of the top eigenvalue of its covariance whitened by the data's), and that direction
        in parameter space, scaled to one standard deviation of the data's fit. ``(inf,
        None)`` when the coreset's fit has no proper mode."""
        keep = w > 0
        full = problem.start
        try:
            core = problem.coreset_fit(idx[keep], w[keep])
        except (ValueError, np.linalg.LinAlgError):
            return np.inf, None
        half = solve_triangular(full.chol, core.cov, lower=True)
        values, vectors = np.linalg.eigh(solve_triangular(full.chol, half.T, lower=True))
        return float(np.sqrt(max(values[-1], 0.0))), full.chol @ vectors[:, -1]

    def _warn_if_wide(self, problem, idx, w):
        """A :class:`CoresetQualityWarning` when the coreset ``(idx, w)``'s Laplace fit has
        no proper mode, or is ``_WIDER`` times the data's in some direction."""
        ratio, _ = self._widest(problem, idx, w)
        if ratio > _WIDER:
            what = (
                "has no proper mode"
                if np.isinf(ratio)
                else f"is {ratio:.3g}x as wide (in sd) as the data's in some direction"
            )
            warn(
                f"{type(self).__name__}: the coreset posterior's Laplace fit {what}: its "
                f"{int(np.count_nonzero(w > 0))} points leave that direction to the prior "
                "(separable, or too few points to identify every parameter). More points, or "
                "OMPCoreset, may do better.",
                CoresetQualityWarning,
            )

    def _identify(self, problem, start, start_kl):
        """``(idx, w)``: the start, with each direction it leaves to the prior given a row.

        A start whose Laplace fit is ``_WIDER`` times the data's in some direction has no
        row that informs it (AirportDelays: a feature non-zero on 30 of 7 580 rows, which
        every 21-point coreset missed, its coefficient's sd 13.7 where the data's is 0.004,
        Laplace KL 5.4e6). Along that direction ``d`` (one sd of the data's fit), each pooled
        row's curvature ``c_n = -(l_n(m + d) - 2 l_n(m) + l_n(m - d))`` at the data's mode
        ``m`` measures what it knows of it; the row of largest ``c_n`` replaces the
        support's lightest, weighted ``1 / c_n`` (the data's precision along ``d``, 1). The
        swap is kept when it lowers the Laplace KL, for up to ``_IDENTIFY`` directions.
        """
        best, best_kl = start, start_kl
        full = problem.start
        for _ in range(_IDENTIFY):
            idx, w = best
            ratio, d = self._widest(problem, idx, w)
            if ratio <= _WIDER or d is None:
                break
            # the three points in one pass of the (N, J) kernel every fit compiles anyway
            thetas = full.mean + np.array([-1.0, 0.0, 1.0])[:, None] * d
            loglik = problem.loglik(thetas, None, out=np.empty((problem.Xd.shape[0], 3)))
            curvature = 2.0 * loglik[1] - loglik[0] - loglik[2]
            curvature[idx] = 0.0  # a row in the support already informs nothing new
            new = int(np.argmax(curvature))
            if not curvature[new] > 0:
                break
            swapped = idx.copy(), w.copy()
            lightest = int(np.argmin(w))
            swapped[0][lightest], swapped[1][lightest] = new, 1.0 / curvature[new]
            kl = self._laplace_kl(problem, *swapped)
            if not kl < best_kl:
                break
            best, best_kl = swapped, kl
        return best

    def _laplace_kl(self, problem, idx, w):
        """KL of the Laplace fit of the coreset ``(idx, w)`` of the pool to the data's."""
        return problem.laplace_kl(idx, w)

    def _full_batch(self):
        return _FULL_BATCH if self.full_batch == "auto" else self.full_batch

    def _initial_support(self, problem, node, random_state):
        """``(idx, w0)``: the start of the weights' optimisation among the pooled rows.

        'uniform' (the papers' start): the ``n_points`` pooled rows with the largest keys (a
        sample proportional to weight), each weighted ``W / n_points``. 'omp': orthogonal
        matching pursuit among the pooled rows on the log-likelihood projection (500 draws of
        the Laplace fit), as :class:`OMPCoreset` does (its large pool's search:
        :func:`~skcoreset.hilbert._omp.pool_search`), from up to ``_STARTS`` independent
        projections, keeping the one whose coreset's Laplace fit is closest to the data's
        (the criterion that later keeps the better of start and result); a start closer than
        ``_GOOD_START_KL`` ends the search. At small sizes a
        uniform support is often separable or leaves parameters unidentified, and its
        coreset posterior nearly improper; the MALA draws the gradient comes from are then
        poor, and the steps can make the weights worse than where they started (Phishing, 50
        points: KL 10^5 from a uniform start, 0.03 from OMP's). One projection's OMP is itself
        a draw: at a few points more than the parameters its Laplace KL varies by 10^2-10^3
        between projections (ijcnn1, 30 points, four seeds: worst 1.7e4 from one projection,
        362 from the best of four).
        """
        M = self._target_size
        full_weights = problem.full_weights
        uniform = largest(node.keys[:, 0], M), np.full(M, float(full_weights.sum()) / M)
        if self.init == "uniform":
            return uniform
        best, best_kl = uniform, self._laplace_kl(problem, *uniform)
        with phase(self, f"OMP start (best of up to {_STARTS} projections)"):
            for _ in range(_STARTS):
                start = self._omp_start(problem, node, M, random_state)
                if start is None:  # the projection measured nothing
                    continue
                kl = self._laplace_kl(problem, *start)
                if kl < best_kl:
                    best, best_kl = start, kl
                if best_kl < _GOOD_START_KL:
                    break
        return self._identify(problem, best, best_kl)

    def _omp_start(self, problem, node, M, random_state):
        """OMP on the pool's log-likelihood projection, toward the full data's (None when
        the projection measured nothing)."""
        # the target is the full sum at the projection's draws, so that with a pool smaller
        # than the data the start aims at the full posterior, not at the pool's
        proj = Projection.draw(problem.start, random_state=random_state)
        # the candidates at their own weights (a row's flatness is its own), the target at
        # the pool's: the estimate of the full sum, centred and scaled as the rows
        V = proj.transform(problem.Xd, problem.y, node.weights)
        target = (problem.full_weights / node.weights).astype(V.dtype) @ V
        if problem.taylor is not None:
            target += problem.taylor.projection_correction(proj)
        sigma, _ = row_norms_and_sum(V)
        sigma[_kl.flat(sigma)] = 0.0  # never chosen
        per_pass, quantize = pool_search(M, problem.n_params, V.size)
        w, _, _ = _omp(V, M, sigma, target, per_pass=per_pass, quantize=quantize)
        idx = np.flatnonzero(w)
        if idx.shape[0] == 0:
            return None
        return idx, w[idx] * node.weights[idx]

    def _finish(self, node, context):
        info = node.info or {}
        fitted = {
            "n_iter_": info.get("n_iter", 0),
            "stop_reason_": info.get("stop_reason", "all_rows"),
        }
        if context.data_fit is not None:  # a stream's: from its pool (see _data_fit)
            fitted["laplace_"] = info.get("laplace", context.data_fit)
        if "start_laplace_kl" in info:  # laplace_kl_ is set with every coreset's
            fitted["start_laplace_kl_"] = info["start_laplace_kl"]
        return fitted

    def _select(self, problem, node, total, random_state):
        """``(idx, w, info)``: the support among the pooled rows and its weights."""
        raise NotImplementedError

    def _optimise(self, problem, start, n_candidates, size, total, max_seconds, progress):
        """``(idx, w, n_iter, stop_reason)``: the algorithm on ``problem`` (``start``: the
        support and its first weights, None for a method that chooses its points), at
        ``size`` points of total weight ``total``; a single-level fit's and a multilevel
        group's (:mod:`._multilevel_kl`) alike."""
        raise NotImplementedError


class QuasiNewtonCoreset(_KLCoreset):
    """Quasi-Newton coreset: a support whose weights minimise KL(pi_w || pi).

    Naik, Rousseau & Campbell (2022): a support of at most ``n_points`` rows (OMP's Hilbert
    coreset by default, or the paper's uniform sample weighted W / M: ``init``), then about
    20 steps ``w <- w - step_size H^-1 grad``, where ``grad`` is the Monte Carlo gradient of
    the KL divergence from ``n_draws`` MALA draws of the coreset posterior and ``H`` the
    sample covariance of the coreset log-likelihoods plus a ridge (doc/algorithms.md,
    section 7). Each step stays in a trust region: a weight at most doubles or halves, and
    none exceeds the data's total weight.

    Parameters
    ----------
    n_points : int or 'auto', default='auto'
        Coreset size M: the most distinct points (OMP's start has at most 500, the dimension
        of its projection). When M is not smaller than the number of rows with positive
        weight, every such row is kept.
        'auto': (P + 1)(P + 2) / 2 for P parameters (features plus intercept), between 100
        and 500.
    model : 'auto', str or GLM, default='auto'
        The likelihood: a name of ``skcoreset.models.MODEL_NAMES`` or a model object. 'auto'
        takes it from the estimator the coreset feeds in a pipeline or meta-estimator, otherwise
        from ``y``.
    prior_scale : float, array-like of shape (n_features + fit_intercept,) or 'auto', \
            default='auto'
        Standard deviation of the Gaussian prior. 'auto' follows the scale of the data (see
        :func:`~skcoreset.models.default_prior_scale`); an array gives one per coefficient,
        the intercept's last (as ``prior_scale_`` reports it).
    fit_intercept : bool, default=True
        Whether the likelihood has an intercept.
    block_size : int or 'auto', default='auto'
        Rows per block of the one pass over the data (about 128 MB of working memory for
        'auto').
    n_candidates : int or 'auto', default='auto'
        Rows of the pool sampled in the pass (proportional to ``sample_weight``): the support
        is chosen among them, and the full-data log-likelihood at each draw is estimated on
        them. A quarter as many rows again join the pool as candidates only, those whose
        log-likelihood varies most under the data's Laplace fit (the standard deviation of
        its second-order expansion, times the weight), which a sample misses when they are
        few: on adult (48 842 rows, 124 parameters, 500 points, seed 0) they took the reverse
        Laplace KL from 287 to 28 and left no feature constant on the coreset. Data of at most
        1.25 ``n_candidates`` rows are pooled whole (exact sums). 'auto': max(10 000,
        50 n_points).
    init : {'omp', 'uniform'}, default='omp'
        The support and weights the optimisation starts from. 'omp': the Hilbert coreset of
        :class:`OMPCoreset` among the pooled rows, aimed at the full data's log-likelihood
        (at most ``n_points`` rows). 'uniform': ``n_points`` pooled rows weighted
        ``W / n_points``, as in the paper (a sample proportional to ``sample_weight``; no
        rows join the pool for their spread); at small sizes its coreset posterior is often
        nearly improper (separable or unidentified), and the Monte Carlo steps then wander.
    full_batch : int, 'auto' or None, default=None
        Pooled rows drawn at each quasi-Newton step for the full-data log-likelihood, under
        the control variate of the exact second-order Taylor sum of all the data (see
        :class:`CoresetMCMC`); None: all the pool; 'auto': 1000. A batch makes each step
        cheaper, but its noise stays in the weights, as the steps do not decay: with 'auto'
        the Laplace KL to the full posterior went from 0.0023 to 0.081 on credit_default and
        from 4e-6 to 3e-4 on AirportDelays, though the KL of MALA draws on Phishing and
        BikeTrips (20 to 1000 points) stayed within its Monte Carlo error.
    n_draws : int, default=500
        MALA draws of the coreset posterior per step.
    max_iter : int, default=20
        Most quasi-Newton steps.
    step_size : float, default=1.0
        Multiplier of the quasi-Newton step.
    tau : float, default=0.1
        Ridge of ``H``, relative to the average variance of the log-likelihoods.
    tol : float, default=0.05
        The steps stop when the gradient norm has not fallen by this fraction of its best
        value for three steps in a row.
    n_chains : int, default=4
        MALA chains drawing from the coreset posterior.
    max_seconds : float or None, default=None
        Time budget of the steps (checked after each step).
    progress : bool, default=False
        Show a tqdm progress bar of the steps (needs the optional tqdm).
    verbose : int, default=0
        Print the phases of the fit and their durations.
    random_state : int, RandomState instance or None, default=None
        Seeds the pool, the support and the MALA draws.

    Attributes
    ----------
    sample_indices_ : ndarray of shape (``n_points_``,)
        Sorted indices of the selected rows.
    sample_weight_ : ndarray of shape (``n_points_``,)
        Their positive weights.
    model_ : str
        The resolved model.
    laplace_ : LaplaceApproximation
        The data's Laplace fit: the chains start from it and are preconditioned with it, and
        ``laplace_kl_`` measures against it (a stream's, from the pooled rows and the sums
        of all its rows: its first rows alone made the one its blocks were summarised at).
    prior_scale_ : ndarray
        The prior's standard deviations.
    n_iter_ : int
        Quasi-Newton steps taken.
    stop_reason_ : str
        'converged', 'max_iter', 'max_seconds', or 'all_rows' when every row was kept.
    laplace_kl_ : float
        The coreset's quality: the KL divergence, in nats, of the Laplace fit of its
        posterior to the data's (``laplace_``), every parameter included (a free extra
        parameter's log too), under the data's prior; 0 when every row is kept, inf when
        its posterior has no proper Laplace fit. Above P (P + 3) / 80 000 for P parameters,
        a fifth of the default sampler's Monte Carlo error, the fit warns
        (:class:`CoresetQualityWarning`). The kept coreset's: the optimised weights', or
        their start's when the optimisation ended further away (by more than 0.1 nats).
    start_laplace_kl_ : float
        The same KL of the start (a Hilbert coreset of the pool).
    n_features_in_ : int
        Number of features seen in fit.
    feature_names_in_ : ndarray of str
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    SparseVICoreset : Greedy choice of the support, by correlation with the residual.
    CoresetMCMC : Weights trained by the MCMC chains that then sample the coreset posterior.

    Examples
    --------
    >>> from skcoreset.coreset import QuasiNewtonCoreset
    >>> from skcoreset.datasets import load_phishing
    >>> X, y = load_phishing(return_X_y=True)
    >>> cs = QuasiNewtonCoreset(n_points=20, n_draws=100, random_state=0).fit(X, y)
    >>> cs.n_points_ <= 20
    True
    """

    _parameter_constraints: dict = {
        **_KLCoreset._parameter_constraints,
        "init": [StrOptions({"omp", "uniform"})],
        "n_draws": [Interval(Integral, 2, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "step_size": [Interval(Real, 0, None, closed="neither")],
        "tau": [Interval(Real, 0, None, closed="neither")],
        "tol": [Interval(Real, 0, 1, closed="both")],
    }

    def __init__(
        self,
        n_points="auto",
        *,
        model="auto",
        prior_scale="auto",
        fit_intercept=True,
        block_size="auto",
        n_candidates="auto",
        init="omp",
        full_batch=None,
        n_draws=500,
        max_iter=20,
        step_size=1.0,
        tau=0.1,
        tol=0.05,
        n_chains=4,
        max_seconds=None,
        progress=False,
        verbose=0,
        random_state=None,
    ):
        self.n_points = n_points
        self.model = model
        self.prior_scale = prior_scale
        self.fit_intercept = fit_intercept
        self.block_size = block_size
        self.n_candidates = n_candidates
        self.full_batch = full_batch
        self.init = init
        self.n_draws = n_draws
        self.max_iter = max_iter
        self.step_size = step_size
        self.tau = tau
        self.tol = tol
        self.n_chains = n_chains
        self.max_seconds = max_seconds
        self.progress = progress
        self.verbose = verbose
        self.random_state = random_state

    def _select(self, problem, node, total, random_state):
        start = self._initial_support(problem, node, random_state)
        idx, w, n_iter, reason = self._optimise(
            problem, start, len(node), self._target_size, total, self.max_seconds,
            self._show_core_progress(),
        )  # fmt: skip
        return idx, w, {"n_iter": n_iter, "stop_reason": reason, "start": start}

    def _optimise(self, problem, start, n_candidates, size, total, max_seconds, progress):
        idx, w0 = start
        w, n_iter, reason = _kl.quasi_newton(
            problem,
            idx,
            w0,
            n_draws=self.n_draws,
            max_iter=self.max_iter,
            step_size=self.step_size,
            tau=self.tau,
            tol=self.tol,
            max_step=total / size,
            max_weight=total,
            max_seconds=max_seconds,
            progress=progress,
        )
        return idx, w, n_iter, reason


class SparseVICoreset(_KLCoreset):
    """Sparse variational coreset: greedy points and stochastic steps on KL(pi_w || pi).

    Campbell & Beronov (2019): each round adds the pooled row whose log-likelihood is most
    correlated, under the coreset posterior, with the residual ``r - g . w`` of the full
    log-likelihood, then takes projected stochastic steps on the support's weights, each
    preconditioned by the sample covariance of the support's log-likelihoods (the
    quasi-Newton step of :class:`QuasiNewtonCoreset`, damped by ``step_size``). Draws come
    from the built-in MALA (from the Laplace fit of the data while every weight is zero).
    A round that adds several rows chooses them one by one, each against the residual left
    by a least-squares fit of the ones before it on the draws (matching pursuit). The first
    round, whose draws are the Laplace fit's, adds as many rows as the model has parameters
    (the paper adds one): the coreset posterior of fewer points is nearly improper, its draws
    poor guides to the next choices. On BikeTrips at 20 points, three seeds gave KL 3.2, 18
    and 1700 with it and 4 900 to 30 000 without.

    After every round the support's weights are refitted: non-negative least squares of the
    full log-likelihood sum by the support's log-likelihoods, on one sample of draws of the
    data's Laplace fit (how the Hilbert coresets weight their points, exactly up to 256
    points), so that the next choice is made under the posterior of good weights. The
    choice itself correlates with the residual of the support's own least-squares fit on
    the coreset posterior's draws, so that it does not go to near-copies of the support's
    points (from twice as many points as parameters). The paper's steps from the coreset
    posterior's own draws left weights they did not recover from: on 100 points of
    AirportDelays the KL to the full posterior was 40 with them, 1.9 with one refit before
    the last steps and 0.25 with a refit every round. The last steps then use the per-point
    ridge of the quasi-Newton core, which keeps steps on hundreds of points stable, and
    minimise each step's quadratic model over the non-negative weights instead of clipping
    the unconstrained step at 0 (on hundreds of points that step makes many weights
    negative, and clipping undoes most of it); their size decays, so that the noise of the
    draws averages out.

    :class:`QuasiNewtonCoreset` and :class:`CoresetMCMC` start from a Hilbert coreset. In
    ``benchmarks/bench_posterior.py`` both came within twice the Monte Carlo floor from 50 points on
    Phishing and BikeTrips; SparseVI did from 100 points on Phishing and 50 on BikeTrips, and cost
    more than QNC (figures: benchmarks/README.md, Thresholds): prefer them.

    Parameters
    ----------
    n_points : int or 'auto', default='auto'
        Coreset size M: the most distinct points. When M is not smaller than the number of
        rows with positive weight, every such row is kept. 'auto': (P + 1)(P + 2) / 2 for P
        parameters (features plus intercept), between 100 and 500.
    model : 'auto', str or GLM, default='auto'
        The likelihood: a name of ``skcoreset.models.MODEL_NAMES`` or a model object. 'auto'
        takes it from the estimator the coreset feeds in a pipeline or meta-estimator, otherwise
        from ``y``.
    prior_scale : float, array-like of shape (n_features + fit_intercept,) or 'auto', \
            default='auto'
        Standard deviation of the Gaussian prior. 'auto' follows the scale of the data (see
        :func:`~skcoreset.models.default_prior_scale`); an array gives one per coefficient,
        the intercept's last (as ``prior_scale_`` reports it).
    fit_intercept : bool, default=True
        Whether the likelihood has an intercept.
    block_size : int or 'auto', default='auto'
        Rows per block of the one pass over the data (about 128 MB of working memory for
        'auto').
    n_candidates : int or 'auto', default='auto'
        Rows of the pool sampled in the pass (proportional to ``sample_weight``): the greedy
        choice is among them, and the full-data log-likelihood at each draw is estimated on
        them. A quarter as many rows again join the pool as candidates only, those whose
        log-likelihood varies most under the data's Laplace fit (see
        :class:`QuasiNewtonCoreset`). Data of at most 1.25 ``n_candidates`` rows are pooled
        whole (exact sums). 'auto': max(10 000, 50 n_points).
    full_batch : int, 'auto' or None, default=None
        Pooled rows drawn at each weight step for the full-data log-likelihood, under the control
        variate of the exact second-order Taylor sum of all the data (see :class:`CoresetMCMC`);
        None: all the pool; 'auto': 1000. The greedy choices and the refits always use the whole
        pool, whose log-likelihoods they compute anyway. A batch shortened the construction at 10 to
        50 points of Phishing and BikeTrips (figures: benchmarks/README.md, Thresholds), with the KL
        of MALA draws within its Monte Carlo error, but its noise stays in the last steps' weights:
        the Laplace KL to the full posterior went from 0.29 to 0.78 on elec2 and from 1.2e-8 to
        1.5e-7 on skin_nonskin.
    n_draws : int, default=200
        MALA draws of the coreset posterior per greedy choice and per weight step. The
        choice is the noisiest part of SparseVI on large data: on 2 x 10^5 rows with 21
        parameters (the synthetic logistic data of ``benchmarks/bench_scale.py``, 100
        points, three seeds) 500 draws gave a Laplace KL of 0.31 to 0.53 where 200 gave 0.59
        to 0.88, at a higher cost; :class:`QuasiNewtonCoreset` reached 0.13 in less time than
        200 draws took (seed 0; figures: benchmarks/README.md, Thresholds).
    n_rounds : int, default=50
        Greedy rounds: each adds ceil(n_points / n_rounds) points (the paper adds one point
        per round; fewer rounds cost fewer MALA runs). On Phishing at 50 points, one point per
        round reached a Laplace KL of 3 where two per round reached 4 to 11.
    n_steps : int, default=0
        Weight steps after each round's refit. Steps of constant size from the refitted
        weights wandered: on AirportDelays, two per round left 16 of 100 points, at KL 5e6.
    n_polish : int, default=60
        Weight steps on the final support, the k-th of size ``step_size / sqrt(k)``. On
        Phishing, 60 such steps took a 20-point coreset from KL 423 to 5.7, where steps of
        constant size stopped when the gradient norm settled.
    step_size : float, default=0.5
        Multiplier of the weight steps.
    tau : float, default=0.1
        Ridge of the preconditioner, relative to the average variance of the
        log-likelihoods.
    n_chains : int, default=4
        MALA chains drawing from the coreset posterior.
    max_seconds : float or None, default=None
        Time budget (checked after each round: the support may stay below ``n_points``).
    progress : bool, default=False
        Show a tqdm progress bar of the points added (needs the optional tqdm).
    verbose : int, default=0
        Print the phases of the fit and their durations.
    random_state : int, RandomState instance or None, default=None
        Seeds the pool and the MALA draws.

    Attributes
    ----------
    sample_indices_ : ndarray of shape (``n_points_``,)
        Sorted indices of the selected rows.
    sample_weight_ : ndarray of shape (``n_points_``,)
        Their positive weights.
    model_ : str
        The resolved model.
    laplace_ : LaplaceApproximation
        The data's Laplace fit: the chains start from it, and ``laplace_kl_`` measures against
        it (a stream's, from the pooled rows and the sums of all its rows: its first rows
        alone made the one its blocks were summarised at).
    prior_scale_ : ndarray
        The prior's standard deviations.
    n_iter_ : int
        Weight steps taken.
    stop_reason_ : str
        'size_reached', 'no_correlation' (no candidate correlates with the residual),
        'nonfinite_loglik' (the log-likelihoods overflowed at the coreset posterior's draws
        or the data's Laplace fit's; both warn, and raise ``ValueError`` before any point is
        chosen), 'max_seconds', or 'all_rows' when every row was kept.
    laplace_kl_ : float
        The coreset's quality: the KL divergence, in nats, of the Laplace fit of its
        posterior to the data's (``laplace_``), every parameter included (a free extra
        parameter's log too), under the data's prior; 0 when every row is kept, inf when
        its posterior has no proper Laplace fit. Above P (P + 3) / 80 000 for P parameters,
        a fifth of the default sampler's Monte Carlo error, the fit warns
        (:class:`CoresetQualityWarning`). The kept coreset's: SparseVI's, or that of the
        coreset QuasiNewtonCoreset starts from (OMP on the pool) when SparseVI's is further
        away (by more than 0.1 nats).
    start_laplace_kl_ : float
        The same KL of that Hilbert coreset.
    n_features_in_ : int
        Number of features seen in fit.
    feature_names_in_ : ndarray of str
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    QuasiNewtonCoreset : A Hilbert or uniform support, quasi-Newton weights; cheaper.
    GIGACoreset : The greedy Hilbert method, on a projection instead of draws.

    Examples
    --------
    >>> from skcoreset.coreset import SparseVICoreset
    >>> from skcoreset.datasets import load_phishing
    >>> X, y = load_phishing(return_X_y=True)
    >>> cs = SparseVICoreset(n_points=20, n_draws=100, n_rounds=5, random_state=0).fit(X, y)
    >>> cs.n_points_ <= 20
    True
    """

    _parameter_constraints: dict = {
        **_KLCoreset._parameter_constraints,
        "n_draws": [Interval(Integral, 2, None, closed="left")],
        "n_rounds": [Interval(Integral, 1, None, closed="left")],
        "n_steps": [Interval(Integral, 0, None, closed="left")],
        "n_polish": [Interval(Integral, 0, None, closed="left")],
        "step_size": [Interval(Real, 0, None, closed="neither")],
        "tau": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        n_points="auto",
        *,
        model="auto",
        prior_scale="auto",
        fit_intercept=True,
        block_size="auto",
        n_candidates="auto",
        full_batch=None,
        n_draws=200,
        n_rounds=50,
        n_steps=0,
        n_polish=60,
        step_size=0.5,
        tau=0.1,
        n_chains=4,
        max_seconds=None,
        progress=False,
        verbose=0,
        random_state=None,
    ):
        self.n_points = n_points
        self.model = model
        self.prior_scale = prior_scale
        self.fit_intercept = fit_intercept
        self.block_size = block_size
        self.n_candidates = n_candidates
        self.full_batch = full_batch
        self.n_draws = n_draws
        self.n_rounds = n_rounds
        self.n_steps = n_steps
        self.n_polish = n_polish
        self.step_size = step_size
        self.tau = tau
        self.n_chains = n_chains
        self.max_seconds = max_seconds
        self.progress = progress
        self.verbose = verbose
        self.random_state = random_state

    def _select(self, problem, node, total, random_state):
        idx, w, n_iter, reason = self._optimise(
            problem, None, len(node), self._target_size, total, self.max_seconds,
            self._show_core_progress(),
        )  # fmt: skip
        if reason in _EARLY_STOPS:
            if idx.shape[0] == 0:
                raise ValueError(
                    f"SparseVICoreset found no point: {_EARLY_STOPS[reason]}. Check the "
                    "features' scale (standardise them, for example with StandardScaler), or "
                    "use QuasiNewtonCoreset."
                )
            warn(
                f"SparseVICoreset stopped at {idx.shape[0]} of {self._target_size} points: "
                f"{_EARLY_STOPS[reason]}. The coreset may be far from the full posterior; "
                "try more points, a larger n_draws, or QuasiNewtonCoreset.",
                UserWarning,
            )
        return idx, w, {"n_iter": n_iter, "stop_reason": reason}

    def _optimise(self, problem, start, n_candidates, size, total, max_seconds, progress):
        return _kl.sparse_vi(
            problem,
            n_candidates,
            size,
            n_draws=self.n_draws,
            n_rounds=self.n_rounds,
            n_steps=self.n_steps,
            n_polish=self.n_polish,
            step_size=self.step_size,
            tau=self.tau,
            max_step=total / size,
            max_weight=total,
            # the first round's draws are of the data's Laplace fit (every weight is zero);
            # later rounds draw from the coreset posterior, which fewer points than
            # parameters leave nearly improper: pin every parameter down from the good draws
            first_round=problem.n_params,
            max_seconds=max_seconds,
            progress=progress,
        )


class CoresetMCMC(_KLCoreset):
    """Coreset MCMC: MALA chains on the coreset posterior that train its weights.

    Chen & Campbell (2024): ``n_chains`` MALA chains target the coreset posterior pi_w of
    a support of at most ``n_points`` rows (OMP's Hilbert coreset by default, or the paper's
    uniform subset weighted W / M: ``init``), and after every transition the chains' states
    give the Monte Carlo gradient of KL(pi_w || pi) for an ADAM step on the weights, clipped
    at 0. The weights kept are the average of the iterates over the second half of training.
    Then the weights are fixed and the chains, at a frozen step size, draw ``n_samples`` each:
    ``coef_samples_`` and ``intercept_samples_``, like the Bayesian regressors of
    :mod:`skcoreset.linear_model`.

    Parameters
    ----------
    n_points : int or 'auto', default='auto'
        Coreset size M: the most distinct points (OMP's start has at most 500, the dimension
        of its projection; some weights may end at zero). When M is not smaller than the
        number of rows with positive weight, every such row is kept (and the chains sample
        the full posterior). 'auto': (P + 1)(P + 2) / 2 for P parameters (features plus
        intercept), between 100 and 500.
    model : 'auto', str or GLM, default='auto'
        The likelihood: a name of ``skcoreset.models.MODEL_NAMES`` or a model object. 'auto'
        takes it from the estimator the coreset feeds in a pipeline or meta-estimator, otherwise
        from ``y``.
    prior_scale : float, array-like of shape (n_features + fit_intercept,) or 'auto', \
            default='auto'
        Standard deviation of the Gaussian prior. 'auto' follows the scale of the data (see
        :func:`~skcoreset.models.default_prior_scale`); an array gives one per coefficient,
        the intercept's last (as ``prior_scale_`` reports it).
    fit_intercept : bool, default=True
        Whether the likelihood has an intercept.
    block_size : int or 'auto', default='auto'
        Rows per block of the one pass over the data (about 128 MB of working memory for
        'auto').
    n_candidates : int or 'auto', default='auto'
        Rows of the pool sampled in the pass (proportional to ``sample_weight``): the support
        is chosen among them, and the full-data log-likelihood at each step is estimated on
        them. A quarter as many rows again join the pool as candidates only, those whose
        log-likelihood varies most under the data's Laplace fit (see
        :class:`QuasiNewtonCoreset`). Data of at most 1.25 ``n_candidates`` rows are pooled
        whole. 'auto': max(10 000, 50 n_points).
    init : {'omp', 'uniform'}, default='omp'
        The support and weights the optimisation starts from. 'omp': the Hilbert coreset of
        :class:`OMPCoreset` among the pooled rows, aimed at the full data's log-likelihood
        (at most ``n_points`` rows). 'uniform': ``n_points`` pooled rows weighted
        ``W / n_points``, as in the paper (a sample proportional to ``sample_weight``; no
        rows join the pool for their spread); at small sizes its coreset posterior is often
        nearly improper (separable or unidentified), and the Monte Carlo steps then wander.
    n_chains : int, default=4
        MALA chains (at least 2: the gradient is a covariance across them).
    n_train : int, default=2000
        Training transitions, each followed by an ADAM step on the weights.
    learning_rate : float, default=0.003
        ADAM's step, relative to the uniform weight W / M (W the data's total weight, M the
        size; not the start's mean, which one huge OMP weight can dominate); it decays as
        1 / sqrt(1 + t / 100). ADAM moves every weight by about this step whatever the size
        of its gradient, so near a good start the noise of the chains' draws moves the
        weights away from it. From OMP's start at 100 and 500 points of AirportDelays (KL
        0.085 and 0.056 to the full posterior), 0.01 ended at 0.15 and 0.17, 0.003 at 0.085
        and 0.059; on Phishing at 50 points, 0.051 against 0.042 (OMP 0.040). At 10 points
        of BikeTrips, far from the optimum, 0.003 took OMP's 1.1e5 to 66 (0.01: 43).
    full_batch : int, 'auto' or None, default='auto'
        Pooled rows drawn at each training step for the full-data log-likelihood (all the
        pool for None; 'auto': 1000). The estimate is controlled by the exact second-order
        Taylor sum of all the data, so a batch only estimates a small remainder: on Phishing
        and BikeTrips (50 to 1000 points) batches of 300 and 1000 rows gave the KL of the
        whole pool, at a fraction of the cost of each step.
    n_samples : int, default=1000
        Draws per chain after training, with the weights fixed.
    max_seconds : float or None, default=None
        Time budget of the training (checked after each step).
    progress : bool, default=False
        Show a tqdm progress bar of the training (needs the optional tqdm).
    verbose : int, default=0
        Print the phases of the fit and their durations.
    random_state : int, RandomState instance or None, default=None
        Seeds the pool, the support and the chains.

    Attributes
    ----------
    sample_indices_ : ndarray of shape (``n_points_``,)
        Sorted indices of the selected rows.
    sample_weight_ : ndarray of shape (``n_points_``,)
        Their positive weights.
    coef_samples_ : ndarray of shape (n_chains, n_samples, n_features)
        Posterior draws of the coefficients with the trained weights.
    intercept_samples_ : ndarray of shape (n_chains, n_samples)
        Posterior draws of the intercept (zeros without intercept).
    acceptance_rate_ : ndarray of shape (n_chains,)
        Acceptance rate of the sampling phase, per chain.
    model_ : str
        The resolved model.
    laplace_ : LaplaceApproximation
        The data's Laplace fit: the chains start from it and are preconditioned with it, and
        ``laplace_kl_`` measures against it (a stream's, from the pooled rows and the sums
        of all its rows: its first rows alone made the one its blocks were summarised at).
    prior_scale_ : ndarray
        The prior's standard deviations.
    n_iter_ : int
        Training steps taken.
    stop_reason_ : str
        'max_iter', 'max_seconds', or 'all_rows' when every row was kept.
    laplace_kl_ : float
        The coreset's quality: the KL divergence, in nats, of the Laplace fit of its
        posterior to the data's (``laplace_``), every parameter included (a free extra
        parameter's log too), under the data's prior; 0 when every row is kept, inf when
        its posterior has no proper Laplace fit. Above P (P + 3) / 80 000 for P parameters,
        a fifth of the default sampler's Monte Carlo error, the fit warns
        (:class:`CoresetQualityWarning`). The kept coreset's: the optimised weights', or
        their start's when the optimisation ended further away (by more than 0.1 nats).
    start_laplace_kl_ : float
        The same KL of the start (a Hilbert coreset of the pool).
    n_features_in_ : int
        Number of features seen in fit.
    feature_names_in_ : ndarray of str
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    QuasiNewtonCoreset : The same support, with quasi-Newton weights.
    skcoreset.linear_model.BayesianLogisticRegression : MALA on given weighted rows.

    Examples
    --------
    >>> from skcoreset.coreset import CoresetMCMC
    >>> from skcoreset.datasets import load_phishing
    >>> X, y = load_phishing(return_X_y=True)
    >>> cs = CoresetMCMC(n_points=20, n_train=200, n_samples=100, random_state=0).fit(X, y)
    >>> cs.coef_samples_.shape
    (4, 100, 10)
    """

    _parameter_constraints: dict = {
        **_KLCoreset._parameter_constraints,
        "n_train": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "init": [StrOptions({"omp", "uniform"})],
        "n_samples": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        n_points="auto",
        *,
        model="auto",
        prior_scale="auto",
        fit_intercept=True,
        block_size="auto",
        n_candidates="auto",
        init="omp",
        n_chains=4,
        n_train=2000,
        learning_rate=0.003,
        full_batch="auto",
        n_samples=1000,
        max_seconds=None,
        progress=False,
        verbose=0,
        random_state=None,
    ):
        self.n_points = n_points
        self.model = model
        self.prior_scale = prior_scale
        self.fit_intercept = fit_intercept
        self.block_size = block_size
        self.n_candidates = n_candidates
        self.init = init
        self.n_chains = n_chains
        self.n_train = n_train
        self.learning_rate = learning_rate
        self.full_batch = full_batch
        self.n_samples = n_samples
        self.max_seconds = max_seconds
        self.progress = progress
        self.verbose = verbose
        self.random_state = random_state

    def _select(self, problem, node, total, random_state):
        idx, w0 = start = self._initial_support(problem, node, random_state)
        # the chains start in the coreset posterior: a warm-up at the initial weights
        problem.draws(idx, w0, 10 * problem.chains.n_chains)
        idx, w, n_iter, reason = self._optimise(
            problem, start, len(node), self._target_size, total, self.max_seconds,
            self._show_core_progress(),
        )  # fmt: skip
        return idx, w, {"n_iter": n_iter, "stop_reason": reason, "start": start}

    def _optimise(self, problem, start, n_candidates, size, total, max_seconds, progress):
        idx, w0 = start
        w, n_iter, reason = _kl.coreset_mcmc(
            problem,
            idx,
            w0,
            n_train=self.n_train,
            learning_rate=self.learning_rate,
            weight_scale=total / size,
            max_seconds=max_seconds,
            progress=progress,
        )
        return idx, w, n_iter, reason

    def _finish(self, node, context):
        fitted = super()._finish(node, context)
        problem = (node.info or {}).get("problem")
        with phase(self, "sampling with the trained weights"):
            if problem is None:  # every row kept: chains on the exact posterior
                problem = self._exact_problem(node, context)
                fitted["laplace_"] = problem.start
            design = problem.model.design(node.X)
            chains = problem.chains
            chains.set_target(design, node.y, node.weights)
            _, acc = chains.advance(BURN_IN)
            chains.tune(acc)
            draws, fitted["acceptance_rate_"] = chains.advance(self.n_samples, store=True)
        model = problem.model
        if model.n_extra:  # a free extra parameter's log comes last
            fitted[f"{model.extra_name}_samples_"] = np.exp(draws[:, :, -1])
            draws = draws[:, :, :-1]
        n_coef = draws.shape[2] - self.fit_intercept
        fitted["coef_samples_"] = np.ascontiguousarray(draws[:, :, :n_coef])
        if self.fit_intercept:
            fitted["intercept_samples_"] = np.ascontiguousarray(draws[:, :, n_coef])
        else:
            fitted["intercept_samples_"] = np.zeros(draws.shape[:2])
        return fitted

    def _exact_problem(self, node, context):
        """Chains for a coreset that is every row (no training happened)."""
        model, rng = context.model, context.random_state
        Xd = model.design(node.X)
        laplace = laplace_approximation(model, Xd, node.y, node.weights, design=True)
        chains = _chains(laplace, np.tile(laplace.mean, (self.n_chains, 1)), rng)
        return GLMProblem(laplace.free_model, Xd, node.y, node.weights, chains, rng, start=laplace)


def _chains(laplace, init, random_state):
    """MALA chains on all the parameters of ``laplace``'s posterior (a free extra
    parameter's log, under its prior, last), started at ``init`` and preconditioned with its
    factor; their target is set later."""
    model = laplace.model
    extra_prior = model.extra_prior if laplace.n_extra else None
    return MALAChains(
        model, init, model.prior_scale, model.extra_value, laplace.chol, random_state, extra_prior
    )
