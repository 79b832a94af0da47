"""BayesianLogisticRegression: two classes (the logistic model) or more (the multinomial)."""

import numpy as np
import scipy.special
from sklearn.base import ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets

from ..models import ClassLabels
from ..models._targets import check_no_none
from ._base import _BaseBayesianGLM, _dense


class BayesianLogisticRegression(ClassifierMixin, _BaseBayesianGLM):
    """Bayesian logistic regression, binary or multinomial, sampled by preconditioned MALA.

    Two classes: the logistic model. More: the multinomial (softmax) model, with the first
    class of ``classes_`` the reference whose coefficients are 0 (the parameters are
    identified; the predictions do not depend on the choice), as
    :class:`~sklearn.linear_model.LogisticRegression` handles any number of classes.

    Parameters
    ----------
    prior_scale : float, array-like of shape (n_features + fit_intercept,) or 'auto', \
            default='auto'
        Standard deviation of the Gaussian prior on the coefficients and the intercept. A number
        is used for all of them, an array gives one per coefficient, the intercept's last (as
        ``prior_scale_`` reports it). 'auto' follows the scale of the data, one standard
        deviation per parameter (2.5 / sd(x_k) on the logit and log scales, 2.5 sd(y) / sd(x_k)
        for the linear model; see :func:`~skcoreset.models.default_prior_scale`), the rule the
        coresets use by default. After a coreset in :class:`~skcoreset.pipeline.Pipeline`,
        :class:`~skcoreset.compose.CoresetClassifier` or
        :class:`~skcoreset.compose.CoresetRegressor`, 'auto' is the coreset's prior, set from
        the full data (its ``prior_scale_`` and the extra parameters' priors), not from the
        coreset's rows.
    fit_intercept : bool, default=True
        Whether to sample an intercept.
    n_samples : int, default=1000
        Draws kept per chain (after warm-up); at least 4.
    n_warmup : int, default=500
        Warm-up steps per chain, during which the step size is adapted; discarded.
    n_chains : int, default=4
        Number of chains, all advanced by one compiled kernel.
    step_size : 'auto' or float, default='auto'
        'auto' adapts the MALA step by dual averaging toward acceptance 0.574 during warm-up
        and then freezes it, so the kept draws come from an exactly invariant chain.
        A number fixes the step throughout.
    preconditioner : {'laplace', 'diag'} or None, default='laplace'
        Proposal covariance: the Laplace covariance (inverse Hessian at the MAP), its
        diagonal, or the identity.
    random_state : int, RandomState instance or None, default=None
        Seeds the chain initialisation and the sampler; fits are reproducible with an int.
    progress : bool, default=False
        Show a tqdm progress bar (needs the optional dependency tqdm).
    verbose : int, default=0
        Print the phases of the fit (Laplace fit, MALA warm-up and sampling, convergence
        diagnostics) with their durations when positive. They are always logged to the
        ``skcoreset`` logger at INFO level.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted; for two, the second is the "positive" class of the model.
    coef_samples_ : ndarray of shape (n_chains, n_samples, n_features) or \
            (n_chains, n_samples, n_classes, n_features)
        Posterior draws of the coefficients (per class for more than two classes, the first
        class's all 0).
    intercept_samples_ : ndarray of shape (n_chains, n_samples) or \
            (n_chains, n_samples, n_classes)
        Posterior draws of the intercept (zeros when ``fit_intercept=False``).
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Posterior mean of the coefficients (the shapes of
        :class:`~sklearn.linear_model.LogisticRegression`'s).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Posterior mean of the intercept (0.0 when ``fit_intercept=False``).
    prior_scale_ : ndarray of shape (n_features + fit_intercept,)
        Prior standard deviation of each coefficient, then of the intercept (if fitted);
        the same for every class.
    acceptance_rate_ : ndarray of shape (n_chains,)
        Fraction of accepted proposals after warm-up.
    step_size_ : float
        Step size used after warm-up.
    rhat_ : ndarray of shape (n_params,)
        Rank-normalised split R-hat (Vehtari et al. 2021; ``max`` of bulk and tail, as
        ``arviz.rhat``) of each parameter: the coefficients, then the intercept (if fitted).
    ess_ : ndarray of shape (n_params,)
        Bulk effective sample size (Vehtari et al. 2021, as ``arviz.ess(method="bulk")``),
        same order as ``rhat_``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    sklearn.linear_model.LogisticRegression : The maximum-likelihood counterpart.

    Notes
    -----
    The posterior is ``N(theta | 0, diag(prior_scale_^2)) prod_n p(y_n | x_n, theta)^{w_n}``:
    ``sample_weight`` multiplies each log-likelihood term, which is how a Bayesian coreset is
    used. Rows with zero weight are dropped before sampling. The sampler is the
    Metropolis-adjusted Langevin algorithm preconditioned by the Laplace covariance, with
    chains started at independent draws of the Laplace approximation. A
    :class:`~sklearn.exceptions.ConvergenceWarning` is issued when the largest R-hat exceeds
    1.01 or the smallest bulk ESS is below 100.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from skcoreset.linear_model import BayesianLogisticRegression
    >>> X, y = make_classification(n_samples=200, n_features=3, n_informative=3,
    ...                            n_redundant=0, random_state=0)
    >>> clf = BayesianLogisticRegression(n_samples=500, random_state=0).fit(X, y)
    >>> clf.coef_samples_.shape
    (4, 500, 3)
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    """

    __skcoreset_model__ = "logistic"

    def _multiclass(self):
        return len(getattr(self, "classes_", ())) > 2

    def _model_spec(self):
        # two classes: the logistic model; more: the multinomial one (its reference class is
        # classes_[0]). Set by fit's labels, as LogisticRegression settles its loss.
        return "multinomial" if self._multiclass() else "logistic"

    def _model(self, extra=None):
        return super()._model(extra).with_classes(self.classes_)

    def _encode_targets(self, y):
        check_no_none(np.asarray(y))  # a missing target, before sklearn's "unknown" type
        try:
            check_classification_targets(y)
        except TypeError:  # labels of types that cannot be ordered together
            ClassLabels.fit(y)  # raises a ValueError naming them
            raise
        labels = ClassLabels.fit(y)
        self.classes_ = labels.classes
        return labels.encode(y)

    def _decode(self, draws):
        return ClassLabels(self.classes_).decode(draws)

    def _set_draws(self, result, n_coef, model, sample_extra):
        super()._set_draws(result, n_coef, model, sample_extra)
        if not self._multiclass():
            # LogisticRegression's shapes for a binary problem
            self.coef_ = self.coef_.reshape(1, -1)
            self.intercept_ = np.array([self.intercept_])
            return
        # every class's coefficients (the reference class's are 0), as LogisticRegression
        # reports K rows
        C, S, _ = result.draws.shape
        K = len(self.classes_)
        theta = np.zeros((C, S, K, n_coef + int(self.fit_intercept)))
        theta[:, :, 1:, :] = result.draws.reshape(C, S, K - 1, -1)
        self.coef_samples_ = np.ascontiguousarray(theta[..., :n_coef])
        self.intercept_samples_ = np.ascontiguousarray(
            theta[..., n_coef] if self.fit_intercept else np.zeros((C, S, K))
        )
        self.coef_ = self.coef_samples_.mean(axis=(0, 1))
        self.intercept_ = self.intercept_samples_.mean(axis=(0, 1))

    def _class_log_proba(self, X):
        """``log p(y = c | x)`` of the posterior predictive over K > 2 classes, (n, K)."""
        model = self._model()
        thetas = self._pooled_thetas()
        J = thetas.shape[0]
        out = np.empty((X.shape[0], len(self.classes_)))
        for sl in self._row_blocks(X.shape[0], len(self.classes_)):
            logp = model.log_proba_draws(thetas, model.design(_dense(X[sl])))  # (J, n, K)
            out[sl] = scipy.special.logsumexp(logp, axis=0) - np.log(J)
        return out

    def predict_log_proba(self, X):
        """Log posterior predictive class probabilities.

        ``log p(y = c | x) = log((1/J) sum_j p(y = c | x, theta_j))`` over the J pooled draws,
        by ``logsumexp``: finite where :meth:`predict_proba` rounds to 0 or 1.

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
        if self._multiclass():
            return self._class_log_proba(X)
        coef, intercept, _ = self._pooled_draws()
        log_j = np.log(coef.shape[0])
        out = np.empty((X.shape[0], 2))
        for sl, eta in self._eta_blocks(X, coef, intercept):
            # log sigmoid(eta) = -log(1 + exp(-eta)), and log(1 - sigmoid(eta)) likewise
            out[sl, 1] = scipy.special.logsumexp(-np.logaddexp(0.0, -eta), axis=1) - log_j
            out[sl, 0] = scipy.special.logsumexp(-np.logaddexp(0.0, eta), axis=1) - log_j
        return out

    def predict_proba(self, X):
        """Posterior predictive class probabilities, averaged over all draws.

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

    def decision_function(self, X):
        """Compute the log-odds of the posterior predictive probability of ``classes_[1]``.

        As for :class:`~sklearn.linear_model.LogisticRegression`,
        ``predict_proba(X)[:, 1] == expit(decision_function(X))`` and :meth:`predict` is
        ``classes_[1]`` where it is positive. Averaging over the posterior makes it differ
        slightly from the linear predictor at the posterior mean, ``X @ coef_.T +
        intercept_`` (it is closer to 0 where the posterior is uncertain). For more than two
        classes, one score per class: the log posterior predictive probabilities, whose
        largest is the class :meth:`predict` returns.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to score.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            The log-odds of ``classes_[1]`` for each row (two classes), or each class's log
            probability.
        """
        log_proba = self.predict_log_proba(X)
        if self._multiclass():
            return log_proba  # one score per class, as LogisticRegression's
        return log_proba[:, 1] - log_proba[:, 0]

    def predict(self, X):
        """Most probable class under the posterior predictive.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to predict.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        if self._multiclass():
            return self._decode(np.argmax(self.predict_log_proba(X), axis=1))
        return self._decode(self.decision_function(X) > 0)

    def _code_fitted(self, y):
        return ClassLabels(self.classes_).encode(y)
