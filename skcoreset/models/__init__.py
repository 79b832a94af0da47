"""Likelihood models and their Laplace approximation.

Each model evaluates per-datum log-likelihoods, gradients and the Hessian of the weighted sum
through numba kernels (``_glm_kernels``), with a Gaussian prior N(0, prior_scale^2 I).
"""

from ._glm import (
    MODEL_NAMES,
    GaussianLikelihood,
    GLMLikelihood,
    LogisticLikelihood,
    PoissonLikelihood,
    get_model,
    infer_model_name,
    with_noise,
)
from ._laplace import LaplaceApproximation, laplace_approximation

__all__ = [
    "MODEL_NAMES",
    "GLMLikelihood",
    "GaussianLikelihood",
    "LogisticLikelihood",
    "PoissonLikelihood",
    "LaplaceApproximation",
    "get_model",
    "infer_model_name",
    "laplace_approximation",
    "with_noise",
]
