"""The regressions on a log link: Poisson and negative binomial counts, gamma targets."""

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.metrics import d2_tweedie_score

from ._base import _BaseBayesianGLM


class _MeanRegressorMixin(RegressorMixin):
    """``predict`` and ``score`` of the regressions on a log link (Poisson, negative binomial,
    gamma), from the model's mean and variance; :meth:`score` explains the deviance their
    scikit-learn counterparts score."""

    #: Tweedie power of the deviance :meth:`score` explains: 1 Poisson (counts), 2 gamma.
    _deviance_power = 1

    def predict(self, X, return_std=False):
        """Posterior predictive mean: ``exp(x @ coef + intercept)`` averaged over the draws.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to predict.
        return_std : bool, default=False
            Also return the standard deviation of the posterior predictive distribution,
            ``sqrt(Var[mu] + E[Var(y | mu)])`` over the posterior (the uncertainty of the
            mean ``mu`` plus the likelihood's own variance: ``mu`` for Poisson counts,
            ``mu + alpha mu^2`` for negative binomial ones, ``mu^2 / shape`` for gamma
            targets), as :class:`~sklearn.linear_model.BayesianRidge` returns its
            predictive standard deviation.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Posterior means.
        y_std : ndarray of shape (n_samples,)
            Posterior predictive standard deviations; only with ``return_std=True``.
        """
        X = self._check_X(X)
        model = self._model()
        coef, intercept, extra = self._pooled_draws()
        mean, var = np.empty(X.shape[0]), np.empty(X.shape[0])
        for sl, eta in self._eta_blocks(X, coef, intercept):
            mu = model.mean(eta)
            mean[sl] = mu.mean(axis=1)
            if return_std:
                var[sl] = mu.var(axis=1) + model.variance(mu, extra).mean(axis=1)
        return (mean, np.sqrt(var)) if return_std else mean

    def score(self, X, y, sample_weight=None):
        """D^2, the fraction of deviance explained, of :meth:`predict`.

        ``1 - D(y, predict(X)) / D(y, mean(y))`` with the Poisson deviance (counts) or the
        gamma deviance (gamma targets), weighted by ``sample_weight``, as
        :class:`~sklearn.linear_model.PoissonRegressor` and
        :class:`~sklearn.linear_model.GammaRegressor` score: 1 is perfect, 0 is the constant
        mean, and it can be negative.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to score.
        y : array-like of shape (n_samples,)
            Their targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows (the exposures, for Poisson rates).

        Returns
        -------
        score : float
            The D^2 score (at most 1).
        """
        power = self._deviance_power
        return float(d2_tweedie_score(y, self.predict(X), sample_weight=sample_weight, power=power))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True
        return tags


class BayesianPoissonRegression(_MeanRegressorMixin, _BaseBayesianGLM):
    """Bayesian Poisson regression (log link) sampled by preconditioned MALA.

    ``y_n ~ Poisson(exp(x_n . coef + intercept))``.

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
    sklearn.linear_model.PoissonRegressor : The maximum-likelihood counterpart.

    Notes
    -----
    The posterior is ``N(theta | 0, diag(prior_scale_^2)) prod_n p(y_n | x_n, theta)^{w_n}``:
    ``sample_weight`` multiplies each log-likelihood term, which is how a Bayesian coreset is
    used. Rows with zero weight are dropped before sampling. The sampler is the
    Metropolis-adjusted Langevin algorithm preconditioned by the Laplace covariance, with
    chains started at independent draws of the Laplace approximation. A
    :class:`~sklearn.exceptions.ConvergenceWarning` is issued when the largest R-hat exceeds
    1.01 or the smallest bulk ESS is below 100.

    The targets must be non-negative: counts, or rates with the exposure as
    ``sample_weight``: ``fit(X, y / exposure, sample_weight=exposure)`` has the posterior
    of counts ``y`` with the offset ``log(exposure)``. :meth:`predict` returns the posterior
    mean of the rate ``exp(x . coef + intercept)``; :meth:`score` is D^2, the fraction of
    Poisson deviance it explains (as :class:`~sklearn.linear_model.PoissonRegressor`).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.linear_model import BayesianPoissonRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 2))
    >>> y = rng.poisson(np.exp(X @ [0.5, -0.3] + 1.0))
    >>> reg = BayesianPoissonRegression(n_samples=500, random_state=0).fit(X, y)
    >>> reg.predict(X[:3]).shape
    (3,)
    """

    __skcoreset_model__ = "poisson"


class BayesianNegativeBinomialRegression(_MeanRegressorMixin, _BaseBayesianGLM):
    """Bayesian negative binomial (NB2) regression of overdispersed counts, sampled by MALA.

    ``y_n ~ NB(mean mu_n = exp(x_n . coef + intercept), variance mu_n + alpha mu_n^2)``, the
    dispersion ``alpha`` sampled too (on the log scale, prior ``N(0, 2.5^2)``: 95% of its mass
    on alpha between 0.007 and 134). The model of counts that vary more than a Poisson
    likelihood allows (see :class:`~skcoreset.models.OverdispersionWarning`).

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
        Rank-normalised split R-hat (Vehtari et al. 2021; ``max`` of bulk and tail, as
        ``arviz.rhat``) of each parameter: the coefficients, then the intercept (if fitted),
        then log alpha.
    ess_ : ndarray of shape (n_params,)
        Bulk effective sample size (Vehtari et al. 2021, as ``arviz.ess(method="bulk")``),
        same order as ``rhat_``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during fit, when ``X`` has string column names.
    alpha_samples_ : ndarray of shape (n_chains, n_samples)
        Posterior draws of the dispersion.
    alpha_ : float
        Posterior mean of the dispersion.

    See Also
    --------
    BayesianPoissonRegression : The same mean without overdispersion.

    Notes
    -----
    The posterior is ``N(theta | 0, diag(prior_scale_^2)) prod_n p(y_n | x_n, theta)^{w_n}``:
    ``sample_weight`` multiplies each log-likelihood term, which is how a Bayesian coreset is
    used. Rows with zero weight are dropped before sampling. The sampler is the
    Metropolis-adjusted Langevin algorithm preconditioned by the Laplace covariance, with
    chains started at independent draws of the Laplace approximation. A
    :class:`~sklearn.exceptions.ConvergenceWarning` is issued when the largest R-hat exceeds
    1.01 or the smallest bulk ESS is below 100.

    The targets must be non-negative integer counts. :meth:`predict` returns the posterior
    mean of ``exp(x . coef + intercept)``; :meth:`score` is D^2, the fraction of Poisson
    deviance it explains (as :class:`~sklearn.linear_model.PoissonRegressor` scores a mean).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.linear_model import BayesianNegativeBinomialRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 2))
    >>> mu = np.exp(X @ [0.5, -0.3] + 1.0)
    >>> y = rng.negative_binomial(2.0, 2.0 / (2.0 + mu))  # alpha = 0.5
    >>> reg = BayesianNegativeBinomialRegression(n_samples=500, random_state=0).fit(X, y)
    >>> reg.alpha_samples_.shape
    (4, 500)
    """

    __skcoreset_model__ = "negative_binomial"


class BayesianGammaRegression(_MeanRegressorMixin, _BaseBayesianGLM):
    """Bayesian gamma regression (log link) of positive targets, sampled by MALA.

    ``y_n ~ Gamma(shape k, mean mu_n = exp(x_n . coef + intercept))``, variance ``mu_n^2 / k``,
    the shape sampled too (on the log scale, prior ``N(log(mean(y)^2 / var(y)), 3^2)``:
    centred on the targets' own shape, which the features can only raise). The model of
    positive, right-skewed targets with a constant coefficient of variation.

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
        Rank-normalised split R-hat (Vehtari et al. 2021; ``max`` of bulk and tail, as
        ``arviz.rhat``) of each parameter: the coefficients, then the intercept (if fitted),
        then log shape.
    ess_ : ndarray of shape (n_params,)
        Bulk effective sample size (Vehtari et al. 2021, as ``arviz.ess(method="bulk")``),
        same order as ``rhat_``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during fit, when ``X`` has string column names.
    shape_samples_ : ndarray of shape (n_chains, n_samples)
        Posterior draws of the shape.
    shape_ : float
        Posterior mean of the shape.

    See Also
    --------
    sklearn.linear_model.GammaRegressor : The maximum-likelihood counterpart.

    Notes
    -----
    The posterior is ``N(theta | 0, diag(prior_scale_^2)) prod_n p(y_n | x_n, theta)^{w_n}``:
    ``sample_weight`` multiplies each log-likelihood term, which is how a Bayesian coreset is
    used. Rows with zero weight are dropped before sampling. The sampler is the
    Metropolis-adjusted Langevin algorithm preconditioned by the Laplace covariance, with
    chains started at independent draws of the Laplace approximation. A
    :class:`~sklearn.exceptions.ConvergenceWarning` is issued when the largest R-hat exceeds
    1.01 or the smallest bulk ESS is below 100.

    The targets must be positive. ``sample_weight`` multiplies each log-likelihood term, as
    :class:`~sklearn.linear_model.GammaRegressor` weights its deviance. :meth:`predict`
    returns the posterior mean of ``exp(x . coef + intercept)``; :meth:`score` is D^2, the
    fraction of gamma deviance it explains (as :class:`~sklearn.linear_model.GammaRegressor`).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.linear_model import BayesianGammaRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 2))
    >>> y = rng.gamma(4.0, np.exp(X @ [0.5, -0.3] + 1.0) / 4.0)  # shape 4
    >>> reg = BayesianGammaRegression(n_samples=500, random_state=0).fit(X, y)
    >>> reg.shape_samples_.shape
    (4, 500)
    """

    __skcoreset_model__ = "gamma"
    _deviance_power = 2
