"""End-to-end posterior fidelity of the default pipelines, as a user would check them.

For every registered model on the shared data sets that suit it (and synthetic wide or
heavy-tailed data), with the features standardised (``StandardScaler``) before everything,
and for each seed ``s``:

* the **reference**: the library's Bayesian estimator for the model fitted on all rows with
  its defaults (``random_state=1000 + s``; for the multinomial model
  ``BayesianLogisticRegression``, which fits more than two classes by it);
* the **pipelines**: ``make_pipeline(OMPCoreset(model=m, random_state=s),
  Estimator(random_state=s))`` and the same with ``QuasiNewtonCoreset``, otherwise at their
  defaults (``n_points='auto'``).

Per parameter (the coefficients, the intercept(s) and every extra parameter on the log scale:
NB ``alpha``, gamma ``shape``, Gaussian ``noise_scale``, Student-t ``scale`` and ``df``):
``z = (pipeline mean - reference mean) / reference sd`` and the ratio of the sds. Reported:
mean and max |z| over the parameters, max |z| of the extra parameters alone, the smallest and
largest sd ratio, the largest R-hat of both fits, the warnings the pipeline's fit raised, the
coreset's size, ``laplace_kl_`` and ``hilbert_error_`` when the coreset step has them, and the
seconds of both fits. The Monte Carlo floor of a case compares two reference fits (seeds 1000
and 1001) the same way.

**The independent KL** is computed here, not by the package's Laplace code: a joint Laplace
fit (MAP by damped Newton; covariance the inverse Hessian at the mode) over all parameters,
the log of each extra parameter included, of the full data's posterior and of the coreset's
weighted posterior (its rows and ``sample_weight_``). The log-likelihoods are scipy's:
``scipy.special.log_expit`` (Bernoulli, logit link), ``scipy.stats.poisson``, ``nbinom`` (n =
1/alpha, p = 1/(1 + alpha mu)), ``gamma`` (shape k, scale mu/k), ``norm`` and ``t``; their
derivatives in the linear predictor and the log extra parameters by central finite
differences of those functions, row by row. The multinomial (softmax) likelihood is written
here with ``scipy.special.log_softmax`` and its exact derivatives (not the package's model).
The prior is the one the coreset hands to the pipeline's estimator and to its exports: the
export spec of the fitted coreset step (``coreset._export_spec``, from ``coreset._data_prior``
of ``skcoreset/export/_spec.py``): a normal prior with sd ``coef_sd`` and ``intercept_sd`` on the
coefficients and intercept(s), and the normal prior ``(log_mean, log_sd)`` of each extra
parameter's log. Reported: KL(coreset || full), the direction of the package's ``laplace_kl_``,
and KL(full || coreset). (Checked once on the ``--quick`` subsets of seven cases, one per
model: the modes agree with ``skcoreset.models.laplace_approximation``'s to 2e-5 sd, and the
KL(coreset || full) of an OMP coreset with ``skcoreset.metrics.coreset_laplace_kl``'s reverse
KL to 3 digits where both are above 1e-8.)

Goal check per case and algorithm: "goal met" when every seed has mean |z| <= 0.1, max |z| <=
0.5 and every sd ratio in [0.85, 1.15]; else "warned" when every failing seed's pipeline fit
raised a ``CoresetQualityWarning`` ("warned (sampler)" when some raised only the sampler's
``ConvergenceWarning``: its draws, not the coreset, may be off, as the MC floor then shows);
else "SILENT FAILURE" ("ERROR" when a fit raised and no seed failed silently). And whether
``laplace_kl_`` is within 3x of the independent KL(coreset || full), or both below 0.05 nats.

Usage (from the repository root; 12 to 25 minutes on 2 cores; ``--quick``, at most
10 000 rows a set (the wide sets 2 x 10^4) and 2 seeds, 3-4 minutes)::

    python -m benchmarks.bench_fidelity --out benchmarks/results/bench_fidelity.json
    python -m benchmarks.bench_fidelity --quick --cases phishing nmes1988
    python -m benchmarks.bench_fidelity --table-from benchmarks/results/bench_fidelity.json
"""

import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys
import time
import traceback
import warnings
from collections import Counter

import numpy as np
import scipy
import scipy.linalg
import scipy.special
import scipy.stats
import sklearn
from sklearn.preprocessing import StandardScaler

import skcoreset
from skcoreset import (
    BayesianGammaRegression,
    BayesianLinearRegression,
    BayesianLogisticRegression,
    BayesianNegativeBinomialRegression,
    BayesianPoissonRegression,
    BayesianStudentTRegression,
    OMPCoreset,
    QuasiNewtonCoreset,
)
from skcoreset.datasets import make_logistic_regression
from skcoreset.models import MODEL_NAMES
from skcoreset.pipeline import make_pipeline

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: model -> the library's Bayesian estimator fitted on all rows and after the coreset
ESTIMATORS = {
    "logistic": BayesianLogisticRegression,
    "poisson": BayesianPoissonRegression,
    "gaussian": BayesianLinearRegression,
    "negative_binomial": BayesianNegativeBinomialRegression,
    "gamma": BayesianGammaRegression,
    "multinomial": BayesianLogisticRegression,  # more than two classes: the softmax model
    "student_t": BayesianStudentTRegression,
}
#: model -> its extra parameters, as the estimators name their draws (``<name>_samples_``)
EXTRAS = {
    "negative_binomial": ("alpha",),
    "gamma": ("shape",),
    "gaussian": ("noise_scale",),
    "student_t": ("scale", "df"),
}
ALGORITHMS = {"OMP": OMPCoreset, "QNC": QuasiNewtonCoreset}

#: the goals on every seed
MEAN_Z, MAX_Z, SD_RATIO = 0.1, 0.5, (0.85, 1.15)
#: laplace_kl_ agrees with the independent KL within this factor, or both are below FLOOR_KL
KL_FACTOR, FLOOR_KL = 3.0, 0.05
QUICK_ROWS = 10_000

SHORT = {
    "CoresetQualityWarning": "Qual",
    "ConvergenceWarning": "Conv",
    "CoresetCoverageWarning": "Cover",
    "CoresetSizeWarning": "Size",
    "OverdispersionWarning": "Overd",
    "SeparationWarning": "Sep",
    "RuntimeWarning": "RT",
    "UserWarning": "User",
}


# -- data ----------------------------------------------------------------------------------
def _shared(file, transform=None):
    def load(data_dir, quick):
        data = np.load(pathlib.Path(data_dir) / file, allow_pickle=False)
        X = np.asarray(data["X"], dtype=np.float64)
        y = np.asarray(data["y"], dtype=np.float64)
        names = [str(n) for n in data["feature_names"]]
        return X, (y if transform is None else transform(y)), names

    return load


def _wide_logistic(D):
    def load(data_dir, quick):
        n = 20_000 if quick else 100_000
        X, y = make_logistic_regression(n, D, random_state=D)  # coef N(0, 1/D), intercept 0
        return X, y.astype(np.float64), [f"x{j}" for j in range(D)]

    load.sized_for_quick = True  # --quick: its own 2 x 10^4 rows, not a subsample
    return load


def _synthetic_nb(data_dir, quick):
    """37 000 rows, 11 standard normal features (the second with sd 1.6), log mean 0.3 + 1.5
    x_2 + small effects of the rest, dispersion 0.4: counts with variance/mean in the
    thousands."""
    rng = np.random.default_rng(37_000)
    n, D = 37_000, 11
    X = rng.standard_normal((n, D))
    X[:, 1] *= 1.6
    beta = rng.normal(0.0, 0.1, D)
    beta[1] = 1.5
    mu = np.exp(0.3 + X @ beta)
    alpha = 0.4
    y = rng.negative_binomial(1.0 / alpha, 1.0 / (1.0 + alpha * mu)).astype(np.float64)
    return X, y, [f"x{j}" for j in range(D)]


def _synthetic_t(data_dir, quick):
    """50 000 rows, 10 standard normal features, coefficients N(0, 1), intercept 1, noise
    t with 3 degrees of freedom."""
    rng = np.random.default_rng(50_000)
    n, D = 50_000, 10
    X = rng.standard_normal((n, D))
    y = 1.0 + X @ rng.standard_normal(D) + rng.standard_t(3.0, n)
    return X, y, [f"x{j}" for j in range(D)]


#: case -> (model, loader(data_dir, quick) -> (X, y, feature names), what)
CASES = {
    "phishing": ("logistic", _shared("phishing_campbell_pca10.npz"), "phishing_campbell_pca10"),
    "adult": ("logistic", _shared("adult_a9a.npz"), "adult_a9a (123 one-hot features)"),
    "credit_default": ("logistic", _shared("credit_default_tw.npz"), "credit_default_tw"),
    "wide_logistic_100": ("logistic", _wide_logistic(100), "synthetic, D = 100"),
    "wide_logistic_200": ("logistic", _wide_logistic(200), "synthetic, D = 200"),
    "wide_logistic_300": ("logistic", _wide_logistic(300), "synthetic, D = 300"),
    "biketrips": ("poisson", _shared("biketrips_campbell.npz"), "biketrips_campbell"),
    "airportdelays": ("poisson", _shared("airportdelays_campbell.npz"), "airportdelays_campbell"),
    "nmes1988": ("negative_binomial", _shared("nmes1988_visits.npz"), "nmes1988_visits"),
    "nb_heavy": ("negative_binomial", _synthetic_nb, "synthetic NB, alpha 0.4, heavy tail"),
    "census2000": ("gamma", _shared("census2000_weekinc.npz"), "census2000_weekinc"),
    "kc_house": ("gaussian", _shared("kc_house.npz", np.log), "kc_house, log price"),
    "california": ("gaussian", _shared("california_housing.npz", np.log), "california, log"),
    "kc_house_t": ("student_t", _shared("kc_house.npz", np.log), "kc_house, log price"),
    "t_heavy": ("student_t", _synthetic_t, "synthetic, t noise with 3 df"),
    "mplsstops": ("multinomial", _shared("mplsstops_race.npz"), "mplsstops_race, 7 classes"),
}


def load_case(name, data_dir, quick):
    """The standardised features, the targets, the feature names and the rows' count before
    ``--quick``'s subsample."""
    model, loader, _ = CASES[name]
    X, y, names = loader(data_dir, quick)
    n_all = X.shape[0]
    if quick and n_all > QUICK_ROWS and not getattr(loader, "sized_for_quick", False):
        rows = np.sort(np.random.default_rng(0).choice(n_all, QUICK_ROWS, replace=False))
        X, y = X[rows], y[rows]
    X = StandardScaler().fit_transform(X)
    return np.ascontiguousarray(X), y, names, n_all


def coded_targets(model, y):
    """``y`` in the models' coding: class codes 0..K-1 (sorted labels) for the multinomial."""
    if model == "multinomial":
        return np.unique(y, return_inverse=True)[1].astype(np.float64)
    return y


# -- the posterior draws and their comparison -----------------------------------------------
def param_names(model, feature_names, n_classes=None):
    base = list(feature_names) + ["intercept"]
    if model == "multinomial":
        return [f"c{k}:{n}" for k in range(1, n_classes) for n in base]
    return base + [f"log {e}" for e in EXTRAS.get(model, ())]


def posterior_draws(est, model):
    """The pooled draws (J, P): the coefficients and intercept (per non-reference class for
    the multinomial model, its layout), then the log of each extra parameter."""
    if model == "multinomial":
        coef = est.coef_samples_[:, :, 1:, :]  # class 0, the reference, is 0
        icpt = est.intercept_samples_[:, :, 1:, None]
        block = np.concatenate([coef, icpt], axis=-1)
        return block.reshape(block.shape[0] * block.shape[1], -1)
    C, S = est.coef_samples_.shape[:2]
    cols = [est.coef_samples_.reshape(C * S, -1), est.intercept_samples_.reshape(C * S, 1)]
    for e in EXTRAS.get(model, ()):
        cols.append(np.log(getattr(est, f"{e}_samples_").reshape(C * S, 1)))
    return np.hstack(cols)


def compare(draws, ref, n_extra, names):
    """|z| of the posterior means and ratios of the sds, against ``ref``'s draws."""
    m, s = draws.mean(axis=0), draws.std(axis=0, ddof=1)
    m0, s0 = ref.mean(axis=0), ref.std(axis=0, ddof=1)
    z = np.abs(m - m0) / s0
    ratio = s / s0
    extra = z[-n_extra:] if n_extra else np.array([np.nan])
    worst = int(np.argmax(z))
    return {
        "mean_abs_z": float(z.mean()),
        "max_abs_z": float(z.max()),
        "worst_param": names[worst] if len(names) == z.size else str(worst),
        "extra_max_abs_z": float(np.max(extra)),
        "sd_ratio_min": float(ratio.min()),
        "sd_ratio_max": float(ratio.max()),
        "worst_sd_param": names[int(np.argmax(np.abs(np.log(ratio))))]
        if len(names) == z.size
        else "",
    }


def max_rhat(est):
    r = np.asarray(getattr(est, "rhat_", [np.nan]), dtype=np.float64)
    return float(np.nanmax(r)) if np.any(np.isfinite(r)) else float("nan")


# -- the independent Laplace fit ------------------------------------------------------------
class Posterior:
    """The log posterior of a model on weighted rows, written from scipy, with the gradient
    and Hessian of its parameters ``(beta_1, ..., beta_m, log extras)``; ``beta_j`` holds the
    coefficients of the design's columns, the intercept last (m = K - 1 predictors for the
    multinomial model, 1 otherwise)."""

    H_GRAD, H_HESS = 1e-4, 1e-3  # finite-difference steps in eta and the log extras

    def __init__(self, model, X, y, w, prior_sd, extra_priors, n_classes=None):
        self.model = model
        self.Xd = np.column_stack([X, np.ones(X.shape[0])])
        self.y, self.w = y, w
        self.Q = self.Xd.shape[1]
        self.m = n_classes - 1 if model == "multinomial" else 1
        self.k = len(extra_priors)
        self.prior_sd = np.asarray(prior_sd, dtype=np.float64)  # (m Q,)
        self.extra_mean = np.array([e[0] for e in extra_priors], dtype=np.float64)
        self.extra_sd = np.array([e[1] for e in extra_priors], dtype=np.float64)
        self.P = self.m * self.Q + self.k
        if model == "multinomial":
            self.onehot = np.eye(n_classes)[y.astype(np.intp)][:, 1:]

    # per row: log p(y | eta, log extras)
    def row_loglik(self, eta, ext):
        y, model = self.y, self.model
        if model == "logistic":
            return y * scipy.special.log_expit(eta) + (1 - y) * scipy.special.log_expit(-eta)
        if model == "poisson":
            return scipy.stats.poisson.logpmf(y, np.exp(eta))
        if model == "negative_binomial":
            alpha = np.exp(ext[0])
            return scipy.stats.nbinom.logpmf(y, 1.0 / alpha, 1.0 / (1.0 + alpha * np.exp(eta)))
        if model == "gamma":
            k = np.exp(ext[0])
            return scipy.stats.gamma.logpdf(y, k, scale=np.exp(eta) / k)
        if model == "gaussian":
            return scipy.stats.norm.logpdf(y, loc=eta, scale=np.exp(ext[0]))
        if model == "student_t":
            return scipy.stats.t.logpdf(y, np.exp(ext[1]), loc=eta, scale=np.exp(ext[0]))
        raise ValueError(model)

    def _row_terms(self, theta, derivs):
        """Per row: the log-likelihood, and with ``derivs`` its gradient (n, d) and Hessian
        (n, d, d) in the row's inputs ``u = (eta_1..eta_m, log extras)``."""
        B = theta[: self.m * self.Q].reshape(self.m, self.Q)
        ext = theta[self.m * self.Q :]
        E = self.Xd @ B.T  # (n, m)
        if self.model == "multinomial":
            full = np.column_stack([np.zeros(E.shape[0]), E])
            logp = scipy.special.log_softmax(full, axis=1)
            f = np.take_along_axis(logp, self.y.astype(np.intp)[:, None], axis=1)[:, 0]
            if not derivs:
                return f, None, None
            p = np.exp(logp[:, 1:])
            g = self.onehot - p
            H = p[:, :, None] * p[:, None, :]
            H[:, np.arange(self.m), np.arange(self.m)] -= p
            return f, g, H
        eta = E[:, 0]
        f = self.row_loglik(eta, ext)
        if not derivs:
            return f, None, None
        d = 1 + self.k

        def at(delta):  # the row log-likelihood at u + delta (delta: (d,))
            return self.row_loglik(eta + delta[0], ext + delta[1:])

        unit = np.eye(d)
        g = np.empty((eta.shape[0], d))
        H = np.empty((eta.shape[0], d, d))
        hg, hh = self.H_GRAD, self.H_HESS
        for i in range(d):
            g[:, i] = (at(hg * unit[i]) - at(-hg * unit[i])) / (2 * hg)
            H[:, i, i] = (at(hh * unit[i]) - 2 * f + at(-hh * unit[i])) / hh**2
            for j in range(i):
                e = hh * (unit[i] + unit[j])
                o = hh * (unit[i] - unit[j])
                H[:, i, j] = H[:, j, i] = (at(e) - at(o) - at(-o) + at(-e)) / (4 * hh**2)
        return f, g, H

    def value(self, theta):
        f, _, _ = self._row_terms(theta, False)
        return float(self.w @ f) + self._log_prior(theta)[0]

    def _log_prior(self, theta):
        beta, ext = theta[: self.m * self.Q], theta[self.m * self.Q :]
        zb = beta / self.prior_sd
        ze = (ext - self.extra_mean) / self.extra_sd
        value = -0.5 * (zb @ zb + ze @ ze)
        grad = np.concatenate([-zb / self.prior_sd, -ze / self.extra_sd])
        return value, grad, np.concatenate([self.prior_sd**-2, self.extra_sd**-2])

    def derivatives(self, theta):
        """Log posterior, its gradient and its negative Hessian (the precision)."""
        f, g, H = self._row_terms(theta, True)
        w, Xd, m, Q = self.w, self.Xd, self.m, self.Q
        grad = np.empty(self.P)
        prec = np.zeros((self.P, self.P))
        for i in range(m):
            grad[i * Q : (i + 1) * Q] = Xd.T @ (w * g[:, i])
            for j in range(i + 1):
                block = -(Xd * (w * H[:, i, j])[:, None]).T @ Xd
                prec[i * Q : (i + 1) * Q, j * Q : (j + 1) * Q] = block
                prec[j * Q : (j + 1) * Q, i * Q : (i + 1) * Q] = block.T
            for e in range(self.k):
                col = -(Xd.T @ (w * H[:, i, m + e]))
                prec[i * Q : (i + 1) * Q, m * Q + e] = col
                prec[m * Q + e, i * Q : (i + 1) * Q] = col
        for e in range(self.k):
            grad[m * Q + e] = w @ g[:, m + e]
            for e2 in range(self.k):
                prec[m * Q + e, m * Q + e2] = -(w @ H[:, m + e, m + e2])
        lp, lp_grad, lp_prec = self._log_prior(theta)
        prec[np.diag_indices(self.P)] += lp_prec
        return float(w @ f) + lp, grad + lp_grad, prec

    def initial(self):
        """Zero coefficients, the intercept(s) at the weighted constant fit, and each log
        extra parameter at its prior mean."""
        theta = np.zeros(self.P)
        y, w = self.y, self.w
        ybar = float(w @ y / w.sum())
        if self.model == "multinomial":
            counts = self.w @ np.column_stack([1 - self.onehot.sum(axis=1), self.onehot]) + 0.5
            for k in range(self.m):
                theta[k * self.Q + self.Q - 1] = np.log(counts[k + 1] / counts[0])
        elif self.model == "logistic":
            theta[self.Q - 1] = scipy.special.logit(np.clip(ybar, 1e-3, 1 - 1e-3))
        elif self.model in ("poisson", "negative_binomial", "gamma"):
            theta[self.Q - 1] = np.log(max(ybar, 1e-3))
        else:
            theta[self.Q - 1] = ybar
        theta[self.m * self.Q :] = self.extra_mean
        return theta


def laplace_fit(post, max_iter=300):
    """The mode (damped Newton on the log posterior, with a backtracking line search) and the
    inverse Hessian there: ``(mean, cov, info)``."""
    theta = post.initial()
    lp, grad, prec = post.derivatives(theta)
    lam = 0.0
    converged = False
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007
        scale = np.maximum(np.abs(np.diag(prec)), 1e-12)
        while True:
            try:
                L = np.linalg.cholesky(prec + lam * np.diag(scale))
                break
            except np.linalg.LinAlgError:
                lam = max(10 * lam, 1e-6)
        step = scipy.linalg.cho_solve((L, True), grad)
        decrement = float(grad @ step)  # the predicted rise of the log posterior, x 2
        if lam == 0.0 and decrement < 1e-10:
            converged = True
            break
        t, accepted = 1.0, False
        for _ in range(30):
            new = theta + t * step
            value = post.value(new)
            if np.isfinite(value) and value >= lp + 1e-4 * t * decrement:
                accepted = True
                break
            t *= 0.5
        if not accepted:
            if decrement < 1e-8:  # at the mode to rounding
                converged = lam == 0.0
                break
            lam = max(10 * lam, 1e-6)
            continue
        theta = new
        lp, grad, prec = post.derivatives(theta)
        lam = 0.0 if t == 1.0 else lam
    cov = np.linalg.inv(prec)
    np.linalg.cholesky(cov)  # a proper Laplace fit, or LinAlgError
    info = {"iterations": it, "converged": converged, "log_post": lp}
    return theta, 0.5 * (cov + cov.T), info


def gaussian_kl(m0, S0, m1, S1):
    """KL(N(m0, S0) || N(m1, S1))."""
    L0, L1 = np.linalg.cholesky(S0), np.linalg.cholesky(S1)
    A = scipy.linalg.solve_triangular(L1, L0, lower=True)
    d = scipy.linalg.solve_triangular(L1, m1 - m0, lower=True)
    logdet = 2.0 * (np.sum(np.log(np.diag(L1))) - np.sum(np.log(np.diag(L0))))
    # at most rounding below 0 where the fits coincide (an exact coreset)
    return max(float(0.5 * (np.sum(A * A) + d @ d - m0.shape[0] + logdet)), 0.0)


def prior_of(spec, model):
    """The coreset posterior's prior from the export spec: one sd per parameter of the
    ``beta`` blocks, and ``(log_mean, log_sd)`` of each free extra parameter."""
    if spec.fixed:
        raise ValueError(f"fixed extra parameters {spec.fixed}: not benchmarked")
    coef_sd = np.atleast_2d(spec.coef_sd)
    icpt = np.atleast_1d(np.asarray(spec.intercept_sd, dtype=np.float64))
    sd = np.column_stack([coef_sd, icpt[:, None]]).ravel()
    names = tuple(e.name for e in spec.extras)
    if names != EXTRAS.get(model, ()):
        raise ValueError(f"extra parameters {names}, expected {EXTRAS.get(model, ())}")
    return sd, [(e.log_mean, e.log_sd) for e in spec.extras]


def independent_kl(coreset, model, X, y_coded, full_cache, n_classes):
    """KL(coreset || full) and KL(full || coreset) of the independent Laplace fits."""
    spec = coreset._export_spec(X, y_coded, "bench_fidelity")
    idx = np.asarray(coreset.sample_indices_)
    if not np.array_equal(spec.y, y_coded[idx]):
        raise ValueError("the export spec's targets are not the coreset rows' coded targets")
    prior_sd, extras = prior_of(spec, model)
    key = (prior_sd.tobytes(), tuple(extras))
    if key not in full_cache:
        t = time.perf_counter()
        post = Posterior(model, X, y_coded, np.ones(X.shape[0]), prior_sd, extras, n_classes)
        full_cache[key] = laplace_fit(post)
        full_cache[key][2]["seconds"] = time.perf_counter() - t
    m1, S1, info1 = full_cache[key]
    post = Posterior(model, spec.X, spec.y, spec.weight, prior_sd, extras, n_classes)
    m0, S0, info0 = laplace_fit(post)
    return {
        "kl_coreset_full": gaussian_kl(m0, S0, m1, S1),
        "kl_full_coreset": gaussian_kl(m1, S1, m0, S0),
        "laplace_full": info1,
        "laplace_coreset": info0,
        "prior_sd": prior_sd.tolist(),
        "extra_priors": extras,
    }


# -- the runs -------------------------------------------------------------------------------
def fit_recorded(make, X, y):
    """Fit ``make()`` with every warning recorded: ``(estimator, seconds, warnings)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = time.perf_counter()
        est = make().fit(X, y)
        seconds = time.perf_counter() - t
    return est, seconds, caught


def warning_summary(caught):
    names = sorted({w.category.__name__ for w in caught})
    messages = sorted({f"{w.category.__name__}: {str(w.message)[:300]}" for w in caught})
    return names, messages


def warm_up(model, X, y):
    """One small fit of each kind, so that the timed fits do not pay numba's compilation of
    the model's kernels (sources another engineer edits are compiled again)."""
    n = min(3000, X.shape[0])
    rows = np.random.default_rng(1).choice(X.shape[0], n, replace=False)
    Xs, ys = X[rows], y[rows]
    est = ESTIMATORS[model]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for make in (
            lambda: est(n_samples=20, n_warmup=20, random_state=0),
            *(
                lambda a=a: make_pipeline(
                    a(model=model, random_state=0), est(n_samples=20, n_warmup=20, random_state=0)
                )
                for a in ALGORITHMS.values()
            ),
        ):
            try:
                make().fit(Xs, ys)
            except Exception:  # noqa: BLE001, S110 - the timed fits will record it
                pass


def run_case(name, args, seeds):
    model, _, what = CASES[name]
    X, y, feature_names, n_all = load_case(name, args.data_dir, args.quick)
    y_coded = coded_targets(model, y)
    n_classes = int(np.unique(y_coded).size) if model == "multinomial" else None
    names = param_names(model, feature_names, n_classes)
    n_extra = len(EXTRAS.get(model, ()))
    est_cls = ESTIMATORS[model]
    info = {
        "case": name,
        "model": model,
        "data": what,
        "N": int(X.shape[0]),
        "N_before_quick": int(n_all),
        "D": int(X.shape[1]),
        "P": len(names),
        "estimator": est_cls.__name__,
    }
    print(f"{name} ({model}, {what}): N = {X.shape[0]}, P = {len(names)}", flush=True)
    t = t_case = time.perf_counter()
    warm_up(model, X, y)
    info["warm_up_seconds"] = time.perf_counter() - t
    refs, records, ref_draws = [], [], {}
    full_cache = {}
    for s in seeds:
        ref_rec = {"case": name, "seed": s, "random_state": 1000 + s}
        try:
            ref, sec, caught = fit_recorded(lambda s=s: est_cls(random_state=1000 + s), X, y)
            ref_draws[s] = posterior_draws(ref, model)
            ref_rec.update(
                seconds=sec,
                rhat_max=max_rhat(ref),
                prior_scale=np.asarray(ref.prior_scale_).tolist(),
            )
            ref_rec["warnings"], ref_rec["warning_messages"] = warning_summary(caught)
        except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
            ref_rec["error"] = f"{type(exc).__name__}: {exc}"
            ref_rec["traceback"] = traceback.format_exc(limit=8)
            ref = None
        refs.append(ref_rec)
        print(
            f"  seed {s} reference: "
            + (
                f"{ref_rec['seconds']:.1f} s, R-hat {ref_rec['rhat_max']:.3f} "
                f"{' '.join(ref_rec['warnings'])}"
                if ref is not None
                else ref_rec["error"]
            ),
            flush=True,
        )
        for algo, coreset_cls in ALGORITHMS.items():
            rec = {"case": name, "model": model, "algorithm": algo, "seed": s}
            try:
                pipe, sec, caught = fit_recorded(
                    lambda s=s, c=coreset_cls: make_pipeline(
                        c(model=model, random_state=s), est_cls(random_state=s)
                    ),
                    X,
                    y,
                )
                coreset, final = pipe.steps[0][1], pipe.steps[-1][1]
                rec["warnings"], rec["warning_messages"] = warning_summary(caught)
                rec.update(
                    seconds=sec,
                    n_points=int(coreset.n_points_),
                    rhat_max=max_rhat(final),
                    laplace_kl=float(getattr(coreset, "laplace_kl_", np.nan)),
                    start_laplace_kl=float(getattr(coreset, "start_laplace_kl_", np.nan)),
                    hilbert_error=float(getattr(coreset, "hilbert_error_", np.nan)),
                )
                if ref is not None:
                    rec.update(compare(posterior_draws(final, model), ref_draws[s], n_extra, names))
                    rec["reference_rhat_max"] = ref_rec["rhat_max"]
                    rec["reference_seconds"] = ref_rec["seconds"]
                    rec["prior_matches_reference"] = bool(
                        np.allclose(final.prior_scale_, ref.prior_scale_, rtol=1e-6)
                    )
                else:
                    rec["error"] = "no reference: " + ref_rec["error"]
            except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
                rec["error"] = f"{type(exc).__name__}: {exc}"
                rec["traceback"] = traceback.format_exc(limit=8)
                coreset = None
            if coreset is not None:
                try:
                    t = time.perf_counter()
                    kl = independent_kl(coreset, model, X, y_coded, full_cache, n_classes)
                    rec["independent_kl_seconds"] = time.perf_counter() - t
                    rec.update(kl)
                except Exception as exc:  # noqa: BLE001
                    rec["independent_kl_error"] = f"{type(exc).__name__}: {exc}"
                    rec["kl_coreset_full"] = rec["kl_full_coreset"] = float("nan")
            records.append(rec)
            print("    " + record_line(rec), flush=True)
    floor = None
    if len(ref_draws) >= 2:
        a, b = sorted(ref_draws)[:2]
        floor = compare(ref_draws[b], ref_draws[a], n_extra, names)
        floor["seeds"] = [1000 + a, 1000 + b]
    elif ref_draws:  # one seed asked: a second reference fit for the floor
        a = next(iter(ref_draws))
        try:
            ref2, _, _ = fit_recorded(lambda: est_cls(random_state=1000 + a + 1), X, y)
            floor = compare(posterior_draws(ref2, model), ref_draws[a], n_extra, names)
            floor["seeds"] = [1000 + a, 1000 + a + 1]
        except Exception as exc:  # noqa: BLE001
            floor = {"error": f"{type(exc).__name__}: {exc}"}
    if floor and "error" not in floor:
        print(
            f"  MC floor: mean |z| {floor['mean_abs_z']:.3f}, max |z| {floor['max_abs_z']:.3f}, "
            f"sd ratio {floor['sd_ratio_min']:.3f}-{floor['sd_ratio_max']:.3f}",
            flush=True,
        )
    info["full_laplace"] = [v[2] for v in full_cache.values()]
    info["seconds"] = time.perf_counter() - t_case
    return info, refs, records, floor


def record_line(rec):
    head = f"{rec['algorithm']} seed {rec['seed']}: "
    if "mean_abs_z" not in rec:
        return head + rec.get("error", "?")
    return head + (
        f"M {rec['n_points']}, mean |z| {rec['mean_abs_z']:.3f}, max |z| {rec['max_abs_z']:.3f} "
        f"({rec['worst_param']}), sd ratio {rec['sd_ratio_min']:.3f}-{rec['sd_ratio_max']:.3f}, "
        f"laplace_kl_ {rec['laplace_kl']:.3g}, KL {rec.get('kl_coreset_full', np.nan):.3g} / "
        f"{rec.get('kl_full_coreset', np.nan):.3g}, R-hat {rec['rhat_max']:.3f}, "
        f"{rec['seconds']:.1f} s {' '.join(rec['warnings'])}"
    )


# -- the verdicts and the table ---------------------------------------------------------------
def seed_status(rec):
    if "mean_abs_z" not in rec:
        return "error"
    ok = (
        rec["mean_abs_z"] <= MEAN_Z
        and rec["max_abs_z"] <= MAX_Z
        and SD_RATIO[0] <= rec["sd_ratio_min"]
        and rec["sd_ratio_max"] <= SD_RATIO[1]
    )
    if ok:
        return "ok"
    # a fit that says its result may be off is not silent: the coreset's figure above its
    # target, or the sampler's draws not converged (R-hat, ESS), which the MC floor shows
    # when the reference misses the goals too
    if "CoresetQualityWarning" in rec["warnings"]:
        return "warned"
    return "warned (sampler)" if "ConvergenceWarning" in rec["warnings"] else "silent"


def verdict(recs):
    status = [seed_status(r) for r in recs]
    if all(s == "ok" for s in status):
        return "goal met"
    if "silent" in status:
        return "SILENT FAILURE"
    if "error" in status:
        return "ERROR"
    return "warned" if "warned" in status else "warned (sampler)"


def kl_agreement(recs):
    """Seeds whose laplace_kl_ is within KL_FACTOR of the independent KL(coreset || full), or
    both below FLOOR_KL; (agreeing, comparable, worst ratio)."""
    agree, n, worst = 0, 0, 1.0
    for r in recs:
        a, b = r.get("laplace_kl", np.nan), r.get("kl_coreset_full", np.nan)
        if not (np.isfinite(a) and np.isfinite(b)):
            continue
        n += 1
        ratio = max(a, 1e-300) / max(b, 1e-300)
        if (a < FLOOR_KL and b < FLOOR_KL) or 1 / KL_FACTOR <= ratio <= KL_FACTOR:
            agree += 1
        elif abs(np.log(ratio)) > abs(np.log(worst)):
            worst = ratio
    return agree, n, worst


def _g(x, digits=3):
    """``digits`` significant digits, '-' for NaN."""
    return f"{x:.{digits}g}" if x is not None and np.isfinite(x) else "-"


def _mw(values, digits=3):
    """'median/largest' of the finite values."""
    v = np.asarray([x for x in values if x is not None and np.isfinite(x)])
    return f"{_g(np.median(v), digits)}/{_g(np.max(v), digits)}" if v.size else "-"


def _warn_counts(recs):
    counts = Counter(w for r in recs for w in r.get("warnings", ()))
    return " ".join(f"{SHORT.get(k, k)}{v}" for k, v in sorted(counts.items())) or "-"


#: (title, width) of the table's columns: right-aligned but the first two and the last
COLUMNS = (
    ("case", 17),
    ("algo", 5),
    ("P", 3),
    ("M", 4),
    ("mean|z|", 13),
    ("max|z|", 6),
    ("extra", 6),
    ("sd ratio", 11),
    ("laplace_kl_", 15),
    ("KL(c||f)", 15),
    ("KL(f||c)", 8),
    ("R-hat", 11),
    ("seconds", 9),
    ("warnings", 0),
)


def _row(cells):
    out = []
    for k, (cell, (_, width)) in enumerate(zip(cells, COLUMNS)):
        out.append(f"{cell:<{width}}" if k < 2 or k == len(COLUMNS) - 1 else f"{cell:>{width}}")
    return " ".join(out).rstrip()


def table(cases, records, floors, n_seeds):
    lines = [
        "The default pipelines' posterior against the reference (the same estimator on all "
        f"rows), {n_seeds} seeds.",
        "mean|z|: median/worst seed; max|z|, extra (max |z| of the log extra parameters), sd "
        "ratio: worst seed;",
        "laplace_kl_ (the coreset's) and KL(c||f) (the independent Laplace KL(coreset || full)):"
        " median/worst; KL(f||c): median;",
        "R-hat: worst pipeline/reference; seconds: median pipeline/reference; warnings: number "
        "of seeds whose pipeline fit raised",
        "Qual CoresetQualityWarning, Conv ConvergenceWarning, Cover CoresetCoverageWarning, "
        "Size CoresetSizeWarning, Overd OverdispersionWarning, Sep SeparationWarning.",
        "floor: the reference against a second reference fit (the Monte Carlo floor).",
        "",
        _row([title for title, _ in COLUMNS]),
    ]
    for info in cases:
        name = info["case"]
        for algo in ALGORITHMS:
            recs = [r for r in records if r["case"] == name and r["algorithm"] == algo]
            good = [r for r in recs if "mean_abs_z" in r]
            if not good:
                err = recs[0].get("error", "no record") if recs else info.get("error", "?")
                lines.append(_row([name, algo, str(info["P"]), "ERROR " + err[:120]]))
                continue
            M = sorted({r["n_points"] for r in good})
            errors = len(recs) - len(good)
            lines.append(
                _row(
                    [
                        name,
                        algo,
                        str(info["P"]),
                        str(M[0]) if len(M) == 1 else f"{M[0]}+",
                        _mw([r["mean_abs_z"] for r in good]),
                        _g(max(r["max_abs_z"] for r in good)),
                        _g(max(r["extra_max_abs_z"] for r in good)),
                        f"{_g(min(r['sd_ratio_min'] for r in good))}-"
                        f"{_g(max(r['sd_ratio_max'] for r in good))}",
                        _mw([r["laplace_kl"] for r in good], 2),
                        _mw([r.get("kl_coreset_full", np.nan) for r in good], 2),
                        _mw([r.get("kl_full_coreset", np.nan) for r in good], 2).split("/")[0],
                        f"{max(r['rhat_max'] for r in good):.3f}/"
                        f"{max(r['reference_rhat_max'] for r in good):.3f}",
                        f"{np.median([r['seconds'] for r in good]):.1f}/"
                        f"{np.median([r['reference_seconds'] for r in good]):.1f}",
                        _warn_counts(good) + (f" ({errors} seeds raised)" if errors else ""),
                    ]
                )
            )
        floor = floors.get(name)
        if floor and "error" not in floor:
            lines.append(
                _row(
                    [
                        name,
                        "floor",
                        str(info["P"]),
                        "",
                        _g(floor["mean_abs_z"]),
                        _g(floor["max_abs_z"]),
                        _g(floor["extra_max_abs_z"]),
                        f"{_g(floor['sd_ratio_min'])}-{_g(floor['sd_ratio_max'])}",
                        "",
                        "",
                        "",
                        "",
                        "",
                        f"reference random_state {floor['seeds'][0]} against {floor['seeds'][1]}",
                    ]
                )
            )
        elif floor:
            lines.append(_row([name, "floor", str(info["P"]), "ERROR " + floor["error"][:120]]))
    return lines


def goal_lines(cases, records, floors):
    lines = [
        "",
        f"Goals per case and algorithm, every seed: mean |z| <= {MEAN_Z}, max |z| <= {MAX_Z}, "
        f"sd ratios in [{SD_RATIO[0]}, {SD_RATIO[1]}] ('warned': every failing seed raised a "
        "CoresetQualityWarning, or the sampler's ConvergenceWarning: 'warned (sampler)'); "
        "laplace_kl_ within 3x of the independent KL(coreset || full) "
        f"or both < {FLOOR_KL} nats.",
    ]
    verdicts = []
    for info in cases:
        name = info["case"]
        floor = floors.get(name) or {}
        floor_ok = (
            "mean_abs_z" in floor
            and floor["mean_abs_z"] <= MEAN_Z
            and floor["max_abs_z"] <= MAX_Z
            and SD_RATIO[0] <= floor["sd_ratio_min"]
            and floor["sd_ratio_max"] <= SD_RATIO[1]
        )
        for algo in ALGORITHMS:
            recs = [r for r in records if r["case"] == name and r["algorithm"] == algo]
            if not recs:
                continue
            v = verdict(recs)
            status = [seed_status(r) for r in recs]
            agree, n, worst = kl_agreement(recs)
            kl_text = (
                "no laplace_kl_"
                if n == 0
                else f"laplace_kl_ agrees in {agree}/{n} seeds"
                + (f" (worst ratio laplace_kl_/KL {worst:.3g})" if agree < n else "")
            )
            verdicts.append(
                {
                    "case": name,
                    "algorithm": algo,
                    "verdict": v,
                    "seed_status": status,
                    "floor_meets_goals": bool(floor_ok),
                    "laplace_kl_agree": agree,
                    "laplace_kl_comparable": n,
                    "laplace_kl_worst_ratio": worst,
                }
            )
            lines.append(
                f"  {name:<18}{algo:<5}{v:<18}seeds {' '.join(status):<30} {kl_text}"
                + ("" if floor_ok else "  [the MC floor itself misses the goals]")
            )
    counts = Counter(v["verdict"] for v in verdicts)
    lines.append("  " + ", ".join(f"{k}: {n}" for k, n in sorted(counts.items())))
    return lines, verdicts


# -- provenance ------------------------------------------------------------------------------
def git(*args):
    try:
        out = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30, check=True
        )
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def provenance():
    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        "package_changes": git("--no-optional-locks", "status", "--porcelain", "--", "skcoreset"),
        "package_path": str(pathlib.Path(skcoreset.__file__).parent),
        "time": time.strftime("%Y-%m-%d %H:%M:%S %z"),
    }


def command_line():
    return "python -m benchmarks.bench_fidelity " + " ".join(sys.argv[1:])


def render(result):
    """The printed table, the goal check and the provenance line of a run's results."""
    lines = table(result["cases"], result["records"], result["floors"], len(result["seeds"]))
    goals, verdicts = goal_lines(result["cases"], result["records"], result["floors"])
    lines += goals
    start, end = result["git_start"], result["git_end"]
    changed = start["package_changes"] or end["package_changes"]
    lines += [
        "",
        f"commit {start['commit'] or 'unknown'} at the start, {end['commit'] or 'unknown'} at "
        f"the end{'; skcoreset/ had uncommitted changes' if changed else ''}; skcoreset from "
        f"{start['package_path']}; {result['seconds'] / 60:.1f} minutes on "
        f"{result['machine']['cpu_count']} cpus; {result['command']}",
    ]
    if result.get("note"):
        lines.append(result["note"])
    return "\n".join(lines), verdicts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="at most 10 000 rows a set, 2 seeds")
    ap.add_argument("--seeds", type=int, default=4, help="seeds 0 .. n - 1 (default 4)")
    ap.add_argument(
        "--cases",
        nargs="+",
        choices=list(CASES),
        default=list(CASES),
        metavar="CASE",
        help=f"cases to run (default all): {', '.join(CASES)}",
    )
    ap.add_argument(
        "--data-dir",
        type=pathlib.Path,
        default=ROOT.parent / "shared" / "data",
        help="the shared .npz files (default ../shared/data)",
    )
    ap.add_argument("--out", type=pathlib.Path, help="write JSON here and the table beside it")
    ap.add_argument("--note", default="", help="free text kept in the JSON and the table")
    ap.add_argument(
        "--table-from",
        type=pathlib.Path,
        metavar="PATH.json",
        help="fit nothing: print the table of a saved run (and rewrite its .txt beside it)",
    )
    args = ap.parse_args(argv)
    if args.table_from:
        result = json.loads(args.table_from.read_text())
        text, _ = render(result)
        print(text)
        args.table_from.with_suffix(".txt").write_text(text + "\n")
        return
    seeds = list(range(min(args.seeds, 2) if args.quick else args.seeds))
    missing = sorted(set(MODEL_NAMES) - {CASES[c][0] for c in CASES})
    if missing:
        print(f"note: registered models without a case: {', '.join(missing)}")
    start = provenance()
    t0 = time.perf_counter()
    cases, refs, records, floors = [], [], [], {}
    for name in args.cases:
        try:
            info, r, recs, floor = run_case(name, args, seeds)
        except Exception as exc:  # noqa: BLE001 - e.g. a data file missing
            print(f"{name}: {type(exc).__name__}: {exc}", flush=True)
            info = {"case": name, "model": CASES[name][0], "P": 0, "error": str(exc)}
            r, recs, floor = [], [], {"error": f"{type(exc).__name__}: {exc}"}
        cases.append(info)
        refs += r
        records += recs
        floors[name] = floor
    import numba

    result = {
        "command": command_line(),
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor(),
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
        },
        "versions": {
            "skcoreset": skcoreset.__version__,
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "scikit-learn": sklearn.__version__,
            "numba": numba.__version__,
        },
        "git_start": start,
        "git_end": provenance(),
        "note": args.note,
        "seconds": time.perf_counter() - t0,
        "seeds": seeds,
        "quick": args.quick,
        "goals": {"mean_abs_z": MEAN_Z, "max_abs_z": MAX_Z, "sd_ratio": SD_RATIO},
        "cases": cases,
        "floors": floors,
        "references": refs,
        "records": records,
    }
    text, result["verdicts"] = render(result)
    print()
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1, default=_json_default))
        args.out.with_suffix(".txt").write_text(text + "\n")


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


if __name__ == "__main__":
    main()
