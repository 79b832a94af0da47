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
from ._names import MODEL_NAMES
from ._targets import BinaryLabels

_LOG_2PI = np.log(2.0 * np.pi)


@dataclass(frozen=True, eq=False)
class GLM:
    """Base class of the models (use a subclass, or :func:`get_model`).

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

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import LogisticModel
    >>> model = LogisticModel(prior_scale=2.0)
    >>> Xd = model.design(np.array([[0.5], [-1.0]]))
    >>> Xd
    array([[ 0.5,  1. ],
           [-1. ,  1. ]])
    >>> model.loglik(np.zeros(2), Xd, np.array([1.0, 0.0])).round(4)
    array([-0.6931, -0.6931])
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
        """Validate ``y`` for this model and return it coded as a float64 array.

        Parameters
        ----------
        y : array-like of shape (N,)
            Targets: two class labels (logistic), non-negative numbers (Poisson) or real
            numbers (Gaussian).

        Returns
        -------
        y_coded : ndarray of shape (N,)
            The targets as the likelihood reads them (codes {0, 1} for the logistic model).
        """
        raise NotImplementedError

    def design(self, X):
        """Build the C-contiguous float64 design matrix (a trailing column of ones if needed).

        Parameters
        ----------
        X : array-like of shape (N, D)
            Features.

        Returns
        -------
        Xd : ndarray of shape (N, P)
            ``X`` with a trailing column of ones when ``fit_intercept`` (P = D + 1), else
            ``X`` (P = D).
        """
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
        """Return a starting point for Newton's method (zeros, unless a subclass knows better).

        Parameters
        ----------
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.
        w : ndarray of shape (N,)
            Non-negative weights of the rows.

        Returns
        -------
        theta0 : ndarray of shape (P,)
            The starting parameters.
        """
        return np.zeros(Xd.shape[1])

    # -- evaluation through the kernels --------------------------------------------------
    def loglik(self, theta, Xd, y):
        """Compute the per-datum log-likelihoods ``l_n(theta)``.

        Parameters
        ----------
        theta : ndarray of shape (P,)
            Parameters (coefficients, intercept last).
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.

        Returns
        -------
        loglik : ndarray of shape (N,)
            ``log p(y_n | x_n, theta)`` for each row.
        """
        eta = Xd @ np.asarray(theta, dtype=np.float64)
        return K.loglik_vector(self.code, eta, y, self.noise)

    def loglik_grad_per_datum(self, theta, Xd, y):
        """Compute the per-datum gradients ``grad l_n(theta)``.

        Parameters
        ----------
        theta : ndarray of shape (P,)
            Parameters (coefficients, intercept last).
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.

        Returns
        -------
        grad : ndarray of shape (N, P)
            The gradient of each row's log-likelihood with respect to ``theta``.
        """
        eta = Xd @ np.asarray(theta, dtype=np.float64)
        return K.dloglik_vector(self.code, eta, y, self.noise)[:, None] * Xd

    def loglik_derivatives(self, eta, y):
        """Compute each row's first and minus second derivative of the log-likelihood in eta.

        Parameters
        ----------
        eta : ndarray of shape (N,)
            Linear predictors ``Xd @ theta``.
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.

        Returns
        -------
        d : ndarray of shape (N,)
            ``dl_n / d eta``.
        curv : ndarray of shape (N,)
            ``-d^2 l_n / d eta^2`` (non-negative).
        """
        eta = np.ascontiguousarray(eta, dtype=np.float64)
        return K.dloglik_curv_vector(self.code, eta, y, self.noise)

    def weighted_loglik(self, theta, Xd, y, w):
        """Compute the weighted log-likelihood ``sum_n w_n l_n(theta)`` and its gradient.

        The prior is not included (see :meth:`log_posterior`).

        Parameters
        ----------
        theta : ndarray of shape (P,)
            Parameters (coefficients, intercept last).
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.
        w : ndarray of shape (N,)
            Non-negative weights of the rows.

        Returns
        -------
        ll : float
            The weighted log-likelihood.
        grad : ndarray of shape (P,)
            Its gradient with respect to ``theta``.
        """
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        grad = np.empty_like(theta)
        ll = K.weighted_loglik_grad(self.code, theta, Xd, y, w, self.noise, grad)
        return ll, grad

    def weighted_loglik_hessian(self, theta, Xd, y, w):
        """Compute the Hessian of ``-sum_n w_n l_n(theta)`` (the prior not included).

        Parameters
        ----------
        theta : ndarray of shape (P,)
            Parameters (coefficients, intercept last).
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.
        w : ndarray of shape (N,)
            Non-negative weights of the rows.

        Returns
        -------
        H : ndarray of shape (P, P)
            The Hessian of the negative weighted log-likelihood.
        """
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        return K.weighted_hessian(self.code, theta, Xd, y, w, self.noise)

    def log_posterior(self, theta, Xd, y, w):
        """Compute the unnormalised weighted log posterior and its gradient.

        ``log pi_0(theta) + sum_n w_n l_n(theta)`` up to the prior's normalising constant.

        Parameters
        ----------
        theta : ndarray of shape (P,)
            Parameters (coefficients, intercept last).
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.
        w : ndarray of shape (N,)
            Non-negative weights of the rows.

        Returns
        -------
        lp : float
            The log posterior, up to a constant.
        grad : ndarray of shape (P,)
            Its gradient with respect to ``theta``.
        """
        ll, grad = self.weighted_loglik(theta, Xd, y, w)
        return self.add_log_prior(theta, ll, grad)

    def add_log_prior(self, theta, ll, grad):
        """Add the log prior (up to its constant) and its gradient to a log-likelihood.

        Parameters
        ----------
        theta : ndarray of shape (P,)
            Parameters (coefficients, intercept last).
        ll : float
            A log-likelihood at ``theta``.
        grad : ndarray of shape (P,)
            Its gradient.

        Returns
        -------
        lp : float
            ``ll + log pi_0(theta)``.
        grad : ndarray of shape (P,)
            ``grad`` plus the gradient of ``log pi_0`` (a new array).
        """
        theta = np.asarray(theta, dtype=np.float64)
        prec = self.prior_precision(theta.shape[0])
        return ll - 0.5 * (prec * theta) @ theta, grad - prec * theta

    def prior_precision(self, n_params):
        """Return the prior's precision ``1 / prior_scale^2`` of each parameter.

        Parameters
        ----------
        n_params : int
            The number of parameters P.

        Returns
        -------
        precision : ndarray of shape (P,)
            The prior precision of each parameter.
        """
        scale = np.broadcast_to(np.asarray(self.prior_scale, dtype=np.float64), (n_params,))
        return 1.0 / scale**2

    def neg_log_posterior_hessian(self, theta, Xd, y, w):
        """Compute the Hessian of the negative weighted log posterior (positive definite).

        Parameters
        ----------
        theta : ndarray of shape (P,)
            Parameters (coefficients, intercept last).
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.
        w : ndarray of shape (N,)
            Non-negative weights of the rows.

        Returns
        -------
        H : ndarray of shape (P, P)
            The Hessian, the prior's precision included.
        """
        return self.add_prior_hessian(self.weighted_loglik_hessian(theta, Xd, y, w))

    def add_prior_hessian(self, H):
        """Add the prior's precision to the diagonal of ``H``, in place.

        Parameters
        ----------
        H : ndarray of shape (P, P)
            A Hessian of the negative log-likelihood; modified.

        Returns
        -------
        H : ndarray of shape (P, P)
            The same array.
        """
        H[np.diag_indices_from(H)] += self.prior_precision(H.shape[0])
        return H

    def loglik_matrix(self, Xd, y, thetas, out=None):
        """Compute the per-datum log-likelihoods at J parameters, an (N, J) matrix.

        One fused kernel (products and likelihood together), so the output is the only (N, J)
        allocation.

        Parameters
        ----------
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.
        thetas : ndarray of shape (J, P)
            The parameters, one per row.
        out : ndarray of shape (N, J), default=None
            Where to write the result (float64 or float32, to halve the storage); None
            allocates a float64 array.

        Returns
        -------
        loglik : ndarray of shape (N, J)
            ``l_n(theta_j)``; ``out`` when given.
        """
        thetas_t = np.ascontiguousarray(np.atleast_2d(thetas).T, dtype=np.float64)
        if out is None:
            out = np.empty((Xd.shape[0], thetas_t.shape[1]))
        K.loglik_matrix(self.code, Xd, thetas_t, y, self.noise, 1.0, False, out)
        return out

    # -- prediction: vectorised over rows and posterior draws ----------------------------
    def mean(self, eta):
        """Return the mean response ``E[y | eta]``.

        Parameters
        ----------
        eta : ndarray
            Linear predictors ``x @ theta``, of any shape.

        Returns
        -------
        mean : ndarray
            The probability of class 1 (logistic), the rate (Poisson) or ``eta`` itself
            (Gaussian), of the shape of ``eta``.
        """
        raise NotImplementedError

    def log_density(self, y, eta, noise_scale=None):
        """Compute the log density ``log p(y | eta)``, broadcasting ``y`` against ``eta``.

        Parameters
        ----------
        y : ndarray
            Coded targets, e.g. of shape (rows, 1).
        eta : ndarray
            Linear predictors, e.g. of shape (rows, draws).
        noise_scale : float or ndarray, default=None
            Gaussian noise standard deviation, broadcast like ``eta`` (Gaussian model only;
            None uses the model's own).

        Returns
        -------
        log_density : ndarray
            The log density of each target at each predictor, of the broadcast shape.
        """
        raise NotImplementedError

    def simulate(self, eta, random_state, noise_scale=None):
        """Draw targets from the likelihood at ``eta``.

        Parameters
        ----------
        eta : ndarray
            Linear predictors, of any shape.
        random_state : numpy.random.RandomState
            The source of randomness.
        noise_scale : float or ndarray, default=None
            Gaussian noise standard deviation, broadcast like ``eta`` (Gaussian model only;
            None uses the model's own).

        Returns
        -------
        y : ndarray
            One draw per entry of ``eta`` (codes {0, 1} for the logistic model).
        """
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
    """Bernoulli likelihood with the logit link; any two class labels (see BinaryLabels).

    Parameters
    ----------
    prior_scale : float or ndarray of shape (P,), default=1.0
        Standard deviation of the Gaussian prior on the parameters (intercept last).
    fit_intercept : bool, default=True
        Whether the design matrix gets a trailing column of ones.
    noise_scale : float or None, default=None
        Unused (the model has no noise scale).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import LogisticModel
    >>> model = LogisticModel()
    >>> model.mean(np.array([0.0, 1.0])).round(4)
    array([0.5   , 0.7311])
    """

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
    """Poisson likelihood with the log link; non-negative targets (counts, or rates).

    Parameters
    ----------
    prior_scale : float or ndarray of shape (P,), default=1.0
        Standard deviation of the Gaussian prior on the parameters (intercept last).
    fit_intercept : bool, default=True
        Whether the design matrix gets a trailing column of ones.
    noise_scale : float or None, default=None
        Unused (the model has no noise scale).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import PoissonModel
    >>> model = PoissonModel()
    >>> model.mean(np.array([0.0, 1.0])).round(4)
    array([1.    , 2.7183])
    """

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
    """Gaussian-linear likelihood ``N(y | x @ theta, noise_scale^2)``.

    Parameters
    ----------
    prior_scale : float or ndarray of shape (P,), default=1.0
        Standard deviation of the Gaussian prior on the parameters (intercept last).
    fit_intercept : bool, default=True
        Whether the design matrix gets a trailing column of ones.
    noise_scale : float or None, default=None
        Noise standard deviation (None: estimated by the Laplace fit).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import GaussianModel
    >>> model = GaussianModel()
    >>> model.mean(np.array([0.0, 1.0])).round(4)
    array([0., 1.])
    """

    name = "gaussian"
    code = K.GAUSSIAN
    has_noise = True

    def encode_targets(self, y):
        return _finite_targets(y)

    def estimate_noise(self, Xd, y, w):
        """Estimate the noise as the weighted least-squares residual standard deviation.

        The residual sum of squares is divided by the degrees of freedom (weighted rows minus
        parameters). With no more (weighted) rows than parameters the residuals are zero and
        say nothing about the noise: the spread of y itself is used instead (1 if y is
        constant), so the posterior stays proper instead of collapsing onto an interpolating
        fit.

        Parameters
        ----------
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.
        w : ndarray of shape (N,)
            Non-negative weights of the rows.

        Returns
        -------
        noise_scale : float
            The estimated noise standard deviation.
        """
        return self.estimate_noise_blocks(lambda: [(Xd, y, w)])

    def estimate_noise_blocks(self, blocks):
        """Estimate the noise as :meth:`estimate_noise` does, over data given in blocks.

        Parameters
        ----------
        blocks : callable
            ``blocks()`` yields ``(Xd, y, w)`` triples; it is called twice (the fit, then the
            residuals).

        Returns
        -------
        noise_scale : float
            The estimated noise standard deviation.
        """
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
assert tuple(_MODELS) == MODEL_NAMES, "models/_names.py lists the models of this module"


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
        The model object.

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
    """Return the same model with its noise scale fixed.

    Parameters
    ----------
    model : GLM
        A model.
    noise_scale : float
        The noise standard deviation to fix (ignored when the model has no noise scale or
        already has one).

    Returns
    -------
    model : GLM
        A copy with ``noise_scale`` set, or ``model`` itself when there is nothing to set.

    Examples
    --------
    >>> from skcoreset.models import get_model, with_noise
    >>> with_noise(get_model("gaussian"), 2.0).noise_scale
    2.0
    """
    if not model.has_noise or model.noise_scale is not None:
        return model
    return replace(model, noise_scale=float(noise_scale))
