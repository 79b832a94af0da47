"""BayesianGLM: any registered model by name, or a user's model object."""

import numpy as np
import scipy.special
from sklearn.base import RegressorMixin
from sklearn.utils.metaestimators import available_if

from .._sklearn_compat import StrOptions, _check_sample_weight
from ..models import GLM, MODEL_NAMES
from ._base import _BaseBayesianGLM, _dense


def _of_class_labels(estimator):
    """Whether the estimator's model is one of class labels (``predict_proba`` exists)."""
    try:
        return estimator._labels_class() is not None
    except ValueError:  # an unknown model name: fit says so
        return False


class BayesianGLM(RegressorMixin, _BaseBayesianGLM):
    """Bayesian regression with any likelihood, sampled by preconditioned MALA.

    The estimator for a likelihood that has no class of its own: a user's model (a
    :class:`~skcoreset.models.GLM` subclass with its
    :class:`~skcoreset.models.SingleIndexFamily`, or a NumPy
    :class:`~skcoreset.models.CustomModel`; see the design note "Models") or any registered
    model by name. It fits the model's parameters exactly as the named Bayesian regressions
    do. For a model of draws (a ``CustomModel``) ``coef_samples_`` holds all its P
    parameters, and :meth:`predict` needs the model's ``mean_draws``.

    Parameters
    ----------
    model : str or GLM, default='gaussian'
        The likelihood: a registered name (``skcoreset.models.MODEL_NAMES``) or a model
        object, whose ``prior_scale`` and ``fit_intercept`` are replaced by this estimator's
        (its ``extra``, when set, fixes the extra parameter).
    prior_scale : float, array-like of shape (n_features + fit_intercept,) or 'auto', \
            default='auto'
        Standard deviation of the Gaussian prior on the coefficients and the intercept; 'auto'
        follows the scale of the data (:func:`~skcoreset.models.default_prior_scale`, with the
        model's ``prior_level``). After a coreset in :class:`~skcoreset.pipeline.Pipeline`,
        :class:`~skcoreset.compose.CoresetClassifier` or
        :class:`~skcoreset.compose.CoresetRegressor`, 'auto' is the coreset's prior, set from
        the full data (its ``prior_scale_`` and the extra parameters' priors), not from the
        coreset's rows.
    fit_intercept : bool, default=True
        Whether to sample an intercept (a trailing column of ones in the design).
    n_samples : int, default=1000
        Draws kept per chain (after warm-up); at least 4.
    n_warmup : int, default=500
        Warm-up steps per chain, during which the step size is adapted; discarded.
    n_chains : int, default=4
        Number of chains, all advanced by one compiled kernel.
    step_size : 'auto' or float, default='auto'
        'auto' adapts the MALA step by dual averaging toward acceptance 0.574 during warm-up
        and then freezes it. A number fixes the step throughout.
    preconditioner : {'laplace', 'diag'} or None, default='laplace'
        Proposal covariance: the Laplace covariance, its diagonal, or the identity.
    random_state : int, RandomState instance or None, default=None
        Seeds the chain initialisation and the sampler; fits are reproducible with an int.
    progress : bool, default=False
        Show a tqdm progress bar (needs the optional dependency tqdm).
    verbose : int, default=0
        Print the phases of the fit with their durations when positive.

    Attributes
    ----------
    coef_samples_ : ndarray of shape (n_chains, n_samples, n_features)
        Posterior draws of the coefficients.
    intercept_samples_ : ndarray of shape (n_chains, n_samples)
        Posterior draws of the intercept (zeros when ``fit_intercept=False``).
    coef_ : ndarray of shape (n_features,)
        Posterior mean of the coefficients.
    intercept_ : float
        Posterior mean of the intercept (0.0 when ``fit_intercept=False``).
    prior_scale_ : ndarray of shape (n_features + fit_intercept,)
        Prior standard deviation of each coefficient, then of the intercept (if fitted).
    acceptance_rate_ : ndarray of shape (n_chains,)
        Fraction of accepted proposals after warm-up.
    step_size_ : float
        Step size used after warm-up.
    rhat_ : ndarray of shape (n_params,)
        Rank-normalised split R-hat of each parameter: the coefficients, the intercept (if
        fitted), then the log of the extra parameter (if sampled).
    ess_ : ndarray of shape (n_params,)
        Bulk effective sample size, same order as ``rhat_``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    BayesianPoissonRegression, BayesianNegativeBinomialRegression, BayesianGammaRegression :
        The named models, with their own ``predict`` and ``score``.

    Notes
    -----
    A model with an extra parameter also sets ``<extra_name>_samples_`` and
    ``<extra_name>_`` (e.g. ``noise_scale_samples_``). :meth:`predict` is the posterior mean
    of the model's ``mean(eta)``; :meth:`score` is the mean log posterior predictive density
    of the rows (:meth:`log_predictive_density`), which every likelihood has (an R^2 would
    mean nothing for, say, censored survival times).

    A model of class labels (``'logistic'``, ``'multinomial'``, or a model object whose
    ``labels`` is set) takes labels of any type, as
    :class:`~skcoreset.linear_model.BayesianLogisticRegression` does: ``classes_`` holds them
    (the multinomial model's number of classes is theirs), :meth:`predict` returns the most
    probable label under the posterior predictive, :meth:`predict_proba` the probabilities,
    and :meth:`sample_posterior_predictive` labels. The multinomial model's
    ``coef_samples_`` and ``intercept_samples_`` are then per class (the first class's 0), as
    the classifier's.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.linear_model import BayesianGLM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 2))
    >>> y = rng.poisson(np.exp(X @ [0.5, -0.3] + 1.0))
    >>> reg = BayesianGLM(model="poisson", n_samples=500, random_state=0).fit(X, y)
    >>> reg.coef_.round(1)
    array([ 0.5, -0.4])
    """

    _parameter_constraints: dict = {
        **_BaseBayesianGLM._parameter_constraints,
        "model": [StrOptions(MODEL_NAMES), GLM],
    }

    def __init__(
        self,
        model="gaussian",
        *,
        prior_scale="auto",
        fit_intercept=True,
        n_samples=1000,
        n_warmup=500,
        n_chains=4,
        step_size="auto",
        preconditioner="laplace",
        random_state=None,
        progress=False,
        verbose=0,
    ):
        super().__init__(
            prior_scale=prior_scale,
            fit_intercept=fit_intercept,
            n_samples=n_samples,
            n_warmup=n_warmup,
            n_chains=n_chains,
            step_size=step_size,
            preconditioner=preconditioner,
            random_state=random_state,
            progress=progress,
            verbose=verbose,
        )
        self.model = model

    def _model_spec(self):
        return self.model

    # -- class labels (a model with ``labels``: logistic, multinomial, a user's) ----------
    def _labels_class(self):
        """The model's coding of class labels (``BinaryLabels``, ``ClassLabels``), or None."""
        return super()._model().labels

    def _model(self, extra=None):
        model = super()._model(extra)
        classes = getattr(self, "classes_", None)
        if model.labels is None or classes is None:
            return model
        return model.with_classes(classes)  # the multinomial model's K

    def _numeric_targets(self):
        return self._labels_class() is None

    def _encode_targets(self, y):
        labels = self._labels_class()
        if labels is None:
            self.__dict__.pop("classes_", None)  # an earlier fit's, on class labels
            return super()._model(self._fixed_extra()).encode_targets(y)
        coding = labels.fit(y)
        self.classes_ = coding.classes
        return coding.encode(y)

    def _code_fitted(self, y):
        labels = self._labels_class()
        if labels is None:
            return super()._code_fitted(y)
        return labels(self.classes_).encode(y)  # the fitted classes, whatever y holds

    def _decode(self, draws):
        labels = self._labels_class()
        return draws if labels is None else labels(self.classes_).decode(draws)

    def _set_draws(self, result, n_coef, model, sample_extra):
        super()._set_draws(result, n_coef, model, sample_extra)
        if model.labels is None or model.n_predictors < 2:
            return
        # the multinomial model: every class's coefficients, the reference class's 0 (the
        # classifier's layout)
        C, S, _ = result.draws.shape
        K = model.n_predictors + 1
        theta = np.zeros((C, S, K, n_coef + int(self.fit_intercept)))
        theta[:, :, 1:, :] = result.draws.reshape(C, S, K - 1, -1)
        self.coef_samples_ = np.ascontiguousarray(theta[..., :n_coef])
        self.intercept_samples_ = np.ascontiguousarray(
            theta[..., n_coef] if self.fit_intercept else np.zeros((C, S, K))
        )
        self.coef_ = self.coef_samples_.mean(axis=(0, 1))
        self.intercept_ = self.intercept_samples_.mean(axis=(0, 1))

    @available_if(_of_class_labels)
    def predict_log_proba(self, X):
        """Log posterior predictive probabilities of the classes (a model of class labels).

        ``log((1/J) sum_j p(y = c | x, theta_j))`` over the J pooled draws.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to predict.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        X = self._check_X(X)
        model = self._model()
        if hasattr(model, "log_proba_draws"):  # K classes: the model's own probabilities
            thetas = self._pooled_thetas()
            out = np.empty((X.shape[0], len(self.classes_)))
            for sl in self._row_blocks(X.shape[0], len(self.classes_)):
                logp = model.log_proba_draws(thetas, model.design(_dense(X[sl])))  # (J, n, K)
                out[sl] = scipy.special.logsumexp(logp, axis=0) - np.log(thetas.shape[0])
            return out
        if model.family is None:
            raise NotImplementedError(
                f"The {model.name!r} model of class labels gives no class probabilities "
                "(log_proba_draws): use its posterior draws or log_predictive_density."
            )
        # two classes: the model's mean response is the probability of classes_[1]
        p1 = np.clip(self._response_moments(X)[0], 0.0, 1.0)
        with np.errstate(divide="ignore"):
            return np.log(np.column_stack([1.0 - p1, p1]))

    @available_if(_of_class_labels)
    def predict_proba(self, X):
        """Posterior predictive probabilities of the classes (a model of class labels).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to predict.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """Posterior mean of the model's mean response ``mean(x @ coef + intercept)``.

        For a model of class labels, the most probable label under the posterior predictive
        (:meth:`predict_proba`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to predict.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Posterior mean responses, or labels from ``classes_``.
        """
        if self._labels_class() is not None:
            return self._decode(np.argmax(self.predict_log_proba(X), axis=1))
        return self._response_moments(self._check_X(X))[0]

    def score(self, X, y, sample_weight=None):
        """Mean log posterior predictive density of the rows (greater is better).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to score.
        y : array-like of shape (n_samples,)
            Their targets, in the model's coding.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows.

        Returns
        -------
        score : float
            The (weighted) mean over rows of the log posterior predictive density.
        """
        if sample_weight is None:
            return self.log_predictive_density(X, y)
        X = self._check_X(X)
        y = self._targets_for_density(y, X.shape[0])
        w = _check_sample_weight(sample_weight, X, dtype=np.float64)
        return float(np.average(self._row_log_predictive(X, y), weights=w))
