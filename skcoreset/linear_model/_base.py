"""The base of the Bayesian regressions: fit by MALA, the posterior draws, predictive densities.

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
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .._logging import phase, report
from .._sklearn_compat import Interval, StrOptions, _check_sample_weight, _fit_context
from .._threads import one_blas_thread
from .._warnings import warn
from ..models import GLM, get_model
from ..models._checks import CHECK_ROWS
from ..models._general import row_blocks
from ..models._laplace import laplace_or_start, typical_starts
from ..models._prior import Moments, checked_prior_scale, is_auto, prior_from_moments
from ..models._targets import check_no_none
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
        "prior_scale": [
            Interval(numbers.Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
            "array-like",
        ],
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
    def _fixed_extra(self):
        """The extra parameter a parameter of the estimator fixes (None: sampled)."""
        return None

    def _model_spec(self):
        """The model's name (or a user's model object)."""
        return self.__skcoreset_model__

    def _model(self, extra=None):
        """The model object, from the parameters (``extra``: its extra parameter fixed)."""
        spec = self._model_spec()
        prior_scale = 1.0 if is_auto(self.prior_scale) else self.prior_scale
        if isinstance(spec, GLM):
            model = replace(
                spec,
                prior_scale=spec.prior_scale if is_auto(self.prior_scale) else prior_scale,
                fit_intercept=self.fit_intercept,
                extra=spec.extra if extra is None else extra,
            )
        else:
            model = get_model(
                spec,
                prior_scale=prior_scale,
                fit_intercept=self.fit_intercept,
                extra=extra,
            )
        # a fitted estimator's model: the data's scale (the Student-t scale's prior centre)
        scale = getattr(self, "_data_scale", None)
        return model if scale is None else model.with_data_scale(*scale)

    def _numeric_targets(self):
        """Whether ``fit`` converts object targets to numbers (not for class labels)."""
        return not isinstance(self, ClassifierMixin)

    def _encode_targets(self, y):
        """Targets in the model's coding (the classifier also sets ``classes_``)."""
        return self._model(self._fixed_extra()).encode_targets(y)

    # -- fit ---------------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Sample the posterior of the coefficients (and of the extra parameter if it is free).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Features. A ``scipy.sparse`` X is densified whole, as the sampler's kernels read
            dense rows: meant for a coreset's few rows (predictions densify a block of rows
            at a time).
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
        return self._fit(X, y, sample_weight)

    def _fit_with_prior(self, X, y, sample_weight, data_prior, start=None):
        """``fit`` on a coreset's rows, its full-data prior
        (:class:`~skcoreset.models.DataPrior`) taking the place of the 'auto' prior, which
        would read the coreset's rows (the compositions call it): the posterior is then the
        coreset's, the one the exports to probabilistic programming languages write.
        ``start``: the full data's mode (the coreset's ``laplace_.mean``), one more start of
        the Laplace fit the chains start from, whose highest mode is kept."""
        return self._fit(X, y, sample_weight, data_prior, start)

    # One BLAS thread: OpenBLAS's threads spin after its calls, and the diagnostics' threads
    # then waited for the cores (measured: benchmarks/README.md, Thresholds)
    @_fit_context(prefer_skip_nested_validation=True)
    @one_blas_thread()
    def _fit(self, X, y, sample_weight=None, data_prior=None, start=None):
        if y is not None:  # a missing target, before validation reads it as NaN
            check_no_none(np.asarray(y, dtype=object))
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=np.float64,
            y_numeric=self._numeric_targets(),
        )
        X = _dense(X)  # the kernels read dense rows (see fit's docstring)
        targets, y = y, self._encode_targets(y)
        model = self._model(self._fixed_extra())
        w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        rng = check_random_state(self.random_state)
        # Zero-weight rows do not enter the posterior: drop them so they cost nothing.
        keep = w > 0
        rows = np.flatnonzero(keep)
        if not np.all(keep):
            X, y, w = X[keep], y[keep], w[keep]
            try:
                model.encode_targets(targets[keep])  # the caller's labels, not codes
            except ValueError as exc:
                raise ValueError(f"Among the rows with positive sample_weight: {exc}") from None
        sample_extra = model.has_extra and model.extra is None
        if (sample_extra or model.learns_scale) and X.shape[0] < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 samples with non-zero weight to learn "
                f"its {model.extra_name}; got {X.shape[0]} sample."
            )
        self._set_prior(model, X, y, w, data_prior)
        model = replace(model.with_data_scale(*self._data_scale), prior_scale=self.prior_scale_)
        Xd = model.design(X)
        # a user's model: its derivatives checked on a few rows (check_gradient)
        model.check_functions(Xd[:CHECK_ROWS], y[:CHECK_ROWS])
        n_params = model.n_params(Xd.shape[1]) + model.n_extra
        starts = () if start is None or np.shape(start) != (n_params,) else (start,)
        with phase(self, f"Laplace fit ({X.shape[0]} rows, {Xd.shape[1]} parameters)"):
            lap = laplace_or_start(model, Xd, y, w, starts)
        # the fit of all the posterior's parameters, a free extra parameter's log last:
        # where the chains start, and their preconditioner
        mean, cov, chol = lap.mean, lap.cov, lap.chol
        if self.preconditioner == "laplace":
            precond = chol
        elif self.preconditioner == "diag":
            precond = np.diag(np.sqrt(np.diag(cov)))
        else:
            precond = None
        # Each chain starts at a draw of the Laplace approximation: dispersed at the scale of
        # the posterior, so that R-hat can detect chains that do not mix; a draw where the
        # posterior is far lower than the fit expects (or -inf: a user's constraint) moves
        # toward the mode (typical_starts)
        init = mean + rng.standard_normal((self.n_chains, mean.shape[0])) @ chol.T
        init = typical_starts(lap, Xd, y, w, init)
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
                sample_extra=sample_extra,
                extra_prior=self._extra_prior,
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
        self._set_draws(result, X.shape[1], model, sample_extra)
        self._keep_training_rows(X, y, w, rows)
        self._warn_convergence()
        return self

    def _set_prior(self, model, X, y, w, data_prior=None):
        """``prior_scale_`` (one per parameter) and the prior of a sampled extra parameter.

        With ``prior_scale='auto'`` both follow the scale of the data: the coefficients get
        :func:`~skcoreset.models.default_prior_scale`, and the log of the extra parameter the
        model's prior (the Gaussian's ``log(noise_scale)`` centred on ``log sd(y)``, so targets
        in the thousands need no rescaling). A coreset's ``data_prior`` (its full data's, for this
        model) takes the place of the one the rows would give.
        """
        n_columns = X.shape[1] + int(model.fit_intercept)
        n_params = n_columns if model.auto_prior else model.n_params(n_columns)
        moments = Moments.of(X, y, w)  # weighted as duplicated rows would be
        _, _, y_mean, y_sd = moments.mean_and_sd()
        if is_auto(self.prior_scale) and data_prior and data_prior.matches(model, n_columns):
            self.prior_scale_ = data_prior.prior_scale(n_params)
            y_mean, y_sd = data_prior.y_mean, data_prior.y_sd
        elif is_auto(self.prior_scale):
            self.prior_scale_ = prior_from_moments(model, moments)
        else:
            scale = checked_prior_scale(self.prior_scale, n_columns, model.n_params(n_columns))
            self.prior_scale_ = scale if scale.ndim else np.full(n_params, float(scale))
            y_sd = None
        self._extra_prior = model.extra_prior_at(y_mean, y_sd)
        self._data_scale = (y_mean, y_sd)

    def _set_draws(self, result, n_coef, model, sample_extra):
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
        if model.has_extra:
            name = model.extra_name
            fixed = model.extra_value
            samples = np.exp(draws[:, :, -1]) if sample_extra else np.full(draws.shape[:2], fixed)
            setattr(self, f"{name}_samples_", samples)
            setattr(self, f"{name}_", float(samples.mean()) if sample_extra else fixed)
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

    def _row_blocks(self, n_rows, per_draw=1):
        """Slices of rows whose (rows, draws, per_draw) arrays stay near ``_BLOCK_ELEMENTS``."""
        J = self.coef_samples_.shape[0] * self.coef_samples_.shape[1]
        return row_blocks(n_rows, J * per_draw, _BLOCK_ELEMENTS)

    def _row_log_predictive(self, X, y):
        """Each row's log posterior predictive density ``log mean_j p(y_n | x_n, theta_j)``."""
        out = np.empty(X.shape[0])
        if self._by_draws():
            for sl in self._row_blocks(X.shape[0]):
                ll = self._draw_logliks(_dense(X[sl]), y[sl])
                out[sl] = scipy.special.logsumexp(ll, axis=0) - np.log(ll.shape[0])
            return out
        model = self._model()
        coef, intercept, extra = self._pooled_draws()
        for sl, eta in self._eta_blocks(X, coef, intercept):
            ll = model.log_density(y[sl, None], eta, extra)
            out[sl] = scipy.special.logsumexp(ll, axis=1) - np.log(coef.shape[0])
        return out

    def _pooled_draws(self):
        """Coefficients (J, D), intercepts (J,) and extra parameters (J,) over all chains."""
        J = self.coef_samples_.shape[0] * self.coef_samples_.shape[1]
        coef = self.coef_samples_.reshape(J, -1)
        intercept = self.intercept_samples_.reshape(J)
        extra = getattr(self, f"{self._model().extra_name}_samples_", None)
        return coef, intercept, (None if extra is None else extra.reshape(J))

    def _check_X(self, X):
        """X checked against the fit; sparse X stays sparse (CSR), for the row blocks that
        densify it."""
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=np.float64, accept_sparse="csr")

    def _eta_blocks(self, X, coef, intercept):
        """Yield (row slice, linear predictors of shape (rows, J)) in bounded-memory blocks."""
        for sl in row_blocks(X.shape[0], coef.shape[0], _BLOCK_ELEMENTS):
            yield sl, _dense(X[sl]) @ coef.T + intercept

    def _response_moments(self, X):
        """Posterior mean and variance over the draws of E[y | x, theta] (the model's mean
        response), each of shape (n_rows,)."""
        model = self._model()
        if self._by_draws():
            thetas = self._pooled_thetas()
            mean, var = np.empty(X.shape[0]), np.empty(X.shape[0])
            for sl in self._row_blocks(X.shape[0]):
                m = model.mean_draws(thetas, model.design(_dense(X[sl])))
                mean[sl], var[sl] = m.mean(axis=0), m.var(axis=0)
            return mean, var
        coef, intercept, _ = self._pooled_draws()
        mean, var = np.empty(X.shape[0]), np.empty(X.shape[0])
        for sl, eta in self._eta_blocks(X, coef, intercept):
            m = model.mean(eta)
            with np.errstate(over="ignore"):  # means past 1e154: an infinite spread
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
            # all rows at once (one stream of random numbers), as large as the replicates
            return self._decode(model.simulate_draws(thetas[idx], model.design(_dense(X)), rng))
        coef, intercept, extra = self._pooled_draws()
        J = coef.shape[0]
        idx = rng.choice(J, size=n_draws, replace=n_draws > J)
        eta = coef[idx] @ X.T + intercept[idx, None]  # sparse X: a sparse product
        draws = self._model().simulate(eta, rng, None if extra is None else extra[idx, None])
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
        X, y, w = _dense(X[rows]), y[rows], w[rows]  # the fit's rows, dense as fit's
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

        N(0, prior_scale_^2) on each coefficient and the intercept; a sampled extra parameter
        adds the normal prior of its log (the sampled parameter).
        """
        if self._by_draws():
            thetas = self._pooled_thetas()
            prec = replace(self._model(), prior_scale=self.prior_scale_).prior_precision(
                thetas.shape[1]
            )
            return -0.5 * (thetas * thetas) @ prec + 0.5 * np.sum(np.log(prec) - _LOG_2PI)
        coef, intercept, extra = self._pooled_draws()
        s = self.prior_scale_
        theta = coef if not self.fit_intercept else np.column_stack([coef, intercept])
        lp = -0.5 * np.sum((theta / s) ** 2, axis=1) - np.sum(np.log(s)) - s.size * 0.5 * _LOG_2PI
        if self._samples_extra():
            mu, sd = self._extra_prior
            z = (np.log(extra) - mu) / sd
            lp = lp - 0.5 * z**2 - np.log(sd) - 0.5 * _LOG_2PI
        return lp

    def _posterior_extras(self):
        """The posterior draws of the extra parameters, by name (:meth:`to_inference_data`)."""
        extra = self._model().extra_name
        samples = getattr(self, f"{extra}_samples_", None)
        return {} if samples is None else {extra: samples}

    def _samples_extra(self):
        """Whether the extra parameter is a parameter of the posterior."""
        return self._model().has_extra and self._fixed_extra() is None

    def _pointwise_log_likelihood(self, X, y, w):
        """``w_n log p(y_n | x_n, theta_j)`` for every pooled draw j: shape (J, n_rows)."""
        if self._by_draws():
            return w * self._draw_logliks(X, y)
        model = self._model()
        coef, intercept, extra = self._pooled_draws()
        out = np.empty((coef.shape[0], X.shape[0]))
        for sl, eta in self._eta_blocks(X, coef, intercept):
            out[:, sl] = (w[sl, None] * model.log_density(y[sl, None], eta, extra)).T
        return out

    def _simulate_draws(self, X, rng):
        """One replicate of the rows of X per pooled draw, in the model's coding: (J, n_rows)."""
        model = self._model()
        if self._by_draws():
            return model.simulate_draws(self._pooled_thetas(), model.design(X), rng)
        coef, intercept, extra = self._pooled_draws()
        out = np.empty((coef.shape[0], X.shape[0]))
        for sl, eta in self._eta_blocks(X, coef, intercept):
            out[:, sl] = model.simulate(eta, rng, extra).T
        return out

    def to_inference_data(self, X=None, y=None, sample_weight=None, *, random_state=None):
        """Export the fit as an ArviZ ``InferenceData``.

        It holds the posterior, the sampler statistics, the pointwise log-likelihood, the
        observed data and posterior predictive draws.

        Groups (``n_obs`` is the number of fitted rows with positive weight):

        * ``posterior``: ``coef`` (chain, draw, feature), ``intercept`` (if
          ``fit_intercept``), the extra parameter under its name (``noise_scale`` for linear
          regression, ``alpha``, ``shape``);
        * ``sample_stats``: ``lp``, the log posterior density of each draw (normalised prior
          plus weighted log-likelihood; with a sampled extra parameter, the density of its
          log, the sampled parameter); ``acceptance_rate`` and
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
        tags.input_tags.sparse = True
        return tags


def _dense(X):
    """``X`` as a dense array: the rows of one block (or a fit's rows) when X is sparse."""
    return X.toarray() if issparse(X) else X
