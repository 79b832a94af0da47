"""Posterior-fidelity measures of coresets, scorers for model selection, and a plot.

Measures (doc/algorithms.md, "Evaluation measures"): :func:`relative_hilbert_error`,
:func:`gaussian_kl` with :func:`moment_fit` / :func:`coreset_laplace` /
:func:`coreset_laplace_kl`, :func:`polynomial_mmd` and :func:`fisher_distance`. For tuning the
coreset size: :func:`make_fidelity_scorer` / :func:`posterior_fidelity_score` (scorers for
``GridSearchCV``), :func:`smallest_within` (a ``refit`` rule: the smallest size within a
tolerance of the best score) and :func:`plot_coreset_size`.
"""

from ._fidelity import (
    coreset_laplace,
    coreset_laplace_kl,
    fisher_distance,
    gaussian_kl,
    moment_fit,
    polynomial_mmd,
    relative_hilbert_error,
)
from ._plot import plot_coreset_size
from ._scorer import (
    FidelityScorer,
    SmallestWithin,
    make_fidelity_scorer,
    posterior_fidelity_score,
    smallest_within,
)

__all__ = [
    "FidelityScorer",
    "SmallestWithin",
    "coreset_laplace",
    "coreset_laplace_kl",
    "fisher_distance",
    "gaussian_kl",
    "make_fidelity_scorer",
    "moment_fit",
    "plot_coreset_size",
    "polynomial_mmd",
    "posterior_fidelity_score",
    "relative_hilbert_error",
    "smallest_within",
]
