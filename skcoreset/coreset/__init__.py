"""Coreset estimators: each ``fit(X, y)`` selects ``sample_indices_`` and ``sample_weight_``."""

from ._base import BaseCoreset
from ._hilbert import (
    FrankWolfeCoreset,
    GIGACoreset,
    IHTCoreset,
    ImportanceCoreset,
    OMPCoreset,
    UniformCoreset,
)

__all__ = [
    "BaseCoreset",
    "FrankWolfeCoreset",
    "GIGACoreset",
    "IHTCoreset",
    "ImportanceCoreset",
    "OMPCoreset",
    "UniformCoreset",
]
