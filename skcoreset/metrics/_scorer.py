"""Scorers for model selection over the coreset size: posterior fidelity of a fitted coreset.

What a cross-validation split can measure
-----------------------------------------
A coreset summarises the rows it was built from: its quality is how close the coreset
posterior pi_w is to the posterior pi of *those* rows (the training fold). The fitted Hilbert
coresets keep the Laplace fit of the training fold (``coreset.laplace_``), and the composition
tools keep the selected rows, so the scorer compares the Laplace fit of the weighted coreset
with that training-fold fit. The validation fold is deliberately not used: a posterior fitted on
different rows differs from the training posterior by sampling noise alone - for a fold 1/k of
the data, scaled up to the training size, by about P/2 * (1 + (k - 1)) nats in KL for P
parameters - which would swamp the differences between coreset sizes. Cross-validation then
averages the fidelity over k training sets; combine it (``scoring={...}``) with a predictive
score on the validation fold (accuracy, R^2, log predictive density) to see both sides of the
trade-off.
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..models import BinaryLabels, laplace_approximation
from ._fidelity import _DIRECTIONS, _kl_direction

_MEASURES = ("kl", "hilbert_error")


def _find_coreset(estimator):
    """(coreset, X_m, y_m, w_m, classes) from a fitted composition, in the coreset's space."""
    # A stock or skcoreset pipeline whose final step is a coreset meta-estimator.
    steps = getattr(estimator, "steps", None)
    if isinstance(steps, list) and steps and hasattr(steps[-1][1], "coreset_"):
        return _find_coreset(steps[-1][1])
    if hasattr(estimator, "coreset_"):  # CoresetClassifier / CoresetRegressor
        check_is_fitted(estimator)
        if not hasattr(estimator, "X_coreset_"):
            raise ValueError(
                f"{type(estimator).__name__} was fitted with store_coreset=False; the "
                "fidelity scorer needs the coreset rows."
            )
        return (
            estimator.coreset_,
            estimator.X_coreset_,
            estimator.y_coreset_,
            estimator.sample_weight_,
            getattr(estimator, "classes_", None),
        )
    if hasattr(estimator, "X_coreset_") and isinstance(steps, list):  # skcoreset.pipeline.Pipeline
        coreset = [s for _, s in steps if hasattr(s, "fit_resample")][-1]
        final = steps[-1][1]
        return (
            coreset,
            estimator.X_coreset_,
            estimator.y_coreset_,
            estimator.sample_weight_,
            getattr(final, "classes_", None),
        )
    raise TypeError(
        f"Cannot find a fitted coreset in {type(estimator).__name__}; the fidelity scorers work "
        "with skcoreset.compose.CoresetClassifier / CoresetRegressor (alone or as the last step "
        "of a pipeline) and skcoreset.pipeline.Pipeline."
    )


def _coreset_kl(estimator, direction):
    coreset, X_m, y_m, w_m, classes = _find_coreset(estimator)
    full = getattr(coreset, "laplace_", None)
    if full is None:
        raise ValueError(
            f"{type(coreset).__name__} keeps no Laplace fit of its training data (laplace_); the "
            "KL fidelity needs one (the Hilbert coresets keep it)."
        )
    model = full.model
    if model.name == "logistic" and classes is not None:
        # the coreset may hold one class only: code its labels with the estimator's classes
        y = BinaryLabels(classes).encode(y_m)
    else:
        y = model.encode_targets(y_m)
    Xd = model.design(np.asarray(X_m, dtype=np.float64))
    core = laplace_approximation(model, Xd, y, np.asarray(w_m, dtype=np.float64), design=True)
    return _kl_direction(core, full, direction)


class FidelityScorer:
    """Minus a posterior-fidelity measure of a fitted composition: a ``GridSearchCV`` scorer.

    Made by :func:`make_fidelity_scorer` (see there); a module-level class, so that it can be
    pickled and sent to parallel workers.

    Parameters
    ----------
    measure : {'kl', 'hilbert_error'}, default='kl'
        The measure.
    direction : {'forward', 'reverse', 'symmetric'}, default='forward'
        The direction of the KL divergence.
    """

    def __init__(self, measure="kl", direction="forward"):
        if measure not in _MEASURES:
            raise ValueError(f"measure must be one of {_MEASURES}; got {measure!r}.")
        if direction not in _DIRECTIONS:
            raise ValueError(f"direction must be one of {_DIRECTIONS}; got {direction!r}.")
        self.measure = measure
        self.direction = direction

    def __call__(self, estimator, X=None, y=None, sample_weight=None):
        """Score a fitted estimator (``X``, ``y`` and ``sample_weight`` are not used).

        Parameters
        ----------
        estimator : fitted CoresetClassifier, CoresetRegressor or skcoreset Pipeline
            The composition whose coreset is scored.
        X, y, sample_weight : ignored
            Accepted for the scorer signature.

        Returns
        -------
        score : float
            Minus the divergence (greater is better, 0 is perfect).
        """
        if self.measure == "hilbert_error":
            coreset = _find_coreset(estimator)[0]
            if not hasattr(coreset, "hilbert_error_"):
                raise ValueError(f"{type(coreset).__name__} has no hilbert_error_.")
            return -float(coreset.hilbert_error_)
        return -_coreset_kl(estimator, self.direction)

    def __repr__(self):
        return f"make_fidelity_scorer(measure={self.measure!r}, direction={self.direction!r})"


def make_fidelity_scorer(measure="kl", *, direction="forward"):
    """A scorer ``scorer(estimator, X, y)`` of posterior fidelity, for ``GridSearchCV``.

    Greater is better: it returns minus the divergence. ``X`` and ``y`` (the validation fold)
    are not used - see the module notes: fidelity is measured against the training fold the
    coreset summarises.

    Parameters
    ----------
    measure : {'kl', 'hilbert_error'}, default='kl'
        'kl': minus the KL divergence between the Laplace fit of the weighted coreset and the
        coreset's Laplace fit of its training data (``coreset.laplace_``; with
        ``laplace_subsample`` that fit is itself an approximation). 'hilbert_error': minus
        the coreset's ``hilbert_error_`` (free, but in the projection space only).
    direction : {'forward', 'reverse', 'symmetric'}, default='forward'
        For 'kl': forward KL(pi || pi_w), reverse KL(pi_w || pi) or their mean.

    Returns
    -------
    scorer : FidelityScorer
        ``scorer(estimator, X, y) -> float``, usable as ``scoring=`` or in a scoring dict;
        it can be pickled.

    Examples
    --------
    >>> from skcoreset.metrics import make_fidelity_scorer
    >>> scoring = {"accuracy": "accuracy", "fidelity": make_fidelity_scorer()}
    >>> scoring["fidelity"]
    make_fidelity_scorer(measure='kl', direction='forward')
    """
    return FidelityScorer(measure, direction)


def posterior_fidelity_score(estimator, X=None, y=None):
    """Minus the forward KL(pi || pi_w) between Laplace fits: a scorer for ``GridSearchCV``.

    The same as ``make_fidelity_scorer("kl", direction="forward")``: ``pi`` is the coreset's
    Laplace fit of its training data, ``pi_w`` the Laplace fit of the weighted coreset.
    ``X`` and ``y`` are accepted for the scorer signature and not used.

    Parameters
    ----------
    estimator : fitted CoresetClassifier, CoresetRegressor or skcoreset Pipeline
    X, y : ignored

    Returns
    -------
    score : float
        <= 0; closer to 0 is better.
    """
    return -_coreset_kl(estimator, "forward")
