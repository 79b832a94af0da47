"""The small base class every coreset estimator shares, and its bounded-memory construction.

A coreset estimator is fitted on (X, y) and *selects*: ``sample_indices_`` (row indices) and
``sample_weight_`` (their positive weights). ``fit_resample`` returns the weighted subset in the
``(X_m, y_m, {"sample_weight": w_m})`` form the resampler-aware pipeline consumes.

Construction works in blocks of ``block_size`` rows (``_merge_reduce``): a coreset of each
block, merged in a binary tree, so a fit holds one block at a time however large the data;
``partial_fit`` feeds the same tree one call at a time. A subclass implements the hooks:

* ``_begin(data, model, random_state)``: what all blocks share (the Hilbert
  coresets: a Laplace fit and the projection's parameter draws), called once;
* ``_reduce(node, context, random_state)``: at most ``_capacity()`` of a node's rows (a
  coreset of ``n_points``, or for the Hilbert coresets a pool of candidates);
* ``_summarize(node, context, random_state)``: a node kept whole, with its exact summary;
* ``_finalize(node, context, random_state)``: the coreset of the final node (the algorithm
  run on the pool of candidates; nothing to do for a node that already is a coreset);
* ``_finish(node, context)``: fitted attributes from the final node.

The public methods validate; the hooks receive validated float64 rows, targets coded by the
model and positive weights.
"""

import logging
import warnings
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import (
    check_array,
    check_consistent_length,
    check_random_state,
    column_or_1d,
)
from sklearn.utils.validation import check_is_fitted, validate_data

from .._logging import phase, report
from .._progress import ProgressBar
from .._sklearn_compat import (
    Interval,
    StrOptions,
    _check_sample_weight,
    _fit_context,
    _safe_indexing,
)
from .._warnings import warn
from ..export._mixin import PPLExportMixin
from ..models import (
    GLM,
    MODEL_NAMES,
    classification_model,
    get_model,
    model_from_targets,
)
from ..models._prior import DataPrior, Moments, checked_prior_scale, is_auto, prior_from_moments
from ._blocks import (
    InMemoryData,
    as_source,
    block_bounds,
    describe_block,
    n_rows,
    read_block,
)
from ._caller import check_resample_caller
from ._dask import is_dask_collection
from ._merge_reduce import FINAL, LEAF, MergeTree, Node, NodeSeeds

#: The range of ``n_points='auto'``.
AUTO_SIZE = (100, 500)

#: Working memory of one block when ``block_size='auto'``: the rows per block are this
#: divided by the estimator's bytes per row (its projection, for the Hilbert coresets).
BLOCK_BYTES = 128 * 2**20


class CoresetSizeWarning(UserWarning):
    """A coreset size that cannot do what is asked of it.

    More points than the data has (the coreset is the whole data set), or fewer than the
    model's parameters (the coreset posterior is the prior's in the directions its points
    leave free, whatever the algorithm).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skcoreset.coreset import CoresetSizeWarning, UniformCoreset
    >>> X, y = np.random.default_rng(0).standard_normal((20, 2)), np.arange(20) % 2
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     coreset = UniformCoreset(n_points=50, projection=None).fit(X, y)
    >>> [w.category.__name__ for w in caught], coreset.n_points_
    (['CoresetSizeWarning'], 20)
    """


class CoresetQualityWarning(UserWarning):
    """A coreset whose posterior may be off in a way its construction cannot see.

    Issued by the KL methods (:class:`QuasiNewtonCoreset`, :class:`SparseVICoreset`,
    :class:`CoresetMCMC`) on a model whose extra parameter is estimated (the Gaussian noise
    scale, the negative binomial dispersion, the gamma shape) when they estimate the full
    data's log-likelihood from a pool of its rows: the control variate that corrects that
    estimate is a Taylor expansion in the coefficients, and the coreset posterior of the extra
    parameter is the pool's. Measured on 20 000 rows (pools of 10 000) at 100 points: 1-2
    posterior sds from the full one, the coefficients within 0.12. With every row in the pool
    (``n_candidates`` at least the number of rows) the sums are exact; the Hilbert methods
    (:class:`OMPCoreset`, the default) draw it in their projections and keep its posterior.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skcoreset.coreset import CoresetQualityWarning, QuasiNewtonCoreset
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((3000, 2))
    >>> y = X @ [1.0, -0.5] + rng.standard_normal(3000)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     coreset = QuasiNewtonCoreset(
    ...         n_points=20, n_candidates=1000, model="gaussian", random_state=0
    ...     ).fit(X, y)
    >>> [w.category.__name__ for w in caught]
    ['CoresetQualityWarning']
    """


class CoresetCoverageWarning(UserWarning):
    """A coreset whose points leave a feature of the data unmeasured.

    A feature that varies in the data (with an intercept; without one, that is not zero in
    every row) but is constant over the coreset's points (zero, without an intercept): the
    coreset's log-likelihood says nothing about its coefficient, whose coreset posterior is
    then the prior's, however close the rest. Rare categories of one-hot features are the
    usual cause. Issued when the data's moments are known, which the default
    ``prior_scale='auto'`` measures.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skcoreset.coreset import CoresetCoverageWarning, UniformCoreset
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([rng.standard_normal(1000), np.arange(1000) == 0])
    >>> y = rng.integers(0, 2, 1000)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     coreset = UniformCoreset(n_points=20, projection=None, random_state=0).fit(X, y)
    >>> [w.category.__name__ for w in caught]
    ['CoresetCoverageWarning']
    """


class BaseCoreset(PPLExportMixin, BaseEstimator):
    """Base class of the coreset estimators (do not use directly).

    ``n_points`` is the coreset size: the number of distinct points for the methods that
    select points (the Hilbert methods, and uniform sampling without replacement), the number
    of draws for the methods that sample with replacement (importance and sensitivity
    sampling, uniform with ``replace=True``), whose distinct points may be fewer. When it is
    not smaller than the number of rows with positive weight, the coreset is every such row
    with its own weight (exact), with a :class:`CoresetSizeWarning` if it is larger.

    A subclass whose model is fixed declares it with the class attribute
    ``__skcoreset_model__`` (e.g. ``'logistic'``); otherwise its ``model`` parameter names it,
    'auto' letting the targets (or a composition's final estimator) decide.

    Examples
    --------
    Every coreset estimator shares this interface:

    >>> from skcoreset.coreset import BaseCoreset, UniformCoreset
    >>> from skcoreset.datasets import make_logistic_regression
    >>> X, y = make_logistic_regression(n_samples=200, random_state=0)
    >>> coreset = UniformCoreset(n_points=20, projection=None, random_state=0)
    >>> isinstance(coreset, BaseCoreset)
    True
    >>> X_m, y_m, params = coreset.fit_resample(X, y)
    >>> X_m.shape, float(params["sample_weight"].sum())
    ((20, 10), 200.0)
    """

    _parameter_constraints: dict = {
        "n_points": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "model": [StrOptions({"auto", *MODEL_NAMES}), GLM],
        "prior_scale": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
            "array-like",
        ],
        "fit_intercept": ["boolean"],
        "block_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "progress": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def fit(self, X, y, sample_weight=None):
        """Select the coreset.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features: a NumPy array (a ``numpy.memmap`` is read block by block), a pandas
            DataFrame, an HDF5 or Zarr dataset, or a dask array or DataFrame (per-chunk
            coresets are built where the chunks live). NaN and infinity are rejected.
        y : array-like of shape (n_samples,)
            Targets: two class labels (any type), counts, or real values, as the model needs.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the data's log-likelihood terms; the coreset approximates
            the weighted sum and its weights include them.

        Returns
        -------
        self : object
            Fitted estimator with ``sample_indices_`` and ``sample_weight_``.
        """
        return self._fit(X, y, sample_weight)

    def fit_resample(self, X, y, sample_weight=None):
        """Fit, then return the weighted subset.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the data.

        Returns
        -------
        X_coreset : array-like of shape (M, n_features)
            The selected rows of ``X`` (same container type: pandas stays pandas).
        y_coreset : array-like of shape (M,)
            The selected targets, in the caller's coding.
        params : dict
            ``{"sample_weight": sample_weight_}``, to pass to the next estimator's ``fit``.
        """
        check_resample_caller(self)
        self._fit(X, y, sample_weight)
        return self._selected(X, y)

    def partial_fit(self, X, y, sample_weight=None, classes=None):
        """Add a block of rows to the coreset of the data seen so far.

        The coreset of every call is pushed onto a binary merge tree, which holds at most
        about log2(B) + 1 coresets after B blocks (a call with more than ``block_size`` rows
        is several blocks). After each call the fitted attributes describe the coreset of
        everything seen; ``sample_indices_`` count rows across all calls, and
        :meth:`get_coreset` returns its rows. What all blocks share (for the Hilbert
        coresets, the Laplace fit and the projection) is fixed by the first call.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The new rows.
        y : array-like of shape (n_samples,)
            Their targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Their non-negative weights.
        classes : array-like of shape (2,), default=None
            The two class labels of a logistic model, needed in the first call when its
            ``y`` does not hold both; ignored afterwards.

        Returns
        -------
        self : object
            The estimator, fitted on everything seen.

        Raises
        ------
        ValueError
            For bad input in a block (NaN, a new label, another number of columns), naming
            the block; the coreset built so far is left as it was.
        """
        first = not hasattr(self, "_stream")
        self._single_block = False
        if first:
            self._validate_params()
            self._check_params()
            self._drop_fitted_attributes()
        call = 0 if first else self._stream["calls"]
        label = f"call {call} of partial_fit"
        try:
            X, y, s = self._validate_data_source(X, y, sample_weight, reset=first)
        except ValueError as exc:
            raise ValueError(f"In {label}: {exc}") from None
        if first:
            name = self._model_name(y, None)
            if classes is not None and (name is None or self._model_named(name).labels is not None):
                y_for_model = np.asarray(classes)
            else:
                y_for_model = y
            model, inferred = self._resolve_model(y_for_model, None)
            labels = None
            if model.labels is not None and classes is not None:
                labels = model.labels.fit(classes, input_name="classes")
            coded, labels = self._encode_targets(y, model, s, inferred, labels)
            if labels is not None:
                model = model.with_classes(labels.classes)
            self._target_size = self._resolve_size(model.n_params(X.shape[1] + model.fit_intercept))
            rng = check_random_state(self.random_state)
            data = InMemoryData(X, coded, s, self._block_rows(X), self)
            model = self._with_prior(model, data)
            context = self._begin(data, model, rng)
            stream = {
                "model": model,
                "labels": labels,
                "context": context,
                "seeds": NodeSeeds(rng),
                "tree": MergeTree(self._capacity()),
                "n_seen": 0,
                "calls": 0,
            }
        else:
            stream = self._stream
            try:
                coded, _ = self._encode_targets(y, stream["model"], s, False, stream["labels"])
            except ValueError as exc:
                raise ValueError(f"In {label}: {exc}") from None
        # Every block of the call is read and reduced before any is pushed: an error leaves
        # the tree as it was.
        offset = stream["n_seen"]
        leaves = []
        for start, stop in block_bounds(n_rows(X), self._block_rows(X)):
            index = stream["tree"].n_blocks + len(leaves)
            where = f"{label}, {describe_block(index, offset + start, offset + stop)}"
            node = self._leaf(X, coded, s, start, stop, offset, where, stream, index)
            if node is not None:
                leaves.append(node)
        if first and not leaves:
            raise ValueError("The first call of partial_fit has no row with positive weight.")
        reduce = self._reducer(stream)
        for node in leaves:
            stream["tree"].push(node, reduce)
        stream["n_seen"] += n_rows(X)
        stream["calls"] += 1
        self._stream = stream
        self.model_ = stream["model"].name
        self.n_samples_seen_ = stream["n_seen"]
        self._set_result(self._final(stream), stream)
        return self

    def get_coreset(self):
        """The rows of the fitted coreset, with their weights.

        Unlike :meth:`fit_resample` it needs no data: after :meth:`partial_fit` it gives the
        weighted subset of everything seen.

        Returns
        -------
        X_coreset : ndarray of shape (``n_points_``, n_features)
            The selected rows (float64).
        y_coreset : ndarray of shape (``n_points_``,)
            Their targets, in the caller's coding.
        params : dict
            ``{"sample_weight": sample_weight_}``.
        """
        check_is_fitted(self, "sample_indices_")
        node = self._coreset_node
        y = node.y if self._labels is None else self._labels.decode(node.y)
        return node.X.copy(), y.copy(), {"sample_weight": self.sample_weight_.copy()}

    @property
    def n_points_(self):
        """Number of distinct points in the fitted coreset (may be below ``n_points``)."""
        check_is_fitted(self, "sample_indices_")
        return len(self.sample_indices_)

    # -- the fit, in named steps ----------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def _fit(self, X, y, sample_weight=None, model=None):
        """``fit``, with the model a composition resolved for ``model='auto'`` (or None)."""
        self._check_params()
        self._drop_fitted_attributes()
        if is_dask_collection(X):
            return self._fit_dask(X, y, sample_weight, model)
        X, y, s = self._validate_data_source(X, y, sample_weight, reset=True)
        model, inferred = self._resolve_model(y, model)
        self.model_ = model.name
        coded, labels = self._encode_targets(y, model, s, inferred)
        if labels is not None:
            model = model.with_classes(labels.classes)
        rng = check_random_state(self.random_state)
        stream = {"model": model, "labels": labels, "n_seen": n_rows(X), "calls": 1}
        self._target_size = self._resolve_size(model.n_params(X.shape[1] + model.fit_intercept))
        size = self._target_size
        if size is not None and size >= np.count_nonzero(s):
            X_all = read_block(X, 0, n_rows(X), estimator=self)
            data = InMemoryData(X_all, coded, s, n_rows(X), self)
            stream["model"] = model = self._with_prior(model, data)
            positive = np.flatnonzero(s)
            indices, weights = self._keep_all_rows(X_all, coded, s, model, rng, positive)
            rows = X_all[indices]
            stream["context"] = None
            node = Node(indices, weights, rows, coded[indices], info={"stop_reason": "all_rows"})
            self._set_result(node, stream)
            return self
        bounds = block_bounds(n_rows(X), self._block_rows(X))
        self._single_block = len(bounds) == 1
        self._n_rows = n_rows(X)
        report(
            self,
            "%s of %d rows (%d with positive weight) in %d block(s), %s model",
            type(self).__name__,
            n_rows(X),
            np.count_nonzero(s),
            len(bounds),
            model.name,
        )
        data = InMemoryData(X, coded, s, self._block_rows(X), self)
        stream["model"] = model = self._with_prior(model, data)
        stream["context"] = self._begin(data, model, rng)
        stream["seeds"] = NodeSeeds(rng)
        stream["tree"] = tree = MergeTree(self._capacity())
        reduce = self._reducer(stream)
        with ProgressBar(len(bounds), self.progress and len(bounds) > 1, "blocks", "block") as bar:
            for index, (start, stop) in enumerate(bounds):
                where = describe_block(index, start, stop) if len(bounds) > 1 else None
                node = self._leaf(X, coded, s, start, stop, 0, where, stream, index)
                if node is not None:
                    tree.push(node, reduce)
                bar.update()
        self._set_result(self._final(stream), stream)
        report(self, "coreset of %d points", len(self.sample_indices_))
        return self

    def _fit_dask(self, X, y, sample_weight, model):
        """``fit`` on a dask array or DataFrame: per-chunk coresets built by tasks where the
        chunks live, merged pairwise by tasks; only the final coreset reaches the client."""
        import dask
        from dask import delayed

        from . import _dask

        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        validate_data(self, X, reset=True, skip_check_array=True)
        if hasattr(X, "columns") and all(isinstance(c, str) for c in X.columns):
            self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        X = _dask.as_dask_array(X, "X")
        if X.ndim != 2:
            raise ValueError(f"Expected a 2-D dask array for X, got {X.ndim} dimensions.")
        y = _dask.aligned(y, X.chunks[0], "y")
        s = _dask.aligned(sample_weight, X.chunks[0], "sample_weight")
        digests = dask.compute(*[delayed(_dask.target_digest)(b) for b in y.to_delayed().ravel()])
        name = self._model_name(None, model)
        inferred = name is None
        name, values = _dask.model_from_digests(digests) if inferred else (name, None)
        model = self._model_named(name)
        labels = None
        if model.labels is not None:
            if values is None:
                values = _dask.model_from_digests(digests)[1]
            labels = model.labels.fit(values)
            model = model.with_classes(labels.classes)
        self.model_ = model.name
        rng = check_random_state(self.random_state)
        self._single_block = False
        self._n_rows = int(X.shape[0])
        self._target_size = self._resolve_size(model.n_params(X.shape[1] + model.fit_intercept))
        stream = {"model": model, "labels": labels, "n_seen": int(X.shape[0]), "calls": 1}
        data = _dask.DaskData(self, X, y, s, stream, self._block_rows(X))
        stream["model"] = model = self._with_prior(model, data)
        stream["context"] = self._begin(data, model, rng)
        stream["seeds"] = NodeSeeds(rng)
        nodes, final = _dask.build(self, X, y, s, stream)
        node = _dask.compute(nodes, final, self.progress)
        if node is None:
            raise ValueError("No row of X has a positive sample_weight.")
        self._set_result(node, stream)
        return self

    def _validate_data_source(self, X, y, sample_weight, reset):
        """``(source, y, sample_weight)``: X checked for shape and features but not copied;
        each block is validated when it is read."""
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        X = as_source(X)
        if getattr(X, "ndim", 2) == 0:
            check_array(X, estimator=self)  # scikit-learn's message for a scalar
        # Dimensions, dtype, sparsity and emptiness, on the first row (or the empty array).
        read_block(X, 0, min(n_rows(X), 1), estimator=self)
        validate_data(self, X, reset=reset, skip_check_array=True)
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        if sample_weight is None:
            # unit weights as a read-only view of one number: no N-vector to hold
            return X, y, np.broadcast_to(np.float64(1.0), (len(y),))
        s = _check_sample_weight(
            sample_weight, np.empty((len(y), 0)), dtype=np.float64, ensure_non_negative=True
        )
        return X, y, s

    def _block_level(self):
        """The logging level of a phase repeated per block: INFO for one block, else DEBUG."""
        return logging.INFO if getattr(self, "_single_block", True) else logging.DEBUG

    def _show_core_progress(self):
        """An algorithm shows its own progress bar only when it is the whole construction."""
        return self.progress and getattr(self, "_single_block", True)

    def _block_rows(self, X):
        if self.block_size != "auto":
            return int(self.block_size)
        return max(1000, BLOCK_BYTES // self._bytes_per_row(X.shape[1]))

    def _bytes_per_row(self, n_features):
        """Working memory per row of a block (the row itself, its design row and a copy)."""
        return 3 * 8 * (n_features + 1)

    def _leaf(self, X, y, s, start, stop, offset, where, stream, index, chunk=0):
        """The coreset of rows ``start:stop`` (None when none has positive weight)."""
        rows = read_block(X, start, stop, label=where, estimator=self)
        weights = s[start:stop]
        positive = np.flatnonzero(weights > 0)
        if positive.shape[0] == 0:
            return None
        if positive.shape[0] < rows.shape[0]:
            rows = rows[positive]
        node = Node(
            indices=(offset + start + positive).astype(np.int64),
            weights=weights[positive],
            X=rows,
            y=y[start:stop][positive],
        )
        rng = stream["seeds"]((LEAF, chunk, 0, index))
        capacity = self._capacity()
        if capacity is not None and len(node) <= capacity:
            return self._summarize(node, stream["context"], rng)
        return self._reduce(node, stream["context"], rng)

    def _final(self, stream):
        """The coreset of everything in the tree: its held nodes merged, then finalized."""
        tree = stream["tree"]
        node = tree.result(self._reducer(stream))
        key = (FINAL, tree.chunk, 1, tree.n_blocks)
        return self._finalize(node, stream["context"], stream["seeds"](key))

    def _reducer(self, stream):
        context, seeds = stream["context"], stream["seeds"]

        def reduce(node, key):
            # one per merge of two coresets of the tree: DEBUG, as there are many
            with phase(self, f"merge: reduction of {len(node)} rows", logging.DEBUG):
                return self._reduce(node, context, seeds(key))

        return reduce

    def _set_result(self, node, stream):
        order = np.argsort(node.indices, kind="stable")
        self.sample_indices_ = np.asarray(node.indices, dtype=np.intp)[order]
        self.sample_weight_ = np.asarray(node.weights, dtype=np.float64)[order]
        if not np.all(np.isfinite(self.sample_weight_)):
            raise FloatingPointError("The coreset weights are not finite; please report this.")
        self._coreset_node = Node(
            self.sample_indices_, self.sample_weight_, node.X[order], node.y[order]
        )
        self._labels = stream["labels"]
        self._warn_uncovered(self._coreset_node.X)
        self._finish(node, stream["context"])

    def _warn_uncovered(self, X):
        """A :class:`CoresetCoverageWarning` when the coreset's points ``X`` leave a feature
        the data identify constant (zero, without an intercept)."""
        moments = getattr(self, "_data_moments", None)
        if moments is None or X.shape[0] == 0:
            return
        # the coreset's columns judged by the data's own rule
        core = Moments.of(X, np.zeros(X.shape[0]))
        if self.fit_intercept:  # a constant column is the intercept's: not measured
            uncovered = np.flatnonzero(moments.varying() & ~core.varying())
        else:
            uncovered = np.flatnonzero(moments.nonzero() & ~core.nonzero())
        if uncovered.shape[0] == 0:
            return
        names = getattr(self, "feature_names_in_", None)
        shown = [str(names[k]) if names is not None else f"x{k}" for k in uncovered[:10]]
        more = f" and {uncovered.shape[0] - 10} more" if uncovered.shape[0] > 10 else ""
        how = "constant" if self.fit_intercept else "zero"
        warn(
            f"The coreset's {X.shape[0]} points leave {uncovered.shape[0]} of the data's "
            f"features {how} ({', '.join(shown)}{more}): its likelihood says nothing of their "
            "coefficients, whose coreset posterior is the prior's. Rare categories of one-hot "
            "features are the usual cause: use more points, an algorithm that aims at the "
            "full likelihood (OMPCoreset), or merge the rare categories.",
            CoresetCoverageWarning,
        )

    def _drop_fitted_attributes(self):
        # A refit must not keep what the previous fit set and this one may not (laplace_,
        # hilbert_error_, ...): measures computed from them would describe other data.
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("_")]:
            delattr(self, name)
        self.__dict__.pop("_stream", None)

    def _with_prior(self, model, data):
        """The model with its prior: ``prior_scale``, or for 'auto' the rule of
        :func:`~skcoreset.models.default_prior_scale` on the moments of all rows (one
        pass); kept as ``_data_prior``, which the composition hands to the estimator fitted on
        the coreset and the exports to probabilistic programming languages read."""
        self._data_moments = None  # kept for the coverage check (:meth:`_warn_uncovered`)
        y_mean, y_sd = 0.0, None  # a given prior_scale: the extra's prior does not follow y
        if is_auto(self.prior_scale):
            self._data_moments = data.moments()
            scale = prior_from_moments(model, self._data_moments)
            _, _, y_mean, y_sd = self._data_moments.mean_and_sd()
            model = model.with_data_scale(y_mean, y_sd)
        else:
            n_columns = self.n_features_in_ + model.fit_intercept
            scale = checked_prior_scale(self.prior_scale, n_columns, model.n_params(n_columns))
        self.prior_scale_ = scale
        model = replace(model, prior_scale=scale if scale.ndim else float(scale))
        self._data_prior = DataPrior(model, y_mean, y_sd)
        return model

    def _model_name(self, y, model):
        """The model's name if something other than the targets settles it, else None."""
        name = getattr(type(self), "__skcoreset_model__", None)
        if name is None:
            name = self.model if self.model != "auto" else model
        return name

    def _resolve_model(self, y, model=None):
        """``(model, inferred)``: the model declared by the class, named by ``model``, given by
        a composition for 'auto', or else inferred from the targets (``inferred`` is True)."""
        name = self._model_name(y, model)
        inferred = name is None
        if inferred:
            name = model_from_targets(y)
        elif name is model and name == "logistic":
            # a classifier's reading (the composition's): class labels, as many as y has
            name = classification_model(y)
        return self._model_named(name), inferred

    def _model_named(self, name):
        """The model ``name`` (or a user's model object) with the estimator's prior and
        intercept: for 'auto' a unit placeholder, which :meth:`_with_prior` replaces once the
        data's moments are known."""
        if isinstance(name, GLM):
            return replace(
                name,
                prior_scale=name.prior_scale if is_auto(self.prior_scale) else self.prior_scale,
                fit_intercept=self.fit_intercept,
            )
        return get_model(
            name,
            prior_scale=1.0 if is_auto(self.prior_scale) else self.prior_scale,
            fit_intercept=self.fit_intercept,
        )

    def _encode_targets(self, y, model, sample_weight, inferred, labels=None):
        """``(coded targets, labels)``: targets in the model's coding (class labels through
        ``labels``, fitted here if not given); the rows with positive weight must still fit
        the model."""
        try:
            if model.labels is not None:
                labels = model.labels.fit(y) if labels is None else labels
                coded = labels.encode(y)
            else:
                coded = model.encode_targets(y)
            positive = sample_weight > 0
            if not positive.all():
                try:
                    model.encode_targets(coded[positive])
                except ValueError as exc:
                    raise ValueError(f"Among the rows with positive sample_weight: {exc}") from None
        except ValueError as exc:
            if inferred:
                raise ValueError(
                    f"{exc} (the model {model.name!r} was inferred from y; pass model=... to "
                    "choose it)"
                ) from None
            raise
        return coded, labels

    def _keep_all_rows(self, X, y, sample_weight, model, random_state, positive):
        """The exact coreset: every row with positive weight, with its own weight."""
        if self.n_points != "auto" and self.n_points > positive.shape[0]:
            warnings.warn(
                f"n_points={self.n_points} is larger than the {positive.shape[0]} rows with "
                "positive sample_weight: the coreset is every such row with its own weight.",
                CoresetSizeWarning,
                stacklevel=4,
            )
        return positive, sample_weight[positive]

    def _selected(self, X, y):
        """The fitted subset of (X, y) and its weights, in the callers' containers."""
        idx = self.sample_indices_
        return (
            _safe_indexing(X, idx),
            _safe_indexing(y, idx),
            {"sample_weight": self.sample_weight_.copy()},
        )

    # -- hooks ----------------------------------------------------------------------------
    def _check_params(self):
        """Checks across parameters, run before the data are validated."""

    def _begin(self, data, model, random_state):
        """What every block shares (None by default); ``data`` gives samples or blocks of
        the rows (``_blocks.InMemoryData`` or its dask counterpart)."""
        return None

    def _capacity(self):
        """The most rows a node of the tree holds: the coreset size unless a subclass pools
        candidates."""
        return self._target_size

    def _resolve_size(self, n_params):
        """The coreset size: ``n_points``, or for 'auto' enough points to pin down the
        posterior's mean and covariance, (P + 1)(P + 2) / 2 for P parameters, within
        [100, 500] (on logistic data, OMP's Laplace KL fell from 0.11 to 0.001 between 100
        and 200 points at P = 21: below the number of these moments the posterior's shape is
        not determined)."""
        if self.n_points != "auto":
            if self.n_points is not None and self.n_points < n_params:
                warn(
                    f"n_points={self.n_points} is fewer than the model's {n_params} "
                    "parameters: the points cannot pin the posterior down in every direction, "
                    "and in the others the coreset posterior is the prior's, whatever the "
                    "algorithm. Use at least as many points as parameters, and a few times "
                    "more for a close fit.",
                    CoresetSizeWarning,
                )
            return self.n_points
        return int(np.clip((n_params + 1) * (n_params + 2) // 2, AUTO_SIZE[0], AUTO_SIZE[1]))

    def _reduce(self, node, context, random_state):
        """At most ``_capacity()`` of the node's rows (its summary kept)."""
        raise NotImplementedError

    def _summarize(self, node, context, random_state):
        """A node kept whole, with the exact summary of its data (none by default)."""
        return node

    def _finalize(self, node, context, random_state):
        """The coreset of the final node (the node itself by default)."""
        return node

    def _finish(self, node, context):
        """Fitted attributes from the final node (nothing by default)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.non_deterministic = False
        return tags
