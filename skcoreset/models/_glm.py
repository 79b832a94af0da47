"""Likelihood models: logistic, Poisson and Gaussian-linear regression with a Gaussian prior.

A model is a small immutable value object. It knows how to check targets, how to build the
design matrix (the intercept is the *last* column), and how to evaluate per-datum
log-likelihoods, gradients and the Hessian through the numba kernels of ``_glm_kernels``.
The prior is N(0, prior_scale^2 I) on every coefficient, the intercept included.
"""

from dataclasses import dataclass, replace

import numpy as np

from . import _glm_kernels as K


@dataclass(frozen=True)
class GLMLikelihood:
    """Base class of the generalised linear likelihoods.

    Parameters
    ----------
    prior_scale : float, default=1.0
        Standard deviation of the N(0, prior_scale^2 I) prior on the parameters.
    fit_intercept : bool, default=True
        Whether the design matrix gets a trailing column of ones.
    noise_scale : float or None, default=None
        Gaussian noise standard deviation (Gaussian model only; ``None`` means estimate it).
    """

    prior_scale: float = 1.0
    fit_intercept: bool = True
    noise_scale: float | None = None

    name = "glm"
    kind = -1

    def __post_init__(self):
        if not np.isfinite(self.prior_scale) or self.prior_scale <= 0:
            raise ValueError(
                f"prior_scale must be a positive finite number, got {self.prior_scale!r}."
            )
        if self.noise_scale is not None and (
            not np.isfinite(self.noise_scale) or self.noise_scale <= 0
        ):
            raise ValueError(f"noise_scale must be positive and finite, got {self.noise_scale!r}.")

    # -- data --------------------------------------------------------------------------
    def check_targets(self, y):
        """Validate ``y`` for this likelihood and return it as a float64 array."""
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
        # Kernels take a float; the non-Gaussian models ignore it.
        return 1.0 if self.noise_scale is None else float(self.noise_scale)

    def initial_params(self, Xd, y, w):
        """A sensible starting point for Newton's method."""
        theta = np.zeros(Xd.shape[1])
        return theta

    # -- evaluation --------------------------------------------------------------------
    def loglik(self, theta, Xd, y):
        """Per-datum log-likelihoods ``l_n(theta)``, shape (N,)."""
        eta = Xd @ np.asarray(theta, dtype=np.float64)
        return K.loglik_vector(self.kind, eta, y, self.noise)

    def loglik_grad_per_datum(self, theta, Xd, y):
        """Per-datum gradients ``grad l_n(theta)``, shape (N, P)."""
        eta = Xd @ np.asarray(theta, dtype=np.float64)
        return K.dloglik_vector(self.kind, eta, y, self.noise)[:, None] * Xd

    def log_posterior(self, theta, Xd, y, w):
        """Unnormalised weighted log posterior and its gradient.

        ``log pi_0(theta) + sum_n w_n l_n(theta)`` up to the prior's normalising constant.
        """
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        grad = np.empty_like(theta)
        ll = K.weighted_loglik_grad(self.kind, theta, Xd, y, w, self.noise, grad)
        prec = 1.0 / self.prior_scale**2
        return ll - 0.5 * prec * theta @ theta, grad - prec * theta

    def neg_log_posterior_hessian(self, theta, Xd, y, w):
        """Hessian of the negative weighted log posterior (positive definite)."""
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        H = K.weighted_hessian(self.kind, theta, Xd, y, w, self.noise)
        H[np.diag_indices_from(H)] += 1.0 / self.prior_scale**2
        return H

    def loglik_matrix(self, Xd, y, thetas, out=None):
        """Per-datum log-likelihoods at J parameters: an (N, J) matrix.

        One fused kernel (products and likelihood together), so the output is the only (N, J)
        allocation. ``out`` may be float32 to halve the storage.
        """
        thetas_t = np.ascontiguousarray(np.atleast_2d(thetas).T, dtype=np.float64)
        if out is None:
            out = np.empty((Xd.shape[0], thetas_t.shape[1]))
        K.loglik_matrix(self.kind, Xd, thetas_t, y, self.noise, 1.0, False, out)
        return out


def _check_finite_targets(y):
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}.")
    if y.dtype.kind not in "biuf":
        raise TypeError(f"y must be numeric, got dtype {y.dtype}.")
    y = y.astype(np.float64)
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity.")
    return y


@dataclass(frozen=True)
class LogisticLikelihood(GLMLikelihood):
    """Bernoulli likelihood with the logit link; labels {0, 1} or {-1, 1}."""

    name = "logistic"
    kind = K.LOGISTIC

    def check_targets(self, y):
        y = _check_finite_targets(y)
        labels = np.unique(y)
        if len(labels) < 2:
            raise ValueError(
                f"The logistic model needs both classes in y; got only the label {labels!r}."
            )
        if set(labels) <= {0.0, 1.0}:
            return y
        if set(labels) <= {-1.0, 1.0}:
            return (y > 0).astype(np.float64)
        raise ValueError(
            f"The logistic model needs binary labels in {{0, 1}} or {{-1, 1}}; got {labels[:5]!r}"
            + (" ..." if len(labels) > 5 else ".")
        )


@dataclass(frozen=True)
class PoissonLikelihood(GLMLikelihood):
    """Poisson likelihood with the log link; non-negative integer counts."""

    name = "poisson"
    kind = K.POISSON

    def check_targets(self, y):
        y = _check_finite_targets(y)
        if np.any(y < 0):
            raise ValueError("The Poisson model needs non-negative counts; y has negative values.")
        if np.any(y != np.round(y)):
            raise ValueError("The Poisson model needs integer counts; y has non-integer values.")
        return y

    def initial_params(self, Xd, y, w):
        theta = np.zeros(Xd.shape[1])
        if self.fit_intercept:
            # Start at the constant-rate fit: exp(eta) = mean(y) avoids huge first Newton steps.
            theta[-1] = np.log(max(np.average(y, weights=w), 1e-3))
        return theta


@dataclass(frozen=True)
class GaussianLikelihood(GLMLikelihood):
    """Gaussian-linear likelihood N(y | x . theta, noise_scale^2)."""

    name = "gaussian"
    kind = K.GAUSSIAN

    def check_targets(self, y):
        return _check_finite_targets(y)

    def estimate_noise(self, Xd, y, w):
        """Weighted least-squares residual standard deviation (degrees of freedom corrected).

        With no more (weighted) rows than parameters the residuals are zero and say nothing
        about the noise: the spread of y itself is used instead (1 if y is constant), so the
        posterior stays proper instead of collapsing onto an interpolating fit.
        """
        dof = w.sum() - Xd.shape[1]
        sigma = 0.0
        if dof > 0:
            A = Xd.T @ (w[:, None] * Xd)
            A[np.diag_indices_from(A)] += 1e-10 * max(np.trace(A), 1.0)
            beta = np.linalg.solve(A, Xd.T @ (w * y))
            sigma = np.sqrt(np.sum(w * (y - Xd @ beta) ** 2) / dof)
        if not np.isfinite(sigma) or sigma <= 1e-8 * max(np.abs(y).max(initial=0.0), 1e-300):
            spread = np.sqrt(np.average((y - np.average(y, weights=w)) ** 2, weights=w))
            sigma = spread if spread > 0 else 1.0
        return float(sigma)


_MODELS = {
    "logistic": LogisticLikelihood,
    "poisson": PoissonLikelihood,
    "gaussian": GaussianLikelihood,
}

MODEL_NAMES = tuple(_MODELS)


def get_model(name, *, prior_scale=1.0, fit_intercept=True, noise_scale=None):
    """Return the likelihood model called ``name`` ('logistic', 'poisson' or 'gaussian')."""
    if isinstance(name, GLMLikelihood):
        return name
    try:
        cls = _MODELS[name]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown model {name!r}; expected one of {MODEL_NAMES}.") from None
    return cls(
        prior_scale=float(prior_scale),
        fit_intercept=bool(fit_intercept),
        noise_scale=None if noise_scale is None else float(noise_scale),
    )


def infer_model_name(y):
    """Guess the likelihood from the targets: binary -> logistic, counts -> Poisson, else Gaussian.

    Two distinct values give 'logistic'; non-negative integers with more than two values give
    'poisson'; anything else 'gaussian'.
    """
    y = np.asarray(y)
    if y.dtype.kind not in "biuf":
        return (
            "logistic"  # strings / objects: only a classifier makes sense; labels are checked later
        )
    values = np.unique(y[np.isfinite(y)]) if y.dtype.kind == "f" else np.unique(y)
    if len(values) <= 2:
        return "logistic"
    if np.all(values >= 0) and np.all(values == np.round(values)):
        return "poisson"
    return "gaussian"


def with_noise(model, noise_scale):
    """The same model with its noise scale fixed (a no-op for non-Gaussian models)."""
    if model.kind != K.GAUSSIAN or model.noise_scale is not None:
        return model
    return replace(model, noise_scale=float(noise_scale))
