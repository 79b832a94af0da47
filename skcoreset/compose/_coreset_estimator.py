"""Meta-estimators that fit an estimator on a weighted coreset of the training data.

``CoresetClassifier(coreset=..., estimator=...)`` fits the coreset on all rows, then fits the
estimator on the M selected rows with the coreset weights as ``sample_weight``; prediction uses
every row. Being an ordinary estimator, it fits in a stock :class:`sklearn.pipeline.Pipeline`,
:class:`~sklearn.model_selection.GridSearchCV` (``coreset__n_points``), ``clone`` and pickle.
"""

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    RegressorMixin,
    clone,
    is_classifier,
)
from sklearn.utils import check_random_state, get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._logging import phase
from .._sklearn_compat import HasMethods, _fit_context
from ..coreset import OMPCoreset
from ..linear_model import BayesianLinearRegression, BayesianLogisticRegression
from ..models import ClassLabels
from ._base import (
    declared_model,
    fit_on_coreset,
    indexable,
    infer_model,
    random_state_params,
    recover_left_out,
    resample,
    weight_key,
)


def _estimator_has(attr):
    """available_if check: the fitted estimator (or, before fit, the configured one) has attr."""

    def check(self):
        if hasattr(self, "estimator_"):
            getattr(self.estimator_, attr)
        else:
            getattr(self._get_estimator(), attr)
        return True

    return check


# The ArviZ groups indexed by observation.
_OBSERVATION_GROUPS = ("log_likelihood", "observed_data", "constant_data", "posterior_predictive")


# -- the meta-estimators ----------------------------------------------------------------------
class _BaseCoresetEstimator(MetaEstimatorMixin, BaseEstimator):
    _parameter_constraints: dict = {
        "coreset": [HasMethods(["fit", "fit_resample"]), None],
        "estimator": [HasMethods(["fit"]), None],
        "random_state": ["random_state"],
        "store_coreset": ["boolean"],
        "verbose": ["verbose"],
    }

    def __init__(
        self, coreset=None, estimator=None, *, random_state=None, store_coreset=True, verbose=0
    ):
        self.coreset = coreset
        self.estimator = estimator
        self.random_state = random_state
        self.store_coreset = store_coreset
        self.verbose = verbose

    # -- hooks --------------------------------------------------------------------------
    def _default_estimator(self):
        raise NotImplementedError

    def _get_estimator(self):
        return self._default_estimator() if self.estimator is None else self.estimator

    def _get_coreset(self):
        if self.coreset is None:
            # OMP: the smallest error per point on GLM posteriors (benchmarks/bench_mala.py)
            return OMPCoreset()
        return self.coreset

    def _prepare_targets(self, y):
        return y

    def _check_estimator_kind(self, estimator):
        """A classifier for CoresetClassifier, anything but a classifier for CoresetRegressor."""

    # -- fit ----------------------------------------------------------------------------
    # The inner estimators are validated by their own fit.
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None, groups=None):
        """Select a coreset of ``(X, y)``, then fit the estimator on it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (pandas DataFrames keep their column names through both steps;
            a ``scipy.sparse`` X gives the estimator the coreset's rows sparse).
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the data. The coreset is fitted with them and its weights include them
            (it approximates the weighted log-likelihood), so the estimator is fitted with the
            coreset weights alone.
        groups : array-like of shape (n_samples,), default=None
            Each row's group, for a multilevel model: the coreset keeps rows in every group
            and the estimator (:class:`~skcoreset.linear_model.BayesianMultilevelRegression`)
            gets the kept rows' groups.

        Returns
        -------
        self : object
            Fitted meta-estimator.
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        X, y = indexable(X), indexable(y)
        estimator = clone(self._get_estimator())
        self._check_estimator_kind(estimator)
        key = weight_key(estimator)
        coreset = clone(self._get_coreset())
        if self.random_state is not None:
            # As BaggingRegressor does: one seed per inner random_state, drawn in a fixed order.
            rng = check_random_state(self.random_state)
            coreset.set_params(**random_state_params(coreset, rng))
            estimator.set_params(**random_state_params(estimator, rng))
        y = self._prepare_targets(y)
        model = declared_model(coreset) or infer_model(estimator)
        size = getattr(coreset, "n_points", None)
        with phase(self, f"coreset: {type(coreset).__name__} (n_points={size}, model={model})"):
            X_m, y_m, w_m, grouped = resample(coreset, X, y, sample_weight, model, groups)

        self.coreset_ = coreset
        self.sample_indices_ = np.asarray(coreset.sample_indices_, dtype=np.intp)
        self.sample_weight_ = np.asarray(
            w_m if w_m is not None else coreset.sample_weight_, dtype=np.float64
        )
        self.n_features_in_ = coreset.n_features_in_
        if hasattr(coreset, "feature_names_in_"):
            self.feature_names_in_ = coreset.feature_names_in_
        if self.store_coreset:
            self.X_coreset_ = X_m
            self.y_coreset_ = y_m
        n_rows = len(self.sample_weight_)
        if n_rows == 0:
            raise ValueError(
                f"{type(coreset).__name__} kept no rows, so the estimator cannot be fitted; "
                "check its parameters and the data's sample_weight (all negligible?)."
            )
        self._check_coreset_targets(y_m)
        with phase(self, f"fit of {type(estimator).__name__} on {n_rows} weighted rows"):
            params = {key: self.sample_weight_, **grouped}
            fit_on_coreset(estimator, X_m, y_m, params, coreset)
            recover_left_out(estimator, coreset, X, y, groups, sample_weight)
        self.estimator_ = estimator
        return self

    def _check_coreset_targets(self, y_m):
        pass

    # -- delegation ---------------------------------------------------------------------
    @available_if(_estimator_has("predict"))
    def predict(self, X, groups=None, **params):
        """Predict with the estimator fitted on the coreset (all rows of ``X``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict (every row, not only the coreset's).
        groups : array-like of shape (n_samples,), default=None
            The rows' groups, for a multilevel model.
        **params : dict
            Passed to the estimator's ``predict``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The estimator's predictions.
        """
        check_is_fitted(self)
        if groups is not None:
            params["groups"] = groups
        return self.estimator_.predict(X, **params)

    @available_if(_estimator_has("score"))
    def score(self, X, y, sample_weight=None, groups=None):
        """The estimator's ``score`` on ``(X, y)`` (accuracy for classifiers, R^2 for regressors).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict (every row, not only the coreset's).
        y : array-like of shape (n_samples,)
            Their targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in the score.
        groups : array-like of shape (n_samples,), default=None
            The rows' groups, for a multilevel model.

        Returns
        -------
        score : float
            The estimator's score.
        """
        check_is_fitted(self)
        kwargs = {} if sample_weight is None else {"sample_weight": sample_weight}
        if groups is not None:
            kwargs["groups"] = groups
        return self.estimator_.score(X, y, **kwargs)

    @available_if(_estimator_has("log_predictive_density"))
    def log_predictive_density(self, X, y):
        """Mean log posterior predictive density of ``(X, y)`` under the coreset posterior.

        Available when the estimator has it (skcoreset's Bayesian models).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict (every row, not only the coreset's).
        y : array-like of shape (n_samples,)
            Their targets.

        Returns
        -------
        lpd : float
            The mean log posterior predictive density.
        """
        check_is_fitted(self)
        return self.estimator_.log_predictive_density(X, y)

    @available_if(_estimator_has("sample_posterior_predictive"))
    def sample_posterior_predictive(self, X, n_draws=100, random_state=None):
        """Draw from the posterior predictive at the rows of ``X`` (delegated to the estimator).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows to predict (every row, not only the coreset's).
        n_draws : int, default=100
            Number of replicates.
        random_state : int, RandomState instance or None, default=None
            Seeds the choice of posterior draws and the simulated targets.

        Returns
        -------
        y_draws : ndarray of shape (n_draws, n_rows)
            One replicate of the targets per row.
        """
        check_is_fitted(self)
        return self.estimator_.sample_posterior_predictive(
            X, n_draws=n_draws, random_state=random_state
        )

    @available_if(_estimator_has("to_inference_data"))
    def to_inference_data(self, *, random_state=None):
        """The estimator's ArviZ export of its fit on the coreset (skcoreset's Bayesian models).

        The observations are the coreset rows with their weights (``obs_id``: their rows in
        the training data, ``sample_indices_``); see
        :meth:`skcoreset.linear_model.BayesianLogisticRegression.to_inference_data` for what
        ``arviz.loo`` means on them. With ``store_coreset=True`` the rows are passed on, so a
        coreset of any size works.

        Parameters
        ----------
        random_state : int, RandomState instance or None, default=None
            Seeds the posterior predictive replicates.

        Returns
        -------
        arviz.InferenceData
            The posterior and the groups the estimator exports.
        """
        check_is_fitted(self)
        if self.store_coreset:
            idata = self.estimator_.to_inference_data(
                self.X_coreset_,
                self.y_coreset_,
                self.sample_weight_,
                random_state=random_state,
            )
        else:
            idata = self.estimator_.to_inference_data(random_state=random_state)
        # obs_id: rows of the coreset -> rows of the training data
        groups = [g for g in _OBSERVATION_GROUPS if g in idata.groups()]
        obs_id = self.sample_indices_[idata.observed_data["obs_id"].values]
        return idata.assign_coords(obs_id=obs_id, groups=groups)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self._get_estimator())
        # the coresets read sparse X; the estimator gets the coreset's rows, sparse too
        tags.input_tags.sparse = inner.input_tags.sparse
        tags.input_tags.allow_nan = False
        tags.target_tags.required = True
        tags.target_tags.positive_only = inner.target_tags.positive_only
        tags.non_deterministic = inner.non_deterministic
        return tags


class CoresetClassifier(ClassifierMixin, _BaseCoresetEstimator):
    """Fit a classifier on a weighted coreset of the training data.

    ``fit`` selects a coreset of the rows with ``coreset`` (its likelihood is logistic, or
    multinomial for more than two classes), then fits ``estimator`` on the selected rows with
    the coreset weights as ``sample_weight``.
    ``predict``, ``predict_proba``, ``decision_function``, ``score`` ... use every row of the
    data they get and are those of the estimator (each is available when the estimator has it).

    Parameters
    ----------
    coreset : coreset estimator, default=None
        Any skcoreset coreset (e.g. :class:`~skcoreset.coreset.GIGACoreset`); None means
        ``OMPCoreset()``. It is cloned. With ``model='auto'`` the likelihood is 'logistic'.
    estimator : classifier, default=None
        Any classifier whose ``fit`` accepts ``sample_weight`` (skcoreset's
        :class:`~skcoreset.linear_model.BayesianLogisticRegression`, scikit-learn's
        :class:`~sklearn.linear_model.LogisticRegression`, ...); None means
        ``BayesianLogisticRegression()``. It is cloned.
    random_state : int, RandomState instance or None, default=None
        When not None, seeds every ``random_state`` parameter of the coreset and of the
        estimator (nested ones included) with integers drawn from it, as
        :class:`~sklearn.ensemble.BaggingClassifier` does. None leaves their own settings.
    store_coreset : bool, default=True
        Keep the selected rows as ``X_coreset_`` / ``y_coreset_`` (needed by
        :func:`skcoreset.metrics.posterior_fidelity_score`).
    verbose : int, default=0
        Print the two phases of ``fit`` (the coreset, the estimator's fit) with their
        durations when positive; they are always logged to the ``skcoreset`` logger. The
        inner estimators keep their own ``verbose``.

    Attributes
    ----------
    coreset_ : coreset estimator
        The fitted clone of ``coreset``.
    estimator_ : classifier
        The fitted clone of ``estimator``.
    sample_indices_ : ndarray of shape (M,)
        Rows of the training data in the coreset.
    sample_weight_ : ndarray of shape (M,)
        Their weights (the user's ``sample_weight`` included).
    X_coreset_, y_coreset_ : array-like
        The selected rows (same container type as the training data), when ``store_coreset``.
    classes_ : ndarray of shape (2,)
        The class labels.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.

    Notes
    -----
    The coreset's likelihood, with its ``model='auto'``, is the logistic model for two
    classes and the multinomial model for more.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skcoreset.compose import CoresetClassifier
    >>> from skcoreset.coreset import UniformCoreset
    >>> from skcoreset.datasets import make_logistic_regression
    >>> X, y = make_logistic_regression(n_samples=500, random_state=0)
    >>> clf = CoresetClassifier(
    ...     UniformCoreset(50, projection=None), LogisticRegression(), random_state=0
    ... ).fit(X, y)
    >>> clf.sample_indices_.shape, clf.predict(X).shape
    ((50,), (500,))
    """

    score = _BaseCoresetEstimator.score

    def _default_estimator(self):
        return BayesianLogisticRegression()

    def _prepare_targets(self, y):
        y_arr = np.asarray(y)
        if y_arr.ndim == 2 and y_arr.shape[1] == 1:
            y_arr = y_arr.ravel()
        if y_arr.shape[:1] == (0,):
            return y  # no rows: the coreset's validation of X says so
        check_classification_targets(y_arr)  # scikit-learn's message for continuous targets
        self.classes_ = ClassLabels.fit(y_arr).classes
        return y

    def _check_estimator_kind(self, estimator):
        if not is_classifier(estimator):
            raise TypeError(
                f"CoresetClassifier needs a classifier as its estimator; "
                f"{type(estimator).__name__} is not one (use CoresetRegressor for a regressor)."
            )

    def _check_coreset_targets(self, y_m):
        if len(np.unique(np.asarray(y_m))) < len(self.classes_):
            raise ValueError(
                "The coreset holds samples of one class only; increase the coreset's n_points."
            )

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X, groups=None, **params):
        """Class probabilities of the estimator fitted on the coreset.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict (every row, not only the coreset's).
        groups : array-like of shape (n_samples,), default=None
            The rows' groups, for a multilevel model.
        **params : dict
            Passed to the estimator.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Columns follow ``classes_``.
        """
        check_is_fitted(self)
        if groups is not None:
            params["groups"] = groups
        return self.estimator_.predict_proba(X, **params)

    @available_if(_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X, **params):
        """Log class probabilities of the estimator fitted on the coreset.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict (every row, not only the coreset's).
        **params : dict
            Passed to the estimator.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, 2)
            Columns follow ``classes_``.
        """
        check_is_fitted(self)
        return self.estimator_.predict_log_proba(X, **params)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X, **params):
        """Decision function of the estimator fitted on the coreset.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict (every row, not only the coreset's).
        **params : dict
            Passed to the estimator.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            The estimator's decision function (positive favours ``classes_[1]``).
        """
        check_is_fitted(self)
        return self.estimator_.decision_function(X, **params)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # A coreset of a small data set can fit poorly: no score thresholds in the checks.
        tags.classifier_tags.poor_score = True
        return tags


class CoresetRegressor(RegressorMixin, _BaseCoresetEstimator):
    """Fit a regressor on a weighted coreset of the training data.

    ``fit`` selects a coreset of the rows with ``coreset``, then fits ``estimator`` on the
    selected rows with the coreset weights as ``sample_weight``; ``predict`` and ``score``
    use every row. With the coreset's ``model='auto'`` the likelihood follows the estimator:
    Poisson for :class:`~skcoreset.linear_model.BayesianPoissonRegression`,
    :class:`~sklearn.linear_model.PoissonRegressor` (and other Poisson-loss regressors,
    see :func:`infer_model`), Gaussian-linear otherwise.

    Parameters
    ----------
    coreset : coreset estimator, default=None
        Any skcoreset coreset; None means ``OMPCoreset()``. It is cloned.
    estimator : regressor, default=None
        Any regressor whose ``fit`` accepts ``sample_weight``; None means
        ``BayesianLinearRegression()``. It is cloned.
    random_state : int, RandomState instance or None, default=None
        When not None, seeds every ``random_state`` parameter of the coreset and of the
        estimator with integers drawn from it (as :class:`~sklearn.ensemble.BaggingRegressor`).
        None leaves their own settings.
    store_coreset : bool, default=True
        Keep the selected rows as ``X_coreset_`` / ``y_coreset_``.
    verbose : int, default=0
        Print the two phases of ``fit`` (the coreset, the estimator's fit) with their
        durations when positive; they are always logged to the ``skcoreset`` logger. The
        inner estimators keep their own ``verbose``.

    Attributes
    ----------
    coreset_ : coreset estimator
        The fitted clone of ``coreset``.
    estimator_ : regressor
        The fitted clone of ``estimator``.
    sample_indices_ : ndarray of shape (M,)
    sample_weight_ : ndarray of shape (M,)
        The coreset weights (the user's ``sample_weight`` included).
    X_coreset_, y_coreset_ : array-like
        The selected rows, when ``store_coreset``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from skcoreset.compose import CoresetRegressor
    >>> from skcoreset.coreset import UniformCoreset
    >>> from skcoreset.datasets import make_linear_regression
    >>> X, y = make_linear_regression(n_samples=500, random_state=0)
    >>> reg = CoresetRegressor(
    ...     UniformCoreset(50, projection=None), LinearRegression(), random_state=0
    ... ).fit(X, y)
    >>> reg.sample_indices_.shape, float(reg.sample_weight_.sum())
    ((50,), 500.0)
    """

    # the estimator's own score (R^2 for a regressor), which takes ``groups`` for a
    # multilevel model, where RegressorMixin's would call predict without them
    score = _BaseCoresetEstimator.score

    def _default_estimator(self):
        return BayesianLinearRegression()

    def _check_estimator_kind(self, estimator):
        if is_classifier(estimator):
            raise TypeError(
                f"CoresetRegressor needs a regressor as its estimator; {type(estimator).__name__}"
                " is a classifier (use CoresetClassifier for it)."
            )

    def _prepare_targets(self, y):
        y_arr = np.asarray(y)
        if y_arr.dtype.kind == "O":
            try:
                return y_arr.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError(
                    "Unknown label type: regression targets must be numeric."
                ) from None
        return y

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags
