"""The models (likelihood and prior) and their Laplace approximation.

Each model evaluates per-datum log-likelihoods, gradients and the Hessian of the weighted sum
through the generic numba kernels (``_glm_kernels``) specialised by its
:class:`SingleIndexFamily`, with a Gaussian prior N(0, prior_scale^2 I), and carries the coding
of its targets and its recipes in the probabilistic programming languages. The models are
listed in one registry (``_names.MODELS``), which :func:`register` extends with a user's.
:func:`model_from_targets` is the rule behind ``model='auto'``; :class:`ClassLabels` the one
coding of class labels.

Everything but :data:`MODEL_NAMES` is imported on first use (PEP 562): the command line reads
the names for its help without loading numba, SciPy and scikit-learn. These lazy attributes
(``_DEFINED_IN``, the built-in model classes read from the registry) are the only place where
the package imports a model module: :func:`model_class` finds a name's class through them.
"""

from .._lazy import lazy_attributes
from ._names import BUILT_IN, MODEL_NAMES, MODELS, REGISTERED

#: public name -> the module that defines it (the built-in model classes from the registry)
_DEFINED_IN = {
    **{cls: module for name, (module, cls, _) in MODELS.items() if name in BUILT_IN},
    "GLM": "_glm",
    "GeneralModel": "_general",
    "Multilevel": "_multilevel",
    "CustomModel": "_custom",
    "SingleIndexFamily": "_family",
    "OverdispersionWarning": "_poisson",
    "get_model": "_registry",
    "register": "_registry",
    "with_extra": "_glm",
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

#: old names kept for a release after a rename (a ``FutureWarning`` when used), not listed
_DEPRECATED = {"with_noise": "_glm"}

__all__ = ["MODEL_NAMES", "model_class", *_DEFINED_IN]


__getattr__, __dir__ = lazy_attributes(__name__, globals(), {**_DEFINED_IN, **_DEPRECATED})


def model_class(name):
    """The model class registered under ``name``.

    A user's class from :func:`register`, or a built-in class, imported here, at the
    package's edge, on first use.

    Parameters
    ----------
    name : str
        A name of :data:`MODEL_NAMES`.

    Returns
    -------
    cls : type
        The :class:`GLM` subclass.

    Raises
    ------
    KeyError
        If no model is registered under ``name``.

    Examples
    --------
    >>> from skcoreset.models import model_class
    >>> model_class("poisson").__name__
    'PoissonModel'
    """
    registered = REGISTERED.get(name)
    if registered is not None:
        return registered
    cls = MODELS[name][1]
    return globals()[cls] if cls in globals() else __getattr__(cls)
