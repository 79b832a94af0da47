"""The models (likelihood and prior) and their Laplace approximation.

Each model evaluates per-datum log-likelihoods, gradients and the Hessian of the weighted sum
through numba kernels (``_glm_kernels``), with a Gaussian prior N(0, prior_scale^2 I), and
carries the coding of its targets. :func:`model_from_targets` is the rule behind
``model='auto'``; :class:`BinaryLabels` the one coding of class labels.
"""

from ._glm import (
    GLM,
    MODEL_NAMES,
    GaussianModel,
    LogisticModel,
    PoissonModel,
    get_model,
    with_noise,
)
from ._laplace import (
    LaplaceApproximation,
    SeparationWarning,
    laplace_approximation,
    laplace_from_blocks,
)
from ._prior import default_prior_scale
from ._targets import BinaryLabels, model_from_targets

__all__ = [
    "GLM",
    "MODEL_NAMES",
    "BinaryLabels",
    "GaussianModel",
    "LaplaceApproximation",
    "LogisticModel",
    "PoissonModel",
    "SeparationWarning",
    "default_prior_scale",
    "get_model",
    "laplace_approximation",
    "laplace_from_blocks",
    "model_from_targets",
    "with_noise",
]
