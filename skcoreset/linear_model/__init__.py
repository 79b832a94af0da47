"""Bayesian generalised linear models whose posterior is sampled by MALA.

They accept ``sample_weight`` as exponents of the likelihood terms, so they are the natural
final step after a coreset: ``est.fit(X[idx], y[idx], sample_weight=w)``.
"""

from ._glm import BayesianGLM
from ._linear import BayesianLinearRegression, BayesianStudentTRegression
from ._log_link import (
    BayesianGammaRegression,
    BayesianNegativeBinomialRegression,
    BayesianPoissonRegression,
)
from ._logistic import BayesianLogisticRegression
from ._multilevel import BayesianMultilevelRegression

__all__ = [
    "BayesianGLM",
    "BayesianGammaRegression",
    "BayesianLinearRegression",
    "BayesianLogisticRegression",
    "BayesianMultilevelRegression",
    "BayesianNegativeBinomialRegression",
    "BayesianPoissonRegression",
    "BayesianStudentTRegression",
]
