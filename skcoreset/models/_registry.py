"""A model by its name, and a user's model under a name of its own (:func:`register`).

The names are the registry's (``_names.MODELS``); a name's class comes from the package's edge
(:func:`skcoreset.models.model_class`), which imports a built-in model's module on first use.
"""

import numpy as np

from .._warnings import renamed
from . import model_class
from ._glm import GLM
from ._names import BUILT_IN, MODEL_NAMES, MODELS, REGISTERED


def get_model(name, *, prior_scale=1.0, fit_intercept=True, extra=None, noise_scale=None):
    """The model called ``name`` (a name of ``MODEL_NAMES``).

    Parameters
    ----------
    name : str or GLM
        A name of ``MODEL_NAMES``, a built-in's or one given to :func:`register` (a model
        object is returned as it is).
    prior_scale : float or array-like of shape (P,), default=1.0
        Standard deviation of the Gaussian prior of every parameter, or of each (intercept
        last).
    fit_intercept : bool, default=True
        Whether the design matrix gets a trailing column of ones.
    extra : float or None, default=None
        The model's extra parameter, if it has one (the Gaussian noise standard deviation, the
        negative binomial dispersion, the gamma shape; None: a parameter of the posterior).
    noise_scale : float or None, default=None
        ``extra``'s name before 0.1 (a ``FutureWarning``; removed in 0.2).

    Returns
    -------
    model : GLM
        The model object.

    Examples
    --------
    >>> from skcoreset.models import get_model
    >>> get_model("poisson", prior_scale=2.0)
    PoissonModel(prior_scale=2.0, fit_intercept=True, extra=None, extra_prior=None)
    """
    if isinstance(name, GLM):
        return name
    if not isinstance(name, str) or name not in MODELS:
        raise ValueError(f"Unknown model {name!r}; expected one of {MODEL_NAMES}.")
    if noise_scale is not None:
        extra = renamed("noise_scale=", "extra=", noise_scale, extra)
    cls = model_class(name)
    prior_scale = np.asarray(prior_scale, dtype=np.float64)
    return cls(
        prior_scale=float(prior_scale) if prior_scale.ndim == 0 else prior_scale,
        fit_intercept=bool(fit_intercept),
        extra=None if extra is None else float(extra),
    )


def register(name, model_class, *, targets=None):
    """Make a user's model a model of the package, called ``name``.

    Afterwards ``model=name`` works wherever a built-in model's name does: every coreset
    estimator, :class:`~skcoreset.linear_model.BayesianGLM`, the compositions, the command
    line (``skcoreset build --model name``, in the process that registered it: through
    :func:`skcoreset.cli.main`) and the exports (with the model's recipes, see
    ``doc/models.md``). Registering the same class again (a script run twice in one
    session) is allowed; another class under a taken name is not.

    Parameters
    ----------
    name : str
        The name, as ``model=`` spells it: the class's own ``name`` attribute (the
        estimators report it as ``model_``).
    model_class : type
        A frozen dataclass subclassing :class:`GLM`, built as the built-ins are
        (``model_class(prior_scale=..., fit_intercept=..., extra=...)``): a
        :class:`SingleIndexFamily` model or a :class:`GeneralModel`.
    targets : str or None, default=None
        The targets it takes, for the command line's help (None: the class's name).

    Returns
    -------
    model_class : type
        The class, as given.

    Raises
    ------
    TypeError
        If ``model_class`` is not a subclass of :class:`GLM`.
    ValueError
        If ``name`` is not the class's name, is 'auto' or a built-in model's, or names another
        registered class.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from skcoreset.models import MODEL_NAMES, LogisticModel, get_model, register
    >>> @dataclass(frozen=True, eq=False)
    ... class Logit(LogisticModel):  # a user's model: here the logistic one renamed
    ...     name = "logit"
    >>> register("logit", Logit, targets="two classes") is Logit
    True
    >>> "logit" in MODEL_NAMES, get_model("logit", prior_scale=2.0).prior_scale
    (True, 2.0)
    """
    if not (isinstance(model_class, type) and issubclass(model_class, GLM)):
        raise TypeError(
            f"model_class must be a subclass of skcoreset.models.GLM, got {model_class!r}."
        )
    if not isinstance(name, str) or name != model_class.name:
        raise ValueError(
            f"The name must be the class's own name attribute, {model_class.name!r} "
            f"(the estimators report it as model_), got {name!r}."
        )
    if name == "auto" or name in BUILT_IN:
        raise ValueError(f"{name!r} is a name of the package's own; choose another.")
    held = REGISTERED.get(name)
    if held is not None and _qualified(held) != _qualified(model_class):
        raise ValueError(f"{name!r} is registered already, for {_qualified(held)}.")
    REGISTERED[name] = model_class
    MODELS[name] = (
        model_class.__module__,
        model_class.__qualname__,
        targets or model_class.__name__,
    )
    return model_class


def _qualified(cls):
    return f"{cls.__module__}.{cls.__qualname__}"
