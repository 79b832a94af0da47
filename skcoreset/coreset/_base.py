"""The small base class every coreset estimator shares.

A coreset estimator is fitted on (X, y) and *selects*: ``sample_indices_`` (row indices) and
``sample_weight_`` (their positive weights). ``fit_resample`` returns the weighted subset in the
``(X_m, y_m, {"sample_weight": w_m})`` form the resampler-aware pipeline consumes.

The public methods validate; subclasses implement one hook, ``_fit_coreset``, which receives
validated float64 ``X``, targets coded by the model, the data's weights, the model and a
random generator, and may assume that fewer points are requested than rows have positive
weight (``fit`` keeps every row otherwise).
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .._sklearn_compat import (
    Interval,
    StrOptions,
    _check_sample_weight,
    _fit_context,
    _safe_indexing,
)
from ..models import MODEL_NAMES, get_model, model_from_targets


class CoresetSizeWarning(UserWarning):
    """More points were asked for than the data has: the coreset is the whole data set."""


class BaseCoreset(BaseEstimator):
    """Base class of the coreset estimators (do not use directly).

    ``n_points`` is the coreset size: the number of distinct points for the methods that
    select points (the Hilbert methods, and uniform sampling without replacement), the number
    of draws for the methods that sample with replacement (importance and sensitivity
    sampling, uniform with ``replace=True``), whose distinct points may be fewer. When it is
    not smaller than the number of rows with positive weight, the coreset is every such row
    with its own weight (exact), with a :class:`CoresetSizeWarning` if it is larger.

    A subclass whose model is fixed declares it with the class attribute
    ``__skcoreset_model__`` (e.g. ``'logistic'``); otherwise its ``model`` parameter names it,
    'auto' letting the targets (or a composition's final estimator) decide.
    """

    _parameter_constraints: dict = {
        "n_points": [Interval(Integral, 1, None, closed="left")],
        "model": [StrOptions({"auto", *MODEL_NAMES})],
        "prior_scale": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "random_state": ["random_state"],
    }

    def fit(self, X, y, sample_weight=None):
        """Select the coreset.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features; NaN and infinity are rejected.
        y : array-like of shape (n_samples,)
            Targets: two class labels (any type), counts, or real values, as the model needs.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the data's log-likelihood terms; the coreset approximates
            the weighted sum and its weights include them.

        Returns
        -------
        self : object
            Fitted estimator with ``sample_indices_`` and ``sample_weight_``.
        """
        return self._fit(X, y, sample_weight)

    def fit_resample(self, X, y, sample_weight=None):
        """Fit, then return the weighted subset.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the data.

        Returns
        -------
        X_coreset : array-like of shape (M, n_features)
            The selected rows of ``X`` (same container type: pandas stays pandas).
        y_coreset : array-like of shape (M,)
            The selected targets, in the caller's coding.
        params : dict
            ``{"sample_weight": sample_weight_}``, to pass to the next estimator's ``fit``.
        """
        self._fit(X, y, sample_weight)
        return self._selected(X, y)

    @property
    def n_points_(self):
        """Number of distinct points in the fitted coreset (may be below ``n_points``)."""
        check_is_fitted(self, "sample_indices_")
        return len(self.sample_indices_)

    # -- the fit, in named steps ----------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def _fit(self, X, y, sample_weight=None, model=None):
        """``fit``, with the model a composition resolved for ``model='auto'`` (or None)."""
        self._check_params()
        self._drop_fitted_attributes()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        sample_weight = _check_sample_weight(
            sample_weight, X, dtype=np.float64, ensure_non_negative=True
        )
        model, inferred = self._resolve_model(y, model)
        self.model_ = model.name
        y = self._encode_targets(y, model, sample_weight, inferred)
        rng = check_random_state(self.random_state)
        positive = np.flatnonzero(sample_weight > 0)
        if self.n_points is not None and self.n_points >= positive.shape[0]:
            indices, weights = self._keep_all_rows(X, y, sample_weight, model, rng, positive)
        else:
            indices, weights = self._fit_coreset(X, y, sample_weight, model, rng)
        self._set_selection(indices, weights)
        return self

    def _drop_fitted_attributes(self):
        # A refit must not keep what the previous fit set and this one may not (laplace_,
        # hilbert_error_, ...): measures computed from them would describe other data.
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("_")]:
            delattr(self, name)

    def _resolve_model(self, y, model=None):
        """``(model, inferred)``: the model declared by the class, named by ``model``, given by
        a composition for 'auto', or else inferred from the targets (``inferred`` is True)."""
        name = getattr(type(self), "__skcoreset_model__", None)
        if name is None:
            name = self.model if self.model != "auto" else model
        inferred = name is None
        if inferred:
            name = model_from_targets(y)
        model = get_model(name, prior_scale=self.prior_scale, fit_intercept=self.fit_intercept)
        return model, inferred

    def _encode_targets(self, y, model, sample_weight, inferred):
        """Targets in the model's coding; the rows with positive weight must still fit it."""
        try:
            coded = model.encode_targets(y)
            positive = sample_weight > 0
            if not np.all(positive):
                try:
                    model.encode_targets(y[positive])
                except ValueError as exc:
                    raise ValueError(f"Among the rows with positive sample_weight: {exc}") from None
        except ValueError as exc:
            if inferred:
                raise ValueError(
                    f"{exc} (the model {model.name!r} was inferred from y; pass model=... to "
                    "choose it)"
                ) from None
            raise
        return coded

    def _keep_all_rows(self, X, y, sample_weight, model, random_state, positive):
        """The exact coreset: every row with positive weight, with its own weight."""
        if self.n_points > positive.shape[0]:
            warnings.warn(
                f"n_points={self.n_points} is larger than the {positive.shape[0]} rows with "
                "positive sample_weight: the coreset is every such row with its own weight.",
                CoresetSizeWarning,
                stacklevel=4,
            )
        return positive, sample_weight[positive]

    def _set_selection(self, indices, weights):
        order = np.argsort(indices, kind="stable")
        self.sample_indices_ = np.asarray(indices, dtype=np.intp)[order]
        self.sample_weight_ = np.asarray(weights, dtype=np.float64)[order]
        if not np.all(np.isfinite(self.sample_weight_)):
            raise FloatingPointError("The coreset weights are not finite; please report this.")

    def _selected(self, X, y):
        """The fitted subset of (X, y) and its weights, in the callers' containers."""
        idx = self.sample_indices_
        return (
            _safe_indexing(X, idx),
            _safe_indexing(y, idx),
            {"sample_weight": self.sample_weight_.copy()},
        )

    # -- hooks ----------------------------------------------------------------------------
    def _check_params(self):
        """Checks across parameters, run before the data are validated."""

    def _fit_coreset(self, X, y, sample_weight, model, random_state):
        """Return ``(indices, weights)`` of the coreset (``n_points`` < rows with weight)."""
        raise NotImplementedError

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.non_deterministic = False
        return tags
