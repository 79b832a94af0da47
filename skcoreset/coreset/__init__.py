"""Coreset estimators: each ``fit(X, y)`` selects ``sample_indices_`` and ``sample_weight_``."""

from ._base import (
    BaseCoreset,
    CoresetCoverageWarning,
    CoresetQualityWarning,
    CoresetSizeWarning,
)
from ._hilbert import (
    FrankWolfeCoreset,
    GIGACoreset,
    IHTCoreset,
    ImportanceCoreset,
    OMPCoreset,
    UniformCoreset,
)
from ._kl_coreset import CoresetMCMC, QuasiNewtonCoreset, SparseVICoreset
from ._sensitivity import SensitivityCoreset, sensitivity_coreset_size

__all__ = [
    "BaseCoreset",
    "CoresetCoverageWarning",
    "CoresetMCMC",
    "CoresetQualityWarning",
    "CoresetSizeWarning",
    "FrankWolfeCoreset",
    "GIGACoreset",
    "IHTCoreset",
    "ImportanceCoreset",
    "OMPCoreset",
    "QuasiNewtonCoreset",
    "SensitivityCoreset",
    "SparseVICoreset",
    "UniformCoreset",
    "sensitivity_coreset_size",
]
