"""A coreset estimator's fit of grouped data for a multilevel model: in memory at once
(:func:`fit_multilevel`), block by block (:func:`partial_fit_multilevel`), or a dask
collection's chunks streamed one at a time (a group's rows may be in any chunk)."""

import numpy as np
from sklearn.utils import check_random_state

from .._logging import phase, report
from ..models._grouped_data import validate_grouped
from ..models._multilevel import Multilevel
from ..models._multilevel_laplace import fit_laplace
from ._dask import aligned, as_dask_array, is_dask_collection
from ._merge_reduce import Node
from ._multilevel import AUTO_PER_PARAM, multilevel_coreset
from ._multilevel_kl import GroupProblem, group_bank, kl_multipliers, omp_start
from ._multilevel_stream import GroupedStream

#: A KL coreset's stream keeps this many times a group's 'auto' points as its candidates.
KL_POOL = 5


def multilevel_spec(estimator, spec):
    """The model of a multilevel fit, or a clear error: an estimator that does not build
    them, ``groups`` without a multilevel model."""
    if getattr(estimator, "_multilevel", None) is None:  # the sensitivity coreset
        raise TypeError(
            f"{type(estimator).__name__} does not build coresets of multilevel models; "
            "the Hilbert coresets (OMPCoreset, ...) and the KL ones (QuasiNewtonCoreset, "
            "...) do."
        )
    if spec is None:
        raise ValueError(
            "groups= is for a multilevel model: pass model=Multilevel(base) (see "
            "skcoreset.models.Multilevel)."
        )
    return spec


def fit_multilevel(estimator, X, y, sample_weight, groups, spec):
    """``estimator.fit(X, y, groups=)`` for a multilevel model (:mod:`._multilevel`)."""
    spec = multilevel_spec(estimator, spec)
    if is_dask_collection(X):
        return _fit_dask(estimator, X, y, sample_weight, groups, spec)
    data = validate_grouped(estimator, spec, X, y, groups, sample_weight, estimator.fit_intercept)
    rows = np.flatnonzero(data.w > 0)
    if rows.shape[0] < 2:
        raise ValueError("A multilevel coreset needs at least 2 rows with positive weight.")
    estimator._target_size = 1  # each group's budget is set where it is reduced
    node, laplace, info = multilevel_coreset(
        estimator,
        data.X[rows],
        data.y[rows],
        data.w[rows],
        data.codes[rows],
        len(data.labels),
        spec,
        check_random_state(estimator.random_state),
    )
    order = np.argsort(node.indices, kind="stable")
    indices = rows[node.indices[order]]
    info["left_out"] = rows[info["left_out"]]
    info["group_weight"] = info["group_weight"][order]
    _set_result(
        estimator,
        spec,
        laplace,
        info,
        Node(indices, node.weights[order], data.X[indices], data.raw_y[indices]),
        data.labels,
        data.codes[indices],
        data.X.shape[0],
        data.classes,
    )
    report(estimator, "multilevel coreset of %d points", len(indices))
    return estimator


def partial_fit_multilevel(estimator, X, y, sample_weight, groups, classes):
    """``estimator.partial_fit(X, y, groups=)``: the block added to the stream
    (:class:`~._multilevel_stream.GroupedStream`), the fitted attributes those of the coreset
    of everything seen."""
    stream = getattr(estimator, "_stream", None)
    first = stream is None
    if first:
        if hasattr(estimator, "sample_indices_"):
            raise ValueError(
                f"{type(estimator).__name__} was fitted by fit; a multilevel stream begins "
                "with partial_fit (refit with every row, or start a new estimator)."
            )
        estimator._validate_params()
        estimator._check_params()
        estimator._drop_fitted_attributes()
    model = getattr(estimator, "model", None)
    spec = multilevel_spec(estimator, model if isinstance(model, Multilevel) else None)
    label = f"call {0 if first else stream.n_blocks} of partial_fit"
    try:
        _add_block(estimator, spec, X, y, sample_weight, groups, classes, first, label)
    except ValueError as exc:
        raise ValueError(f"In {label}: {exc}") from None
    _set_stream_result(estimator, spec)
    return estimator


def _add_block(estimator, spec, X, y, sample_weight, groups, classes, first, label):
    """One block into the estimator's stream (begun on the first: its Laplace fit)."""
    stream = getattr(estimator, "_stream", None)
    data = validate_grouped(
        estimator,
        spec,
        X,
        y,
        groups,
        sample_weight,
        estimator.fit_intercept,
        reset=first,
        classes=classes if first else estimator._stream_classes,
    )
    if first:
        rows = np.flatnonzero(data.w > 0)
        if rows.shape[0] < 2:
            raise ValueError("the first block needs at least 2 rows with positive weight.")
        post = spec.posterior(
            data.X[rows],
            data.y[rows],
            data.codes[rows],
            len(data.labels),
            data.w[rows],
            estimator.prior_scale,
            estimator.fit_intercept,
        )
        with phase(estimator, f"multilevel Laplace fit of the first block ({rows.shape[0]} rows)"):
            pilot = fit_laplace(post)
        n_per = post.D + post.E + post.q
        pool = KL_POOL if estimator._multilevel == "kl" else 1
        cap = pool * AUTO_PER_PARAM * n_per
        J = int(min(getattr(estimator, "n_projections", 500), max(40, 2 * cap)))
        rng = check_random_state(estimator.random_state)
        stream = GroupedStream(spec, pilot, data.labels, J, rng, data.X.shape[1], pool)
        estimator._stream_classes = data.classes
    with phase(estimator, f"{label}: {data.X.shape[0]} rows in {len(data.labels)} groups"):
        stream.add(data.X, data.y, data.w, data.raw_y, data.codes, data.labels, _reducer(estimator))
    estimator._stream = stream


def _reducer(estimator):
    """``reduce(V, sigma, target, size, rng, g, rows) -> multipliers``: the estimator's
    algorithm on a group's projection; for the KL coresets, OMP (their start)."""

    def reduce(V, sigma, target, size, rng, g=None, rows=None):
        if estimator._multilevel == "kl":
            idx, w = omp_start(V, sigma, target, size, np.ones(V.shape[0]))
            multipliers = np.zeros(V.shape[0])
            multipliers[idx] = w
            return multipliers
        saved = getattr(estimator, "_target_size", None)
        estimator._target_size = int(size)
        try:
            weights, _, _ = estimator._select(V, sigma, target, rng)
        finally:
            estimator._target_size = saved
        return weights

    return reduce


def _kl_reducer(estimator, stream, spec):
    """The final reduction of a KL coreset's stream: each group's weights optimised against
    its KL, its kept rows standing for its data, with draws of the Laplace fit of every
    group's kept rows (:mod:`._multilevel_kl`)."""
    rows, codes, labels = stream.kept()
    union = stream.fit_coreset(rows, codes, len(labels), estimator.prior_scale, estimator)
    post = union.posterior
    _, rank = stream.ranks()
    budget = stream.budgets(estimator.n_points)
    kept = np.array([len(r) if r is not None else 0 for r in stream.rows])
    reduced = np.flatnonzero(kept > budget)
    rng = np.random.RandomState(np.random.SeedSequence([stream.seed, 2]).generate_state(4))
    bank = group_bank(union, rng, rank[reduced])

    def reduce(V, sigma, target, size, rng, g, rows):
        problem = GroupProblem(
            post.base, post.E, post.base.design(rows.X), spec.effects_design(rows.X),
            rows.y, rows.weights, bank[rank[g]], estimator.n_chains, rng,
        )  # fmt: skip
        saved = getattr(estimator, "_target_size", None)
        estimator._target_size = int(size)
        try:
            return kl_multipliers(estimator, problem, V, sigma, target, rng)
        finally:
            estimator._target_size = saved

    return reduce


def _set_stream_result(estimator, spec):
    """The fitted attributes of the stream's coreset of everything seen."""
    stream = estimator._stream
    if estimator._multilevel == "kl":
        reduce = _kl_reducer(estimator, stream, spec)
    else:
        reduce = _reducer(estimator)
    rows, codes, labels, budget, error = stream.result(estimator.n_points, reduce)
    laplace = stream.fit_coreset(rows, codes, len(labels), estimator.prior_scale, estimator)
    order = np.argsort(rows.indices, kind="stable")
    whole = int(np.sum((stream.count > 0) & (budget >= stream.count)))
    info = {
        "error": error,
        "groups_kept_whole": whole,
        "groups_marginal": 0,
        "left_out": np.empty(0, dtype=np.intp),
        "group_weight": np.ones(len(rows)),
    }
    node = Node(rows.indices[order], rows.weights[order], rows.X[order], rows.raw[order])
    classes = estimator._stream_classes
    _set_result(estimator, spec, laplace, info, node, labels, codes[order], stream.n_seen, classes)
    if classes is not None:
        estimator.classes_ = classes


def _fit_dask(estimator, X, y, sample_weight, groups, spec):
    """A dask collection streamed chunk by chunk on the client: a group's rows may be in any
    chunk, and its coreset needs them together (the per-chunk tasks of the single-level
    coresets do not apply). The class labels are read first (one pass over ``y``)."""
    import dask
    import dask.array as da

    if y is None or groups is None:
        raise ValueError("A multilevel coreset of a dask collection needs y and groups.")
    X = as_dask_array(X, "X")
    chunks = X.chunks[0]
    y = aligned(y, chunks, "y")
    g = aligned(groups, chunks, "groups")
    w = aligned(sample_weight, chunks, "sample_weight")
    classes = None
    if spec.base_model().labels is not None:
        (classes,) = dask.compute(da.unique(y))
    estimator.__dict__.pop("_stream", None)
    for i in range(len(chunks)):
        parts = [X.blocks[i], y.blocks[i], g.blocks[i]] + ([w.blocks[i]] if w is not None else [])
        X_i, y_i, g_i, *w_i = dask.compute(*parts)
        label = f"chunk {i} of {len(chunks)}"
        try:
            w_i = w_i[0] if w_i else None
            _add_block(estimator, spec, X_i, y_i, w_i, g_i, classes, i == 0, label)
        except ValueError as exc:
            raise ValueError(f"In {label}: {exc}") from None
    _set_stream_result(estimator, spec)
    del estimator._stream  # a fit, not a stream: partial_fit does not continue it
    report(estimator, "multilevel coreset of %d points", estimator.n_points_)
    return estimator


def _set_result(estimator, spec, laplace, info, node, labels, codes, n_seen, classes):
    """Every fitted attribute of a multilevel coreset (``node``: its rows in the caller's
    order, targets as given; ``codes``: their groups' indices into ``labels``; ``classes``:
    the class labels of a logistic base, or None)."""
    estimator.model_ = spec.name
    estimator.multilevel_ = spec
    estimator.n_samples_seen_ = n_seen
    estimator.prior_scale_ = laplace.posterior.prior_scale.copy()
    estimator.laplace_ = laplace
    estimator.hilbert_error_ = info["error"]
    estimator.n_groups_kept_whole_ = info["groups_kept_whole"]
    estimator.n_groups_marginal_ = info["groups_marginal"]
    estimator.left_out_indices_ = info["left_out"]
    estimator.groups_ = labels
    estimator.sample_indices_ = np.asarray(node.indices, dtype=np.intp)
    estimator.sample_weight_ = np.asarray(node.weights, dtype=np.float64)
    estimator.sample_group_weight_ = info["group_weight"]
    estimator.sample_groups_ = labels[codes]
    # the full data's priors, which the estimator fitted on the coreset takes
    estimator._multilevel_scale = laplace.posterior.data_scale
    estimator._data_prior = None
    estimator._coreset_node = node
    estimator._labels = None
    estimator._multilevel_classes = classes
    estimator._raw_targets = None
