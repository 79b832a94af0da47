"""The contract between a composition and its coreset ("resampler") steps.

A *resampler* is any estimator with ``fit_resample(X, y, sample_weight=None)`` returning
``(X_m, y_m, {"sample_weight": w_m})``: skcoreset's coreset estimators. The pipeline and the
meta-estimators share what is written here:

* which model an estimator fits (:func:`infer_model`, :func:`declared_model`), so that a
  coreset with ``model='auto'`` uses the likelihood of the estimator it feeds;
* :func:`resample`: fit one resampler with that model and return its weighted rows;
* where the weights go in the next estimator's ``fit`` (:func:`weight_key`), and how seeds
  are handed down (:func:`random_state_params`).
"""

import inspect

import numpy as np
from scipy.sparse import issparse
from sklearn.base import is_classifier
from sklearn.linear_model import PoissonRegressor, TweedieRegressor
from sklearn.utils.validation import has_fit_parameter

from .._sklearn_compat import _safe_indexing
from ..coreset import BaseCoreset
from ..coreset._blocks import row_indexable
from ..models import GLM, MODEL_NAMES
from ..models._multilevel import Multilevel

_MAX_INT = np.iinfo(np.int32).max


def is_resampler(step):
    """Whether ``step`` is a coreset step (it has ``fit_resample``)."""
    return step is not None and not isinstance(step, str) and hasattr(step, "fit_resample")


def is_passthrough(step):
    """Whether ``step`` is a placeholder (None or 'passthrough')."""
    return step is None or (isinstance(step, str) and step == "passthrough")


def declared_model(estimator):
    """The model an estimator is fixed to, or None.

    An estimator fixes its model by the class attribute ``__skcoreset_model__`` (skcoreset's
    Bayesian GLMs, and coresets specific to one likelihood) or, for a coreset, by a ``model``
    parameter other than 'auto'.
    """
    name = getattr(type(estimator), "__skcoreset_model__", None)
    if name in MODEL_NAMES:
        return name
    params = estimator.get_params(deep=False) if hasattr(estimator, "get_params") else {}
    name = params.get("model")
    if isinstance(name, (GLM, Multilevel)):  # a user's model object, a multilevel model
        return name
    if getattr(type(estimator), "__skcoreset_multilevel__", False):  # its default model
        return Multilevel()
    return name if isinstance(name, str) and name in MODEL_NAMES else None


def infer_model(estimator):
    """The model a coreset should use to feed ``estimator``.

    The rules, in order:

    1. the model the estimator declares (``__skcoreset_model__``, see :func:`declared_model`);
    2. a pipeline (anything with ``steps``): the model of its final step;
    3. any classifier: 'logistic';
    4. a Poisson regressor: :class:`~sklearn.linear_model.PoissonRegressor`, a
       :class:`~sklearn.linear_model.TweedieRegressor` with ``power=1``, or any regressor whose
       ``loss`` or ``criterion`` parameter is 'poisson' (histogram gradient boosting, trees);
    5. anything else: 'gaussian' (linear regression).

    Parameters
    ----------
    estimator : estimator instance
        The estimator that the coreset feeds.

    Returns
    -------
    name : str
        The model.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression, PoissonRegressor
    >>> from skcoreset.compose import infer_model
    >>> infer_model(LogisticRegression()), infer_model(PoissonRegressor())
    ('logistic', 'poisson')
    """
    name = declared_model(estimator)
    if name is not None:
        return name
    steps = getattr(estimator, "steps", None)
    if isinstance(steps, list) and steps:
        final = steps[-1][1]
        if not is_passthrough(final):
            return infer_model(final)
    if is_classifier(estimator):
        return "logistic"
    if isinstance(estimator, PoissonRegressor):
        return "poisson"
    params = estimator.get_params(deep=False) if hasattr(estimator, "get_params") else {}
    if isinstance(estimator, TweedieRegressor) and params.get("power") == 1:
        return "poisson"
    if params.get("loss") == "poisson" or params.get("criterion") == "poisson":
        return "poisson"
    return "gaussian"


def resample(step, X, y, sample_weight, model, groups=None):
    """Fit the resampler ``step``; return ``(X_m, y_m, w_m, grouped)`` with y_m in the
    caller's coding and ``grouped`` the kept rows' ``{"groups": ..., "group_weight": ...}``
    (the latter for a coreset of groups), empty without ``groups``: only a skcoreset
    coreset takes them, for a multilevel model.

    ``model`` is the model the composition resolved (None: the step decides): a skcoreset
    coreset whose ``model`` is 'auto' uses it, without its parameters being changed; another
    resampler is simply called. ``w_m`` is None when a resampler returns no weights and was
    given none.

    A resampler that returns ``(X, y)`` only (imbalanced-learn's samplers) and whose
    ``fit_resample`` takes no ``sample_weight`` passes the data's weights on when it keeps
    rows of its input (``sample_indices_``, e.g. ``RandomUnderSampler``): each kept row keeps
    its weight. One that makes new rows (``SMOTE``) cannot, and given weights is an error.
    """
    if isinstance(step, BaseCoreset):
        step._fit(X, y, sample_weight, composed=model, groups=groups)
        X_m, y_m, params = step._selected(X, y)
        grouped = {}
        if groups is not None:
            grouped["groups"] = _safe_indexing(groups, step.sample_indices_)
            if np.any(step.sample_group_weight_ != 1):
                grouped["group_weight"] = step.sample_group_weight_
        return X_m, y_m, params["sample_weight"], grouped
    name = type(step).__name__
    if groups is not None:
        raise TypeError(f"{name} is not a skcoreset coreset: it cannot take groups.")
    takes_weights = _takes_parameter(step.fit_resample, "sample_weight")
    passed = sample_weight is not None and takes_weights
    out = step.fit_resample(X, y, **({"sample_weight": sample_weight} if passed else {}))
    if len(out) == 3:
        X_m, y_m, params = out
        return X_m, y_m, params.get("sample_weight"), {}
    X_m, y_m = out
    if sample_weight is None:
        return X_m, y_m, None, {}
    indices = getattr(step, "sample_indices_", None)
    if not passed and indices is not None:
        return X_m, y_m, _safe_indexing(sample_weight, np.asarray(indices)), {}
    if passed:
        why = "returned no weights, so the weights given to it cannot be passed on"
    else:
        why = (
            "takes no sample_weight and returns new rows (it has no sample_indices_), so the "
            "data's weights cannot follow them"
        )
    raise TypeError(
        f"{name}.fit_resample {why}; skcoreset expects fit_resample to return "
        "(X, y, {'sample_weight': w}). Fit without sample_weight, or place the sampler "
        "where no weights reach it."
    )


def recover_left_out(estimator, coreset, X, y, groups, sample_weight=None):
    """After a multilevel estimator is fitted on a coreset of groups, the effects of the
    groups the coreset left out, from their rows (``X``, ``y``, ``groups``: the coreset's
    input): every group of the data then has its effect's draws."""
    left = getattr(coreset, "left_out_indices_", None)
    recover = getattr(estimator, "recover_groups", None)
    if left is None or len(left) == 0 or recover is None or groups is None:
        return
    weights = None if sample_weight is None else _safe_indexing(sample_weight, left)
    recover(_safe_indexing(X, left), _safe_indexing(y, left), _safe_indexing(groups, left), weights)


def fit_on_coreset(estimator, X, y, params, coreset):
    """Fit ``estimator`` on the rows ``coreset`` selected, with its fit parameters ``params``.

    A skcoreset Bayesian estimator whose ``prior_scale`` is 'auto' gets the coreset's
    full-data prior (``_fit_with_prior``): its 'auto' rule would otherwise read the
    coreset's weighted rows (coefficient sds 2.35-2.68 on a coreset where the full data's
    are 2.50), and its posterior would not be the coreset posterior that the coreset's
    exports write. It also gets the full data's mode as a start of its Laplace fit: a
    posterior that need not be log-concave (Student-t) can have a lower mode where the
    model's own start leads (rows of extreme leverage, heavily weighted). Anything else is
    fitted as it is.
    """
    prior = getattr(coreset, "_data_prior", None) if isinstance(coreset, BaseCoreset) else None
    fit_with_prior = getattr(estimator, "_fit_with_prior", None)
    scale = getattr(coreset, "_multilevel_scale", None)
    if scale is not None and fit_with_prior is not None and "groups" in params:
        if set(params) <= {"sample_weight", "groups", "group_weight"} and getattr(
            estimator, "__skcoreset_multilevel__", False
        ):  # the full data's priors (coefficients, extra parameter, group sds)
            return fit_with_prior(
                X,
                y,
                params["groups"],
                params.get("sample_weight"),
                scale,
                params.get("group_weight"),
            )
        return estimator.fit(X, y, **params)
    if prior is None or fit_with_prior is None or not set(params) <= {"sample_weight"}:
        return estimator.fit(X, y, **params)
    laplace = getattr(coreset, "laplace_", None)
    start = None if laplace is None else laplace.mean
    return fit_with_prior(X, y, params.get("sample_weight"), prior, start)


def _takes_parameter(method, name):
    """Whether ``method`` has a parameter called ``name`` (``**kwargs`` does not count:
    imbalanced-learn's ``fit_resample(X, y, **params)`` rejects unknown names)."""
    try:
        return name in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


def weight_key(estimator):
    """The fit parameter that takes the coreset weights.

    ``sample_weight``, or for a pipeline whose ``fit`` does not take it
    ``<last step>__sample_weight`` (its earlier steps are fitted on the coreset rows
    unweighted). A TypeError if the estimator cannot take weights.
    """
    steps = getattr(estimator, "steps", None)
    if isinstance(steps, list) and steps and not has_fit_parameter(estimator, "sample_weight"):
        name, final = steps[-1]
        if has_fit_parameter(final, "sample_weight"):
            return f"{name}__sample_weight"
        estimator = final
    if not has_fit_parameter(estimator, "sample_weight"):
        raise TypeError(
            f"{type(estimator).__name__}.fit does not accept sample_weight, so it cannot be "
            "fitted on a weighted coreset; use an estimator whose fit takes sample_weight."
        )
    return "sample_weight"


def random_state_params(estimator, rng):
    """Integer seeds for every ``random_state`` parameter of ``estimator`` (nested included)."""
    keys = sorted(
        k
        for k in estimator.get_params(deep=True)
        if k == "random_state" or k.endswith("__random_state")
    )
    return {k: int(rng.randint(_MAX_INT)) for k in keys}


def num_rows(data, default=None):
    """Number of rows of an array-like (``default`` when it has no length)."""
    shape = getattr(data, "shape", None)
    if shape is not None and len(shape) > 0:
        return shape[0]
    try:
        return len(data)
    except TypeError:
        return default


def indexable(data):
    """``data`` itself when rows can be selected from it (arrays, lists, pandas), else an array.

    Inputs that only offer ``__array__`` (and no row indexing) are converted once, here, as
    are sparse formats other than CSR and CSC (COO, DIA, ...: to CSR).
    """
    if issparse(data):
        return row_indexable(data)
    if (
        data is None
        or isinstance(data, (np.ndarray, list))
        or hasattr(data, "iloc")
        or hasattr(data, "columns")
    ):
        return data
    return np.asarray(data)
