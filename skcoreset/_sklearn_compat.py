"""The private scikit-learn names skcoreset relies on, imported in this one place.

scikit-learn may move or rename private helpers between releases; when it does, this module
is the only one to change. Everything else imports them from here, and the differences
between the supported releases (scikit-learn 1.6 on, see the README) are bridged here.
"""

import inspect

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metadata_routing import _routing_enabled
from sklearn.utils.validation import _check_sample_weight as _sk_check_sample_weight

# scikit-learn 1.9 refuses all-zero weights in _check_sample_weight (allow_all_zero_weights
# lifts it); before 1.9 the check and the parameter do not exist.
_REFUSES_ZERO_WEIGHTS = (
    "allow_all_zero_weights" in inspect.signature(_sk_check_sample_weight).parameters
)


def _check_sample_weight(
    sample_weight,
    X,
    *,
    dtype=None,
    copy=False,
    ensure_non_negative=False,
    allow_all_zero_weights=False,
):
    """scikit-learn's ``_check_sample_weight``, refusing all-zero weights on every release.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,), float or None
        The weights; None gives unit weights, a number the same weight for every row.
    X : array-like of shape (n_samples, ...)
        The data the weights belong to (only its number of rows is read).
    dtype : dtype, default=None
        The weights' dtype (float64 or float32 kept when None).
    copy : bool, default=False
        Whether to copy the weights.
    ensure_non_negative : bool, default=False
        Whether to refuse negative weights.
    allow_all_zero_weights : bool, default=False
        Whether to accept weights that are all zero.

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,)
        The checked weights, C-contiguous.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset._sklearn_compat import _check_sample_weight
    >>> _check_sample_weight(None, np.zeros((3, 2)))
    array([1., 1., 1.])
    >>> _check_sample_weight(np.zeros(3), np.zeros((3, 2)))
    Traceback (most recent call last):
    ...
    ValueError: Sample weights must contain at least one non-zero number.
    """
    kwargs = dict(dtype=dtype, copy=copy, ensure_non_negative=ensure_non_negative)
    if _REFUSES_ZERO_WEIGHTS:
        return _sk_check_sample_weight(
            sample_weight, X, allow_all_zero_weights=allow_all_zero_weights, **kwargs
        )
    sample_weight = _sk_check_sample_weight(sample_weight, X, **kwargs)
    if not allow_all_zero_weights and not np.any(sample_weight):
        # scikit-learn 1.9's message, so that the error is the same on every release
        raise ValueError("Sample weights must contain at least one non-zero number.")
    return sample_weight


__all__ = [
    "HasMethods",
    "Interval",
    "StrOptions",
    "_check_sample_weight",
    "_fit_context",
    "_routing_enabled",
    "_safe_indexing",
]
