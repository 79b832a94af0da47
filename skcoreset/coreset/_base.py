"""The small base class every coreset estimator shares: its scikit-learn face.

A coreset estimator is fitted on (X, y) and *selects*: ``sample_indices_`` (row indices) and
``sample_weight_`` (their positive weights). ``fit_resample`` returns the weighted subset in the
``(X_m, y_m, {"sample_weight": w_m})`` form the resampler-aware pipeline consumes.

A fit runs straight through three modules: :mod:`._preparation` checks the data, resolves the
model, codes the targets and sets the prior; :mod:`._construction` pushes the blocks of
``block_size`` rows through a merge tree (:mod:`._merge_reduce`), so that a fit holds one
block at a time however large the data, and ``partial_fit`` feeds the same tree one call at a
time; :mod:`._dask` runs that construction where a dask collection's chunks live. A subclass
implements the hooks, each of which receives the fit's :class:`~._construction.Context` as
``context`` and returns its result:

* ``_begin(data, model, random_state)``: the context all blocks share (the Hilbert coresets:
  a Laplace fit and the projection's parameter draws), made once;
* ``_reduce(node, context, random_state)``: at most ``_capacity()`` of a node's rows (a
  coreset of ``n_points``, or for the Hilbert coresets a pool of candidates);
* ``_summarize(node, context, random_state)``: a node kept whole, with its exact summary;
* ``_finalize(node, context, random_state)``: the coreset of the final node (the algorithm
  run on the pool of candidates; nothing to do for a node that already is a coreset);
* ``_finish(node, context)``: the fitted attributes the final node reports, as a dict.

The hooks receive validated float64 rows, targets coded by the model and positive weights.
"""

import logging
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._logging import report
from .._progress import ProgressBar
from .._sklearn_compat import Interval, StrOptions, _fit_context, _safe_indexing
from .._threads import one_blas_thread
from .._warnings import warn
from ..export._mixin import PPLExportMixin
from ..models import GLM
from ..models._names import ModelNames
from ..models._prior import Moments
from ._blocks import (
    InMemoryData,
    block_bounds,
    describe_block,
    n_rows,
    read_block,
    row_indexable,
)
from ._caller import check_resample_caller
from ._construction import Construction, Context
from ._dask import is_dask_collection
from ._exceptions import CoresetCoverageWarning, CoresetQualityWarning, CoresetSizeWarning
from ._merge_reduce import Node
from ._preparation import (
    check_classes,
    coreset_size,
    encode_targets,
    resolve_model,
    validate_source,
)
from ._quality import coreset_kl, warn_quality

__all__ = [
    "BaseCoreset",
    "CoresetCoverageWarning",
    "CoresetQualityWarning",
    "CoresetSizeWarning",
]

#: Working memory of one block when ``block_size='auto'``: the rows per block are this
#: divided by the estimator's bytes per row (its projection, for the Hilbert coresets).
BLOCK_BYTES = 128 * 2**20


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

    #: Whether the fit is one block (its phases are logged at INFO, its core shows progress).
    _single_block = True

    #: The dtypes in which a leaf's reduction takes its block's rows (``check_array``'s
    #: ``dtype``): float64, or also float32 for a reduction that converts the rows it reads
    #: itself. The node it returns holds float64 rows either way.
    _leaf_dtype = np.float64

    _parameter_constraints: dict = {
        "n_points": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "model": [StrOptions(ModelNames("auto")), GLM],
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
            DataFrame, a ``scipy.sparse`` matrix or array (densified one block at a time; CSC
            converted to CSR once), an HDF5 or Zarr dataset, or a dask array or DataFrame
            (per-chunk coresets are built where the chunks live). NaN and infinity are
            rejected.
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
            The selected rows of ``X`` (same container type: pandas stays pandas, sparse
            stays sparse).
        y_coreset : array-like of shape (M,)
            The selected targets, in the caller's coding.
        params : dict
            ``{"sample_weight": sample_weight_}``, to pass to the next estimator's ``fit``.
        """
        check_resample_caller(self)
        X = row_indexable(X)
        self._fit(X, y, sample_weight)
        return self._selected(X, y)

    def partial_fit(self, X, y, sample_weight=None, classes=None):
        """Add a block of rows to the coreset of the data seen so far.

        The coreset of every call is pushed onto a binary merge tree, which holds at most
        about log2(B) + 1 coresets after B blocks (a call with more than ``block_size`` rows
        is several blocks). After each call the fitted attributes describe the coreset of
        everything seen; ``sample_indices_`` count rows across all calls, and
        :meth:`get_coreset` returns its rows. What all blocks share (for the Hilbert
        coresets, the Laplace fit and the projection) is fixed by the first call - or by
        :meth:`fit`, which ``partial_fit`` then continues, as scikit-learn's estimators do.
        A call is applied whole or not at all: one that raises leaves the coreset and
        ``n_samples_seen_`` as they were, and a later call continues as if it had not come.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The new rows.
        y : array-like of shape (n_samples,)
            Their targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Their non-negative weights.
        classes : array-like of shape (n_classes,), default=None
            Every class label, needed in the first call when its ``y`` does not hold them
            all; with ``model='auto'`` it makes the model a classification model (logistic
            for two labels, multinomial for more). Ignored afterwards.

        Returns
        -------
        self : object
            The estimator, fitted on everything seen.

        Raises
        ------
        ValueError
            For bad input in a block (NaN, a new label, another number of columns, values
            whose log-likelihoods overflow), naming the block; the coreset built so far is
            left as it was.
        """
        return self._partial_fit(X, y, sample_weight, classes)

    @one_blas_thread()
    def _partial_fit(self, X, y, sample_weight=None, classes=None, finalize=True):
        """:meth:`partial_fit`; with ``finalize=False`` the call's blocks join the merge tree
        but the coreset of everything seen is not computed, nor the fitted attributes set,
        until :meth:`_finish_stream`. A reader of a whole stream (the command line) then
        finalizes once, where every call of ``partial_fit`` finalizes (OMP on the pool, or
        QNC's start and steps: 0.5 to 1.3 s a call at 10^6 rows); the coreset is the same."""
        construction = getattr(self, "_construction", None)
        first = construction is None
        if first:
            self._validate_params()
            self._check_params()
            self._drop_fitted_attributes()
            self._single_block = False
        elif construction.exact:
            raise ValueError(
                "fit kept every row (n_points is not below the rows with positive weight), "
                "so there is no coreset for partial_fit to continue: start the stream with "
                "partial_fit, or refit with the new rows."
            )
        else:
            self._warn_changed_params(construction)
        label = f"call {0 if first else construction.calls} of partial_fit"
        try:
            X, y, w = validate_source(self, X, y, sample_weight, reset=first, allow_all_zero=True)
            if first:
                model, labels, inferred = resolve_model(self, y, classes=classes, streaming=True)
            else:
                model, labels, inferred = construction.model, construction.labels, False
            coded = encode_targets(y, model, labels, inferred)
            seen = _classes_seen(labels, coded, w)
            if first and not np.any(w > 0):
                raise ValueError("no row has a positive sample_weight.")
            if first and classes is None:  # the labels are this block's: it must hold them
                check_classes(labels, seen)
        except ValueError as exc:
            raise ValueError(f"In {label}: {exc}") from None
        if first:
            self._coreset_size(model, X.shape[1])
            data = InMemoryData(X, coded, w, self._block_rows(X), self)
            construction = Construction.start(self, model, labels, data, stream=True)
        offset = construction.n_seen
        final = construction.add(X, coded, w, n_rows(X), label, finalize)
        construction.classes_seen |= seen
        self._construction = construction
        self._raw_targets = _raw_targets(
            construction, y, offset, getattr(self, "_raw_targets", None)
        )
        if finalize:
            self._set_result(final, construction)
        return self

    @one_blas_thread()
    def _finish_stream(self):
        """The fitted attributes of everything :meth:`_partial_fit` was given."""
        self._set_result(self._construction.final(), self._construction)
        return self

    def get_coreset(self):
        """The rows of the fitted coreset, with their weights.

        Unlike :meth:`fit_resample` it needs no data: after :meth:`partial_fit` it gives the
        weighted subset of everything seen.

        Returns
        -------
        X_coreset : ndarray of shape (``n_points_``, n_features)
            The selected rows (dense float64, whatever X's container, sparse included).
        y_coreset : ndarray of shape (``n_points_``,)
            Their targets, in the caller's coding.
        params : dict
            ``{"sample_weight": sample_weight_}``.
        """
        check_is_fitted(self, "sample_indices_")
        node = self._coreset_node
        if self._labels is not None:
            y = self._labels.decode(node.y)
        else:  # the model's own coding (a CustomModel's encode_targets): the rows' targets
            y = _uncoded(node, getattr(self, "_raw_targets", None))
        return node.X.copy(), y.copy(), {"sample_weight": self.sample_weight_.copy()}

    @property
    def n_points_(self):
        """Number of distinct points in the fitted coreset (may be below ``n_points``)."""
        check_is_fitted(self, "sample_indices_")
        return len(self.sample_indices_)

    # -- the fit, in named steps ----------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    @one_blas_thread()
    def _fit(self, X, y, sample_weight=None, composed=None):
        """``fit``, with the model a composition resolved for ``model='auto'`` (or None)."""
        self._check_params()
        self._drop_fitted_attributes()
        if is_dask_collection(X):
            from . import _dask

            construction, node = _dask.chunked_coreset(self, X, y, sample_weight, composed)
            self._construction = construction
            self._raw_targets = _raw_targets(construction, y, 0, None, node)
            self._set_result(node, construction)
            return self
        X, y, w = validate_source(self, X, y, sample_weight, reset=True)
        model, labels, inferred = resolve_model(self, y, composed)
        coded = encode_targets(y, model, labels, inferred)
        seen = _classes_seen(labels, coded, w)
        check_classes(labels, seen)
        size = self._coreset_size(model, X.shape[1])
        bounds = block_bounds(n_rows(X), self._block_rows(X))
        self._single_block = len(bounds) == 1
        if size is not None and size >= np.count_nonzero(w):
            construction, node = self._keep_all_rows(X, coded, w, model, labels)
        else:
            report(
                self,
                "%s of %d rows (%d with positive weight) in %d block(s), %s model",
                type(self).__name__,
                n_rows(X),
                np.count_nonzero(w),
                len(bounds),
                model.name,
            )
            data = InMemoryData(X, coded, w, self._block_rows(X), self)
            construction = Construction.start(self, model, labels, data)
            show = self.progress and len(bounds) > 1
            with ProgressBar(len(bounds), show, "blocks", "block") as bar:
                for index, (start, stop) in enumerate(bounds):
                    where = describe_block(index, start, stop) if len(bounds) > 1 else None
                    node = construction.leaf(X, coded, w, start, stop, index=index, where=where)
                    if node is not None:
                        construction.tree.push(node, construction.reduce)
                    bar.update()
            construction.n_seen, construction.calls = n_rows(X), 1
            node = construction.final()
        construction.classes_seen = seen
        self._construction = construction
        self._raw_targets = _raw_targets(construction, y, 0, None, node)
        self._set_result(node, construction)
        report(self, "coreset of %d points", len(self.sample_indices_))
        return self

    def _coreset_size(self, model, n_features):
        """The coreset size for ``model`` on ``n_features`` features, kept for the hooks
        (``_target_size``): the first step of every fit, as the block size depends on it."""
        n_params = model.n_params(n_features + model.fit_intercept)
        self._target_size = coreset_size(self, n_params)
        return self._target_size

    def _keep_all_rows(self, X, coded, w, model, labels):
        """``(construction, node)`` of the exact coreset: every row with positive weight, with
        its own weight."""
        positive = np.flatnonzero(w)
        if self.n_points != "auto" and self.n_points > positive.shape[0]:
            warn(
                f"n_points={self.n_points} is larger than the {positive.shape[0]} rows with "
                "positive sample_weight: the coreset is every such row with its own weight.",
                CoresetSizeWarning,
            )
        X_all = read_block(X, 0, n_rows(X), estimator=self)
        data = InMemoryData(X_all, coded, w, n_rows(X), self)
        construction = Construction.start(self, model, labels, data, exact=True)
        construction.n_seen, construction.calls = n_rows(X), 1
        info = {"stop_reason": "all_rows"}
        node = Node(positive, w[positive], X_all[positive], coded[positive], info=info)
        return construction, node

    def _set_result(self, node, construction):
        """Every fitted attribute, from the final node and the construction: the one place
        where a fit sets them."""
        order = np.argsort(node.indices, kind="stable")
        indices = np.asarray(node.indices, dtype=np.intp)[order]
        weights = np.asarray(node.weights, dtype=np.float64)[order]
        if not np.all(np.isfinite(weights)):
            raise FloatingPointError("The coreset weights are not finite; please report this.")
        self.model_ = construction.model.name
        self.n_samples_seen_ = construction.n_seen
        self.prior_scale_ = construction.prior_scale
        # the full data's prior, which a composition hands to the estimator fitted on the
        # coreset and the exports to probabilistic programming languages read
        self._data_prior = construction.data_prior
        context = replace(construction.context, data_fit=construction.data_fit(node))
        for name, value in self._finish(node, context).items():
            setattr(self, name, value)
        self.sample_indices_, self.sample_weight_ = indices, weights
        self._coreset_node = Node(indices, weights, node.X[order], node.y[order])
        self._labels = construction.labels
        self._set_quality(node, context, construction)
        self._warn_uncovered(self._coreset_node.X, construction.moments)

    def _set_quality(self, node, context, construction):
        """``laplace_`` (the data's Laplace fit, when the estimator reports none of its own)
        and ``laplace_kl_``, the KL of the coreset's Laplace fit to it, with a
        :class:`CoresetQualityWarning` when that is above the target
        (:func:`~._quality.quality_target`)."""
        if construction.exact or getattr(self, "stop_reason_", None) == "all_rows":
            self.laplace_kl_ = 0.0  # every row with its own weight: the data's posterior
            return
        data_fit = getattr(self, "laplace_", None) or context.data_fit
        if data_fit is None:
            return
        self.laplace_ = data_fit
        info = node.info or {}
        kl = info.get("laplace_kl")
        if kl is None:
            kl = coreset_kl(data_fit, node.X, node.y, node.weights)
        self.laplace_kl_ = float(kl)
        remedy = self._quality_remedy(info, construction.stream)
        warn_quality(self, self.laplace_kl_, data_fit.mean.shape[0], remedy)

    def _quality_remedy(self, info, stream):
        """What to do about a coreset above the quality target: what limited it."""
        if "size_limit" in info:
            why = f"n_points='auto' stopped at {info['size_limit']}."
        elif self.n_points == "auto":
            why = (
                f"{type(self).__name__}'s n_points='auto' is the size its parameters call "
                f"for ({len(self.sample_indices_)} points here) "
                "and does not grow: use more points, or OMPCoreset, whose coreset grows until "
                "it is within the target."
            )
        else:
            why = (
                f"n_points={self.n_points} is too few points for this posterior: use more, or "
                "n_points='auto', which grows the coreset until it is within the target."
            )
        if stream:
            why += (
                " In a stream, the first call of partial_fit fixes what every later block is "
                "measured with (its Laplace fit, the projection): start it with rows like the "
                "rest (shuffled, not sorted or degenerate), or fit all rows at once."
            )
        return why

    def _stream_params(self):
        """The parameters a stream keeps from its start (all but the display's)."""
        return {
            k: v for k, v in self.get_params(deep=False).items() if k not in ("progress", "verbose")
        }

    def _warn_changed_params(self, construction):
        """A warning when parameters changed (``set_params``) since the stream began."""
        changed = [
            k
            for k, v in self._stream_params().items()
            if k in construction.params and not _same(v, construction.params[k])
        ]
        if changed:
            warn(
                f"{', '.join(changed)} changed since the stream began: the coreset keeps the "
                "settings of its first call of partial_fit (or of fit). Refit, or start a new "
                "stream on a clone, to apply them.",
                UserWarning,
            )

    def _warn_uncovered(self, X, moments):
        """A :class:`CoresetCoverageWarning` when the coreset's points ``X`` leave a feature
        the data identify constant (zero, without an intercept)."""
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
        self.__dict__.pop("_construction", None)
        self.__dict__.pop("_raw_targets", None)

    def _block_level(self):
        """The logging level of a phase repeated per block: INFO for one block, else DEBUG."""
        return logging.INFO if self._single_block else logging.DEBUG

    def _show_core_progress(self):
        """An algorithm shows its own progress bar only when it is the whole construction."""
        return self.progress and self._single_block

    def _block_rows(self, X):
        if self.block_size != "auto":
            return int(self.block_size)
        return max(1000, BLOCK_BYTES // self._bytes_per_row(X.shape[1]))

    def _bytes_per_row(self, n_features):
        """Working memory per row of a block (the row itself, its design row and a copy)."""
        return 3 * 8 * (n_features + 1)

    def _selected(self, X, y):
        """The fitted subset of (X, y) and its weights, in the callers' containers."""
        idx = self.sample_indices_
        return (
            _safe_indexing(X, idx),
            _safe_indexing(y, idx),
            {"sample_weight": self.sample_weight_.copy()},
        )

    # -- hooks ----------------------------------------------------------------------------
    # Each receives the fit's Context as ``context`` and returns its result; none sets an
    # attribute of the estimator (a dask task's estimator is a copy): what a hook measures
    # travels in ``Node.info``, and ``_finish`` turns it into fitted attributes.
    def _check_params(self):
        """Checks across parameters, run before the data are validated."""

    def _begin(self, data, model, random_state):
        """The :class:`~._construction.Context` every block shares; ``data`` gives samples
        or blocks of the rows (``_blocks.InMemoryData`` or its dask counterpart)."""
        return Context(model)

    def _begin_exact(self, data, model, random_state):
        """The context of a fit that keeps every row (``data`` is one block)."""
        return Context(model)

    def _capacity(self):
        """The most rows a node of the tree holds: the coreset size unless a subclass pools
        candidates."""
        return self._target_size

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
        """The fitted attributes the final node and the context report, as a dict."""
        return {}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.sparse = True  # read block by block (densified a block at a time)
        tags.non_deterministic = False
        return tags


def _classes_seen(labels, coded, w):
    """The coded classes (0, 1, ...) among the rows with positive weight (empty for numeric
    targets): counted, where np.unique sorted them (0.07 s a call at 10^7 rows)."""
    if labels is None:
        return set()
    counts = np.bincount(np.asarray(coded, dtype=np.intp), weights=w > 0)
    return {int(c) for c in np.flatnonzero(counts)}


def _same(a, b):
    """Whether two parameter values are the same (arrays compared by value)."""
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(np.all(a == b))
    except (TypeError, ValueError):
        return False


def _raw_targets(construction, y, offset, kept, final=None):
    """The caller's targets of the rows a coreset can still hold, where the model's coding
    changed them (a ``CustomModel``'s ``encode_targets``): ``(indices, values)``, sorted by
    index, or None when the coding kept every value (numbers coded as themselves) or class
    labels code them (decoded by the labels).

    ``y``: the targets of one call (its rows from ``offset`` on); ``kept``: the previous
    calls' pair, pruned here to the rows the merge tree (and ``final``) still holds, so a
    stream keeps a few coresets' worth, never the stream's."""
    if construction.labels is not None:
        return None
    nodes = [n for n in [*construction.tree.held(), final] if n is not None]
    if not nodes:
        return kept
    indices = np.concatenate([n.indices for n in nodes])
    coded = np.concatenate([n.y for n in nodes])
    indices, first = np.unique(indices, return_index=True)
    coded = coded[first]
    ours = (indices >= offset) & (indices < offset + len(y))
    raw = _target_rows(y, indices[ours] - offset)
    parts = []
    if kept is not None:  # the earlier calls' rows still held
        held = np.isin(kept[0], indices)
        parts.append((kept[0][held], kept[1][held]))
    if raw.shape[0] and not _same_numbers(raw, coded[ours]):
        parts.append((indices[ours], raw))
    parts = [p for p in parts if p[0].shape[0]]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    values = np.empty(sum(p[0].shape[0] for p in parts), dtype=object)
    values[:] = [v for p in parts for v in p[1].tolist()]
    return np.concatenate([p[0] for p in parts]), values


def _target_rows(y, positions):
    """``y[positions]`` as a NumPy array, whatever holds y (a dask collection is computed)."""
    if is_dask_collection(y):
        column = y.to_dask_array(lengths=True) if hasattr(y, "to_dask_array") else y
        return np.asarray(column[positions].compute()).reshape(-1)
    return np.asarray(_safe_indexing(y, positions)).reshape(-1)


def _same_numbers(raw, coded):
    """Whether the caller's targets are numbers equal to their codes."""
    if raw.dtype.kind not in "biuf":
        return False
    return bool(np.array_equal(raw.astype(np.float64), coded))


def _uncoded(node, raw):
    """The targets of a node's rows in the caller's coding: their codes, but where the model's
    coding changed them (``raw``, from :func:`_raw_targets`)."""
    if raw is None:
        return node.y
    indices, values = raw
    pos = np.minimum(np.searchsorted(indices, node.indices), indices.shape[0] - 1)
    stored = indices[pos] == node.indices
    if np.all(stored) and values.dtype != object:
        return values[pos]
    out = [values[p] if k else c for p, k, c in zip(pos, stored, node.y.tolist())]
    # one kind of value (strings, say): an array of it; mixed kinds stay objects
    same = len({type(v) for v in out}) <= 1
    return np.asarray(out) if same else np.array(out, dtype=object)
