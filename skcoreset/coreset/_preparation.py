"""Before the blocks: the data checked, the model resolved, the targets coded, the prior set.

The rules here are the estimator's parameters read against the data, shared by ``fit``,
``partial_fit`` and the dask path; the blocks then only see validated float64 rows, coded
targets and positive weights (:mod:`._construction`). :func:`prepare` is all of it for a fit
of data in memory, in one call.
"""

from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
from sklearn.utils import check_array, check_consistent_length, check_random_state, column_or_1d
from sklearn.utils.validation import validate_data

from .._sklearn_compat import _check_sample_weight
from .._stats import stage
from .._warnings import warn
from ..models import GLM, classification_model, get_model, model_class, model_from_targets
from ..models._checks import CHECK_ROWS
from ..models._prior import DataPrior, checked_prior_scale, is_auto, prior_from_moments
from ._blocks import InMemoryData, as_source, block_bounds, n_rows, read_block, sample_rows
from ._exceptions import CoresetSizeWarning
from ._merge_reduce import PILOT, NodeSeeds

#: The range of ``n_points='auto'``.
AUTO_SIZE = (100, 500)

#: Working memory of one block when ``block_size='auto'``: the rows per block are this
#: divided by the estimator's bytes per row (its projection, for the Hilbert coresets).
BLOCK_BYTES = 128 * 2**20


class Prior(NamedTuple):
    """The prior of a fit (:func:`with_prior`)."""

    #: The model with its prior set.
    model: object
    #: The prior's standard deviations (``prior_scale_``).
    scale: np.ndarray
    #: The data's moments, when the prior followed them (for the coverage check), else None.
    moments: object
    #: The full data's prior (:class:`~skcoreset.models.DataPrior`).
    data_prior: object


@dataclass
class Prepared:
    """Everything a fit of data in memory knows before its first block (:func:`prepare`).

    ``X`` is the validated source (not copied; every row when the fit keeps them all),
    ``y`` the caller's targets as a column, ``coded`` their coding, ``w`` the weights;
    ``data`` reads the rows block by block, ``bounds`` are the blocks' ``(start, stop)``;
    ``exact``: the coreset is every row with positive weight (``n_points`` not below their
    number).
    """

    X: object
    y: np.ndarray
    coded: np.ndarray
    w: np.ndarray
    labels: object
    classes_seen: set
    bounds: list
    data: InMemoryData
    prior: Prior
    exact: bool


def prepare(estimator, X, y, sample_weight, composed=None):
    """Everything before the first block of a fit of data in memory, as :class:`Prepared`:
    the data validated, the model resolved (``composed``: a composition's, for 'auto'), the
    targets coded, the classes checked, the coreset size (the estimator's ``_target_size``)
    and the rows per block set, and the prior from one pass of moments."""
    with stage("validation and moments"):
        return _prepare(estimator, X, y, sample_weight, composed)


def _prepare(estimator, X, y, sample_weight, composed):
    X, y, w = validate_source(estimator, X, y, sample_weight, reset=True)
    model, labels, inferred = resolve_model(estimator, y, composed)
    coded = encode_targets(y, model, labels, inferred)
    seen = classes_seen(labels, coded, w)
    check_classes(labels, seen)
    size, block_rows = set_sizes(estimator, model, X.shape[1])
    exact = size is not None and size >= np.count_nonzero(w)
    if exact:  # the coreset is every row with positive weight: all of them read at once
        n_positive = np.count_nonzero(w)
        if estimator.n_points != "auto" and estimator.n_points > n_positive:
            warn(
                f"n_points={estimator.n_points} is larger than the {n_positive} rows with "
                "positive sample_weight: the coreset is every such row with its own weight.",
                CoresetSizeWarning,
            )
        X = read_block(X, 0, n_rows(X), estimator=estimator)
        data = InMemoryData(X, coded, w, n_rows(X), estimator)
    else:
        pilot = pilot_rows(estimator, n_rows(X), block_rows)
        data = InMemoryData(X, coded, w, block_rows, estimator, pilot)
    prior = with_prior(estimator, model, data)
    bounds = block_bounds(n_rows(X), block_rows)
    return Prepared(X, y, coded, w, labels, seen, bounds, data, prior, exact)


def set_sizes(estimator, model, n_features):
    """``(size, block_rows)`` of a fit of ``model`` on ``n_features`` features: the coreset
    size (:func:`coreset_size`), kept on the estimator for its hooks (``_target_size``), and
    the rows per block, ``block_size`` or for 'auto' what :data:`BLOCK_BYTES` holds at the
    estimator's bytes per row (its ``_bytes_per_row`` hook); the size comes first, as a
    Hilbert coreset's bytes per row depend on it."""
    n_params = model.n_params(n_features + model.fit_intercept)
    estimator._n_params = n_params
    estimator._target_size = coreset_size(estimator, n_params)
    if estimator.block_size != "auto":
        block_rows = int(estimator.block_size)
    else:
        block_rows = max(1000, BLOCK_BYTES // estimator._bytes_per_row(n_features))
    return estimator._target_size, block_rows


def pilot_rows(estimator, n, block_rows):
    """The sorted rows of the pilot's sample of ``n`` rows in blocks of ``block_rows``
    (``Context.pilot``), or None: as many as the estimator's ``_pilot_size`` says (None: no
    pilot), drawn uniformly before the data are read, from a generator of their own keyed
    by the estimator's ``random_state`` (peeked, not drawn), so that a dask fit gathers the
    same rows in its first pass over the chunks as a fit of the array in memory reads."""
    size = estimator._pilot_size(n, block_rows)
    if size is None or size >= n:
        return None
    seeds = NodeSeeds(check_random_state(estimator.random_state))
    return sample_rows(n, size, seeds((PILOT, 0, 0, 0)))


def classes_seen(labels, coded, w):
    """The coded classes (0, 1, ...) among the rows with positive weight (empty for numeric
    targets): each of a few classes looked for by a comparison (no copy of the codes, none of
    the weights when they are all one), more of them counted, where np.unique sorted them
    (measured: benchmarks/README.md, Thresholds)."""
    if labels is None:
        return set()
    n_classes = labels.classes.shape[0]
    coded = np.asarray(coded)
    unit = isinstance(w, np.ndarray) and w.ndim == 1 and w.strides == (0,) and w.size and w[0] > 0
    positive = None if unit else np.asarray(w) > 0
    if n_classes <= _FEW_CLASSES:
        seen = set()
        for k in range(n_classes):
            found = coded == k
            if positive is not None:
                found &= positive
            if found.any():
                seen.add(k)
        return seen
    codes = coded if positive is None else coded[positive]
    counts = np.bincount(codes.astype(np.intp), minlength=n_classes)
    return {int(c) for c in np.flatnonzero(counts)}


#: Classes from which :func:`classes_seen` counts the codes rather than compare them.
_FEW_CLASSES = 8


def validate_source(estimator, X, y, sample_weight, *, reset, allow_all_zero=False):
    """``(source, y, sample_weight)``: X checked for shape and features but not copied
    (each block is validated when it is read), y as a column, the weights checked."""
    if y is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y is None."
        )
    X = as_source(X)
    if getattr(X, "ndim", 2) == 0:
        check_array(X, estimator=estimator)  # scikit-learn's message for a scalar
    # Dimensions, dtype, sparsity and emptiness, on the first row (or the empty array).
    read_block(X, 0, min(n_rows(X), 1), estimator=estimator)
    validate_data(estimator, X, reset=reset, skip_check_array=True)
    y = column_or_1d(y, warn=True)
    check_consistent_length(X, y)
    if sample_weight is None:
        # unit weights as a read-only view of one number: no N-vector to hold
        return X, y, np.broadcast_to(np.float64(1.0), (len(y),))
    w = _check_sample_weight(
        sample_weight,
        np.empty((len(y), 0)),
        dtype=np.float64,
        ensure_non_negative=True,
        allow_all_zero_weights=allow_all_zero,
    )
    return X, y, w


def model_name(estimator, composed=None):
    """The model's name (or object) if something other than the targets settles it: the
    class's declaration, the ``model`` parameter, or for 'auto' the composition's final
    estimator (``composed``); else None."""
    name = getattr(type(estimator), "__skcoreset_model__", None)
    if name is None:
        name = estimator.model if estimator.model != "auto" else composed
    return name


def named_model(estimator, name):
    """The model ``name`` (or a user's model object) with the estimator's prior and
    intercept: for 'auto' a unit placeholder, which :func:`with_prior` replaces once the
    data's moments are known."""
    auto = is_auto(estimator.prior_scale)
    if isinstance(name, GLM):
        return replace(
            name,
            prior_scale=name.prior_scale if auto else estimator.prior_scale,
            fit_intercept=estimator.fit_intercept,
        )
    return get_model(
        name,
        prior_scale=1.0 if auto else estimator.prior_scale,
        fit_intercept=estimator.fit_intercept,
    )


def resolve_model(estimator, y, composed=None, classes=None, streaming=False, inferred_name=None):
    """``(model, labels, inferred)``: the model with its class coding (None for numeric
    targets) and whether it was inferred from the targets.

    ``y`` may be the targets or only their distinct values. ``classes`` (``partial_fit``'s)
    declares class labels: it fixes their coding and, for 'auto', makes the model a
    classification model. ``streaming``: the targets are a first block, whose one class the
    labels may not be (the error then names ``classes=``). ``inferred_name``: what 'auto'
    means, when the caller judged it (the dask path, from its chunks' digests).
    """
    name = model_name(estimator, composed)
    inferred = name is None
    if inferred:
        if inferred_name is not None:
            name = inferred_name
        elif classes is not None:
            name = classification_model(classes)
        else:
            name = model_from_targets(y)
    elif name is composed and isinstance(name, str):
        # the composition's reading of its final estimator ('logistic' for a classifier):
        # the model says which model that is for these targets (a classifier's: as many
        # classes as y has)
        name = model_class(name).composed_name(y if classes is None else classes)
    model = named_model(estimator, name)
    labels = None
    if model.labels is not None:
        try:
            if classes is not None:
                labels = model.labels.fit(classes, input_name="classes")
            else:
                labels = model.labels.fit(y)
        except ValueError as exc:
            raise _explained(exc, model, inferred, streaming) from None
        model = model.with_classes(labels.classes)
    return model, labels, inferred


def encode_targets(y, model, labels, inferred=False):
    """The targets in the model's coding (class labels through ``labels``)."""
    try:
        return labels.encode(y) if labels is not None else model.encode_targets(y)
    except ValueError as exc:
        raise _explained(exc, model, inferred) from None


def _explained(exc, model, inferred, streaming=False):
    """An error about the targets with the fix that applies: ``classes=`` for a first block
    of ``partial_fit`` with one class, ``model=`` when the model was inferred."""
    if streaming and "one class only" in str(exc):
        return ValueError(
            f"{exc} A first call of partial_fit may hold one class if it names them all: "
            "classes=[...]."
        )
    if inferred:
        return ValueError(
            f"{exc} (the model {model.name!r} was inferred from y; pass model=... to choose it)"
        )
    return exc


def check_classes(labels, codes, where="the rows with positive sample_weight"):
    """The classes the model needs are among ``codes`` (coded classes of the rows with
    positive weight, of all the data): a rule of the whole data, never of one block."""
    if labels is None:
        return
    present = np.unique(np.fromiter(codes, dtype=np.intp, count=len(codes)))
    if present.shape[0] < labels.min_classes:
        shown = ", ".join(repr(c) for c in labels.decode(present).tolist()) or "no labels"
        raise ValueError(
            f"Among {where}, y has one class only ({shown}); a classification model needs "
            "two classes or more with positive weight."
        )


def with_prior(estimator, model, data):
    """The :class:`Prior` of a fit: the model with its prior, ``prior_scale`` (one number,
    or one per coefficient, intercept last), or for 'auto' the rule of
    :func:`~skcoreset.models.default_prior_scale` on the moments of all rows (one pass; the
    moments are kept for the coverage check); ``data_prior`` is the prior with the data scale
    its extra parameters' priors follow."""
    moments = None
    y_mean, y_sd = 0.0, None  # a given prior_scale: the extra's prior does not follow y
    if is_auto(estimator.prior_scale):
        moments = data.moments()
        scale = prior_from_moments(model, moments)
        _, _, y_mean, y_sd = moments.mean_and_sd()
        model = model.with_data_scale(y_mean, y_sd)
    else:
        n_columns = estimator.n_features_in_ + model.fit_intercept
        scale = checked_prior_scale(estimator.prior_scale, n_columns, model.n_params(n_columns))
    model = replace(model, prior_scale=scale if scale.ndim else float(scale))
    check_functions(model, data)  # a user's model, before any fit reads it
    return Prior(model, scale, moments, DataPrior(model, y_mean, y_sd))


def check_functions(model, data):
    """A user's model's functions checked on a few rows with positive weight (fixed seed, not
    the fit's random stream) before the fit: a wrong gradient or curvature named there, not
    met later as a singular Hessian (``model.check_functions``; nothing to do, and no row
    read, for the built-in models)."""
    if not model.checks_functions:
        return
    sample = data.sample(CHECK_ROWS, np.random.RandomState(0))
    if sample is None:  # no more rows than that: all of them, when they are one block
        rows = data.all_rows()
        if rows is None:
            return
        X, y, _ = rows
        X, y = X[:CHECK_ROWS], y[:CHECK_ROWS]
    else:
        _, X, y, _ = sample
    model.check_functions(model.design(X), y)


def coreset_size(estimator, n_params):
    """The coreset size: ``n_points``, or for 'auto' enough points to pin down the
    posterior's mean and covariance, (P + 1)(P + 2) / 2 for P parameters, within [100, 500]
    (on logistic data, OMP's Laplace KL fell from 0.11 to 0.001 between 100 and 200 points
    at P = 21: below the number of these moments the posterior's shape is not determined)."""
    n_points = estimator.n_points
    if n_points != "auto":
        if n_points is not None and n_points < n_params:
            warn(
                f"n_points={n_points} is fewer than the model's {n_params} parameters: the "
                "points cannot pin the posterior down in every direction, and in the others "
                "the coreset posterior is the prior's, whatever the algorithm. Use at least as "
                "many points as parameters, and a few times more for a close fit.",
                CoresetSizeWarning,
            )
        return n_points
    return int(np.clip((n_params + 1) * (n_params + 2) // 2, AUTO_SIZE[0], AUTO_SIZE[1]))
