"""Hilbert coreset estimators: Laplace fit -> random projection -> weights (array API).

Each estimator is thin: ``_HilbertCoreset`` does the statistics (model, Laplace fit,
projection) and a subclass names the private core of one :mod:`skcoreset.hilbert` function
and its options in ``_select``.
"""

import logging
from dataclasses import replace
from numbers import Integral, Real

import numpy as np

from .._logging import phase
from .._sklearn_compat import Interval, StrOptions
from .._warnings import warn
from ..hilbert._common import relative_error, row_norms_and_sum
from ..hilbert._greedy import _frank_wolfe, _giga
from ..hilbert._iht import _iht
from ..hilbert._omp import QUANTIZE_FROM, _omp, pool_search
from ..hilbert._sampling import _importance, _uniform
from ..models._laplace import laplace_of_all_rows, laplace_of_sample, pilot_of_rows, pilot_rows
from ..projection import PROJECTIONS, Projection
from ._base import BaseCoreset
from ._construction import OVERFLOW, Context, check_overflow
from ._growth import grow
from ._kl_problem import Taylor
from ._merge_reduce import Node
from ._taylor import sample_weights, split_summary, spread_keys

# n_candidates='auto': a pool of max(10 000, 50 n_points) rows. On N = 2e5 logistic rows
# (D = 20, J = 1000, M = 100) OMP's Laplace KL to the full posterior, median of 4 seeds, was
# 0.055 choosing among all rows, 0.078 from a pool of 50 M, 0.10 from 20 M.
_POOL_MIN = 10_000
_POOL_PER_POINT = 50


class _HilbertCoreset(BaseCoreset):
    """Shared statistics of the Hilbert coreset estimators (do not use directly)."""

    #: How it builds multilevel coresets (:mod:`._multilevel`): rows chosen on projections.
    _multilevel = "hilbert"

    #: Rows of the candidate pools (a parameter of the greedy methods); the sampling methods
    #: (uniform, importance) pool nothing.
    n_candidates = None

    # a leaf's summary builds its float64 design chunk by chunk, from float32 rows as stored:
    # only the pooled rows are then copied to float64, not the block
    _leaf_dtype = (np.float64, np.float32)

    _parameter_constraints: dict = {
        **BaseCoreset._parameter_constraints,
        "projection": [StrOptions(set(PROJECTIONS))],
        "n_projections": [Interval(Integral, 2, None, closed="left")],
        "laplace_subsample": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto"}),
            None,
        ],
        "dtype": [StrOptions({"float64", "float32"})],
        "progress": ["boolean"],
    }

    def __init__(
        self,
        n_points="auto",
        *,
        model="auto",
        projection="loglik",
        n_projections=500,
        prior_scale="auto",
        fit_intercept=True,
        laplace_subsample="auto",
        dtype="float64",
        block_size="auto",
        progress=False,
        random_state=None,
        verbose=0,
    ):
        self.n_points = n_points
        self.model = model
        self.projection = projection
        self.n_projections = n_projections
        self.prior_scale = prior_scale
        self.fit_intercept = fit_intercept
        self.laplace_subsample = laplace_subsample
        self.dtype = dtype
        self.block_size = block_size
        self.progress = progress
        self.random_state = random_state
        self.verbose = verbose

    # -- the hooks of the block construction ------------------------------------------------
    def _begin(self, data, model, random_state, summarised=False):
        """The Laplace fit (on a uniform subsample of the rows, or all of them) and the J
        parameter draws every block is projected with; for a pool of candidates, the fit
        alone (of a sample of rows when they are many blocks: a pilot), at which every block
        is summarised: the pool is drawn by weight times spread, and its rows projected at
        the end, at draws of the data's fit, toward the control variate of the data's sum
        (:meth:`_finalize`). ``laplace_subsample=None`` asks for the exact projection of
        every row."""
        if self._pool_size() is not None and self.laplace_subsample is not None:
            with phase(self, f"Laplace fit ({model.name} model)"):
                laplace, indices, pilot = pilot_of_rows(data, model, random_state)
            self._warn_dimension(laplace)
            return Context(
                model, laplace=laplace, laplace_indices=indices, summarised=True, pilot=pilot
            )
        with phase(self, f"Laplace fit ({model.name} model)"):
            laplace, indices = self._laplace(data, model, random_state)
        self._warn_dimension(laplace)
        projection = Projection.draw(
            laplace,
            projection=self.projection,
            n_projections=self.n_projections,
            dtype=self.dtype,
            random_state=random_state,
        )
        return Context(model, laplace=laplace, projection=projection, laplace_indices=indices)

    def _warn_dimension(self, laplace):
        """A warning when the projection has fewer dimensions than the posterior."""
        n_params = laplace.mean.shape[0]
        dim = self.n_projections - (self.projection == "loglik")  # centring removes one
        if dim < n_params:
            warn(
                f"n_projections={self.n_projections} gives a projection of dimension {dim}, "
                f"fewer than the model's {n_params} parameters: it cannot tell apart coresets "
                "that differ in the posterior, so hilbert_error_ will look better than the "
                "coreset is. Use at least a few times the number of parameters.",
                UserWarning,
            )

    def _pilot_size(self, n_rows, block_rows):
        """A pool's pilot: ``laplace_subsample`` rows, or for 'auto' :func:`~skcoreset.
        models._laplace.pilot_rows`, when the rows are many blocks."""
        if self._pool_size() is None or self.laplace_subsample is None or n_rows <= block_rows:
            return None
        if self.laplace_subsample == "auto":
            return pilot_rows(n_rows, block_rows)
        return int(self.laplace_subsample)

    def _begin_exact(self, data, model, random_state):
        """Every row is kept: the Laplace fit alone, reported as ``laplace_``."""
        if self.projection is None:
            return Context(model)
        laplace, indices = self._laplace(data, model, random_state)
        return Context(model, laplace=laplace, laplace_indices=indices)

    def _laplace(self, data, model, random_state):
        """``(fit, start rows)``: the Laplace fit of the posterior on ``laplace_subsample``
        rows drawn uniformly among those with positive weight (weights scaled up to the
        total), or on all of them."""
        size = self.laplace_subsample
        if size != "auto":
            sample = laplace_of_sample(data, model, size, random_state)
            if sample is not None:
                return sample
        start = "auto" if size == "auto" else None
        return laplace_of_all_rows(data, model, random_state, start)

    def _capacity(self):
        pool = self._pool_size()
        return self._target_size if pool is None else pool

    def _pool_size(self):
        """Rows of the candidate pools, or None (the algorithm reduces every node)."""
        n_candidates = self.n_candidates
        if self.projection is None or n_candidates is None:
            return None
        if n_candidates == "auto":
            size = max(_POOL_MIN, _POOL_PER_POINT * self._target_size)
        else:
            size = int(n_candidates)
        return size if size > self._target_size else None

    def _bytes_per_row(self, n_features):
        if self._pool_size() is not None:  # only sums and norms of a block: no vectors kept
            return super()._bytes_per_row(n_features)
        # the projected vectors dominate: J entries per row, plus the design row
        J = self.n_projections if self.projection is not None else 1
        return J * np.dtype(self.dtype).itemsize + super()._bytes_per_row(n_features)

    def _vectors(self, node, context):
        """The rows' vectors, scaled by their weights."""
        projection = context.projection
        Xd = projection.model.design(node.X)
        return projection.transform(Xd, node.y, node.weights)

    def _summarize(self, node, context, random_state):
        """The node's exact projected sum; with candidate pools, also its sampling keys (a
        summarised fit's pool: of a sample proportional to weight times spread, which the
        construction measured, the Laplace counterpart of the projection's norm)."""
        projection = context.projection
        if projection is None:
            if node.spread is not None and node.keys is None and self._pool_size() is not None:
                node.keys = spread_keys(node.weights, node.spread, random_state)
            return node
        with phase(self, f"projection pass over {len(node)} rows", self._block_level()):
            Xd = projection.model.design(node.X)
            total, norms = projection.summarize(Xd, node.y, node.weights)
            check_overflow(total, norms)
        if node.summary is None:
            node.summary = total
        if self._pool_size() is not None:
            # Efraimidis-Spirakis keys: the rows with the largest log(u) / ||w_n v_n|| are a
            # sample without replacement with probabilities proportional to the norms.
            u = random_state.random_sample(len(node))
            with np.errstate(divide="ignore"):
                node.keys = np.where(norms > 0, np.log(u) / norms, -np.inf)
        return node

    def _reduce(self, node, context, random_state):
        pool = self._pool_size()
        if pool is None:
            return self._select_coreset(node, context, random_state)
        if node.keys is None:
            node = self._summarize(node, context, random_state)
        return node.subset(node.top_keys(pool))

    def _finalize(self, node, context, random_state):
        if self._pool_size() is None or len(node) <= self._target_size:
            return node
        # the final selection is a phase of the whole fit, however many blocks came before
        if context.projection is None:  # a summarised fit's pool: projected now
            context, vectors = self._projected_pool(node, context, random_state)
            norms = node.weights * node.spread  # what its keys were drawn with
        else:
            vectors = self._pool_vectors(node, context, logging.INFO)
            norms = vectors[1]
        V, sigma, target = vectors
        coreset = self._select_coreset(node, context, random_state, logging.INFO, vectors)
        if self.n_points != "auto" or context.data_fit is None:
            return coreset
        with phase(self, "size: grown until the posterior is within the target"):
            grown = grow(coreset, node, norms, context.data_fit, len(node))
        if grown is not coreset and self.projection is not None:  # its projection's error
            w = np.zeros(len(node))
            w[np.searchsorted(node.indices, grown.indices)] = grown.weights
            grown.info["error"] = self._measured_error(V, w / node.weights, target)
        grown.summary = target
        return grown

    def _projected_pool(self, node, context, random_state):
        """``(context, (V, sigma, target))`` of a summarised fit's pool: the projection drawn
        from the data's fit (the context's now), the pooled rows' vectors and norms, and the
        data's projected sum estimated from them: the pool's rows but the last key's at their
        Horvitz-Thompson weights (:func:`~._taylor.sample_weights`: a sample proportional to
        weight times spread) under the control variate of the data's second-order sums
        (:class:`~._kl_problem.Taylor`), whose remainder is third order in the distance from
        their expansion point, the data's mode or near it."""
        projection = Projection.draw(
            context.data_fit,
            projection=self.projection,
            n_projections=self.n_projections,
            dtype=self.dtype,
            random_state=random_state,
        )
        context = replace(context, projection=projection)
        V, sigma, rowsum = self._pool_vectors(node, context, logging.INFO)
        P = context.expansion.mean.shape[0]
        _, count, G, H = split_summary(context.sums, P)
        positions, weights, _ = sample_weights(node, count)
        if positions.shape[0] == len(node) and np.array_equal(weights, node.weights):
            return context, (V, sigma, rowsum)  # the pool is every row: the exact sum
        scale = weights / node.weights[positions]
        target = scale @ V[positions].astype(np.float64)
        Xd = projection.model.design(node.X[positions])
        taylor = Taylor(
            context.expansion, G, H, Xd, node.y[positions], weights, around=context.data_fit
        )
        target += taylor.projection_correction(projection)
        return context, (V, sigma, target)

    def _pool_vectors(self, node, context, level):
        """``(V, sigma, target)``: the node's rows' vectors (scaled by their weights), their
        norms, and the summary of its data the selection aims at."""
        if context.projection is None:
            what = f"weights of {len(node)} rows"
        else:
            J = context.projection.n_projections
            what = f"projection of {len(node)} rows onto {J} features"
        with phase(self, what, level):
            V = self._vectors(node, context)
        try:
            sigma, rowsum = row_norms_and_sum(V)
        except ValueError:  # the projected terms overflowed: say what the user can change
            raise ValueError(OVERFLOW) from None
        return V, sigma, rowsum if node.summary is None else node.summary

    def _select_coreset(self, node, context, random_state, level=None, vectors=None):
        """The algorithm on the node's rows, aiming at the exact summary of its data
        (``vectors``: :meth:`_pool_vectors`, when the caller has them)."""
        level = self._block_level() if level is None else level
        if vectors is None:
            vectors = self._pool_vectors(node, context, level)
        V, sigma, target = vectors
        name = f"selection: {type(self).__name__} of {self._target_size} among {len(node)} rows"
        with phase(self, name, level):
            w, n_iter, reason = self._select(V, sigma, target, random_state)
        idx = np.flatnonzero(w)
        info = {"n_iter": int(n_iter), "stop_reason": reason}
        if self.projection is not None:
            info["error"] = self._measured_error(V, w, target)
        # The vectors were scaled by the node's weights: a point's weight is the product.
        return Node(
            indices=node.indices[idx],
            weights=w[idx] * node.weights[idx],
            X=node.X[idx],
            y=node.y[idx],
            summary=target,
            info=info,
        )

    def _finish(self, node, context):
        fitted = {}
        if context.data_fit is not None:
            fitted["laplace_"] = context.data_fit
            fitted["laplace_indices_"] = context.laplace_indices
        info = node.info
        if info is None or "union_of" in info:  # the final node was small enough to keep
            info = {"n_iter": 0, "stop_reason": "all_rows"}
            if context.projection is not None and node.summary is not None:
                V = self._vectors(node, context)
                info["error"] = self._measured_error(V, np.ones(len(node)), node.summary)
        fitted["n_iter_"] = info.get("n_iter", 0)
        fitted["stop_reason_"] = info["stop_reason"]
        if "error" in info:
            fitted["hilbert_error_"] = info["error"]
        elif info["stop_reason"] == "all_rows" and self.projection is not None:
            fitted["hilbert_error_"] = 0.0  # every row kept: the exact coreset
        return fitted

    @staticmethod
    def _measured_error(V, w, target):
        """The relative error, or NaN when the projection measured nothing (zero target)."""
        if not np.any(target):
            warn(
                "The projected log-likelihoods sum to zero: the projection measured nothing, "
                "so hilbert_error_ is NaN. Increase n_projections.",
                UserWarning,
            )
            return float("nan")
        return relative_error(V, w, target)

    def _select(self, vectors, sigma, target, random_state):
        """``(w, n_iter, stop_reason)`` from one core of :mod:`skcoreset.hilbert`."""
        raise NotImplementedError


class UniformCoreset(_HilbertCoreset):
    """Uniform subsampling: M distinct points, each weighted N / M.

    The baseline every other method must beat. The projection is only computed to report
    ``hilbert_error_`` (set ``projection=None`` to skip it).

    Parameters
    ----------
    n_points : int or 'auto', default='auto'
        Coreset size M: the number of distinct points, or the number of draws with
        ``replace=True`` (then the distinct points may be fewer). When M is not smaller than
        the number of rows with positive weight, every such row is kept.
        'auto': enough points to pin down the posterior's mean and covariance,
        (P + 1)(P + 2) / 2 for P parameters (features plus intercept), between 100 and
        500 (not grown further: a coreset above the quality target warns, where
        :class:`OMPCoreset`'s grows).
    model : 'auto', str or GLM, default='auto'
        The likelihood of the projection. 'auto' takes it from the estimator the coreset
        feeds in a pipeline or meta-estimator, otherwise from ``y``: two values give
        'logistic', non-integer real values 'gaussian'; integer targets with more values are
        ambiguous and refused.
    projection : {'loglik', 'fisher'} or None, default='loglik'
        None skips the projection and ``hilbert_error_``. Otherwise the random features of
        the per-datum log-likelihoods (doc/algorithms.md, section 1): centred
        log-likelihoods at parameter draws, or random coordinates of their gradients.
    n_projections : int, default=500
        Dimension J of the projection (at least 2).
    prior_scale : float, array-like of shape (n_features + fit_intercept,) or 'auto', \
            default='auto'
        Standard deviation of the Gaussian prior of the Laplace fit. 'auto' follows the scale
        of the data (see :func:`~skcoreset.models.default_prior_scale`), as the Bayesian
        regressors' default does; a number applies to every parameter, an array gives one
        per coefficient, the intercept's last (as ``prior_scale_`` reports it).
    fit_intercept : bool, default=True
        Whether the likelihood has an intercept.
    laplace_subsample : int, 'auto' or None, default='auto'
        Rows of the Laplace fit the projection draws its parameters from. 'auto': all of
        them, by Newton passes over the blocks started from a fit of a hundredth of them
        (10 000 to 30 000 rows; one fit of the data when it is a single block). An int:
        that many rows drawn uniformly (weights scaled up to the total) and no pass over the
        others; faster, but the draws then miss the full posterior by about sqrt(N / n)
        standard deviations. None: Newton on all rows from the start.
    dtype : {'float64', 'float32'}, default='float64'
        Storage of the projected vectors of a block, the largest allocation of a fit.
    block_size : int or 'auto', default='auto'
        Rows per block: the data are read, projected and reduced one block at a time and
        the results merged in a binary tree (merge-reduce), so memory stays bounded whatever
        the number of rows. 'auto' sizes a block to about 128 MB of working memory.
    replace : bool, default=False
        Draw with replacement (the formula of the papers: weights (N / M) count_n) instead
        of M distinct points.
    progress : bool, default=False
        Accepted for a uniform interface; uniform sampling is instantaneous.
    random_state : int, RandomState instance or None, default=None
        Seeds the projection and the draws.
    verbose : int, default=0
        Print the phases of the fit (Laplace fit, projection, selection) with their
        durations when positive; 2 also prints the phases of every block and merge of a
        large fit. They are always logged to the ``skcoreset`` logger (INFO, and DEBUG for
        the per-block phases).

    Attributes
    ----------
    sample_indices_ : ndarray of shape (``n_points_``,)
        Sorted indices of the selected rows.
    sample_weight_ : ndarray of shape (``n_points_``,)
        Their positive weights.
    hilbert_error_ : float
        The projection's error: the relative error ||Phi w - y|| / ||y|| in the projection
        space (only with a projection; NaN when the projection measured nothing). It can be
        small where the posterior is not (a projection of fewer dimensions than it needs):
        ``laplace_kl_`` judges the posterior.
    model_ : str
        The resolved model.
    laplace_ : LaplaceApproximation
        The data's Laplace fit, every parameter of the posterior included: the projection
        draws from it (its first call's, for a stream), and ``laplace_kl_`` measures against
        it (a stream's: of everything seen).
    laplace_kl_ : float
        The coreset's quality: the KL divergence, in nats, of the Laplace fit of its
        posterior to the data's (``laplace_``), every parameter included (a free extra
        parameter's log too), under the data's prior; 0 when every row is kept, inf when
        its posterior has no proper Laplace fit. Above P (P + 3) / 80 000 for P parameters,
        a fifth of the default sampler's Monte Carlo error, the fit warns
        (:class:`CoresetQualityWarning`).
    n_iter_ : int
        Number of draws.
    stop_reason_ : str
        'size_reached', or 'all_rows' when every row was kept.
    n_features_in_ : int
        Number of features seen in fit.
    feature_names_in_ : ndarray of str
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    ImportanceCoreset : Draws proportional to the projection norms.

    Examples
    --------
    >>> from skcoreset.coreset import UniformCoreset
    >>> from skcoreset.datasets import load_phishing
    >>> X, y = load_phishing(return_X_y=True)
    >>> cs = UniformCoreset(n_points=50, projection=None, random_state=0).fit(X, y)
    >>> cs.n_points_, round(float(cs.sample_weight_[0]), 1)
    (50, 221.1)
    """

    _parameter_constraints: dict = {
        **_HilbertCoreset._parameter_constraints,
        "projection": [StrOptions(set(PROJECTIONS)), None],
        "replace": ["boolean"],
    }

    def __init__(
        self,
        n_points="auto",
        *,
        model="auto",
        projection="loglik",
        n_projections=500,
        prior_scale="auto",
        fit_intercept=True,
        laplace_subsample="auto",
        dtype="float64",
        block_size="auto",
        replace=False,
        progress=False,
        random_state=None,
        verbose=0,
    ):
        super().__init__(
            n_points,
            model=model,
            projection=projection,
            n_projections=n_projections,
            prior_scale=prior_scale,
            fit_intercept=fit_intercept,
            laplace_subsample=laplace_subsample,
            dtype=dtype,
            block_size=block_size,
            progress=progress,
            random_state=random_state,
            verbose=verbose,
        )
        self.replace = replace

    def _begin(self, data, model, random_state, summarised=False):
        if self.projection is None:
            return Context(model)
        return super()._begin(data, model, random_state, summarised)

    def _vectors(self, node, context):
        if context.projection is None:
            # Only the data's weights matter to the draw; no error is reported.
            return node.weights[:, None].copy()
        return super()._vectors(node, context)

    def _select(self, vectors, sigma, target, random_state):
        return _uniform(
            vectors,
            self._target_size,
            sigma,
            target,
            replace=self.replace,
            random_state=random_state,
        )


class ImportanceCoreset(_HilbertCoreset):
    """Hilbert importance sampling: draws proportional to the projection norms.

    p_n = ||v_n|| / sum_m ||v_m||; M draws with replacement; w_n = count_n / (M p_n)
    (doc/algorithms.md, section 2).

    Parameters
    ----------
    n_points : int or 'auto', default='auto'
        Coreset size M: the number of draws (with replacement), so the distinct points may
        be fewer. When M is not smaller than the number of rows with positive weight, every
        such row is kept.
        'auto': enough points to pin down the posterior's mean and covariance,
        (P + 1)(P + 2) / 2 for P parameters (features plus intercept), between 100 and
        500 (not grown further: a coreset above the quality target warns, where
        :class:`OMPCoreset`'s grows).
    model : 'auto', str or GLM, default='auto'
        The likelihood: a name of ``skcoreset.models.MODEL_NAMES`` or a model object. 'auto'
        takes it from the estimator the coreset feeds in a pipeline or meta-estimator, otherwise
        from ``y``: two values give 'logistic', non-integer real values 'gaussian'; integer
        targets with more values are ambiguous and refused.
    projection : {'loglik', 'fisher'}, default='loglik'
        Random features of the per-datum log-likelihoods (doc/algorithms.md, section 1):
        centred log-likelihoods at parameter draws, or random coordinates of their gradients.
    n_projections : int, default=500
        Dimension J of the projection (at least 2).
    prior_scale : float, array-like of shape (n_features + fit_intercept,) or 'auto', \
            default='auto'
        Standard deviation of the Gaussian prior of the Laplace fit. 'auto' follows the scale
        of the data (see :func:`~skcoreset.models.default_prior_scale`), as the Bayesian
        regressors' default does; a number applies to every parameter, an array gives one
        per coefficient, the intercept's last (as ``prior_scale_`` reports it).
    fit_intercept : bool, default=True
        Whether the likelihood has an intercept.
    laplace_subsample : int, 'auto' or None, default='auto'
        Rows of the Laplace fit the projection draws its parameters from. 'auto': all of
        them, by Newton passes over the blocks started from a fit of a hundredth of them
        (10 000 to 30 000 rows; one fit of the data when it is a single block). An int:
        that many rows drawn uniformly (weights scaled up to the total) and no pass over the
        others; faster, but the draws then miss the full posterior by about sqrt(N / n)
        standard deviations. None: Newton on all rows from the start.
    dtype : {'float64', 'float32'}, default='float64'
        Storage of the projected vectors of a block, the largest allocation of a fit.
    block_size : int or 'auto', default='auto'
        Rows per block: the data are read, projected and reduced one block at a time and
        the results merged in a binary tree (merge-reduce), so memory stays bounded whatever
        the number of rows. 'auto' sizes a block to about 128 MB of working memory.
    progress : bool, default=False
        Accepted for a uniform interface; the draw is instantaneous.
    random_state : int, RandomState instance or None, default=None
        Seeds the projection and the draws.
    verbose : int, default=0
        Print the phases of the fit (Laplace fit, projection, selection) with their
        durations when positive; 2 also prints the phases of every block and merge of a
        large fit. They are always logged to the ``skcoreset`` logger (INFO, and DEBUG for
        the per-block phases).

    Attributes
    ----------
    sample_indices_ : ndarray of shape (``n_points_``,)
        Sorted indices of the distinct selected rows.
    sample_weight_ : ndarray of shape (``n_points_``,)
        Their positive weights.
    hilbert_error_ : float
        The projection's error: the relative error ||Phi w - y|| / ||y|| in the projection
        space (NaN when the projection measured nothing). It can be small where the
        posterior is not (a projection of fewer dimensions than it needs): ``laplace_kl_``
        judges the posterior.
    model_ : str
        The resolved model.
    laplace_ : LaplaceApproximation
        The data's Laplace fit, every parameter of the posterior included: the projection
        draws from it (its first call's, for a stream), and ``laplace_kl_`` measures against
        it (a stream's: of everything seen).
    laplace_kl_ : float
        The coreset's quality: the KL divergence, in nats, of the Laplace fit of its
        posterior to the data's (``laplace_``), every parameter included (a free extra
        parameter's log too), under the data's prior; 0 when every row is kept, inf when
        its posterior has no proper Laplace fit. Above P (P + 3) / 80 000 for P parameters,
        a fifth of the default sampler's Monte Carlo error, the fit warns
        (:class:`CoresetQualityWarning`).
    n_iter_ : int
        Number of draws.
    stop_reason_ : str
        'size_reached', or 'all_rows' when every row was kept.
    n_features_in_ : int
        Number of features seen in fit.
    feature_names_in_ : ndarray of str
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    UniformCoreset : The baseline.
    SensitivityCoreset : Importance sampling by sensitivity bounds (logistic regression).

    Examples
    --------
    >>> from skcoreset.coreset import ImportanceCoreset
    >>> from skcoreset.datasets import load_phishing
    >>> X, y = load_phishing(return_X_y=True)
    >>> cs = ImportanceCoreset(n_points=50, n_projections=50, random_state=0).fit(X, y)
    >>> cs.n_points_ <= 50
    True
    """

    def _select(self, vectors, sigma, target, random_state):
        return _importance(vectors, self._target_size, sigma, target, random_state=random_state)


class FrankWolfeCoreset(_HilbertCoreset):
    """Hilbert coreset by Frank-Wolfe on the scaled simplex (Campbell & Broderick 2019).

    Minimises ||y - Phi w|| over {w >= 0 : sum_n sigma_n w_n = sigma} by Frank-Wolfe with
    exact line search (doc/algorithms.md, section 3). Iterates until the support reaches
    ``n_points`` or no step improves the fit.

    Parameters
    ----------
    n_points : int or 'auto', default='auto'
        Requested coreset size M: the number of distinct points with nonzero weight. The
        fitted size ``n_points_`` may be smaller when a stop rule fires first; when M is not
        smaller than the number of rows with positive weight, every such row is kept.
        'auto': at first enough points to pin down the posterior's mean and covariance,
        (P + 1)(P + 2) / 2 for P parameters (features plus intercept), between 100 and
        500; then, while ``laplace_kl_`` is above its target, the coreset grows by an
        importance sample of the pool of candidates, calibrated to the data's gradient
        (``coreset._growth``), up to the pool's size (``n_candidates``).
    model : 'auto', str or GLM, default='auto'
        The likelihood: a name of ``skcoreset.models.MODEL_NAMES`` or a model object. 'auto'
        takes it from the estimator the coreset feeds in a pipeline or meta-estimator, otherwise
        from ``y``: two values give 'logistic', non-integer real values 'gaussian'; integer
        targets with more values are ambiguous and refused.
    projection : {'loglik', 'fisher'}, default='loglik'
        Random features of the per-datum log-likelihoods (doc/algorithms.md, section 1):
        centred log-likelihoods at parameter draws, or random coordinates of their gradients.
    n_projections : int, default=500
        Dimension J of the projection (at least 2).
    prior_scale : float, array-like of shape (n_features + fit_intercept,) or 'auto', \
            default='auto'
        Standard deviation of the Gaussian prior of the Laplace fit. 'auto' follows the scale
        of the data (see :func:`~skcoreset.models.default_prior_scale`), as the Bayesian
        regressors' default does; a number applies to every parameter, an array gives one
        per coefficient, the intercept's last (as ``prior_scale_`` reports it).
    fit_intercept : bool, default=True
        Whether the likelihood has an intercept.
    laplace_subsample : int, 'auto' or None, default='auto'
        The pilot: the rows of the first Laplace fit, at whose mean every block is
        summarised in the fit's one pass over the data (its rows' second-order sums, their
        spreads, a sample of them), the data's Laplace fit then made from those sums and
        confirmed by another pass when its predicted error asks (the projection draws its
        parameters from it, and ``laplace_kl_`` measures against it). 'auto': a uniform
        sample of 100 sqrt(N) rows, at most a block's worth (every row when the data are one
        block); an int: that many rows. None: the exact Laplace fit by Newton's passes over
        the blocks, and every row projected (a pass more each, for reference).
    dtype : {'float64', 'float32'}, default='float64'
        Storage of the projected vectors of a block, the largest allocation of a fit.
    block_size : int or 'auto', default='auto'
        Rows per block: the data are read, projected and reduced one block at a time and
        the results merged in a binary tree (merge-reduce), so memory stays bounded whatever
        the number of rows. 'auto' sizes a block to about 128 MB of working memory.
    n_candidates : int, 'auto' or None, default='auto'
        Size of the pool of candidate rows. In the one pass over the data the rows are
        sampled into a pool with probabilities proportional to their spreads under the
        pilot's Laplace fit (the Laplace counterpart of their projections' norms); the pool's
        rows are then projected, at draws of the data's fit, and the algorithm chooses the
        ``n_points`` among them aiming at the data's projected sum, estimated from the pool
        under the control variate of the data's second-order sums (exact when the pool is
        every row): memory bounded by the pool. 'auto': max(10 000, 50 n_points) (on smaller
        data every row is a candidate). None: the algorithm reduces every block and every
        merge of the tree instead, every row projected.
    max_iter : int or None, default=None
        Iteration cap; None allows ``10 * n_points + 100`` (a point can be chosen again).
    progress : bool, default=False
        Show a tqdm progress bar of the construction (needs the optional tqdm).
    random_state : int, RandomState instance or None, default=None
        Seeds the projection.
    verbose : int, default=0
        Print the phases of the fit (Laplace fit, projection, selection) with their
        durations when positive; 2 also prints the phases of every block and merge of a
        large fit. They are always logged to the ``skcoreset`` logger (INFO, and DEBUG for
        the per-block phases).

    Attributes
    ----------
    sample_indices_ : ndarray of shape (``n_points_``,)
        Sorted indices of the selected rows.
    sample_weight_ : ndarray of shape (``n_points_``,)
        Their positive weights.
    hilbert_error_ : float
        The projection's error: the relative error ||Phi w - y|| / ||y|| in the projection
        space (NaN when the projection measured nothing). It can be small where the
        posterior is not (a projection of fewer dimensions than it needs): ``laplace_kl_``
        judges the posterior.
    model_ : str
        The resolved model.
    laplace_ : LaplaceApproximation
        The data's Laplace fit, every parameter of the posterior included: the projection
        draws from it (its first call's, for a stream), and ``laplace_kl_`` measures against
        it (a stream's: of everything seen).
    laplace_kl_ : float
        The coreset's quality: the KL divergence, in nats, of the Laplace fit of its
        posterior to the data's (``laplace_``), every parameter included (a free extra
        parameter's log too), under the data's prior; 0 when every row is kept, inf when
        its posterior has no proper Laplace fit. Above P (P + 3) / 80 000 for P parameters,
        a fifth of the default sampler's Monte Carlo error, the fit warns
        (:class:`CoresetQualityWarning`).
    n_iter_ : int
        Iterations of the algorithm.
    stop_reason_ : str
        Which rule ended the construction: 'size_reached', 'converged', 'numerical_limit',
        'max_iter', 'zero_target', or 'all_rows' when every row was kept.
    n_features_in_ : int
        Number of features seen in fit.
    feature_names_in_ : ndarray of str
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    GIGACoreset : Removes the over-weighting of the fixed scale.

    Examples
    --------
    >>> from skcoreset.coreset import FrankWolfeCoreset
    >>> from skcoreset.datasets import load_phishing
    >>> X, y = load_phishing(return_X_y=True)
    >>> cs = FrankWolfeCoreset(n_points=20, n_projections=50, random_state=0).fit(X, y)
    >>> cs.n_points_, cs.stop_reason_
    (20, 'size_reached')
    """

    _parameter_constraints: dict = {
        **_HilbertCoreset._parameter_constraints,
        "n_candidates": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}), None],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        n_points="auto",
        *,
        model="auto",
        projection="loglik",
        n_projections=500,
        prior_scale="auto",
        fit_intercept=True,
        laplace_subsample="auto",
        dtype="float64",
        block_size="auto",
        n_candidates="auto",
        max_iter=None,
        progress=False,
        random_state=None,
        verbose=0,
    ):
        super().__init__(
            n_points,
            model=model,
            projection=projection,
            n_projections=n_projections,
            prior_scale=prior_scale,
            fit_intercept=fit_intercept,
            laplace_subsample=laplace_subsample,
            dtype=dtype,
            block_size=block_size,
            progress=progress,
            random_state=random_state,
            verbose=verbose,
        )
        self.n_candidates = n_candidates
        self.max_iter = max_iter

    def _select(self, vectors, sigma, target, random_state):
        return _frank_wolfe(
            vectors,
            self._target_size,
            sigma,
            target,
            max_iter=self.max_iter,
            progress=self._show_core_progress(),
        )


class GIGACoreset(FrankWolfeCoreset):
    """Greedy iterative geodesic ascent (Campbell & Broderick 2018).

    Climbs along great circles of the unit sphere toward the normalised target, then rescales
    optimally (doc/algorithms.md, section 4); its error falls geometrically with the size on
    the vector-sum problem of its paper. Iterates until the support reaches ``n_points`` or
    the numerical limit stops it (see ``stop_reason_``).

    Parameters
    ----------
    n_points : int or 'auto', default='auto'
        Requested coreset size M: the number of distinct points with nonzero weight. The
        fitted size ``n_points_`` may be smaller when a stop rule fires first; when M is not
        smaller than the number of rows with positive weight, every such row is kept.
        'auto': at first enough points to pin down the posterior's mean and covariance,
        (P + 1)(P + 2) / 2 for P parameters (features plus intercept), between 100 and
        500; then, while ``laplace_kl_`` is above its target, the coreset grows by an
        importance sample of the pool of candidates, calibrated to the data's gradient
        (``coreset._growth``), up to the pool's size (``n_candidates``).
    model : 'auto', str or GLM, default='auto'
        The likelihood: a name of ``skcoreset.models.MODEL_NAMES`` or a model object. 'auto'
        takes it from the estimator the coreset feeds in a pipeline or meta-estimator, otherwise
        from ``y``: two values give 'logistic', non-integer real values 'gaussian'; integer
        targets with more values are ambiguous and refused.
    projection : {'loglik', 'fisher'}, default='loglik'
        Random features of the per-datum log-likelihoods (doc/algorithms.md, section 1):
        centred log-likelihoods at parameter draws, or random coordinates of their gradients.
    n_projections : int, default=500
        Dimension J of the projection (at least 2).
    prior_scale : float, array-like of shape (n_features + fit_intercept,) or 'auto', \
            default='auto'
        Standard deviation of the Gaussian prior of the Laplace fit. 'auto' follows the scale
        of the data (see :func:`~skcoreset.models.default_prior_scale`), as the Bayesian
        regressors' default does; a number applies to every parameter, an array gives one
        per coefficient, the intercept's last (as ``prior_scale_`` reports it).
    fit_intercept : bool, default=True
        Whether the likelihood has an intercept.
    laplace_subsample : int, 'auto' or None, default='auto'
        The pilot: the rows of the first Laplace fit, at whose mean every block is
        summarised in the fit's one pass over the data (its rows' second-order sums, their
        spreads, a sample of them), the data's Laplace fit then made from those sums and
        confirmed by another pass when its predicted error asks (the projection draws its
        parameters from it, and ``laplace_kl_`` measures against it). 'auto': a uniform
        sample of 100 sqrt(N) rows, at most a block's worth (every row when the data are one
        block); an int: that many rows. None: the exact Laplace fit by Newton's passes over
        the blocks, and every row projected (a pass more each, for reference).
    dtype : {'float64', 'float32'}, default='float64'
        Storage of the projected vectors of a block, the largest allocation of a fit.
    block_size : int or 'auto', default='auto'
        Rows per block: the data are read, projected and reduced one block at a time and
        the results merged in a binary tree (merge-reduce), so memory stays bounded whatever
        the number of rows. 'auto' sizes a block to about 128 MB of working memory.
    n_candidates : int, 'auto' or None, default='auto'
        Size of the pool of candidate rows. In the one pass over the data the rows are
        sampled into a pool with probabilities proportional to their spreads under the
        pilot's Laplace fit (the Laplace counterpart of their projections' norms); the pool's
        rows are then projected, at draws of the data's fit, and the algorithm chooses the
        ``n_points`` among them aiming at the data's projected sum, estimated from the pool
        under the control variate of the data's second-order sums (exact when the pool is
        every row): memory bounded by the pool. 'auto': max(10 000, 50 n_points) (on smaller
        data every row is a candidate). None: the algorithm reduces every block and every
        merge of the tree instead, every row projected.
    max_iter : int or None, default=None
        Iteration cap; None allows ``10 * n_points + 100`` (a point can be chosen again).
    progress : bool, default=False
        Show a tqdm progress bar of the construction (needs the optional tqdm).
    random_state : int, RandomState instance or None, default=None
        Seeds the projection.
    verbose : int, default=0
        Print the phases of the fit (Laplace fit, projection, selection) with their
        durations when positive; 2 also prints the phases of every block and merge of a
        large fit. They are always logged to the ``skcoreset`` logger (INFO, and DEBUG for
        the per-block phases).

    Attributes
    ----------
    sample_indices_ : ndarray of shape (``n_points_``,)
        Sorted indices of the selected rows.
    sample_weight_ : ndarray of shape (``n_points_``,)
        Their positive weights.
    hilbert_error_ : float
        The projection's error: the relative error ||Phi w - y|| / ||y|| in the projection
        space (NaN when the projection measured nothing). It can be small where the
        posterior is not (a projection of fewer dimensions than it needs): ``laplace_kl_``
        judges the posterior.
    model_ : str
        The resolved model.
    laplace_ : LaplaceApproximation
        The data's Laplace fit, every parameter of the posterior included: the projection
        draws from it (its first call's, for a stream), and ``laplace_kl_`` measures against
        it (a stream's: of everything seen).
    laplace_kl_ : float
        The coreset's quality: the KL divergence, in nats, of the Laplace fit of its
        posterior to the data's (``laplace_``), every parameter included (a free extra
        parameter's log too), under the data's prior; 0 when every row is kept, inf when
        its posterior has no proper Laplace fit. Above P (P + 3) / 80 000 for P parameters,
        a fifth of the default sampler's Monte Carlo error, the fit warns
        (:class:`CoresetQualityWarning`).
    n_iter_ : int
        Iterations of the algorithm.
    stop_reason_ : str
        Which rule ended the construction: 'size_reached', 'numerical_limit', 'no_ascent',
        'max_iter', 'zero_target', or 'all_rows' when every row was kept.
    n_features_in_ : int
        Number of features seen in fit.
    feature_names_in_ : ndarray of str
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    OMPCoreset : Smaller errors on GLM posteriors, where GIGA's error saturates.

    Examples
    --------
    >>> from skcoreset.coreset import GIGACoreset
    >>> from skcoreset.datasets import load_phishing
    >>> X, y = load_phishing(return_X_y=True)
    >>> cs = GIGACoreset(n_points=20, n_projections=50, random_state=0).fit(X, y)
    >>> cs.n_points_, cs.hilbert_error_ < 1
    (20, True)
    """

    def _select(self, vectors, sigma, target, random_state):
        return _giga(
            vectors,
            self._target_size,
            sigma,
            target,
            max_iter=self.max_iter,
            progress=self._show_core_progress(),
        )


class IHTCoreset(_HilbertCoreset):
    """Accelerated iterative hard thresholding: A-IHT, or A-IHT II with ``debias=True``.

    Projected gradient on ||y - Phi w||^2 over k-sparse non-negative w with momentum (Zhang,
    Khanna, Kyrillidis, Koyejo 2021; doc/algorithms.md, section 5). The number of iterations
    does not grow with the size, so it is the fastest method for large coresets.

    Parameters
    ----------
    n_points : int or 'auto', default='auto'
        Requested coreset size M: the largest number of distinct points with nonzero weight.
        When M is not smaller than the number of rows with positive weight, every such row
        is kept.
        'auto': at first enough points to pin down the posterior's mean and covariance,
        (P + 1)(P + 2) / 2 for P parameters (features plus intercept), between 100 and
        500; then, while ``laplace_kl_`` is above its target, the coreset grows by an
        importance sample of the pool of candidates, calibrated to the data's gradient
        (``coreset._growth``), up to the pool's size (``n_candidates``).
    model : 'auto', str or GLM, default='auto'
        The likelihood: a name of ``skcoreset.models.MODEL_NAMES`` or a model object. 'auto'
        takes it from the estimator the coreset feeds in a pipeline or meta-estimator, otherwise
        from ``y``: two values give 'logistic', non-integer real values 'gaussian'; integer
        targets with more values are ambiguous and refused.
    projection : {'loglik', 'fisher'}, default='loglik'
        Random features of the per-datum log-likelihoods (doc/algorithms.md, section 1):
        centred log-likelihoods at parameter draws, or random coordinates of their gradients.
    n_projections : int, default=500
        Dimension J of the projection (at least 2).
    prior_scale : float, array-like of shape (n_features + fit_intercept,) or 'auto', \
            default='auto'
        Standard deviation of the Gaussian prior of the Laplace fit. 'auto' follows the scale
        of the data (see :func:`~skcoreset.models.default_prior_scale`), as the Bayesian
        regressors' default does; a number applies to every parameter, an array gives one
        per coefficient, the intercept's last (as ``prior_scale_`` reports it).
    fit_intercept : bool, default=True
        Whether the likelihood has an intercept.
    laplace_subsample : int, 'auto' or None, default='auto'
        The pilot: the rows of the first Laplace fit, at whose mean every block is
        summarised in the fit's one pass over the data (its rows' second-order sums, their
        spreads, a sample of them), the data's Laplace fit then made from those sums and
        confirmed by another pass when its predicted error asks (the projection draws its
        parameters from it, and ``laplace_kl_`` measures against it). 'auto': a uniform
        sample of 100 sqrt(N) rows, at most a block's worth (every row when the data are one
        block); an int: that many rows. None: the exact Laplace fit by Newton's passes over
        the blocks, and every row projected (a pass more each, for reference).
    dtype : {'float64', 'float32'}, default='float64'
        Storage of the projected vectors of a block, the largest allocation of a fit.
    block_size : int or 'auto', default='auto'
        Rows per block: the data are read, projected and reduced one block at a time and
        the results merged in a binary tree (merge-reduce), so memory stays bounded whatever
        the number of rows. 'auto' sizes a block to about 128 MB of working memory.
    n_candidates : int, 'auto' or None, default='auto'
        Size of the pool of candidate rows. In the one pass over the data the rows are
        sampled into a pool with probabilities proportional to their spreads under the
        pilot's Laplace fit (the Laplace counterpart of their projections' norms); the pool's
        rows are then projected, at draws of the data's fit, and the algorithm chooses the
        ``n_points`` among them aiming at the data's projected sum, estimated from the pool
        under the control variate of the data's second-order sums (exact when the pool is
        every row): memory bounded by the pool. 'auto': max(10 000, 50 n_points) (on smaller
        data every row is a candidate). None: the algorithm reduces every block and every
        merge of the tree instead, every row projected.
    debias : bool, default=False
        A-IHT II: a de-biasing gradient step on the support after each thresholding.
    max_iter : int, default=300
        Iteration cap.
    batch_fraction : float in (0, 1] or None, default=None
        Stochastic variant: each gradient from a random fraction of the points.
    progress : bool, default=False
        Show a tqdm progress bar of the iterations (needs the optional tqdm).
    random_state : int, RandomState instance or None, default=None
        Seeds the projection and the stochastic variant's batches.
    verbose : int, default=0
        Print the phases of the fit (Laplace fit, projection, selection) with their
        durations when positive; 2 also prints the phases of every block and merge of a
        large fit. They are always logged to the ``skcoreset`` logger (INFO, and DEBUG for
        the per-block phases).

    Attributes
    ----------
    sample_indices_ : ndarray of shape (``n_points_``,)
        Sorted indices of the selected rows.
    sample_weight_ : ndarray of shape (``n_points_``,)
        Their positive weights.
    hilbert_error_ : float
        The projection's error: the relative error ||Phi w - y|| / ||y|| in the projection
        space (NaN when the projection measured nothing). It can be small where the
        posterior is not (a projection of fewer dimensions than it needs): ``laplace_kl_``
        judges the posterior.
    model_ : str
        The resolved model.
    laplace_ : LaplaceApproximation
        The data's Laplace fit, every parameter of the posterior included: the projection
        draws from it (its first call's, for a stream), and ``laplace_kl_`` measures against
        it (a stream's: of everything seen).
    laplace_kl_ : float
        The coreset's quality: the KL divergence, in nats, of the Laplace fit of its
        posterior to the data's (``laplace_``), every parameter included (a free extra
        parameter's log too), under the data's prior; 0 when every row is kept, inf when
        its posterior has no proper Laplace fit. Above P (P + 3) / 80 000 for P parameters,
        a fifth of the default sampler's Monte Carlo error, the fit warns
        (:class:`CoresetQualityWarning`).
    n_iter_ : int
        Iterations of the algorithm.
    stop_reason_ : str
        Which rule ended the construction: 'converged', 'max_iter', 'zero_target', or
        'all_rows' when every row was kept.
    n_features_in_ : int
        Number of features seen in fit.
    feature_names_in_ : ndarray of str
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    OMPCoreset : Exact non-negative least squares on a greedily grown support.

    Examples
    --------
    >>> from skcoreset.coreset import IHTCoreset
    >>> from skcoreset.datasets import load_phishing
    >>> X, y = load_phishing(return_X_y=True)
    >>> cs = IHTCoreset(n_points=20, debias=True, n_projections=50, random_state=0).fit(X, y)
    >>> cs.n_points_ <= 20
    True
    """

    _parameter_constraints: dict = {
        **_HilbertCoreset._parameter_constraints,
        "n_candidates": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}), None],
        "debias": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "batch_fraction": [Interval(Real, 0, 1, closed="right"), None],
    }

    def __init__(
        self,
        n_points="auto",
        *,
        model="auto",
        projection="loglik",
        n_projections=500,
        prior_scale="auto",
        fit_intercept=True,
        laplace_subsample="auto",
        dtype="float64",
        block_size="auto",
        n_candidates="auto",
        debias=False,
        max_iter=300,
        batch_fraction=None,
        progress=False,
        random_state=None,
        verbose=0,
    ):
        super().__init__(
            n_points,
            model=model,
            projection=projection,
            n_projections=n_projections,
            prior_scale=prior_scale,
            fit_intercept=fit_intercept,
            laplace_subsample=laplace_subsample,
            dtype=dtype,
            block_size=block_size,
            progress=progress,
            random_state=random_state,
            verbose=verbose,
        )
        self.n_candidates = n_candidates
        self.debias = debias
        self.max_iter = max_iter
        self.batch_fraction = batch_fraction

    def _select(self, vectors, sigma, target, random_state):
        return _iht(
            vectors,
            self._target_size,
            sigma,
            target,
            debias=self.debias,
            max_iter=self.max_iter,
            batch_fraction=self.batch_fraction,
            random_state=random_state,
            progress=self._show_core_progress(),
        )


class OMPCoreset(_HilbertCoreset):
    """Non-negative orthogonal matching pursuit.

    Adds the point most aligned with the residual, then re-solves non-negative least squares
    on the support (incrementally). The smallest error per point on GLM posteriors; its
    support cannot usefully exceed the projection dimension J (it stops at the numerical
    limit there).

    Parameters
    ----------
    n_points : int or 'auto', default='auto'
        Requested coreset size M: the number of distinct points with nonzero weight. The
        fitted size ``n_points_`` may be smaller when a stop rule fires first; when M is not
        smaller than the number of rows with positive weight, every such row is kept.
        'auto': at first enough points to pin down the posterior's mean and covariance,
        (P + 1)(P + 2) / 2 for P parameters (features plus intercept), between 100 and
        500; then, while ``laplace_kl_`` is above its target, the coreset grows by an
        importance sample of the pool of candidates, calibrated to the data's gradient
        (``coreset._growth``), up to the pool's size (``n_candidates``).
    model : 'auto', str or GLM, default='auto'
        The likelihood: a name of ``skcoreset.models.MODEL_NAMES`` or a model object. 'auto'
        takes it from the estimator the coreset feeds in a pipeline or meta-estimator, otherwise
        from ``y``: two values give 'logistic', non-integer real values 'gaussian'; integer
        targets with more values are ambiguous and refused.
    projection : {'loglik', 'fisher'}, default='loglik'
        Random features of the per-datum log-likelihoods (doc/algorithms.md, section 1):
        centred log-likelihoods at parameter draws, or random coordinates of their gradients.
    n_projections : int, default=500
        Dimension J of the projection (at least 2).
    prior_scale : float, array-like of shape (n_features + fit_intercept,) or 'auto', \
            default='auto'
        Standard deviation of the Gaussian prior of the Laplace fit. 'auto' follows the scale
        of the data (see :func:`~skcoreset.models.default_prior_scale`), as the Bayesian
        regressors' default does; a number applies to every parameter, an array gives one
        per coefficient, the intercept's last (as ``prior_scale_`` reports it).
    fit_intercept : bool, default=True
        Whether the likelihood has an intercept.
    laplace_subsample : int, 'auto' or None, default='auto'
        The pilot: the rows of the first Laplace fit, at whose mean every block is
        summarised in the fit's one pass over the data (its rows' second-order sums, their
        spreads, a sample of them), the data's Laplace fit then made from those sums and
        confirmed by another pass when its predicted error asks (the projection draws its
        parameters from it, and ``laplace_kl_`` measures against it). 'auto': a uniform
        sample of 100 sqrt(N) rows, at most a block's worth (every row when the data are one
        block); an int: that many rows. None: the exact Laplace fit by Newton's passes over
        the blocks, and every row projected (a pass more each, for reference).
    dtype : {'float64', 'float32'}, default='float64'
        Storage of the projected vectors of a block, the largest allocation of a fit.
    block_size : int or 'auto', default='auto'
        Rows per block: the data are read, projected and reduced one block at a time and
        the results merged in a binary tree (merge-reduce), so memory stays bounded whatever
        the number of rows. 'auto' sizes a block to about 128 MB of working memory.
    n_candidates : int, 'auto' or None, default='auto'
        Size of the pool of candidate rows. In the one pass over the data the rows are
        sampled into a pool with probabilities proportional to their spreads under the
        pilot's Laplace fit (the Laplace counterpart of their projections' norms); the pool's
        rows are then projected, at draws of the data's fit, and the algorithm chooses the
        ``n_points`` among them aiming at the data's projected sum, estimated from the pool
        under the control variate of the data's second-order sums (exact when the pool is
        every row): memory bounded by the pool. 'auto': max(10 000, 50 n_points) (on smaller
        data every row is a candidate). None: the algorithm reduces every block and every
        merge of the tree instead, every row projected.
    progress : bool, default=False
        Show a tqdm progress bar of the construction (needs the optional tqdm).
    random_state : int, RandomState instance or None, default=None
        Seeds the projection.
    verbose : int, default=0
        Print the phases of the fit (Laplace fit, projection, selection) with their
        durations when positive; 2 also prints the phases of every block and merge of a
        large fit. They are always logged to the ``skcoreset`` logger (INFO, and DEBUG for
        the per-block phases).

    Attributes
    ----------
    sample_indices_ : ndarray of shape (``n_points_``,)
        Sorted indices of the selected rows.
    sample_weight_ : ndarray of shape (``n_points_``,)
        Their positive weights.
    hilbert_error_ : float
        The projection's error: the relative error ||Phi w - y|| / ||y|| in the projection
        space (NaN when the projection measured nothing). It can be small where the
        posterior is not (a projection of fewer dimensions than it needs): ``laplace_kl_``
        judges the posterior.
    model_ : str
        The resolved model.
    laplace_ : LaplaceApproximation
        The data's Laplace fit, every parameter of the posterior included: the projection
        draws from it (its first call's, for a stream), and ``laplace_kl_`` measures against
        it (a stream's: of everything seen).
    laplace_kl_ : float
        The coreset's quality: the KL divergence, in nats, of the Laplace fit of its
        posterior to the data's (``laplace_``), every parameter included (a free extra
        parameter's log too), under the data's prior; 0 when every row is kept, inf when
        its posterior has no proper Laplace fit. Above P (P + 3) / 80 000 for P parameters,
        a fifth of the default sampler's Monte Carlo error, the fit warns
        (:class:`CoresetQualityWarning`).
    n_iter_ : int
        Points added (a point dropped by the least-squares step may be added again).
    stop_reason_ : str
        Which rule ended the construction: 'size_reached', 'converged', 'numerical_limit',
        'max_iter', 'zero_target', or 'all_rows' when every row was kept.
    n_features_in_ : int
        Number of features seen in fit.
    feature_names_in_ : ndarray of str
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    GIGACoreset : The geodesic method of the coreset papers.

    Examples
    --------
    >>> from skcoreset.coreset import OMPCoreset
    >>> from skcoreset.datasets import load_phishing
    >>> X, y = load_phishing(return_X_y=True)
    >>> cs = OMPCoreset(n_points=20, n_projections=50, random_state=0).fit(X, y)
    >>> cs.n_points_, cs.hilbert_error_ < 0.5
    (20, True)
    """

    _parameter_constraints: dict = {
        **_HilbertCoreset._parameter_constraints,
        "n_candidates": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}), None],
    }

    def __init__(
        self,
        n_points="auto",
        *,
        model="auto",
        projection="loglik",
        n_projections=500,
        prior_scale="auto",
        fit_intercept=True,
        laplace_subsample="auto",
        dtype="float64",
        block_size="auto",
        n_candidates="auto",
        progress=False,
        random_state=None,
        verbose=0,
    ):
        super().__init__(
            n_points,
            model=model,
            projection=projection,
            n_projections=n_projections,
            prior_scale=prior_scale,
            fit_intercept=fit_intercept,
            laplace_subsample=laplace_subsample,
            dtype=dtype,
            block_size=block_size,
            progress=progress,
            random_state=random_state,
            verbose=verbose,
        )
        self.n_candidates = n_candidates

    def _select(self, vectors, sigma, target, random_state):
        # a pool beyond the caches is searched as QNC's start searches it; a smaller one,
        # whose passes are cheap, by OMP itself
        per_pass, quantize = (1, False)
        n_params = getattr(self, "_n_params", None)  # set by a fit's sizes (not a group's)
        if n_params is not None and vectors.size >= QUANTIZE_FROM:
            per_pass, quantize = pool_search(self._target_size, n_params, vectors.size)
        return _omp(
            vectors,
            self._target_size,
            sigma,
            target,
            progress=self._show_core_progress(),
            per_pass=per_pass,
            quantize=quantize,
        )
