"""Bayesian generalised linear models sampled by preconditioned MALA.

The posterior is ``N(theta | 0, prior_scale^2 I) * prod_n p(y_n | x_n, theta)^{w_n}``: sample
weights are exponents of the likelihood terms, so a weighted coreset ``(X_m, y_m, w_m)`` gives
the coreset posterior exactly, and integer weights give the same posterior as duplicated rows.
"""

import numbers
import warnings

import numpy as np
import scipy.special
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._sklearn_compat import Interval, StrOptions, _check_sample_weight, _fit_context
from ..models import BinaryLabels, get_model, laplace_approximation
from ..sampler import NOISE_LOG_PRIOR, ess_bulk, sample_mala, split_rhat

# Convergence thresholds behind the ConvergenceWarning (Vehtari et al. 2021 recommend
# R-hat < 1.01 and a bulk ESS of at least 100 for reliable posterior summaries).
RHAT_THRESHOLD = 1.01
ESS_THRESHOLD = 100

# Predictions evaluate an (rows x draws) block of linear predictors at a time; this bounds it
# to ~8 MB whatever the number of rows.
_BLOCK_ELEMENTS = 1 << 20


class _BaseBayesianGLM(BaseEstimator):
    """Shared fit / predictive machinery of the Bayesian GLMs (not public).

    A subclass only names its model, ``__skcoreset_model__``; everything specific to the
    likelihood (target coding, mean response, log density, simulation) is the model's.
    """

    __skcoreset_model__ = None

    _parameter_constraints: dict = {
        "prior_scale": [Interval(numbers.Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "n_samples": [Interval(numbers.Integral, 4, None, closed="left")],
        "n_warmup": [Interval(numbers.Integral, 0, None, closed="left")],
        "n_chains": [Interval(numbers.Integral, 1, None, closed="left")],
        "step_size": [StrOptions({"auto"}), Interval(numbers.Real, 0, None, closed="neither")],
        "preconditioner": [StrOptions({"laplace", "diag"}), None],
        "random_state": ["random_state"],
        "progress": ["boolean"],
    }

    def __init__(
        self,
        *,
        prior_scale=1.0,
        fit_intercept=True,
        n_samples=1000,
        n_warmup=500,
        n_chains=4,
        step_size="auto",
        preconditioner="laplace",
        random_state=None,
        progress=False,
    ):
        self.prior_scale = prior_scale
        self.fit_intercept = fit_intercept
        self.n_samples = n_samples
        self.n_warmup = n_warmup
        self.n_chains = n_chains
        self.step_size = step_size
        self.preconditioner = preconditioner
        self.random_state = random_state
        self.progress = progress

    # -- hooks -------------------------------------------------------------------------
    def _noise_scale_param(self):
        return None

    def _model(self, noise_scale=None):
        """The model object, from the parameters."""
        return get_model(
            self.__skcoreset_model__,
            prior_scale=self.prior_scale,
            fit_intercept=self.fit_intercept,
            noise_scale=noise_scale,
        )

    def _encode_targets(self, y, model):
        """Targets in the model's coding (the classifier also sets ``classes_``)."""
        return model.encode_targets(y)

    # -- fit ---------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Sample the posterior of the coefficients (and of the noise scale if it is free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples,)
            Targets: two class labels of any type (logistic), non-negative counts or rates
            (Poisson), real values (linear).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the log-likelihood terms (not all zero).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        model = self._model(self._noise_scale_param())
        X, y = validate_data(
            self, X, y, dtype=np.float64, y_numeric=not isinstance(self, ClassifierMixin)
        )
        y = self._encode_targets(y, model)
        w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        rng = check_random_state(self.random_state)
        # Zero-weight rows do not enter the posterior: drop them so they cost nothing.
        keep = w > 0
        if not np.all(keep):
            X, y, w = X[keep], y[keep], w[keep]
            try:
                model.encode_targets(y)
            except ValueError as exc:
                raise ValueError(f"Among the rows with positive sample_weight: {exc}") from None
        sample_noise = model.has_noise and model.noise_scale is None
        if sample_noise and X.shape[0] < 2:
            raise ValueError(
                f"{type(self).__name__} with noise_scale=None needs at least 2 samples with "
                f"non-zero weight to learn the noise scale; got {X.shape[0]} sample."
            )
        Xd = model.design(X)
        lap = laplace_approximation(model, Xd, y, w, design=True)
        mean, cov, chol = lap.mean, lap.cov, lap.chol
        if sample_noise:
            mean, cov, chol = _with_log_noise(mean, cov, chol, np.log(lap.model.noise), w.sum())

        if self.preconditioner == "laplace":
            precond = chol
        elif self.preconditioner == "diag":
            precond = np.diag(np.sqrt(np.diag(cov)))
        else:
            precond = None
        # Each chain starts at a draw of the Laplace approximation: dispersed at the scale of
        # the posterior, so that R-hat can detect chains that do not mix.
        init = mean + rng.standard_normal((self.n_chains, mean.shape[0])) @ chol.T
        result = sample_mala(
            model.code,
            Xd,
            y,
            w,
            init,
            prior_scale=self.prior_scale,
            noise_scale=model.noise,
            sample_noise=sample_noise,
            precond_chol=precond,
            n_samples=self.n_samples,
            n_warmup=self.n_warmup,
            step_size=self.step_size,
            random_state=rng,
            progress=self.progress,
        )
        self._set_draws(result, X.shape[1], model, sample_noise)
        self._warn_convergence()
        return self

    def _set_draws(self, result, n_coef, model, sample_noise):
        """The fitted attributes from the sampler's draws."""
        draws = result.draws
        self.rhat_ = split_rhat(draws)
        self.ess_ = ess_bulk(draws)
        self.coef_samples_ = np.ascontiguousarray(draws[:, :, :n_coef])
        if self.fit_intercept:
            self.intercept_samples_ = np.ascontiguousarray(draws[:, :, n_coef])
        else:
            self.intercept_samples_ = np.zeros(draws.shape[:2])
        if model.has_noise:
            if sample_noise:
                self.noise_scale_samples_ = np.exp(draws[:, :, -1])
                self.noise_scale_ = float(self.noise_scale_samples_.mean())
            else:
                self.noise_scale_samples_ = np.full(draws.shape[:2], model.noise)
                self.noise_scale_ = model.noise
        self.coef_ = self.coef_samples_.mean(axis=(0, 1))
        self.intercept_ = float(self.intercept_samples_.mean()) if self.fit_intercept else 0.0
        self.acceptance_rate_ = result.acceptance_rate
        self.step_size_ = result.step_size

    def _warn_convergence(self):
        max_rhat = np.nanmax(self.rhat_) if np.any(np.isfinite(self.rhat_)) else np.nan
        min_ess = np.nanmin(self.ess_) if np.any(np.isfinite(self.ess_)) else np.nan
        problems = []
        if not max_rhat <= RHAT_THRESHOLD:
            problems.append(f"max R-hat = {max_rhat:.4g} > {RHAT_THRESHOLD}")
        if not min_ess >= ESS_THRESHOLD:
            problems.append(f"min bulk ESS = {min_ess:.4g} < {ESS_THRESHOLD}")
        if problems:
            warnings.warn(
                f"{type(self).__name__}: the MCMC chains may not have converged "
                f"({'; '.join(problems)}). Increase n_samples and/or n_warmup.",
                ConvergenceWarning,
                stacklevel=3,
            )

    # -- posterior draws ---------------------------------------------------------------
    def _pooled_draws(self):
        """Coefficients (J, D), intercepts (J,) and noise scales (J,) over all chains."""
        J = self.coef_samples_.shape[0] * self.coef_samples_.shape[1]
        coef = self.coef_samples_.reshape(J, -1)
        intercept = self.intercept_samples_.reshape(J)
        noise = getattr(self, "noise_scale_samples_", None)
        return coef, intercept, (None if noise is None else noise.reshape(J))

    def _check_X(self, X):
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=np.float64)

    def _eta_blocks(self, X, coef, intercept):
        """Yield (row slice, linear predictors of shape (rows, J)) in bounded-memory blocks."""
        J = coef.shape[0]
        rows = max(1, _BLOCK_ELEMENTS // max(J, 1))
        for start in range(0, X.shape[0], rows):
            sl = slice(start, min(start + rows, X.shape[0]))
            yield sl, X[sl] @ coef.T + intercept

    def _mean_response(self, X):
        """Posterior mean of E[y | x] (probability of class 1, Poisson rate, or mean)."""
        model = self._model()
        coef, intercept, _ = self._pooled_draws()
        out = np.empty(X.shape[0])
        for sl, eta in self._eta_blocks(X, coef, intercept):
            out[sl] = model.mean(eta).mean(axis=1)
        return out

    def _targets_for_density(self, y, n_rows):
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != n_rows:
            raise ValueError(
                f"y must be 1-D with {n_rows} entries (one per row of X); got shape {y.shape}."
            )
        return self._model().encode_targets(y)

    def log_predictive_density(self, X, y):
        """Mean log posterior predictive density of the rows of ``(X, y)``.

        ``mean_n log( (1/J) sum_j p(y_n | x_n, theta_j) )`` over the J pooled posterior draws,
        computed with ``scipy.special.logsumexp`` (the "test log-likelihood" of the coreset
        papers; for the classifier, the negative log loss of :meth:`predict_proba`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        lpd : float
        """
        X = self._check_X(X)
        y = self._targets_for_density(y, X.shape[0])
        model = self._model()
        coef, intercept, noise = self._pooled_draws()
        J = coef.shape[0]
        total = 0.0
        for sl, eta in self._eta_blocks(X, coef, intercept):
            ll = model.log_density(y[sl, None], eta, noise_scale=noise)
            total += np.sum(scipy.special.logsumexp(ll, axis=1) - np.log(J))
        return float(total / X.shape[0])

    def sample_posterior_predictive(self, X, n_draws=100, random_state=None):
        """Draw from the posterior predictive distribution at the rows of ``X``.

        Each of the ``n_draws`` replicates uses one posterior draw (chosen at random from the
        pooled chains, without replacement when ``n_draws`` does not exceed their number) and
        simulates every row from the likelihood at that parameter.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
        n_draws : int, default=100
        random_state : int, RandomState instance or None, default=None

        Returns
        -------
        y_draws : ndarray of shape (n_draws, n_rows)
            Class labels for the classifier, counts for Poisson, reals for linear regression.
        """
        X = self._check_X(X)
        if not isinstance(n_draws, numbers.Integral) or n_draws < 1:
            raise ValueError(f"n_draws must be a positive integer, got {n_draws!r}.")
        rng = check_random_state(random_state)
        coef, intercept, noise = self._pooled_draws()
        J = coef.shape[0]
        idx = rng.choice(J, size=n_draws, replace=n_draws > J)
        eta = coef[idx] @ X.T + intercept[idx, None]
        draws = self._model().simulate(
            eta, rng, noise_scale=None if noise is None else noise[idx, None]
        )
        return self._decode(draws)

    def _decode(self, draws):
        """Simulated targets in the caller's coding (class labels for the classifier)."""
        return draws

    def to_inference_data(self):
        """Export the posterior draws as an ArviZ ``InferenceData``.

        Variables ``coef`` (chain, draw, feature), ``intercept`` (if ``fit_intercept``) and
        ``noise_scale`` (linear regression), and the per-chain acceptance rate under
        ``sample_stats``.

        Returns
        -------
        arviz.InferenceData

        Raises
        ------
        ImportError
            If arviz is not installed.
        """
        check_is_fitted(self)
        try:
            import arviz
        except ImportError as exc:
            raise ImportError(
                "to_inference_data needs arviz; install it with `pip install arviz`."
            ) from exc
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            names = [f"x{k}" for k in range(self.n_features_in_)]
        posterior = {"coef": self.coef_samples_}
        if self.fit_intercept:
            posterior["intercept"] = self.intercept_samples_
        if hasattr(self, "noise_scale_samples_"):
            posterior["noise_scale"] = self.noise_scale_samples_
        return arviz.from_dict(
            posterior=posterior,
            coords={"feature": list(names)},
            dims={"coef": ["feature"]},
            attrs={"estimator": type(self).__name__, "step_size": self.step_size_},
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags


def _with_log_noise(mean, cov, chol, log_noise, w_sum):
    """Extend a Laplace fit of the coefficients by ``log sigma``, the sampled noise scale.

    At the mode the Fisher information of s = log sigma is 2 W (W = total weight), plus the
    prior precision, and s is (nearly) uncorrelated with the coefficients.
    """
    _, s_sd = NOISE_LOG_PRIOR
    var_s = 1.0 / (2.0 * w_sum + 1.0 / s_sd**2)
    P = mean.shape[0]
    cov_full = np.zeros((P + 1, P + 1))
    cov_full[:P, :P] = cov
    cov_full[P, P] = var_s
    chol_full = np.zeros_like(cov_full)
    chol_full[:P, :P] = chol
    chol_full[P, P] = np.sqrt(var_s)
    return np.append(mean, log_noise), cov_full, chol_full


class BayesianLogisticRegression(ClassifierMixin, _BaseBayesianGLM):
    """Bayesian logistic regression (binary) sampled by preconditioned MALA.

    Parameters
    ----------
    prior_scale : float, default=1.0
        Standard deviation of the N(0, prior_scale^2) prior on every coefficient and on the
        intercept.
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

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two class labels; the second one is the "positive" class of the model.
    coef_samples_ : ndarray of shape (n_chains, n_samples, n_features)
        Posterior draws of the coefficients.
    intercept_samples_ : ndarray of shape (n_chains, n_samples)
        Posterior draws of the intercept (zeros when ``fit_intercept=False``).
    coef_ : ndarray of shape (n_features,)
        Posterior mean of the coefficients.
    intercept_ : float
        Posterior mean of the intercept (0.0 when ``fit_intercept=False``).
    acceptance_rate_ : ndarray of shape (n_chains,)
        Fraction of accepted proposals after warm-up.
    step_size_ : float
        Step size used after warm-up.
    rhat_ : ndarray of shape (n_params,)
        Rank-normalised split R-hat (Vehtari et al. 2021; ``max`` of bulk and tail, as
        ``arviz.rhat``) of each parameter: the coefficients, then the intercept (if fitted),
        then the noise scale (if sampled).
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
    The posterior is ``N(theta | 0, prior_scale^2 I) prod_n p(y_n | x_n, theta)^{w_n}``:
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

    def _encode_targets(self, y, model):
        check_classification_targets(y)
        labels = BinaryLabels.fit(y)
        self.classes_ = labels.classes
        return labels.encode(y)

    def _decode(self, draws):
        return BinaryLabels(self.classes_).decode(draws)

    def predict_proba(self, X):
        """Posterior predictive class probabilities, averaged over all draws.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to predict.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Columns follow ``classes_``.
        """
        X = self._check_X(X)
        p = self._mean_response(X)
        return np.column_stack([1.0 - p, p])

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to predict.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, 2)
            Columns follow ``classes_``.
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

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
        positive = self.predict_proba(X)[:, 1] > 0.5
        return self._decode(positive)

    def _targets_for_density(self, y, n_rows):
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != n_rows:
            raise ValueError(
                f"y must be 1-D with {n_rows} entries (one per row of X); got shape {y.shape}."
            )
        return BinaryLabels(self.classes_).encode(y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class BayesianPoissonRegression(RegressorMixin, _BaseBayesianGLM):
    """Bayesian Poisson regression (log link) sampled by preconditioned MALA.

    ``y_n ~ Poisson(exp(x_n . coef + intercept))``.

    Parameters
    ----------
    prior_scale : float, default=1.0
        Standard deviation of the N(0, prior_scale^2) prior on every coefficient and on the
        intercept.
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
    acceptance_rate_ : ndarray of shape (n_chains,)
        Fraction of accepted proposals after warm-up.
    step_size_ : float
        Step size used after warm-up.
    rhat_ : ndarray of shape (n_params,)
        Rank-normalised split R-hat (Vehtari et al. 2021; ``max`` of bulk and tail, as
        ``arviz.rhat``) of each parameter: the coefficients, then the intercept (if fitted),
        then the noise scale (if sampled).
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
    The posterior is ``N(theta | 0, prior_scale^2 I) prod_n p(y_n | x_n, theta)^{w_n}``:
    ``sample_weight`` multiplies each log-likelihood term, which is how a Bayesian coreset is
    used. Rows with zero weight are dropped before sampling. The sampler is the
    Metropolis-adjusted Langevin algorithm preconditioned by the Laplace covariance, with
    chains started at independent draws of the Laplace approximation. A
    :class:`~sklearn.exceptions.ConvergenceWarning` is issued when the largest R-hat exceeds
    1.01 or the smallest bulk ESS is below 100.

    The targets must be non-negative: counts, or rates with the exposure as
    ``sample_weight``. :meth:`predict` returns the posterior mean of the rate
    ``exp(x . coef + intercept)``; :meth:`score` is the R^2 of that mean.

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

    def predict(self, X):
        """Posterior predictive mean: the rate ``exp(x . coef + intercept)`` averaged over draws.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to predict.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Posterior mean rates.
        """
        return self._mean_response(self._check_X(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True
        return tags


class BayesianLinearRegression(RegressorMixin, _BaseBayesianGLM):
    """Bayesian Gaussian-linear regression sampled by preconditioned MALA.

    ``y_n ~ N(x_n . coef + intercept, noise_scale^2)``.

    Parameters
    ----------
    prior_scale : float, default=1.0
        Standard deviation of the N(0, prior_scale^2) prior on every coefficient and on the
        intercept.
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
    noise_scale : float or None, default=None
        Standard deviation of the Gaussian noise. None samples it too, as the extra
        parameter ``log(noise_scale)`` with the weakly informative prior
        ``log(noise_scale) ~ N(0, 3^2)`` (95% prior mass on roughly [0.003, 360], so it
        suits targets on a scale from about 1e-2 to 1e2; rescale ``y`` otherwise).

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
    acceptance_rate_ : ndarray of shape (n_chains,)
        Fraction of accepted proposals after warm-up.
    step_size_ : float
        Step size used after warm-up.
    rhat_ : ndarray of shape (n_params,)
        Rank-normalised split R-hat (Vehtari et al. 2021; ``max`` of bulk and tail, as
        ``arviz.rhat``) of each parameter: the coefficients, then the intercept (if fitted),
        then the noise scale (if sampled).
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
    The posterior is ``N(theta | 0, prior_scale^2 I) prod_n p(y_n | x_n, theta)^{w_n}``:
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
        prior_scale=1.0,
        fit_intercept=True,
        noise_scale=None,
        n_samples=1000,
        n_warmup=500,
        n_chains=4,
        step_size="auto",
        preconditioner="laplace",
        random_state=None,
        progress=False,
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
        )
        self.noise_scale = noise_scale

    def _noise_scale_param(self):
        return None if self.noise_scale is None else float(self.noise_scale)

    def predict(self, X):
        """Posterior predictive mean ``x . coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to predict.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Posterior mean responses.
        """
        X = self._check_X(X)
        return X @ self.coef_ + self.intercept_
