"""The private scikit-learn names skcoreset relies on, imported in this one place.

scikit-learn may move or rename private helpers between releases; when it does, this module
is the only one to change. Everything else imports them from here.
"""

from sklearn.base import _fit_context
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metadata_routing import _routing_enabled
from sklearn.utils.validation import _check_sample_weight

__all__ = [
    "HasMethods",
    "Interval",
    "StrOptions",
    "_check_sample_weight",
    "_fit_context",
    "_routing_enabled",
    "_safe_indexing",
]
