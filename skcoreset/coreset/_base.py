"""The small base class every coreset estimator shares.

A coreset estimator is fitted on (X, y) and *selects*: ``sample_indices_`` (M row indices) and
``sample_weight_`` (M positive weights). ``fit_resample`` returns the weighted subset in the
``(X_m, y_m, {"sample_weight": w_m})`` form the resampler-aware pipeline consumes. Subclasses
implement ``_fit_coreset`` only.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import (
    _check_sample_weight,
    check_is_fitted,
    validate_data,
)

from ..models import MODEL_NAMES, get_model, infer_model_name


class BaseCoreset(BaseEstimator):
    """Base class of coreset estimators (do not use directly).

    Subclasses define ``_fit_coreset(X, y, sample_weight, random_state)`` returning
    ``(indices, weights)`` with X a float64 array, y the model-checked targets and
    ``sample_weight`` the user's non-negative weights (ones if none were given).
    """

    _parameter_constraints: dict = {
        "n_points": [Interval(Integral, 1, None, closed="left")],
        "model": [StrOptions({"auto", *MODEL_NAMES})],
        "prior_scale": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "random_state": ["random_state"],
    }

    def _encode_targets(self, y, model):
        """Targets in the model's coding.

        When the likelihood was not named explicitly (``model='auto'``, or an estimator that
        is logistic by construction), any two labels are accepted as binary classes.
        """
        if np.asarray(y).dtype.kind in "OUS":
            kind = type_of_target(y, input_name="y", raise_unknown=True)
            if kind != "binary":
                raise ValueError(f"Only binary class labels are supported; y is {kind}.")
        if getattr(self, "model", "auto") == "auto" and model.name == "logistic":
            classes = np.unique(y)
            if len(classes) == 2 and not (
                set(classes.tolist()) <= {0, 1} or set(classes.tolist()) <= {-1, 1}
            ):
                # the larger label is the positive class, as LabelEncoder would order them
                y = (y == classes[1]).astype(np.float64)
        return model.check_targets(y)

    def _resolve_model(self, y):
        name = infer_model_name(y) if self.model == "auto" else self.model
        return get_model(name, prior_scale=self.prior_scale, fit_intercept=self.fit_intercept)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Select the coreset.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features; NaN and infinity are rejected.
        y : array-like of shape (n_samples,)
            Targets in the model's coding (binary labels, counts or real values).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the data's log-likelihood terms; the coreset approximates
            the weighted sum and its weights include them.

        Returns
        -------
        self : object
            Fitted estimator with ``sample_indices_`` and ``sample_weight_``.
        """
        self._check_params()
        # A refit must not keep what the previous fit set and this one may not (laplace_,
        # hilbert_error_, ...): measures computed from them would describe other data.
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("_")]:
            delattr(self, name)
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        n_samples = X.shape[0]
        # n_points may be None for estimators sized otherwise (e.g. by an error bound)
        if self.n_points is not None and self.n_points > n_samples:
            raise ValueError(
                f"n_points={self.n_points} is larger than the number of samples "
                f"(n_samples={n_samples})."
            )
        sample_weight = _check_sample_weight(
            sample_weight, X, dtype=np.float64, ensure_non_negative=True
        )
        model = self._resolve_model(y)
        self.model_ = model.name
        try:
            y = self._encode_targets(y, model)
        except ValueError as exc:
            if getattr(self, "model", "auto") == "auto":
                raise ValueError(
                    f"{exc} (the likelihood {model.name!r} was inferred from y; "
                    "pass model=... to choose it)"
                ) from None
            raise
        positive = sample_weight > 0
        if not np.all(positive):
            # zero-weight rows are not in the likelihood: what is left must still fit the model
            # (for the logistic model, both classes must keep positive weight)
            try:
                model.check_targets(y[positive])
            except ValueError as exc:
                raise ValueError(f"Among the rows with positive sample_weight: {exc}") from None
        rng = check_random_state(self.random_state)
        indices, weights = self._fit_coreset(X, y, sample_weight, model, rng)
        order = np.argsort(indices, kind="stable")
        self.sample_indices_ = np.asarray(indices, dtype=np.intp)[order]
        self.sample_weight_ = np.asarray(weights, dtype=np.float64)[order]
        if not np.all(np.isfinite(self.sample_weight_)):
            raise FloatingPointError("The coreset weights are not finite; please report this.")
        return self

    def fit_resample(self, X, y, sample_weight=None):
        """Fit, then return the weighted subset.

        Returns
        -------
        X_coreset : array-like of shape (M, n_features)
            The selected rows of ``X`` (same container type: pandas stays pandas).
        y_coreset : array-like of shape (M,)
            The selected targets, in the caller's coding.
        params : dict
            ``{"sample_weight": sample_weight_}``, to pass to the next estimator's ``fit``.
        """
        self.fit(X, y, sample_weight=sample_weight)
        idx = self.sample_indices_
        return (
            _safe_indexing(X, idx),
            _safe_indexing(y, idx),
            {"sample_weight": self.sample_weight_.copy()},
        )

    @property
    def n_points_(self):
        """Number of distinct points in the fitted coreset (may be below ``n_points``)."""
        check_is_fitted(self, "sample_indices_")
        return len(self.sample_indices_)

    def _check_params(self):
        """Hook for checks across parameters, run before the data are validated."""

    def _fit_coreset(self, X, y, sample_weight, model, random_state):
        raise NotImplementedError

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.non_deterministic = False
        return tags
