"""The models (likelihood and prior) and their Laplace approximation.

Each model evaluates per-datum log-likelihoods, gradients and the Hessian of the weighted sum
through the generic numba kernels (``_glm_kernels``) specialised by its
:class:`SingleIndexFamily`, with a Gaussian prior N(0, prior_scale^2 I), and carries the coding
of its targets. The models are listed in one registry (``_names.MODELS``).
:func:`model_from_targets` is the rule behind ``model='auto'``; :class:`ClassLabels` the one
coding of class labels.

Everything but :data:`MODEL_NAMES` is imported on first use (PEP 562): the command line reads
the names for its help without loading numba, SciPy and scikit-learn.
"""

from .._lazy import lazy_attributes
from ._names import MODEL_NAMES, MODELS

#: public name -> the module that defines it (the model classes from the registry)
_DEFINED_IN = {
    **{cls: module for module, cls, _ in MODELS.values()},
    "GLM": "_glm",
    "GeneralModel": "_general",
    "CustomModel": "_custom",
    "SingleIndexFamily": "_family",
    "OverdispersionWarning": "_poisson",
    "get_model": "_glm",
    "with_noise": "_glm",
    "LaplaceApproximation": "_laplace",
    "SeparationWarning": "_laplace",
    "laplace_approximation": "_laplace",
    "laplace_from_blocks": "_laplace",
    "default_prior_scale": "_prior",
    "DataPrior": "_prior",
    "BinaryLabels": "_targets",
    "ClassLabels": "_targets",
    "model_from_targets": "_targets",
    "classification_model": "_targets",
}

__all__ = ["MODEL_NAMES", *_DEFINED_IN]


__getattr__, __dir__ = lazy_attributes(__name__, globals(), _DEFINED_IN)
