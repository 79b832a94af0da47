"""Model selection over the coreset size: fidelity scorers, and a refit rule for the size.

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

import numbers

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._fidelity import _DIRECTIONS, _kl_direction, coreset_fit

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
            "KL fidelity needs one (every skcoreset coreset keeps it)."
        )
    model = full.model
    if model.labels is not None and classes is not None:
        # the coreset may hold one class only: code its labels with the estimator's classes
        y = model.labels(classes).encode(y_m)
    else:
        y = model.encode_targets(y_m)
    Xd = model.design(np.asarray(X_m, dtype=np.float64))
    core = coreset_fit(full.free_model, Xd, y, np.asarray(w_m, dtype=np.float64), full.mean)
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

    Examples
    --------
    >>> import pickle
    >>> from skcoreset.metrics import FidelityScorer
    >>> pickle.loads(pickle.dumps(FidelityScorer("hilbert_error")))
    make_fidelity_scorer(measure='hilbert_error', direction='forward')
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
    """Score a fitted composition by minus the forward KL(pi || pi_w) between Laplace fits.

    The same as ``make_fidelity_scorer("kl", direction="forward")``: ``pi`` is the coreset's
    Laplace fit of its training data, ``pi_w`` the Laplace fit of the weighted coreset.
    Use it as a ``scoring`` of ``GridSearchCV``.

    Parameters
    ----------
    estimator : fitted CoresetClassifier, CoresetRegressor or skcoreset Pipeline
        The composition whose coreset is scored.
    X : ignored
        Accepted for the scorer signature.
    y : ignored
        Accepted for the scorer signature.

    Returns
    -------
    score : float
        <= 0; closer to 0 is better.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skcoreset.compose import CoresetClassifier
    >>> from skcoreset.coreset import UniformCoreset
    >>> from skcoreset.datasets import make_logistic_regression
    >>> from skcoreset.metrics import posterior_fidelity_score
    >>> X, y = make_logistic_regression(n_samples=400, n_features=3, random_state=0)
    >>> clf = CoresetClassifier(
    ...     UniformCoreset(100), LogisticRegression(), random_state=0
    ... ).fit(X, y)
    >>> posterior_fidelity_score(clf) <= 0
    True
    """
    return -_coreset_kl(estimator, "forward")


def size_param(params):
    """The one key of a grid-search parameter dict that is a coreset size (``n_points``)."""
    keys = [k for k in params if k == "n_points" or k.endswith("__n_points")]
    if len(keys) != 1:
        raise ValueError(
            f"Cannot tell which parameter is the coreset size among {sorted(params)}; pass param=."
        )
    return keys[0]


class SmallestWithin:
    """The refit rule of :func:`smallest_within` (see there).

    A module-level class, so that a search using it can be pickled.

    Parameters
    ----------
    tolerance : float
        Largest shortfall from the best mean score that is accepted.
    metric : str, default=None
        The scorer name (a key of the ``scoring`` dict); None for a single score.
    param : str, default=None
        The size parameter; None finds the one ending in ``n_points``.

    Examples
    --------
    >>> from skcoreset.metrics import SmallestWithin
    >>> results = {"params": [{"n_points": m} for m in (10, 50, 200)],
    ...            "mean_test_score": [0.80, 0.912, 0.915]}
    >>> SmallestWithin(0.005)(results)
    1
    """

    def __init__(self, tolerance, metric=None, param=None):
        if (
            not isinstance(tolerance, numbers.Real)
            or isinstance(tolerance, bool)
            or not np.isfinite(tolerance)
            or tolerance < 0
        ):
            raise ValueError(f"tolerance must be a finite non-negative number, got {tolerance!r}.")
        self.tolerance = float(tolerance)
        self.metric = metric
        self.param = param

    def _score_key(self, cv_results):
        if self.metric is not None:
            key = f"mean_test_{self.metric}"
            if key not in cv_results:
                raise ValueError(f"cv_results_ has no {key!r}; is {self.metric!r} a scorer name?")
            return key
        if "mean_test_score" in cv_results:
            return "mean_test_score"
        names = sorted(k[len("mean_test_") :] for k in cv_results if k.startswith("mean_test_"))
        raise ValueError(f"The search has several scorers; pass metric= (one of {names}).")

    def __call__(self, cv_results):
        """Return the index (into ``cv_results['params']``) of the smallest good candidate.

        Parameters
        ----------
        cv_results : dict
            A search's ``cv_results_``.

        Returns
        -------
        best_index : int
            The candidate to refit.
        """
        scores = np.asarray(cv_results[self._score_key(cv_results)], dtype=np.float64)
        params = cv_results["params"]
        param = size_param(params[0]) if self.param is None else self.param
        if any(param not in p for p in params):
            raise ValueError(f"Not every candidate has the parameter {param!r}.")
        sizes = np.array([p[param] for p in params], dtype=np.float64)
        finite = np.isfinite(scores)
        if not finite.any():
            raise ValueError("No candidate has a finite mean score.")
        good = np.flatnonzero(finite & (scores >= scores[finite].max() - self.tolerance))
        # the smallest size; among equal sizes (other parameters vary) the best score
        order = np.lexsort((-scores[good], sizes[good]))
        return int(good[order[0]])

    def __repr__(self):
        return f"smallest_within({self.tolerance!r}, metric={self.metric!r}, param={self.param!r})"


def smallest_within(tolerance, *, metric=None, param=None):
    """Make a ``GridSearchCV`` refit rule: the smallest coreset within ``tolerance`` of the best.

    The rule compares mean cross-validated scores.

    A larger coreset rarely scores worse, so ``refit=True`` picks the largest size that wins
    by noise. This rule takes every candidate whose mean cross-validated score is at least
    ``best - tolerance`` and refits the one with the smallest coreset size (ties between
    equal sizes, when other parameters vary, go to the better score).

    Parameters
    ----------
    tolerance : float
        Accepted shortfall from the best mean score, in the score's units (e.g. 0.005 for
        half a point of accuracy). 0 keeps only the best score (the smallest size if
        several tie).
    metric : str, default=None
        With several scorers (``scoring`` a dict), the one to compare (``refit`` uses its
        name); None for a single score.
    param : str, default=None
        The size parameter (e.g. 'gigacoreset__n_points'); None finds the one ending in
        'n_points'.

    Returns
    -------
    refit : SmallestWithin
        A callable ``refit(cv_results) -> index`` for ``GridSearchCV(refit=...)``; it can be
        pickled. As with any callable ``refit``, the search has no ``best_score_``.

    Examples
    --------
    >>> from sklearn.model_selection import GridSearchCV
    >>> from skcoreset.metrics import smallest_within
    >>> results = {"params": [{"coreset__n_points": m} for m in (10, 50, 200)],
    ...            "mean_test_score": [0.80, 0.912, 0.915]}
    >>> smallest_within(0.005)(results)  # 50 points is within 0.005 of the best
    1
    """
    return SmallestWithin(tolerance, metric, param)
