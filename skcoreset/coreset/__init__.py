"""Coreset estimators: each ``fit(X, y)`` selects ``sample_indices_`` and ``sample_weight_``.

The estimators are listed once, in the registry of algorithms (``_registry.ALGORITHMS``).
Every name here is imported on first use (PEP 562), so that the command line reads the
registry for its help without loading scikit-learn, SciPy and numba.
"""

from .._lazy import lazy_attributes
from ._registry import ESTIMATORS

#: public name -> the module that defines it (the estimators from the registry)
_DEFINED_IN = {
    **ESTIMATORS,
    "BaseCoreset": "_base",
    "CoresetCoverageWarning": "_exceptions",
    "CoresetQualityWarning": "_exceptions",
    "CoresetSizeWarning": "_exceptions",
    "quality_target": "_quality",
    "sensitivity_coreset_size": "_sensitivity",
}

__all__ = sorted(_DEFINED_IN)


__getattr__, __dir__ = lazy_attributes(__name__, globals(), _DEFINED_IN)
