"""The validation of grouped data: one home for the multilevel coresets and estimator."""

from dataclasses import dataclass

import numpy as np
from scipy.sparse import issparse
from sklearn.utils.validation import validate_data

from .._sklearn_compat import _check_sample_weight
from ._multilevel import check_groups
from ._targets import check_no_none


@dataclass
class GroupedData:
    """Validated rows: dense ``X``, coded ``y``, weights ``w``, group ``codes`` into the
    sorted ``labels``; ``classes`` the class labels (logistic base) or None; ``raw_y`` the
    targets as validated (before coding)."""

    X: np.ndarray
    y: np.ndarray
    w: np.ndarray
    codes: np.ndarray
    labels: np.ndarray
    classes: np.ndarray | None
    raw_y: np.ndarray


def validate_grouped(
    estimator, spec, X, y, groups, sample_weight, fit_intercept=True, reset=True, classes=None
):
    """:class:`GroupedData` of a fit's arguments (``validate_data`` sets the estimator's
    ``n_features_in_``); a ``ValueError`` names bad targets, weights or groups."""
    base = spec.base_model(fit_intercept=fit_intercept)
    if y is not None:
        check_no_none(np.asarray(y, dtype=object))
    X, y = validate_data(
        estimator,
        X,
        y,
        accept_sparse="csr",
        dtype=np.float64,
        y_numeric=base.labels is None,
        reset=reset,
    )
    if issparse(X):
        X = X.toarray()
    codes, labels = check_groups(groups, X.shape[0])
    # a later block of a stream may weigh nothing (its rows are counted, not kept)
    w = _check_sample_weight(
        sample_weight, X, dtype=np.float64, ensure_non_negative=True,
        allow_all_zero_weights=not reset,
    )  # fmt: skip
    if base.labels is not None and classes is not None:  # a fitted estimator's classes
        coding = base.labels(classes)
        classes, coded = coding.classes, coding.encode(y)
    elif base.labels is not None:
        coding = base.labels.fit(y)
        classes, coded = coding.classes, coding.encode(y)
    else:
        coded = base.encode_targets(y)
    if spec.slopes and max(spec.slopes) >= X.shape[1]:
        raise ValueError(
            f"slopes={list(spec.slopes)} names a column beyond X's {X.shape[1]} columns."
        )
    return GroupedData(X, np.asarray(coded, dtype=np.float64), w, codes, labels, classes, y)
