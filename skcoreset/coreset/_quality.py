"""How close a coreset's posterior is to the data's: ``laplace_kl_`` and its target.

Every coreset estimator reports ``laplace_kl_``, the KL divergence KL(coreset || data) of the
Laplace fit of its weighted posterior to the Laplace fit of the data's (all the posterior's
parameters: the coefficients, and the log of a free extra parameter), under the same prior:
the one figure that judges every algorithm by the posterior a user samples. A coreset above
:func:`quality_target` warns (:class:`CoresetQualityWarning`), and ``n_points='auto'`` grows
the coreset until it is below it. A coreset whose points leave a feature of the data
constant warns too (:class:`CoresetCoverageWarning`): its likelihood says nothing of that
coefficient.
"""

from numbers import Integral

import numpy as np

from .._stats import stage
from .._warnings import warn
from ..metrics._fidelity import coreset_fit, laplace_kl
from ..models._prior import Moments
from ._exceptions import CoresetCoverageWarning, CoresetQualityWarning

#: The kept draws of the default sampler of the Bayesian estimators (4 chains x 1000).
DEFAULT_DRAWS = 4000


def quality_target(n_params):
    """The largest ``laplace_kl_`` of a coreset of a posterior of ``n_params`` parameters.

    ``P (P + 3) / (20 x 4000)`` nats for P parameters keeps a coreset's error well below the
    Monte Carlo error of the default sampler. A Gaussian fitted to S independent draws of a
    P-dimensional Gaussian posterior is ``P (P + 3) / (4 S)`` nats from it in expectation
    (``P / (2 S)`` from its mean, ``P (P + 1) / (4 S)`` from its covariance):
    P (P + 3) / 16 000 for the default sampler's 4 000 draws, which MCMC's correlation only
    raises. The target is a fifth of it, so that
    what a user samples from the coreset is within 20% of the error of sampling the full
    posterior itself: 0.0019 nats for 11 parameters, 0.13 for 101, 0.51 for 201.

    Parameters
    ----------
    n_params : int
        The posterior's parameters (the coefficients, the intercept, a free extra parameter).

    Returns
    -------
    target : float
        In nats.

    Examples
    --------
    >>> from skcoreset.coreset import quality_target
    >>> round(quality_target(11), 4)
    0.0019
    """
    if isinstance(n_params, bool) or not isinstance(n_params, Integral) or n_params < 1:
        raise ValueError(f"n_params must be a positive integer, got {n_params!r}.")
    return n_params * (n_params + 3) / (20.0 * DEFAULT_DRAWS)


def coreset_kl(data_fit, X, y, w):
    """``laplace_kl_`` of a coreset: KL of its Laplace fit to the data's ``data_fit``.

    The coreset's fit is made under the data's prior, at its highest mode (Newton from the
    data's mode and from the model's own start: :func:`~skcoreset.metrics._fidelity.
    coreset_fit`); inf when its posterior has no proper Laplace fit (points that leave a
    direction to a degenerate likelihood, weights that overflow).

    Parameters
    ----------
    data_fit : LaplaceApproximation
        The data's Laplace fit.
    X : ndarray of shape (M, n_features)
        The coreset's rows.
    y : ndarray of shape (M,)
        Their coded targets.
    w : ndarray of shape (M,)
        Their weights.

    Returns
    -------
    kl : float
        In nats.
    """
    if not np.all(np.isfinite(w)):
        return np.inf
    model = data_fit.free_model
    try:
        core = coreset_fit(model, model.design(X), y, w, data_fit.mean)
    except (ValueError, np.linalg.LinAlgError):
        return np.inf
    return float(laplace_kl(core, data_fit))


def warn_quality(estimator, kl, n_params, why):
    """A :class:`CoresetQualityWarning` when ``laplace_kl_`` is above the target: the figure,
    the target and the remedy ``why`` gives (what limited the coreset)."""
    target = quality_target(n_params)
    if not kl > target:
        return
    figure = "has no proper Laplace fit" if np.isinf(kl) else f"is {kl:.3g} nats"
    warn(
        f"{type(estimator).__name__}: the coreset's posterior {figure} from the data's "
        f"(laplace_kl_, the KL of its Laplace fit to the data's), above the {target:.3g} "
        f"nats that keep it within a fifth of the Monte Carlo error of the default sampler at "
        f"{n_params} parameters: MCMC on it may sit visibly off the full posterior. {why}",
        CoresetQualityWarning,
    )


def set_quality(estimator, node, context, construction):
    """``laplace_`` (the data's Laplace fit, when the estimator reports none of its own) and
    ``laplace_kl_``, the KL of the coreset's Laplace fit to it, on the fitted ``estimator``,
    with a :class:`CoresetQualityWarning` when that is above the target
    (:func:`quality_target`)."""
    with stage("quality"):
        _set_quality(estimator, node, context, construction)


def _set_quality(estimator, node, context, construction):
    if construction.exact or getattr(estimator, "stop_reason_", None) == "all_rows":
        estimator.laplace_kl_ = 0.0  # every row with its own weight: the data's posterior
        return
    data_fit = getattr(estimator, "laplace_", None) or context.data_fit
    if data_fit is None:
        return
    estimator.laplace_ = data_fit
    info = node.info or {}
    kl = info.get("laplace_kl")
    if kl is None:
        kl = coreset_kl(data_fit, node.X, node.y, node.weights)
    estimator.laplace_kl_ = float(kl)
    remedy = quality_remedy(estimator, info, construction.stream)
    warn_quality(estimator, estimator.laplace_kl_, data_fit.mean.shape[0], remedy)
    warn_uncertain_fit(estimator, context.fit_info, data_fit.mean.shape[0], construction.stream)


def warn_uncertain_fit(estimator, fit_info, n_params, stream):
    """A :class:`CoresetQualityWarning` when the data's Laplace fit, made from the blocks'
    second-order sums and a sample of rows (``fit_info``: ``_taylor.fit_from_sums``'s), is
    predicted to be further from the data's posterior than the quality target: then
    ``laplace_kl_`` measures against an uncertain reference, and the coreset aims at it."""
    if not fit_info or not fit_info["predicted_kl"] > quality_target(n_params):
        return
    if stream:
        why = (
            "the stream's blocks were summarised at its first call's fit, far from the data's "
            "posterior: start it with rows like the rest (shuffled, not sorted or degenerate), "
            "or fit all rows at once, which confirms the fit by more passes over the data."
        )
    else:
        why = (
            f"{fit_info['passes']} passes over the data did not settle it (a posterior far from "
            "Gaussian, or a model whose log-likelihood is not smooth in its parameters)."
        )
    warn(
        f"{type(estimator).__name__}: the data's Laplace fit (laplace_), made from the sums of "
        "the blocks and a sample of rows, is uncertain: its error is predicted at "
        f"{fit_info['predicted_kl']:.3g} nats, above the {quality_target(n_params):.3g} of the "
        f"quality target, so laplace_kl_ measures against an uncertain reference: {why}",
        CoresetQualityWarning,
    )


def quality_remedy(estimator, info, stream):
    """What to do about a coreset above the quality target: what limited it."""
    if "size_limit" in info:
        why = f"n_points='auto' stopped at {info['size_limit']}."
    elif estimator.n_points == "auto":
        why = (
            f"{type(estimator).__name__}'s n_points='auto' is the size its parameters call "
            f"for ({len(estimator.sample_indices_)} points here) "
            "and does not grow: use more points, or OMPCoreset, whose coreset grows until "
            "it is within the target."
        )
    else:
        why = (
            f"n_points={estimator.n_points} is too few points for this posterior: use more, "
            "or n_points='auto', which grows the coreset until it is within the target."
        )
    if stream:
        why += (
            " In a stream, every block is summarised at the first call's fit (its rows' "
            "second-order sums, from which the data's fit is made): start it with rows like "
            "the rest (shuffled, not sorted or degenerate), or fit all rows at once."
        )
    return why


def warn_uncovered(estimator, X, moments):
    """A :class:`CoresetCoverageWarning` when the coreset's points ``X`` leave a feature
    the data identify constant (zero, without an intercept)."""
    if moments is None or X.shape[0] == 0:
        return
    # the coreset's columns judged by the data's own rule
    core = Moments.of(X, np.zeros(X.shape[0]))
    if estimator.fit_intercept:  # a constant column is the intercept's: not measured
        uncovered = np.flatnonzero(moments.varying() & ~core.varying())
    else:
        uncovered = np.flatnonzero(moments.nonzero() & ~core.nonzero())
    if uncovered.shape[0] == 0:
        return
    names = getattr(estimator, "feature_names_in_", None)
    shown = [str(names[k]) if names is not None else f"x{k}" for k in uncovered[:10]]
    more = f" and {uncovered.shape[0] - 10} more" if uncovered.shape[0] > 10 else ""
    how = "constant" if estimator.fit_intercept else "zero"
    warn(
        f"The coreset's {X.shape[0]} points leave {uncovered.shape[0]} of the data's "
        f"features {how} ({', '.join(shown)}{more}): its likelihood says nothing of their "
        "coefficients, whose coreset posterior is the prior's. Rare categories of one-hot "
        "features are the usual cause: use more points, an algorithm that aims at the "
        "full likelihood (OMPCoreset), or merge the rare categories.",
        CoresetCoverageWarning,
    )
