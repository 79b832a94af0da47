"""The linear regressions: Gaussian noise, and Student-t for outliers."""

import numbers

import numpy as np
from sklearn.base import RegressorMixin

from .._sklearn_compat import Interval
from ._base import _BaseBayesianGLM


class BayesianLinearRegression(RegressorMixin, _BaseBayesianGLM):
    """Bayesian Gaussian-linear regression sampled by preconditioned MALA.

    ``y_n ~ N(x_n . coef + intercept, noise_scale^2)``.

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
    noise_scale : float or None, default=None
        Standard deviation of the Gaussian noise. None samples it too, as the extra
        parameter ``log(noise_scale)`` with the weakly informative prior
        ``N(log sd(y), 3^2)`` (95% prior mass within a factor of 360 of the targets' standard
        deviation); with a numeric ``prior_scale`` the prior is ``N(0, 3^2)``, which suits
        targets on a scale from about 1e-2 to 1e2.
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
        then the log of the noise scale (if sampled).
    ess_ : ndarray of shape (n_params,)
        Bulk effective sample size (Vehtari et al. 2021, as ``arviz.ess(method="bulk")``),
        same order as ``rhat_``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during fit, when ``X`` has string column names.
    noise_scale_samples_ : ndarray of shape (n_chains, n_samples)
        Posterior draws of the noise scale (constant when ``noise_scale`` is given).
    noise_scale_ : float
        Posterior mean of the noise scale (``noise_scale`` when given).

    See Also
    --------
    sklearn.linear_model.BayesianRidge : Bayesian ridge with learned precisions.

    Notes
    -----
    The posterior is ``N(theta | 0, diag(prior_scale_^2)) prod_n p(y_n | x_n, theta)^{w_n}``:
    ``sample_weight`` multiplies each log-likelihood term, which is how a Bayesian coreset is
    used. Rows with zero weight are dropped before sampling. The sampler is the
    Metropolis-adjusted Langevin algorithm preconditioned by the Laplace covariance, with
    chains started at independent draws of the Laplace approximation. A
    :class:`~sklearn.exceptions.ConvergenceWarning` is issued when the largest R-hat exceeds
    1.01 or the smallest bulk ESS is below 100.

    With ``noise_scale`` given, the posterior is Gaussian and known in closed form; this is
    how the sampler is validated.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.linear_model import BayesianLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((100, 2))
    >>> y = X @ [1.0, -1.0] + 0.5 * rng.standard_normal(100)
    >>> reg = BayesianLinearRegression(n_samples=500, random_state=0).fit(X, y)
    >>> reg.noise_scale_samples_.shape
    (4, 500)
    """

    __skcoreset_model__ = "gaussian"

    _parameter_constraints: dict = {
        **_BaseBayesianGLM._parameter_constraints,
        "noise_scale": [Interval(numbers.Real, 0, None, closed="neither"), None],
    }

    def __init__(
        self,
        *,
        prior_scale="auto",
        fit_intercept=True,
        noise_scale=None,
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
        self.noise_scale = noise_scale

    def _fixed_extra(self):
        return None if self.noise_scale is None else float(self.noise_scale)

    def predict(self, X, return_std=False):
        """Posterior predictive mean ``x @ coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to predict.
        return_std : bool, default=False
            Also return the standard deviation of the posterior predictive distribution,
            ``sqrt(Var[x . coef + intercept] + E[noise_scale^2])`` over the posterior (the
            uncertainty of the mean plus the noise), as
            :class:`~sklearn.linear_model.BayesianRidge` does.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Posterior mean responses.
        y_std : ndarray of shape (n_samples,)
            Posterior predictive standard deviations; only with ``return_std=True``.
        """
        X = self._check_X(X)
        y_pred = X @ self.coef_ + self.intercept_
        if not return_std:
            return y_pred
        _, var = self._response_moments(X)
        return y_pred, np.sqrt(var + np.mean(self.noise_scale_samples_**2))


class BayesianStudentTRegression(RegressorMixin, _BaseBayesianGLM):
    """Bayesian Student-t linear regression (robust to outliers), sampled by MALA.

    ``y_n = x_n . coef + intercept + scale * t_df``, with the scale and the degrees of freedom
    sampled too: outlying targets get the heavy tails of a small ``df``, and the coefficients
    follow the bulk of the data where least squares would follow the outliers.

    Parameters
    ----------
    prior_scale : float, array-like of shape (n_features + fit_intercept,) or 'auto', \
            default='auto'
        Standard deviation of the Gaussian prior on the coefficients and the intercept. A number
        is used for all of them, an array gives one per coefficient, the intercept's last (as
        ``prior_scale_`` reports it); 'auto' follows the scale of the data, 2.5 sd(y) / sd(x_k)
        as for :class:`BayesianLinearRegression`. The scale has the prior ``log scale ~ N(log
        sd(y), 3^2)`` (N(0, 3^2) with a numeric ``prior_scale``), the degrees of freedom ``log
        df ~ N(2.725, 0.803^2)``, the log-normal matching brms's default ``df ~ gamma(2, 0.1)``
        (median 15). After a coreset in :class:`~skcoreset.pipeline.Pipeline`,
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
        Number of chains.
    step_size : 'auto' or float, default='auto'
        'auto' adapts the MALA step by dual averaging toward acceptance 0.574 during warm-up
        and then freezes it. A number fixes the step throughout.
    preconditioner : {'laplace', 'diag'} or None, default='laplace'
        Proposal covariance: the Laplace covariance, its diagonal, or the identity.
    random_state : int, RandomState instance or None, default=None
        Seeds the chain initialisation and the sampler.
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
    scale_samples_ : ndarray of shape (n_chains, n_samples)
        Posterior draws of the scale.
    df_samples_ : ndarray of shape (n_chains, n_samples)
        Posterior draws of the degrees of freedom.
    coef_ : ndarray of shape (n_features,)
        Posterior mean of the coefficients.
    intercept_ : float
        Posterior mean of the intercept (0.0 when ``fit_intercept=False``).
    scale_ : float
        Posterior mean of the scale.
    df_ : float
        Posterior mean of the degrees of freedom.
    prior_scale_ : ndarray of shape (n_features + fit_intercept,)
        Prior standard deviation of each coefficient, then of the intercept (if fitted).
    acceptance_rate_ : ndarray of shape (n_chains,)
        Fraction of accepted proposals after warm-up.
    step_size_ : float
        Step size used after warm-up.
    rhat_ : ndarray of shape (n_params,)
        Rank-normalised split R-hat of each parameter: the coefficients, the intercept (if
        fitted), then log scale and log df (centred on their priors' means).
    ess_ : ndarray of shape (n_params,)
        Bulk effective sample size, same order as ``rhat_``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    BayesianLinearRegression : The Gaussian-noise counterpart.
    sklearn.linear_model.HuberRegressor : A robust maximum-likelihood-like counterpart.

    Notes
    -----
    ``sample_weight`` multiplies each log-likelihood term, which is how a Bayesian coreset is
    used (``model='student_t'`` in the coreset estimators). A
    :class:`~sklearn.exceptions.ConvergenceWarning` is issued when the largest R-hat exceeds
    1.01 or the smallest bulk ESS is below 100.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.linear_model import BayesianStudentTRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 2))
    >>> y = X @ [1.0, -1.0] + 0.5 * rng.standard_t(3, 200)
    >>> reg = BayesianStudentTRegression(n_samples=500, random_state=0).fit(X, y)
    >>> reg.df_samples_.shape
    (4, 500)
    """

    __skcoreset_model__ = "student_t"

    def _set_draws(self, result, n_coef, model, sample_extra):
        super()._set_draws(result, n_coef, model, sample_extra)
        draws = result.draws
        self.coef_samples_ = np.ascontiguousarray(draws[:, :, :n_coef])
        self.intercept_samples_ = (
            np.ascontiguousarray(draws[:, :, n_coef])
            if self.fit_intercept
            else np.zeros(draws.shape[:2])
        )
        _, scale, df = model.split(draws.reshape(-1, draws.shape[2]))
        self.scale_samples_ = scale.reshape(draws.shape[:2])
        self.df_samples_ = df.reshape(draws.shape[:2])
        self.coef_ = self.coef_samples_.mean(axis=(0, 1))
        self.intercept_ = float(self.intercept_samples_.mean()) if self.fit_intercept else 0.0
        self.scale_ = float(self.scale_samples_.mean())
        self.df_ = float(self.df_samples_.mean())

    def _posterior_extras(self):
        return {"scale": self.scale_samples_, "df": self.df_samples_}

    def predict(self, X):
        """Posterior mean of the location ``x @ coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to predict.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Posterior mean locations.
        """
        X = self._check_X(X)
        return X @ self.coef_ + self.intercept_
