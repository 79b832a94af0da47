"""skcoreset: Bayesian coresets for scikit-learn.

The pipeline, one subpackage each: ``datasets`` (data) -> ``models`` (likelihoods, Laplace) ->
``projection`` (random features) -> ``hilbert`` (weight algorithms on arrays) -> ``coreset``
(estimators that select a weighted subset) -> ``sampler`` / ``linear_model`` (MCMC on it).
"""

from .coreset import (
    FrankWolfeCoreset,
    GIGACoreset,
    IHTCoreset,
    ImportanceCoreset,
    OMPCoreset,
    UniformCoreset,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "FrankWolfeCoreset",
    "GIGACoreset",
    "IHTCoreset",
    "ImportanceCoreset",
    "OMPCoreset",
    "UniformCoreset",
    "__version__",
]
