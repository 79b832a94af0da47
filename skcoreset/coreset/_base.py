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

* ``_begin(data, model, random_state, summarised)``: the context all blocks share (the
  Hilbert coresets: a Laplace fit and the projection's parameter draws), made once;
  ``summarised``: every block may be summarised at its Laplace fit and the data's fit made
  from those sums at the end, so that a fit of a sample of the rows (a pilot,
  ``Context.pilot``) suffices;
* ``_reduce(node, context, random_state)``: at most ``_capacity()`` of a node's rows (a
  coreset of ``n_points``, or for the Hilbert coresets a pool of candidates);
* ``_summarize(node, context, random_state)``: a node kept whole, with its exact summary;
* ``_finalize(node, context, random_state)``: the coreset of the final node (the algorithm
  run on the pool of candidates; nothing to do for a node that already is a coreset);
* ``_finish(node, context)``: the fitted attributes the final node reports, as a dict.

The hooks receive validated float64 rows, targets coded by the model and positive weights.
"""

import logging
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._logging import report
from .._sklearn_compat import Interval, StrOptions, _fit_context, _safe_indexing
from .._stats import recording, stage
from .._threads import one_blas_thread
from ..export._mixin import PPLExportMixin
from ..models import GLM
from ..models._multilevel import Multilevel
from ..models._names import ModelNames
from ._blocks import InMemoryData, n_rows, row_indexable
from ._caller import check_resample_caller
from ._construction import Construction, Context, construct
from ._dask import chunked_coreset, is_dask_collection
from ._exceptions import CoresetCoverageWarning, CoresetQualityWarning, CoresetSizeWarning
from ._merge_reduce import Node
from ._multilevel_fit import fit_multilevel, partial_fit_multilevel
from ._preparation import (
    check_classes,
    classes_seen,
    encode_targets,
    pilot_rows,
    prepare,
    resolve_model,
    set_sizes,
    validate_source,
    with_prior,
)
from ._quality import set_quality, warn_uncovered

__all__ = [
    "BaseCoreset",
    "CoresetCoverageWarning",
    "CoresetQualityWarning",
    "CoresetSizeWarning",
]


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

    #: How the estimator builds multilevel coresets: 'hilbert', 'kl', or None (it does not).
    _multilevel = None

    #: Whether the fit is one block (its phases are logged at INFO, its core shows progress).
    _single_block = True

    #: The dtypes in which a leaf's reduction takes its block's rows (``check_array``'s
    #: ``dtype``): float64, or also float32 for a reduction that converts the rows it reads
    #: itself. The node it returns holds float64 rows either way.
    _leaf_dtype = np.float64

    _parameter_constraints: dict = {
        "n_points": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "model": [StrOptions(ModelNames("auto")), GLM, Multilevel],
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

    def fit(self, X, y, sample_weight=None, groups=None):
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
        groups : array-like of shape (n_samples,), default=None
            Each row's group, for a multilevel model (``model=Multilevel(...)``): the
            coreset keeps rows inside each group (see the user guide, "Multilevel models");
            a dask collection's chunks are then read one at a time on the client (a group's
            rows may be in any chunk).

        Returns
        -------
        self : object
            Fitted estimator with ``sample_indices_`` and ``sample_weight_``.
        """
        return self._fit(X, y, sample_weight, groups=groups)

    def fit_resample(self, X, y, sample_weight=None, groups=None):
        """Fit, then return the weighted subset.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the data.
        groups : array-like of shape (n_samples,), default=None
            Each row's group, for a multilevel model.

        Returns
        -------
        X_coreset : array-like of shape (M, n_features)
            The selected rows of ``X`` (same container type: pandas stays pandas, sparse
            stays sparse).
        y_coreset : array-like of shape (M,)
            The selected targets, in the caller's coding.
        params : dict
            ``{"sample_weight": sample_weight_}``, to pass to the next estimator's ``fit``;
            with ``groups``, also ``"groups"``: the selected rows' groups.
        """
        check_resample_caller(self)
        X = row_indexable(X)
        self._fit(X, y, sample_weight, groups=groups)
        X_m, y_m, params = self._selected(X, y)
        if groups is not None:
            params["groups"] = _safe_indexing(groups, self.sample_indices_)
            if np.any(self.sample_group_weight_ != 1):  # a coreset of groups
                params["group_weight"] = self.sample_group_weight_.copy()
        return X_m, y_m, params

    def partial_fit(self, X, y, sample_weight=None, classes=None, groups=None):
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
        groups : array-like of shape (n_samples,), default=None
            Each row's group, for a multilevel model (``model=Multilevel(...)``): each
            group keeps a coreset of its rows, reduced per group (a group may come in any
            call; see the "Multilevel models" guide). A multilevel stream begins with
            ``partial_fit``, not ``fit``.

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
        if groups is not None or isinstance(getattr(self, "model", None), Multilevel):
            return partial_fit_multilevel(self, X, y, sample_weight, groups, classes)
        return self._partial_fit(X, y, sample_weight, classes)

    @one_blas_thread()
    def _partial_fit(self, X, y, sample_weight=None, classes=None, finalize=True):
        """:meth:`partial_fit`; with ``finalize=False`` the call's blocks join the merge tree
        but the coreset of everything seen is not computed, nor the fitted attributes set,
        until :meth:`_finish_stream`. A reader of a whole stream (the command line) then
        finalizes once, where every call of ``partial_fit`` finalizes (OMP on the pool, or
        QNC's start and steps, each time); the coreset is the same (measured:
        benchmarks/README.md, Thresholds)."""
        construction = getattr(self, "_construction", None)
        stats = getattr(construction, "stats", None)
        with recording(stats) as stats:
            self._partial_fit_recorded(X, y, sample_weight, classes, finalize)
        self._construction.stats = stats
        if finalize:
            self.fit_stats_ = stats.as_dict(
                self._construction.n_seen, _data_fit_info(self._construction)
            )
        return self

    def _partial_fit_recorded(self, X, y, sample_weight, classes, finalize):
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
            construction.warn_changed_params(self)
        label = f"call {0 if first else construction.calls} of partial_fit"
        with stage("validation and moments"):
            X, y, w, model, labels, coded, seen = self._validate_call(
                X, y, sample_weight, classes, construction, label
            )
            if first:
                _, block_rows = set_sizes(self, model, X.shape[1])
                pilot = pilot_rows(self, n_rows(X), block_rows)
                data = InMemoryData(X, coded, w, block_rows, self, pilot)
                prior = with_prior(self, model, data)
        if first:
            construction = Construction.start(self, prior, labels, data, stream=True)
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

    def _validate_call(self, X, y, sample_weight, classes, construction, label):
        """``(X, y, w, model, labels, coded, classes seen)`` of a call of partial_fit (the
        first when there is no ``construction`` yet)."""
        first = construction is None
        try:
            X, y, w = validate_source(self, X, y, sample_weight, reset=first, allow_all_zero=True)
            if first:
                model, labels, inferred = resolve_model(self, y, classes=classes, streaming=True)
            else:
                model, labels, inferred = construction.model, construction.labels, False
            coded = encode_targets(y, model, labels, inferred)
            seen = classes_seen(labels, coded, w)
            if first and not np.any(w > 0):
                raise ValueError("no row has a positive sample_weight.")
            if first and classes is None:  # the labels are this block's: it must hold them
                check_classes(labels, seen)
        except ValueError as exc:
            raise ValueError(f"In {label}: {exc}") from None
        return X, y, w, model, labels, coded, seen

    @one_blas_thread()
    def _finish_stream(self, chunks=None):
        """The fitted attributes of everything :meth:`_partial_fit` was given; ``chunks``
        (``chunks()``: the stream's ``(X, y)`` again, in any chunks) lets the data's fit be
        confirmed by more passes over them (a file read again, as by the command line)."""
        construction = self._construction
        stats = construction.stats
        with recording(stats) as stats:
            passes = None if chunks is None else construction.stream_passes(chunks)
            self._set_result(construction.final(passes=passes), construction)
        construction.stats = stats
        self.fit_stats_ = stats.as_dict(construction.n_seen, _data_fit_info(construction))
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
            ``{"sample_weight": sample_weight_}``; for a multilevel model also
            ``"groups"`` (``sample_groups_``), and for a coreset of groups
            ``"group_weight"``.
        """
        check_is_fitted(self, "sample_indices_")
        node = self._coreset_node
        if self._labels is not None:
            y = self._labels.decode(node.y)
        else:  # the model's own coding (a CustomModel's encode_targets): the rows' targets
            y = _uncoded(node, getattr(self, "_raw_targets", None))
        params = {"sample_weight": self.sample_weight_.copy()}
        if hasattr(self, "multilevel_"):
            params["groups"] = self.sample_groups_.copy()
            if np.any(self.sample_group_weight_ != 1):  # a coreset of groups
                params["group_weight"] = self.sample_group_weight_.copy()
        return node.X.copy(), y.copy(), params

    @property
    def n_points_(self):
        """Number of distinct points in the fitted coreset (may be below ``n_points``)."""
        check_is_fitted(self, "sample_indices_")
        return len(self.sample_indices_)

    # -- the fit, in named steps ----------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    @one_blas_thread()
    def _fit(self, X, y, sample_weight=None, composed=None, groups=None):
        """``fit``, with the model a composition resolved for ``model='auto'`` (or None),
        its cost recorded (``fit_stats_``)."""
        self._check_params()
        self._drop_fitted_attributes()
        with recording() as stats:
            self._fit_recorded(X, y, sample_weight, composed, groups)
        construction = self.__dict__.get("_construction")
        n = construction.n_seen if construction is not None else self.n_samples_seen_
        self.fit_stats_ = stats.as_dict(n, _data_fit_info(construction))
        return self

    def _fit_recorded(self, X, y, sample_weight, composed, groups):
        model = getattr(self, "model", "auto")  # the sensitivity coreset has none
        spec = model if isinstance(model, Multilevel) else None
        if (
            spec is None
            and isinstance(model, str)
            and model == "auto"
            and isinstance(composed, Multilevel)
        ):
            spec = composed  # the multilevel estimator the coreset feeds
        if groups is not None or spec is not None:
            return self._fit_multilevel(X, y, sample_weight, groups, spec)
        in_memory = not is_dask_collection(X)
        if in_memory:
            prepared = prepare(self, X, y, sample_weight, composed)
            construction, node = construct(self, prepared)
            y = prepared.y  # validated: a column
        else:
            construction, node = chunked_coreset(self, X, y, sample_weight, composed)
        self._construction = construction
        self._raw_targets = _raw_targets(construction, y, 0, None, node)
        self._set_result(node, construction)
        if in_memory:
            report(self, "coreset of %d points", len(self.sample_indices_))
        return self

    def _fit_multilevel(self, X, y, sample_weight, groups, spec):
        """A coreset of rows inside each group (:mod:`._multilevel_fit`)."""
        return fit_multilevel(self, X, y, sample_weight, groups, spec)

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
        context = construction.final_context
        for name, value in self._finish(node, context).items():
            setattr(self, name, value)
        self.sample_indices_, self.sample_weight_ = indices, weights
        self._coreset_node = Node(indices, weights, node.X[order], node.y[order])
        self._labels = construction.labels
        set_quality(self, node, context, construction)  # laplace_kl_, and laplace_
        warn_uncovered(self, self._coreset_node.X, construction.moments)

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

    def _bytes_per_row(self, n_features):
        """Working memory per row of a block (the row itself, its design row and a copy)."""
        return 3 * 8 * (n_features + 1)

    def _selected(self, X, y):
        """The fitted subset of (X, y) and its weights, in the callers' containers (a dask
        collection's: the coreset's rows as the fit kept them, a DataFrame's with its
        columns, not a selection from the chunks, which would read them again)."""
        if is_dask_collection(X) or is_dask_collection(y):
            X_m, y_m, params = self.get_coreset()
            names = getattr(self, "feature_names_in_", None)
            if names is not None and hasattr(X, "columns"):
                import pandas as pd

                X_m = pd.DataFrame(X_m, columns=names)
            return X_m, y_m, params
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

    def _begin(self, data, model, random_state, summarised=False):
        """The :class:`~._construction.Context` every block shares; ``data`` gives samples
        or blocks of the rows (``_blocks.InMemoryData`` or its dask counterpart)."""
        return Context(model)

    def _begin_exact(self, data, model, random_state):
        """The context of a fit that keeps every row (``data`` is one block)."""
        return Context(model)

    def _pilot_size(self, n_rows, block_rows):
        """Rows of the pilot's sample of a fit of ``n_rows`` rows in blocks of
        ``block_rows``, whose Laplace fit ``_begin`` summarises the blocks at (see
        ``Context.pilot``), or None for none (by default: the estimator needs no pilot)."""
        return None

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


def _data_fit_info(construction):
    """How the data's fit of a construction's last final coreset was made (``fit_stats_``'s
    ``data_fit``), or None."""
    context = getattr(construction, "final_context", None)
    return None if context is None else context.fit_info


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
