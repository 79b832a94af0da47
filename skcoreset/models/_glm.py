"""The models: logistic, Poisson and Gaussian-linear regression with a Gaussian prior.

A model is a small immutable value object that holds everything specific to one likelihood,
as scikit-learn's GLMs keep it on their loss: how targets are checked and coded, the design
matrix (the intercept is the *last* column), the per-datum log-likelihoods, gradients and
Hessian (through the numba kernels of ``_glm_kernels``, selected by the integer ``code``), and
the vectorised maths of prediction - the mean response, the log density and simulation. The
prior is N(0, diag(prior_scale^2)) on the coefficients, the intercept included.
"""

from dataclasses import dataclass, replace

import numpy as np
import scipy.special

from . import _glm_kernels as K
from ._targets import BinaryLabels

_LOG_2PI = np.log(2.0 * np.pi)


@dataclass(frozen=True, eq=False)
class GLM:
    """Base class of the models (do not use directly).

    Parameters
    ----------
    prior_scale : float or ndarray of shape (P,), default=1.0
        Standard deviation of the Gaussian prior N(0, diag(prior_scale^2)) on the parameters
        (one for all, or one per parameter, the intercept last; see
        :func:`~skcoreset.models.default_prior_scale`).
    fit_intercept : bool, default=True
        Whether the design matrix gets a trailing column of ones.
    noise_scale : float or None, default=None
        Gaussian noise standard deviation (Gaussian model only; None: to be estimated).
    """

    prior_scale: float | np.ndarray = 1.0
    fit_intercept: bool = True
    noise_scale: float | None = None

    #: The model's name, as the ``model=`` parameters spell it.
    name = "glm"
    #: The integer that selects the model inside the numba kernels.
    code = -1
    #: Whether the model has a noise scale (a parameter besides the coefficients).
    has_noise = False

    def __post_init__(self):
        scale = np.asarray(self.prior_scale, dtype=np.float64)
        if scale.ndim > 1 or not np.all(np.isfinite(scale)) or np.any(scale <= 0):
            raise ValueError(
                "prior_scale must be a positive finite number (or one per parameter), got "
                f"{self.prior_scale!r}."
            )
        if self.noise_scale is not None and (
            not np.isfinite(self.noise_scale) or self.noise_scale <= 0
        ):
            raise ValueError(f"noise_scale must be positive and finite, got {self.noise_scale!r}.")

    # -- data ----------------------------------------------------------------------------
    def encode_targets(self, y):
        """Validate ``y`` for this model and return it, coded, as a float64 array."""
        raise NotImplementedError

    def design(self, X):
        """C-contiguous float64 design matrix, with a trailing column of ones if needed."""
        X = np.asarray(X, dtype=np.float64)
        if self.fit_intercept:
            Xd = np.empty((X.shape[0], X.shape[1] + 1))
            Xd[:, :-1] = X
            Xd[:, -1] = 1.0
            return Xd
        return np.ascontiguousarray(X)

    @property
    def noise(self):
        """The noise scale as the kernels take it (1.0 when unset or irrelevant)."""
        return 1.0 if self.noise_scale is None else float(self.noise_scale)

    def initial_params(self, Xd, y, w):
        """A sensible starting point for Newton's method: zeros."""
        return np.zeros(Xd.shape[1])

    # -- evaluation through the kernels --------------------------------------------------
    def loglik(self, theta, Xd, y):
        """Per-datum log-likelihoods ``l_n(theta)``, shape (N,)."""
        eta = Xd @ np.asarray(theta, dtype=np.float64)
        return K.loglik_vector(self.code, eta, y, self.noise)

    def loglik_grad_per_datum(self, theta, Xd, y):
        """Per-datum gradients ``grad l_n(theta)``, shape (N, P)."""
        eta = Xd @ np.asarray(theta, dtype=np.float64)
        return K.dloglik_vector(self.code, eta, y, self.noise)[:, None] * Xd

    def weighted_loglik(self, theta, Xd, y, w):
        """``sum_n w_n l_n(theta)`` and its gradient (no prior)."""
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        grad = np.empty_like(theta)
        ll = K.weighted_loglik_grad(self.code, theta, Xd, y, w, self.noise, grad)
        return ll, grad

    def weighted_loglik_hessian(self, theta, Xd, y, w):
        """Hessian of ``-sum_n w_n l_n(theta)`` (no prior)."""
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        return K.weighted_hessian(self.code, theta, Xd, y, w, self.noise)

    def log_posterior(self, theta, Xd, y, w):
        """Unnormalised weighted log posterior and its gradient.

        ``log pi_0(theta) + sum_n w_n l_n(theta)`` up to the prior's normalising constant.
        """
        ll, grad = self.weighted_loglik(theta, Xd, y, w)
        return self.add_log_prior(theta, ll, grad)

    def add_log_prior(self, theta, ll, grad):
        """``(ll + log pi_0(theta), grad + its gradient)``."""
        theta = np.asarray(theta, dtype=np.float64)
        prec = self.prior_precision(theta.shape[0])
        return ll - 0.5 * (prec * theta) @ theta, grad - prec * theta

    def prior_precision(self, n_params):
        """The prior's precision of each of ``n_params`` parameters."""
        scale = np.broadcast_to(np.asarray(self.prior_scale, dtype=np.float64), (n_params,))
        return 1.0 / scale**2

    def neg_log_posterior_hessian(self, theta, Xd, y, w):
        """Hessian of the negative weighted log posterior (positive definite)."""
        return self.add_prior_hessian(self.weighted_loglik_hessian(theta, Xd, y, w))

    def add_prior_hessian(self, H):
        """``H`` plus the prior's precision on the diagonal (in place; returns ``H``)."""
        H[np.diag_indices_from(H)] += self.prior_precision(H.shape[0])
        return H

    def loglik_matrix(self, Xd, y, thetas, out=None):
        """Per-datum log-likelihoods at J parameters: an (N, J) matrix.

        One fused kernel (products and likelihood together), so the output is the only (N, J)
        allocation. ``out`` may be float32 to halve the storage.
        """
        thetas_t = np.ascontiguousarray(np.atleast_2d(thetas).T, dtype=np.float64)
        if out is None:
            out = np.empty((Xd.shape[0], thetas_t.shape[1]))
        K.loglik_matrix(self.code, Xd, thetas_t, y, self.noise, 1.0, False, out)
        return out

    # -- prediction: vectorised over rows and posterior draws ----------------------------
    def mean(self, eta):
        """Mean response E[y | eta]: probability of class 1, Poisson rate, or eta itself."""
        raise NotImplementedError

    def log_density(self, y, eta, noise_scale=None):
        """log p(y | eta), broadcast over ``y`` (rows, 1) and ``eta`` (rows, draws).

        ``noise_scale`` (Gaussian only) broadcasts like ``eta``; None uses the model's own.
        """
        raise NotImplementedError

    def simulate(self, eta, random_state, noise_scale=None):
        """Targets drawn from the likelihood at ``eta`` (codes {0, 1} for the logistic model)."""
        raise NotImplementedError


def _finite_targets(y):
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}.")
    try:
        y = y.astype(np.float64)
    except (TypeError, ValueError):
        # scikit-learn's phrase for targets of the wrong kind
        raise ValueError(
            f"Unknown label type: this model needs numeric targets; y has dtype {y.dtype}."
        ) from None
    if not np.all(np.isfinite(y)):
        raise ValueError(f"y contains {'NaN' if np.isnan(y).any() else 'infinity'}.")
    return y


@dataclass(frozen=True, eq=False)
class LogisticModel(GLM):
    """Bernoulli likelihood with the logit link; any two class labels (see BinaryLabels)."""

    name = "logistic"
    code = K.LOGISTIC

    def encode_targets(self, y):
        return BinaryLabels.fit(y).encode(y)

    def mean(self, eta):
        return scipy.special.expit(eta)

    def log_density(self, y, eta, noise_scale=None):
        return y * eta - np.logaddexp(0.0, eta)

    def simulate(self, eta, random_state, noise_scale=None):
        return (random_state.random_sample(np.shape(eta)) < scipy.special.expit(eta)).astype(
            np.intp
        )


@dataclass(frozen=True, eq=False)
class PoissonModel(GLM):
    """Poisson likelihood with the log link; non-negative targets (counts, or rates)."""

    name = "poisson"
    code = K.POISSON

    def encode_targets(self, y):
        y = _finite_targets(y)
        if np.any(y < 0):
            raise ValueError("The Poisson model needs non-negative targets; y has negative values.")
        return y

    def initial_params(self, Xd, y, w):
        theta = np.zeros(Xd.shape[1])
        if self.fit_intercept:
            # Start at the constant-rate fit: exp(eta) = mean(y) avoids huge first Newton steps.
            theta[-1] = np.log(max(np.average(y, weights=w), 1e-3))
        return theta

    def mean(self, eta):
        return np.exp(eta)

    def log_density(self, y, eta, noise_scale=None):
        with np.errstate(over="ignore"):
            return y * eta - np.exp(eta) - scipy.special.gammaln(y + 1.0)

    def simulate(self, eta, random_state, noise_scale=None):
        return random_state.poisson(np.exp(eta))


@dataclass(frozen=True, eq=False)
class GaussianModel(GLM):
    """Gaussian-linear likelihood N(y | x . theta, noise_scale^2)."""

    name = "gaussian"
    code = K.GAUSSIAN
    has_noise = True

    def encode_targets(self, y):
        return _finite_targets(y)

    def estimate_noise(self, Xd, y, w):
        """Weighted least-squares residual standard deviation (degrees of freedom corrected).

        With no more (weighted) rows than parameters the residuals are zero and say nothing
        about the noise: the spread of y itself is used instead (1 if y is constant), so the
        posterior stays proper instead of collapsing onto an interpolating fit.
        """
        return self.estimate_noise_blocks(lambda: [(Xd, y, w)])

    def estimate_noise_blocks(self, blocks):
        """:meth:`estimate_noise` over data given in blocks: ``blocks()`` yields
        ``(Xd, y, w)`` triples (two passes: the fit, then the residuals)."""
        A = b = None
        w_sum = wy_sum = 0.0
        y_max = 0.0
        for Xd, y, w in blocks():
            Ab, bb = Xd.T @ (w[:, None] * Xd), Xd.T @ (w * y)
            A, b = (Ab, bb) if A is None else (A + Ab, b + bb)
            w_sum += w.sum()
            wy_sum += (w * y).sum()
            y_max = max(y_max, np.abs(y).max(initial=0.0))
        n_params = A.shape[0]
        dof = w_sum - n_params
        beta = None
        if dof > 0:
            A = A.copy()
            A[np.diag_indices_from(A)] += 1e-10 * max(np.trace(A), 1.0)
            beta = np.linalg.solve(A, b)
        y_mean = wy_sum / w_sum
        rss = spread = 0.0
        for Xd, y, w in blocks():
            if beta is not None:
                rss += np.sum(w * (y - Xd @ beta) ** 2)
            spread += (w * (y - y_mean) ** 2).sum()
        sigma = np.sqrt(rss / dof) if beta is not None else 0.0
        if not np.isfinite(sigma) or sigma <= 1e-8 * max(y_max, 1e-300):
            spread = np.sqrt(spread / w_sum)
            sigma = spread if spread > 0 else 1.0
        return float(sigma)

    def mean(self, eta):
        return eta

    def log_density(self, y, eta, noise_scale=None):
        sigma = self.noise if noise_scale is None else noise_scale
        r = (y - eta) / sigma
        return -0.5 * r * r - np.log(sigma) - 0.5 * _LOG_2PI

    def simulate(self, eta, random_state, noise_scale=None):
        sigma = self.noise if noise_scale is None else noise_scale
        return eta + sigma * random_state.standard_normal(np.shape(eta))


_MODELS = {m.name: m for m in (LogisticModel, PoissonModel, GaussianModel)}

#: The names the ``model=`` parameters accept (besides 'auto').
MODEL_NAMES = tuple(_MODELS)


def get_model(name, *, prior_scale=1.0, fit_intercept=True, noise_scale=None):
    """The model called ``name`` ('logistic', 'poisson' or 'gaussian').

    Parameters
    ----------
    name : {'logistic', 'poisson', 'gaussian'} or GLM
        A model name (a model object is returned as it is).
    prior_scale : float or array-like of shape (P,), default=1.0
        Standard deviation of the Gaussian prior of every parameter, or of each (intercept
        last).
    fit_intercept : bool, default=True
        Whether the design matrix gets a trailing column of ones.
    noise_scale : float or None, default=None
        Gaussian noise standard deviation (None: estimated by the Laplace fit).

    Returns
    -------
    model : GLM

    Examples
    --------
    >>> from skcoreset.models import get_model
    >>> get_model("poisson", prior_scale=2.0)
    PoissonModel(prior_scale=2.0, fit_intercept=True, noise_scale=None)
    """
    if isinstance(name, GLM):
        return name
    try:
        cls = _MODELS[name]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown model {name!r}; expected one of {MODEL_NAMES}.") from None
    prior_scale = np.asarray(prior_scale, dtype=np.float64)
    return cls(
        prior_scale=float(prior_scale) if prior_scale.ndim == 0 else prior_scale,
        fit_intercept=bool(fit_intercept),
        noise_scale=None if noise_scale is None else float(noise_scale),
    )


def with_noise(model, noise_scale):
    """The same model with its noise scale fixed (a no-op for models without noise)."""
    if not model.has_noise or model.noise_scale is not None:
        return model
    return replace(model, noise_scale=float(noise_scale))
