"""skcoreset: Bayesian coresets for scikit-learn.

The pipeline, one subpackage each: ``datasets`` (data) -> ``models`` (likelihoods, Laplace) ->
``projection`` (random features) -> ``hilbert`` (weight algorithms on arrays) -> ``coreset``
(estimators that select a weighted subset) -> ``sampler`` / ``linear_model`` (MCMC on it).
"""

from . import (
    compose,
    coreset,
    datasets,
    hilbert,
    linear_model,
    metrics,
    models,
    pipeline,
    projection,
    sampler,
)
from .compose import CoresetClassifier, CoresetRegressor
from .coreset import (
    CoresetMCMC,
    FrankWolfeCoreset,
    GIGACoreset,
    IHTCoreset,
    ImportanceCoreset,
    OMPCoreset,
    QuasiNewtonCoreset,
    SensitivityCoreset,
    SparseVICoreset,
    UniformCoreset,
)
from .linear_model import (
    BayesianLinearRegression,
    BayesianLogisticRegression,
    BayesianPoissonRegression,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "BayesianLinearRegression",
    "BayesianLogisticRegression",
    "BayesianPoissonRegression",
    "CoresetClassifier",
    "CoresetMCMC",
    "CoresetRegressor",
    "FrankWolfeCoreset",
    "GIGACoreset",
    "IHTCoreset",
    "ImportanceCoreset",
    "OMPCoreset",
    "QuasiNewtonCoreset",
    "SensitivityCoreset",
    "SparseVICoreset",
    "UniformCoreset",
    "__version__",
    "compose",
    "coreset",
    "datasets",
    "hilbert",
    "linear_model",
    "metrics",
    "models",
    "pipeline",
    "projection",
    "sampler",
]
