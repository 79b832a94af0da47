"""Bayesian generalised linear models sampled by preconditioned MALA.

The posterior is ``N(theta | 0, diag(prior_scale^2)) * prod_n p(y_n | x_n, theta)^{w_n}``:
sample weights are exponents of the likelihood terms, so a weighted coreset ``(X_m, y_m, w_m)``
gives the coreset posterior exactly, and integer weights give the same posterior as duplicated
rows. The default prior follows the scale of the data
(:func:`~skcoreset.models.default_prior_scale`), as the coresets' does, so a coreset and the
model it feeds target the same posterior.
"""

import numbers
from dataclasses import replace

import numpy as np
import scipy.special
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import d2_tweedie_score
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._logging import phase, report
from .._sklearn_compat import Interval, StrOptions, _check_sample_weight, _fit_context
from .._warnings import warn
from ..models import GLM, MODEL_NAMES, ClassLabels, get_model, laplace_approximation
from ..models._prior import Moments, prior_from_moments
from ..sampler import diagnostics, sample_mala

# Convergence thresholds behind the ConvergenceWarning (Vehtari et al. 2021 recommend
# R-hat < 1.01 and a bulk ESS of at least 100 for reliable posterior summaries).
RHAT_THRESHOLD = 1.01
ESS_THRESHOLD = 100

# Predictions evaluate an (rows x draws) block of linear predictors at a time; this bounds it
# to ~8 MB whatever the number of rows.
_BLOCK_ELEMENTS = 1 << 20

#: A fit keeps its rows (for :meth:`to_inference_data`) when it has at most this many rows
#: with positive weight: every coreset, and small data sets; larger fits are not copied.
MAX_STORED_ROWS = 10_000

_LOG_2PI = np.log(2.0 * np.pi)


class _BaseBayesianGLM(BaseEstimator):
    """Shared fit / predictive machinery of the Bayesian GLMs (not public).

    A subclass only names its model, ``__skcoreset_model__``; everything specific to the
    likelihood (target coding, mean response, log density, simulation) is the model's.
    """

    __skcoreset_model__ = None

    _parameter_constraints: dict = {
        "prior_scale": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "fit_intercept": ["boolean"],
        "n_samples": [Interval(numbers.Integral, 4, None, closed="left")],
        "n_warmup": [Interval(numbers.Integral, 0, None, closed="left")],
        "n_chains": [Interval(numbers.Integral, 1, None, closed="left")],
        "step_size": [StrOptions({"auto"}), Interval(numbers.Real, 0, None, closed="neither")],
        "preconditioner": [StrOptions({"laplace", "diag"}), None],
        "random_state": ["random_state"],
        "progress": ["boolean"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
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
        self.prior_scale = prior_scale
        self.fit_intercept = fit_intercept
        self.n_samples = n_samples
        self.n_warmup = n_warmup
        self.n_chains = n_chains
        self.step_size = step_size
        self.preconditioner = preconditioner
        self.random_state = random_state
        self.progress = progress
        self.verbose = verbose

    # -- hooks -------------------------------------------------------------------------
    def _noise_scale_param(self):
        return None

    def _model_spec(self):
        """The model's name (or a user's model object)."""
        return self.__skcoreset_model__

    def _model(self, noise_scale=None):
        """The model object, from the parameters."""
        spec = self._model_spec()
        prior_scale = 1.0 if self.prior_scale == "auto" else self.prior_scale
        if isinstance(spec, GLM):
            model = replace(
                spec,
                prior_scale=spec.prior_scale if self.prior_scale == "auto" else prior_scale,
                fit_intercept=self.fit_intercept,
                noise_scale=spec.noise_scale if noise_scale is None else noise_scale,
            )
        else:
            model = get_model(
                spec,
                prior_scale=prior_scale,
                fit_intercept=self.fit_intercept,
                noise_scale=noise_scale,
            )
        # a fitted estimator's model: the data's scale (the Student-t scale's prior centre)
        scale = getattr(self, "_data_scale", None)
        return model if scale is None else model.with_data_scale(*scale)

    def _encode_targets(self, y):
        """Targets in the model's coding (the classifier also sets ``classes_``)."""
        return self._model(self._noise_scale_param()).encode_targets(y)

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
        X, y = validate_data(
            self, X, y, dtype=np.float64, y_numeric=not isinstance(self, ClassifierMixin)
        )
        y = self._encode_targets(y)
        model = self._model(self._noise_scale_param())
        w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        rng = check_random_state(self.random_state)
        # Zero-weight rows do not enter the posterior: drop them so they cost nothing.
        keep = w > 0
        rows = np.flatnonzero(keep)
        if not np.all(keep):
            X, y, w = X[keep], y[keep], w[keep]
            try:
                model.encode_targets(y)
            except ValueError as exc:
                raise ValueError(f"Among the rows with positive sample_weight: {exc}") from None
        sample_noise = model.has_noise and model.noise_scale is None
        if (sample_noise or model.learns_scale) and X.shape[0] < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 samples with non-zero weight to learn "
                f"its {model.extra_name}; got {X.shape[0]} sample."
            )
        self._set_prior(model, X, y, w)
        model = replace(model.with_data_scale(*self._data_scale), prior_scale=self.prior_scale_)
        Xd = model.design(X)
        with phase(self, f"Laplace fit ({X.shape[0]} rows, {Xd.shape[1]} parameters)"):
            lap = laplace_approximation(model, Xd, y, w, design=True)
        mean, cov, chol = lap.mean, lap.cov, lap.chol
        if sample_noise:
            # the chains start and are preconditioned at the model's information on the log
            # extra parameter at the mode, plus its prior's precision
            info = lap.model.log_extra_information(Xd @ lap.mean, y, w)
            precision = (info if np.isfinite(info) and info > 0 else 0.0) + 1.0 / (
                self._noise_log_prior[1] ** 2
            )
            mean, cov, chol = lap.with_log_extra(np.sqrt(1.0 / precision))

        if self.preconditioner == "laplace":
            precond = chol
        elif self.preconditioner == "diag":
            precond = np.diag(np.sqrt(np.diag(cov)))
        else:
            precond = None
        # Each chain starts at a draw of the Laplace approximation: dispersed at the scale of
        # the posterior, so that R-hat can detect chains that do not mix.
        init = mean + rng.standard_normal((self.n_chains, mean.shape[0])) @ chol.T
        if lap.model.family is None:
            # a model of draws may be -inf in places (a user's constraint): the chains whose
            # draw falls there start at the mode instead
            ll, _ = lap.model.weighted_loglik_chains(init, Xd, y, w)
            init[~np.isfinite(ll)] = mean
        # sample_mala runs the warm-up and the kept steps in one call: one phase here.
        mala = (
            f"MALA: {self.n_chains} chains x ({self.n_warmup} warm-up + {self.n_samples} kept "
            "steps)"
        )
        with phase(self, mala):
            result = sample_mala(
                lap.model,
                Xd,
                y,
                w,
                init,
                prior_scale=self.prior_scale_,
                sample_extra=sample_noise,
                extra_log_prior=self._noise_log_prior,
                precond_chol=precond,
                n_samples=self.n_samples,
                n_warmup=self.n_warmup,
                step_size=self.step_size,
                random_state=rng,
                progress=self.progress,
            )
        report(
            self,
            "step size %.3g (%s); acceptance rate of the kept steps per chain: %s",
            result.step_size,
            "adapted during warm-up" if self.step_size == "auto" else "fixed",
            np.array2string(result.acceptance_rate, precision=3),
        )
        self._set_draws(result, X.shape[1], model, sample_noise)
        self._keep_training_rows(X, y, w, rows)
        self._warn_convergence()
        return self

    def _set_prior(self, model, X, y, w):
        """``prior_scale_`` (one per parameter) and the prior of a sampled extra parameter.

        With ``prior_scale='auto'`` both follow the scale of the data: the coefficients get
        :func:`~skcoreset.models.default_prior_scale`, and the log of the extra parameter the
        model's prior (``log(noise_scale)`` centred on ``log sd(y)``, so targets in the
        thousands need no rescaling).
        """
        n_params = X.shape[1] + int(model.fit_intercept)
        if not model.auto_prior:  # parameters not one per design column (a user's model)
            n_params = model.n_params(n_params)
        moments = Moments.of(X, y, w)  # weighted as duplicated rows would be
        _, _, y_mean, y_sd = moments.mean_and_sd()
        if self.prior_scale == "auto":
            self.prior_scale_ = prior_from_moments(model, moments)
        else:
            self.prior_scale_ = np.full(n_params, float(self.prior_scale))
            y_sd = None
        self._noise_log_prior = model.extra_log_prior(y_mean, y_sd)
        self._data_scale = (y_mean, y_sd)

    def _set_draws(self, result, n_coef, model, sample_noise):
        """The fitted attributes from the sampler's draws."""
        draws = result.draws
        self.rhat_, self.ess_ = diagnostics(draws)
        self._theta_samples = draws
        if model.family is None:  # a model of draws: its parameters as they are
            self.coef_samples_ = draws
            self.intercept_samples_ = np.zeros(draws.shape[:2])
            self.coef_ = draws.mean(axis=(0, 1))
            self.intercept_ = 0.0
            self.acceptance_rate_ = result.acceptance_rate
            self.step_size_ = result.step_size
            return
        self.coef_samples_ = np.ascontiguousarray(draws[:, :, :n_coef])
        if self.fit_intercept:
            self.intercept_samples_ = np.ascontiguousarray(draws[:, :, n_coef])
        else:
            self.intercept_samples_ = np.zeros(draws.shape[:2])
        if model.has_noise:
            name = model.extra_name
            samples = (
                np.exp(draws[:, :, -1]) if sample_noise else np.full(draws.shape[:2], model.noise)
            )
            setattr(self, f"{name}_samples_", samples)
            setattr(self, f"{name}_", float(samples.mean()) if sample_noise else model.noise)
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
        report(self, "max R-hat %.4g, min bulk ESS %.4g", max_rhat, min_ess)
        if problems:
            warn(
                f"{type(self).__name__}: the MCMC chains may not have converged "
                f"({'; '.join(problems)}). Increase n_samples and/or n_warmup.",
                ConvergenceWarning,
            )

    # -- posterior draws ---------------------------------------------------------------
    def _by_draws(self):
        """Whether the model has no single linear predictor (``GeneralModel``): its
        predictive densities come from its log-likelihoods of the pooled draws."""
        return self._model().family is None

    def _pooled_thetas(self):
        """The model's parameter vectors of the pooled draws, (J, P)."""
        return self._theta_samples.reshape(-1, self._theta_samples.shape[-1])

    def _draw_logliks(self, X, y):
        """``log p(y_n | x_n, theta_j)``, (J, n), by the model's ``loglik_draws``."""
        model = self._model()
        return model.loglik_draws(self._pooled_thetas(), model.design(X), y)

    def _row_blocks(self, n_rows):
        """Slices of rows whose (rows, draws) arrays stay near ``_BLOCK_ELEMENTS``."""
        J = self.coef_samples_.shape[0] * self.coef_samples_.shape[1]
        rows = max(1, _BLOCK_ELEMENTS // max(J, 1))
        return [slice(s, min(s + rows, n_rows)) for s in range(0, n_rows, rows)]

    def _row_log_predictive(self, X, y):
        """Each row's log posterior predictive density ``log mean_j p(y_n | x_n, theta_j)``."""
        out = np.empty(X.shape[0])
        if self._by_draws():
            for sl in self._row_blocks(X.shape[0]):
                ll = self._draw_logliks(X[sl], y[sl])
                out[sl] = scipy.special.logsumexp(ll, axis=0) - np.log(ll.shape[0])
            return out
        model = self._model()
        coef, intercept, noise = self._pooled_draws()
        for sl, eta in self._eta_blocks(X, coef, intercept):
            ll = model.log_density(y[sl, None], eta, noise_scale=noise)
            out[sl] = scipy.special.logsumexp(ll, axis=1) - np.log(coef.shape[0])
        return out

    def _pooled_draws(self):
        """Coefficients (J, D), intercepts (J,) and extra parameters (J,) over all chains."""
        J = self.coef_samples_.shape[0] * self.coef_samples_.shape[1]
        coef = self.coef_samples_.reshape(J, -1)
        intercept = self.intercept_samples_.reshape(J)
        noise = getattr(self, f"{self._model().extra_name}_samples_", None)
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

    def _response_moments(self, X):
        """Posterior mean and variance over the draws of E[y | x, theta] (the model's mean
        response), each of shape (n_rows,)."""
        model = self._model()
        if self._by_draws():
            thetas = self._pooled_thetas()
            mean, var = np.empty(X.shape[0]), np.empty(X.shape[0])
            for sl in self._row_blocks(X.shape[0]):
                m = model.mean_draws(thetas, model.design(X[sl]))
                mean[sl], var[sl] = m.mean(axis=0), m.var(axis=0)
            return mean, var
        coef, intercept, _ = self._pooled_draws()
        mean, var = np.empty(X.shape[0]), np.empty(X.shape[0])
        for sl, eta in self._eta_blocks(X, coef, intercept):
            m = model.mean(eta)
            mean[sl], var[sl] = m.mean(axis=1), m.var(axis=1)
        return mean, var

    def _targets_for_density(self, y, n_rows):
        """The targets of held-out rows, checked against X and coded as at fit time."""
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != n_rows:
            raise ValueError(
                f"y must be 1-D with {n_rows} entries (one per row of X); got shape {y.shape}."
            )
        return self._code_fitted(y)

    def _code_fitted(self, y):
        """``y`` in the fitted model's coding."""
        return self._model().encode_targets(y)

    def log_predictive_density(self, X, y):
        """Mean log posterior predictive density of the rows of ``(X, y)``.

        ``mean_n log( (1/J) sum_j p(y_n | x_n, theta_j) )`` over the J pooled posterior draws,
        computed with ``scipy.special.logsumexp`` (the "test log-likelihood" of the coreset
        papers; for the classifier, the negative log loss of :meth:`predict_proba`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to score.
        y : array-like of shape (n_samples,)
            Their targets.

        Returns
        -------
        lpd : float
            The mean over rows of the log posterior predictive density.
        """
        X = self._check_X(X)
        y = self._targets_for_density(y, X.shape[0])
        return float(np.mean(self._row_log_predictive(X, y)))

    def sample_posterior_predictive(self, X, n_draws=100, random_state=None):
        """Draw from the posterior predictive distribution at the rows of ``X``.

        Each of the ``n_draws`` replicates uses one posterior draw (chosen at random from the
        pooled chains, without replacement when ``n_draws`` does not exceed their number) and
        simulates every row from the likelihood at that parameter.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            The rows at which to draw.
        n_draws : int, default=100
            Number of replicates.
        random_state : int, RandomState instance or None, default=None
            Seeds the choice of posterior draws and the simulated targets.

        Returns
        -------
        y_draws : ndarray of shape (n_draws, n_rows)
            Class labels for the classifier, counts for Poisson, reals for linear regression.
        """
        X = self._check_X(X)
        if not isinstance(n_draws, numbers.Integral) or n_draws < 1:
            raise ValueError(f"n_draws must be a positive integer, got {n_draws!r}.")
        rng = check_random_state(random_state)
        if self._by_draws():
            thetas = self._pooled_thetas()
            idx = rng.choice(thetas.shape[0], size=n_draws, replace=n_draws > thetas.shape[0])
            model = self._model()
            return self._decode(model.simulate_draws(thetas[idx], model.design(X), rng))
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

    def _keep_training_rows(self, X, y, w, rows):
        """Keep the fitted rows for :meth:`to_inference_data` (small fits only) and, always,
        what identifies them (their number and total weight)."""
        self._training_summary = (X.shape[0], float(w.sum()))
        if X.shape[0] <= MAX_STORED_ROWS:
            # copies: the caller may change its arrays after fit
            self._training_rows = (X.copy(), y.copy(), w.copy(), rows)
        else:
            self._training_rows = None

    def _training_data(self, X, y, sample_weight):
        """``(X, coded y, w, row ids)`` of the fitted rows: kept at fit, or given again."""
        if X is None and y is None and sample_weight is None:
            if self._training_rows is None:
                n_rows = self._training_summary[0]
                raise ValueError(
                    f"This fit had {n_rows} rows with positive weight, more than the "
                    f"{MAX_STORED_ROWS} an estimator keeps; pass the training data again: "
                    "to_inference_data(X, y, sample_weight)."
                )
            return self._training_rows
        if X is None or y is None:
            raise ValueError("Pass both X and y (the training data), or neither.")
        X = self._check_X(X)
        y = self._targets_for_density(y, X.shape[0])
        w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        rows = np.flatnonzero(w > 0)
        X, y, w = X[rows], y[rows], w[rows]
        n_rows, w_sum = self._training_summary
        if X.shape[0] != n_rows or not np.isclose(w.sum(), w_sum, rtol=1e-9, atol=0.0):
            raise ValueError(
                f"X, y and sample_weight are not the data this estimator was fitted on: the "
                f"fit had {n_rows} rows with positive weight (total weight {w_sum:.6g}); "
                f"these have {X.shape[0]} (total weight {w.sum():.6g})."
            )
        return X, y, w, rows

    def _log_prior(self):
        """Log prior density of each pooled draw, normalised: shape (n_chains * n_samples,).

        N(0, prior_scale_^2) on each coefficient and the intercept; a sampled noise scale
        adds the normal prior of ``log(noise_scale)`` (the sampled parameter).
        """
        if self._by_draws():
            thetas = self._pooled_thetas()
            prec = replace(self._model(), prior_scale=self.prior_scale_).prior_precision(
                thetas.shape[1]
            )
            return -0.5 * (thetas * thetas) @ prec + 0.5 * np.sum(np.log(prec) - _LOG_2PI)
        coef, intercept, noise = self._pooled_draws()
        s = self.prior_scale_
        theta = coef if not self.fit_intercept else np.column_stack([coef, intercept])
        lp = -0.5 * np.sum((theta / s) ** 2, axis=1) - np.sum(np.log(s)) - s.size * 0.5 * _LOG_2PI
        if self._samples_noise():
            mu, sd = self._noise_log_prior
            z = (np.log(noise) - mu) / sd
            lp = lp - 0.5 * z**2 - np.log(sd) - 0.5 * _LOG_2PI
        return lp

    def _posterior_extras(self):
        """The posterior draws of the extra parameters, by name (:meth:`to_inference_data`)."""
        extra = self._model().extra_name
        samples = getattr(self, f"{extra}_samples_", None)
        return {} if samples is None else {extra: samples}

    def _samples_noise(self):
        return self._model().has_noise and self._noise_scale_param() is None

    def _pointwise_log_likelihood(self, X, y, w):
        """``w_n log p(y_n | x_n, theta_j)`` for every pooled draw j: shape (J, n_rows)."""
        if self._by_draws():
            return w * self._draw_logliks(X, y)
        model = self._model()
        coef, intercept, noise = self._pooled_draws()
        out = np.empty((coef.shape[0], X.shape[0]))
        for sl, eta in self._eta_blocks(X, coef, intercept):
            out[:, sl] = (w[sl, None] * model.log_density(y[sl, None], eta, noise_scale=noise)).T
        return out

    def _simulate_draws(self, X, rng):
        """One replicate of the rows of X per pooled draw, in the model's coding: (J, n_rows)."""
        model = self._model()
        if self._by_draws():
            return model.simulate_draws(self._pooled_thetas(), model.design(X), rng)
        coef, intercept, noise = self._pooled_draws()
        out = np.empty((coef.shape[0], X.shape[0]))
        for sl, eta in self._eta_blocks(X, coef, intercept):
            out[:, sl] = model.simulate(eta, rng, noise_scale=noise).T
        return out

    def to_inference_data(self, X=None, y=None, sample_weight=None, *, random_state=None):
        """Export the fit as an ArviZ ``InferenceData``.

        It holds the posterior, the sampler statistics, the pointwise log-likelihood, the
        observed data and posterior predictive draws.

        Groups (``n_obs`` is the number of fitted rows with positive weight):

        * ``posterior``: ``coef`` (chain, draw, feature), ``intercept`` (if
          ``fit_intercept``), ``noise_scale`` (linear regression);
        * ``sample_stats``: ``lp``, the log posterior density of each draw (normalised prior
          plus weighted log-likelihood; with a sampled noise scale, the density of
          ``log(noise_scale)``, the sampled parameter); ``acceptance_rate`` and
          ``step_size``, per chain and repeated over its draws (the sampler reports the
          acceptance rate of each chain's kept steps, not of each step);
        * ``log_likelihood``: ``y`` (chain, draw, obs_id), the weighted terms
          ``w_n log p(y_n | x_n, theta)`` of the log posterior, so ``arviz.loo`` and
          ``arviz.waic`` work;
        * ``observed_data``: ``y`` (obs_id), in the model's coding (0/1 for the classifier,
          1 meaning ``classes_[1]``);
        * ``constant_data``: ``X`` (obs_id, feature) and ``sample_weight`` (obs_id);
        * ``posterior_predictive``: ``y`` (chain, draw, obs_id), one replicate of the
          observed rows per draw, in the same coding.

        ``feature`` holds the feature names (``feature_names_in_``, else ``x0, x1, ...``);
        ``obs_id`` the positions of the rows in the ``X`` given to ``fit``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            The training data, needed only when the fit had more than ``MAX_STORED_ROWS``
            (10 000) rows with positive weight: smaller fits (every coreset) keep their
            rows. They must be the rows ``fit`` got (checked by their number and total
            weight): the log posterior in ``lp`` is theirs.
        y : array-like of shape (n_samples,), default=None
            The training targets, with ``X``.
        sample_weight : array-like of shape (n_samples,), default=None
            The training weights, with ``X``.
        random_state : int, RandomState instance or None, default=None
            Seeds the posterior predictive replicates.

        Returns
        -------
        arviz.InferenceData
            The groups listed above.

        Raises
        ------
        ImportError
            If arviz is not installed.
        ValueError
            If the rows are needed and not given, or are not the training rows.

        Notes
        -----
        **On a coreset fit** the observations are the M coreset rows and each pointwise
        value is the *weighted* term ``w_n l_n``: ``arviz.loo`` and ``arviz.waic`` then
        describe the weighted coreset (a pseudo-data set of M points with large weights),
        not the full data. Their sum estimates the full data's in expectation, but leaving
        out one heavily weighted coreset point removes many data points' worth of
        likelihood, so expect large Pareto k values; for predictive accuracy on the full
        data use :meth:`log_predictive_density` on held-out rows.

        **Memory**: ``log_likelihood`` and ``posterior_predictive`` hold
        ``n_chains * n_samples * n_obs`` floats each (4 chains x 1000 draws x 1000 rows:
        32 MB each).
        """
        check_is_fitted(self)
        try:
            import arviz
        except ImportError as exc:
            raise ImportError(
                "to_inference_data needs arviz; install it with `pip install arviz`."
            ) from exc
        X, y, w, rows = self._training_data(X, y, sample_weight)
        rng = check_random_state(random_state)
        C, S = self.coef_samples_.shape[:2]
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            names = [f"x{k}" for k in range(self.n_features_in_)]
        posterior = {"coef": self.coef_samples_}
        if self.fit_intercept:
            posterior["intercept"] = self.intercept_samples_
        posterior.update(self._posterior_extras())
        pointwise = self._pointwise_log_likelihood(X, y, w)
        lp = self._log_prior() + pointwise.sum(axis=1)
        sample_stats = {
            "lp": lp.reshape(C, S),
            "acceptance_rate": np.repeat(np.asarray(self.acceptance_rate_)[:, None], S, axis=1),
            "step_size": np.full((C, S), float(self.step_size_)),
        }
        obs = ["obs_id"]
        coords = {"feature": list(names), "obs_id": rows}
        dims = {"coef": ["feature"], "y": obs, "X": obs + ["feature"], "sample_weight": obs}
        if self.coef_samples_.ndim == 4:  # one row of coefficients per class
            coords["class"] = list(self.classes_)
            dims["coef"], dims["intercept"] = ["class", "feature"], ["class"]
        return arviz.from_dict(
            posterior=posterior,
            sample_stats=sample_stats,
            log_likelihood={"y": pointwise.reshape(C, S, -1)},
            observed_data={"y": y},
            constant_data={"X": X, "sample_weight": w},
            posterior_predictive={"y": self._simulate_draws(X, rng).reshape(C, S, -1)},
            coords=coords,
            dims=dims,
            attrs={"estimator": type(self).__name__},
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags


class BayesianLogisticRegression(ClassifierMixin, _BaseBayesianGLM):
    """Bayesian logistic regression, binary or multinomial, sampled by preconditioned MALA.

    Two classes: the logistic model. More: the multinomial (softmax) model, with the first
    class of ``classes_`` the reference whose coefficients are 0 (the parameters are
    identified; the predictions do not depend on the choice), as
    :class:`~sklearn.linear_model.LogisticRegression` handles any number of classes.

    Parameters
    ----------
    prior_scale : float or 'auto', default='auto'
        Standard deviation of the Gaussian prior on the coefficients and the intercept. A
        number is used for all of them. 'auto' follows the scale of the data, one standard
        deviation per parameter (2.5 / sd(x_k) on the logit and log scales, 2.5 sd(y) / sd(x_k)
        for the linear model; see :func:`~skcoreset.models.default_prior_scale`), the rule
        the coresets use by default.
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

    def _model(self, noise_scale=None):
        return super()._model(noise_scale).with_classes(self.classes_)

    def _encode_targets(self, y):
        check_classification_targets(y)
        labels = ClassLabels.fit(y)
        self.classes_ = labels.classes
        return labels.encode(y)

    def _decode(self, draws):
        return ClassLabels(self.classes_).decode(draws)

    def _set_draws(self, result, n_coef, model, sample_noise):
        super()._set_draws(result, n_coef, model, sample_noise)
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
        rows = max(1, _BLOCK_ELEMENTS // (J * len(self.classes_)))
        for start in range(0, X.shape[0], rows):
            sl = slice(start, min(start + rows, X.shape[0]))
            logp = model.log_proba_draws(thetas, model.design(X[sl]))  # (J, n, K)
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
    prior_scale : float or 'auto', default='auto'
        Standard deviation of the Gaussian prior on the coefficients and the intercept. A
        number is used for all of them. 'auto' follows the scale of the data, one standard
        deviation per parameter (2.5 / sd(x_k) on the logit and log scales, 2.5 sd(y) / sd(x_k)
        for the linear model; see :func:`~skcoreset.models.default_prior_scale`), the rule
        the coresets use by default.
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
    prior_scale : float or 'auto', default='auto'
        Standard deviation of the Gaussian prior on the coefficients and the intercept. A
        number is used for all of them. 'auto' follows the scale of the data, one standard
        deviation per parameter (2.5 / sd(x_k) on the logit and log scales, 2.5 sd(y) / sd(x_k)
        for the linear model; see :func:`~skcoreset.models.default_prior_scale`), the rule
        the coresets use by default.
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
    prior_scale : float or 'auto', default='auto'
        Standard deviation of the Gaussian prior on the coefficients and the intercept. A
        number is used for all of them. 'auto' follows the scale of the data, one standard
        deviation per parameter (2.5 / sd(x_k) on the logit and log scales, 2.5 sd(y) / sd(x_k)
        for the linear model; see :func:`~skcoreset.models.default_prior_scale`), the rule
        the coresets use by default.
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


class BayesianLinearRegression(RegressorMixin, _BaseBayesianGLM):
    """Bayesian Gaussian-linear regression sampled by preconditioned MALA.

    ``y_n ~ N(x_n . coef + intercept, noise_scale^2)``.

    Parameters
    ----------
    prior_scale : float or 'auto', default='auto'
        Standard deviation of the Gaussian prior on the coefficients and the intercept. A
        number is used for all of them. 'auto' follows the scale of the data, one standard
        deviation per parameter (2.5 / sd(x_k) on the logit and log scales, 2.5 sd(y) / sd(x_k)
        for the linear model; see :func:`~skcoreset.models.default_prior_scale`), the rule
        the coresets use by default.
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

    def _noise_scale_param(self):
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
    prior_scale : float or 'auto', default='auto'
        Standard deviation of the Gaussian prior on the coefficients and the intercept. A
        number is used for all of them; 'auto' follows the scale of the data, 2.5 sd(y) /
        sd(x_k) as for :class:`BayesianLinearRegression`. The scale has the prior
        ``log scale ~ N(log sd(y), 3^2)`` (N(0, 3^2) with a numeric ``prior_scale``), the
        degrees of freedom ``log df ~ N(2.725, 0.803^2)``, the log-normal matching brms's
        default ``df ~ gamma(2, 0.1)`` (median 15).
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

    def _set_draws(self, result, n_coef, model, sample_noise):
        super()._set_draws(result, n_coef, model, sample_noise)
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


class BayesianGLM(RegressorMixin, _BaseBayesianGLM):
    """Bayesian regression with any single-index likelihood, sampled by preconditioned MALA.

    The estimator for a likelihood that has no class of its own: a user's model (a
    :class:`~skcoreset.models.GLM` subclass with its
    :class:`~skcoreset.models.SingleIndexFamily`, see the design note "Models") or any
    registered model by name. It fits the model's coefficients (and its extra parameter, if it
    has one and it is not fixed) exactly as the named Bayesian regressions do.

    Parameters
    ----------
    model : str or GLM, default='gaussian'
        The likelihood: a registered name (``skcoreset.models.MODEL_NAMES``) or a model
        object, whose ``prior_scale`` and ``fit_intercept`` are replaced by this estimator's
        (its ``noise_scale``, when set, fixes the extra parameter).
    prior_scale : float or 'auto', default='auto'
        Standard deviation of the Gaussian prior on the coefficients and the intercept; 'auto'
        follows the scale of the data (:func:`~skcoreset.models.default_prior_scale`, with
        the model's ``prior_level``).
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
        "model": [StrOptions(set(MODEL_NAMES)), GLM],
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

    def predict(self, X):
        """Posterior mean of the model's mean response ``mean(x @ coef + intercept)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to predict.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Posterior mean responses.
        """
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
