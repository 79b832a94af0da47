"""Posterior-fidelity measures of a coreset (doc/algorithms.md, "Evaluation measures").

All measures compare the coreset posterior pi_w (prior times sum_m w_m l_m) with the full-data
posterior pi (prior times sum_n l_n, or sum_n s_n l_n with data weights s):

* :func:`relative_hilbert_error` - ||Phi w - y|| / ||y|| in a projection space;
* :func:`gaussian_kl`, :func:`coreset_laplace_kl` - KL divergence between Gaussian (Laplace or
  moment) fits, both directions;
* :func:`polynomial_mmd` - squared MMD between two sets of posterior draws with the kernel
  (0.2 + <a, b>)^3;
* :func:`fisher_distance` - mean over full-posterior draws of
  ||grad L(w; theta) - grad L(theta)||^2.
"""

import warnings
from dataclasses import replace

import numpy as np
import scipy.linalg
from sklearn.utils import check_array, check_consistent_length

from .._sklearn_compat import _check_sample_weight
from .._warnings import renamed
from ..hilbert._common import check_target, check_vectors, relative_error
from ..models import (
    SeparationWarning,
    get_model,
    laplace_approximation,
    model_from_targets,
    with_extra,
)
from ..models._laplace import best_fit
from ..models._prior import Moments, prior_from_moments

_DIRECTIONS = ("forward", "reverse", "symmetric")


def coreset_fit(model, Xd, y, sample_weight, start=None):
    """The Laplace fit of a weighted coreset, the posterior whose fidelity is measured.

    At its highest mode: Newton from the model's own start and from ``start`` (the data's
    mode, when known) for a posterior that need not be log-concave
    (:func:`~skcoreset.models._laplace.best_fit`), so that a coreset whose posterior peaks
    away from the data's is judged by that peak. A small coreset is often linearly separable
    although the data are not: its posterior is then set by the prior, which is what the
    measure should report, so the :class:`~skcoreset.models.SeparationWarning` meant for fits
    that are used is silenced.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeparationWarning)
        return best_fit(model, Xd, y, sample_weight, () if start is None else (start,))


def laplace_kl(core, full):
    """KL(core || full) of two Laplace fits of one posterior's parameters: of a coreset's to
    the data's, the quality figure every coreset reports as ``laplace_kl_``.

    Parameters
    ----------
    core, full : LaplaceApproximation
        The coreset posterior's fit and the data's (the same parameters: coefficients, then
        the log of a free extra parameter).

    Returns
    -------
    kl : float
        In nats; 0 when the two fits coincide.
    """
    return gaussian_kl(core.mean, core.cov, full.mean, full.cov)


def _check_data(X, y, sample_indices, sample_weight, data_weight):
    """Validated (X, y, indices, coreset weights, data weights) for the Laplace-based measures.

    The numba kernels behind them do not bounds-check, so every length is checked here.
    """
    X = check_array(X, dtype=np.float64, input_name="X")
    y = np.asarray(y)
    check_consistent_length(X, y)
    s = (
        None
        if data_weight is None
        else _check_sample_weight(data_weight, X, dtype=np.float64, ensure_non_negative=True)
    )
    idx = np.asarray(sample_indices)
    w = np.asarray(sample_weight, dtype=np.float64)
    if idx.ndim != 1 or idx.shape != w.shape:
        raise ValueError(
            "sample_indices and sample_weight must be 1-D and of the same length; "
            f"got shapes {idx.shape} and {w.shape}."
        )
    if idx.size and (idx.dtype.kind not in "iu" or idx.min() < 0 or idx.max() >= X.shape[0]):
        raise ValueError(f"sample_indices must be integers in [0, {X.shape[0]}).")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("sample_weight must be finite and non-negative.")
    return X, y, idx.astype(np.intp), w, s


def relative_hilbert_error(vectors, sample_weight, sample_indices=None, target=None):
    """Relative error ||Phi w - y|| / ||y|| of coreset weights in a projection space.

    Parameters
    ----------
    vectors : array-like of shape (n_samples, n_projections)
        Rows v_n (e.g. from :func:`skcoreset.projection.project`).
    sample_weight : array-like
        Coreset weights: of shape (n_samples,), or of the rows ``sample_indices``.
    sample_indices : array-like of int, default=None
        Rows the weights belong to (a fitted coreset's ``sample_indices_``).
    target : array-like of shape (n_projections,), default=None
        The vector y to approximate; default: the sum of the rows (the full-data log-likelihood).

    Returns
    -------
    error : float
        1.0 for empty weights; 0.0 for a perfect coreset.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.metrics import relative_hilbert_error
    >>> vectors = np.random.default_rng(0).standard_normal((100, 5))
    >>> relative_hilbert_error(vectors, np.ones(100)) < 1e-12
    True
    >>> relative_hilbert_error(vectors, np.zeros(100))
    1.0
    """
    V = check_vectors(vectors)
    w = np.asarray(sample_weight, dtype=np.float64).ravel()
    if sample_indices is None:
        if w.shape[0] != V.shape[0]:
            raise ValueError(
                f"sample_weight has {w.shape[0]} entries for {V.shape[0]} vectors; "
                "pass sample_indices for a subset."
            )
        dense = w
    else:
        idx = np.asarray(sample_indices, dtype=np.intp).ravel()
        if idx.shape != w.shape:
            raise ValueError("sample_indices and sample_weight must have the same length.")
        if idx.size and (idx.min() < 0 or idx.max() >= V.shape[0]):
            raise ValueError(f"sample_indices must be in [0, {V.shape[0]}).")
        dense = np.zeros(V.shape[0])
        np.add.at(dense, idx, w)
    y = V.sum(axis=0, dtype=np.float64) if target is None else check_target(target, V.shape[1])
    if not np.any(y):
        raise ValueError("The target has zero norm: the relative error is undefined.")
    return relative_error(V, dense, y)


def _check_gaussian(mean, cov, name):
    mean = np.atleast_1d(np.asarray(mean, dtype=np.float64))
    cov = np.atleast_2d(np.asarray(cov, dtype=np.float64))
    if mean.ndim != 1 or cov.shape != (mean.shape[0], mean.shape[0]):
        raise ValueError(
            f"{name}: mean must be 1-D (P,) and cov (P, P); got {mean.shape} and {cov.shape}."
        )
    try:
        chol = np.linalg.cholesky(0.5 * (cov + cov.T))
    except np.linalg.LinAlgError:
        raise ValueError(f"{name}: the covariance is not positive definite.") from None
    return mean, cov, chol


def gaussian_kl(mean0, cov0, mean1, cov1):
    """KL(N(mean0, cov0) || N(mean1, cov1)) in nats.

    ``0.5 * (tr(cov1^-1 cov0) + (m1 - m0)^T cov1^-1 (m1 - m0) - P + log det cov1 - log det cov0)``,
    computed with Cholesky factors.

    Parameters
    ----------
    mean0, cov0 : array-like of shape (P,) and (P, P)
        The first Gaussian (the one the expectation is taken under).
    mean1, cov1 : array-like of shape (P,) and (P, P)
        The second Gaussian.

    Returns
    -------
    kl : float
        Non-negative; 0 only for equal Gaussians.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.metrics import gaussian_kl
    >>> gaussian_kl(np.zeros(2), np.eye(2), np.ones(2), np.eye(2))
    1.0
    """
    m0, S0, L0 = _check_gaussian(mean0, cov0, "first Gaussian")
    m1, S1, L1 = _check_gaussian(mean1, cov1, "second Gaussian")
    if m0.shape != m1.shape:
        raise ValueError(
            f"The Gaussians have different dimensions: {m0.shape[0]} and {m1.shape[0]}."
        )
    P = m0.shape[0]
    A = scipy.linalg.solve_triangular(L1, L0, lower=True)  # L1^-1 L0: tr(S1^-1 S0) = ||A||_F^2
    b = scipy.linalg.solve_triangular(L1, m1 - m0, lower=True)
    logdet = 2.0 * (np.sum(np.log(np.diag(L1))) - np.sum(np.log(np.diag(L0))))
    kl = 0.5 * (np.sum(A * A) + b @ b - P + logdet)
    return float(max(kl, 0.0))


def moment_fit(draws):
    """Mean and covariance of posterior draws (the moment-matched Gaussian).

    Parameters
    ----------
    draws : array-like of shape (n_draws, P) or (n_chains, n_draws, P)
        Posterior draws (chains pooled); at least two.

    Returns
    -------
    mean : ndarray of shape (P,)
        The mean of the draws.
    cov : ndarray of shape (P, P)
        Their covariance (divided by n_draws - 1).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.metrics import moment_fit
    >>> mean, cov = moment_fit(np.array([[0.0, 1.0], [2.0, 3.0]]))
    >>> mean, cov
    (array([1., 2.]), array([[2., 2.],
           [2., 2.]]))
    """
    D = _as_draws(draws, "draws")
    if D.shape[0] < 2:
        raise ValueError("A moment fit needs at least two draws.")
    return D.mean(axis=0), np.atleast_2d(np.cov(D, rowvar=False))


def _as_draws(draws, name):
    D = np.asarray(draws, dtype=np.float64)
    if D.ndim == 3:
        D = D.reshape(-1, D.shape[-1])
    if D.ndim == 1:
        D = D[:, None]
    if D.ndim != 2:
        raise ValueError(
            f"{name} must have shape (n_draws, P) or (n_chains, n_draws, P); got {D.shape}."
        )
    if not np.all(np.isfinite(D)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return D


def _resolve(model, X, y, prior_scale, fit_intercept, data_weight):
    """``(model with its prior, coded targets)``; prior_scale='auto' is the estimators' rule
    (:func:`~skcoreset.models.default_prior_scale`) on the full data."""
    named = isinstance(model, str)
    if named:
        name = model_from_targets(y) if model == "auto" else model
        model = get_model(name, fit_intercept=fit_intercept)
    if model.labels is not None:  # class labels: the model counts them (multinomial)
        labels = model.labels.fit(y)
        model, yv = model.with_classes(labels.classes), labels.encode(y)
    else:
        yv = model.encode_targets(y)
    if named and isinstance(prior_scale, str) and prior_scale == "auto":
        moments = Moments.of(X, yv, data_weight)
        _, _, y_mean, y_sd = moments.mean_and_sd()
        model = model.with_data_scale(y_mean, y_sd)
        prior_scale = prior_from_moments(model, moments)
    return (replace(model, prior_scale=prior_scale) if named else model), yv


def coreset_laplace(
    X,
    y,
    sample_indices,
    sample_weight,
    *,
    model="auto",
    prior_scale="auto",
    fit_intercept=True,
    data_weight=None,
):
    """Laplace fits of the full-data posterior and of the weighted-coreset posterior.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The full data (in the coreset's feature space).
    y : array-like of shape (n_samples,)
        Targets in the model's coding.
    sample_indices : array-like of int of shape (M,)
        Coreset rows (``coreset.sample_indices_``).
    sample_weight : array-like of shape (M,)
        Coreset weights (``coreset.sample_weight_``; they include ``data_weight``).
    model : 'auto', str or GLM, default='auto'
        Likelihood ('auto' infers it from ``y``). A free extra parameter (the Gaussian noise
        scale, the negative binomial dispersion, the gamma shape) is a parameter of both
        fits: each is the joint Laplace fit of the coefficients and its log.
    prior_scale : float or 'auto', default='auto'
        Prior standard deviation of both fits; 'auto' is the coreset estimators' default
        (:func:`~skcoreset.models.default_prior_scale` on the full data), so that the fits
        match theirs.
    fit_intercept : bool, default=True
        Whether the model has an intercept.
    data_weight : array-like of shape (n_samples,), default=None
        Weights of the full data's log-likelihood terms.

    Returns
    -------
    full, coreset : LaplaceApproximation
        The Laplace fits of the full-data and of the coreset posterior.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.datasets import make_logistic_regression
    >>> from skcoreset.metrics import coreset_laplace
    >>> X, y = make_logistic_regression(n_samples=300, n_features=2, random_state=0)
    >>> full, core = coreset_laplace(X, y, np.arange(300), np.ones(300))
    >>> bool(np.allclose(full.mean, core.mean))
    True
    """
    full, core = _fits(X, y, sample_indices, sample_weight, model, prior_scale, fit_intercept,
                       data_weight)  # fmt: skip
    if isinstance(core, Exception):
        raise ValueError(f"The coreset's posterior has no proper Laplace fit: {core}") from None
    return full, core


def _fits(X, y, sample_indices, sample_weight, model, prior_scale, fit_intercept, data_weight):
    """``(full, core)`` of :func:`coreset_laplace`; ``core`` is the error when the coreset's
    posterior has no proper Laplace fit (fewer points than parameters with a free extra
    parameter, a separable support without a prior to hold it)."""
    X, y, idx, w, s = _check_data(X, y, sample_indices, sample_weight, data_weight)
    lik, yv = _resolve(model, X, y, prior_scale, fit_intercept, s)
    Xd = lik.design(X)
    full = laplace_approximation(lik, Xd, yv, s, design=True)
    try:
        core = coreset_fit(full.free_model, np.ascontiguousarray(Xd[idx]), yv[idx], w, full.mean)
    except (ValueError, np.linalg.LinAlgError) as exc:
        core = exc
    return full, core


def _kl_direction(core, full, direction):
    if direction == "forward":  # KL(pi || pi_w): the full posterior's mass the coreset misses
        return gaussian_kl(full.mean, full.cov, core.mean, core.cov)
    if direction == "reverse":  # KL(pi_w || pi)
        return gaussian_kl(core.mean, core.cov, full.mean, full.cov)
    if direction == "symmetric":
        return 0.5 * (
            gaussian_kl(full.mean, full.cov, core.mean, core.cov)
            + gaussian_kl(core.mean, core.cov, full.mean, full.cov)
        )
    raise ValueError(f"direction must be one of {_DIRECTIONS}; got {direction!r}.")


def coreset_laplace_kl(
    X,
    y,
    sample_indices,
    sample_weight,
    *,
    direction="forward",
    model="auto",
    prior_scale="auto",
    fit_intercept=True,
    data_weight=None,
):
    """KL divergence between the Laplace fits of the full and the coreset posteriors.

    'forward' is KL(pi || pi_w) (full posterior first: large when the coreset posterior misses
    mass of the full one), 'reverse' is KL(pi_w || pi), 'symmetric' their mean. Both fits
    share the model and prior, and fit a free extra parameter jointly; see :func:`coreset_laplace`.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The full data (in the coreset's feature space).
    y : array-like of shape (n_samples,)
        Targets.
    sample_indices : array-like of int of shape (M,)
        Coreset rows (``coreset.sample_indices_``).
    sample_weight : array-like of shape (M,)
        Coreset weights (``coreset.sample_weight_``).
    direction : {'forward', 'reverse', 'symmetric'}, default='forward'
        Which divergence.
    model : 'auto', str or GLM, default='auto'
        Likelihood ('auto' infers it from ``y``).
    prior_scale : float or 'auto', default='auto'
        Prior standard deviation of both fits, as for :func:`coreset_laplace`.
    fit_intercept : bool, default=True
        Whether the model has an intercept.
    data_weight : array-like of shape (n_samples,), default=None
        Weights of the full data's log-likelihood terms.

    Returns
    -------
    kl : float
        The divergence in nats (0 when the two fits coincide; inf when the coreset's
        posterior has no proper Laplace fit, e.g. fewer points than parameters with a free
        extra parameter).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.datasets import make_logistic_regression
    >>> from skcoreset.metrics import coreset_laplace_kl
    >>> X, y = make_logistic_regression(n_samples=300, n_features=2, random_state=0)
    >>> round(coreset_laplace_kl(X, y, np.arange(300), np.ones(300)), 12)
    0.0
    """
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction must be one of {_DIRECTIONS}; got {direction!r}.")
    full, core = _fits(X, y, sample_indices, sample_weight, model, prior_scale, fit_intercept,
                       data_weight)  # fmt: skip
    if isinstance(core, Exception):  # no proper Laplace fit: as far as a posterior can be
        return float("inf")
    return _kl_direction(core, full, direction)


def _poly_kernel_sum(A, B, offset, degree, block=2048):
    """sum_{i, j} (offset + <a_i, b_j>)^degree, in blocks of rows to bound memory."""
    total = 0.0
    for start in range(0, A.shape[0], block):
        G = A[start : start + block] @ B.T
        G += offset
        total += float(np.sum(G**degree))
    return total


def _poly_kernel_diag(A, offset, degree):
    return float(np.sum((offset + np.einsum("ij,ij->i", A, A)) ** degree))


def polynomial_mmd(draws0, draws1, *, offset=0.2, degree=3, unbiased=True):
    """Squared maximum mean discrepancy with the kernel k(a, b) = (offset + <a, b>)^degree.

    With the defaults, the measure of the coreset papers: (0.2 + <a, b>)^3 between two sets of
    posterior draws (e.g. MCMC on the coreset vs on the full data). The polynomial kernel of
    degree 3 compares the first three moments of the two distributions.

    Parameters
    ----------
    draws0, draws1 : array-like of shape (n, P) and (m, P), or (chains, draws, P)
        The two samples (same P; n, m >= 2 for the unbiased estimate).
    offset : float, default=0.2
        The kernel's offset.
    degree : int, default=3
        The kernel's degree.
    unbiased : bool, default=True
        True: the U-statistic (mean over i != j of the within-sample terms; unbiased for
        MMD^2, may be slightly negative). False: the V-statistic (all pairs, i = j included;
        biased upwards, always >= 0).

    Returns
    -------
    mmd2 : float
        Estimate of MMD^2 = E k(a, a') + E k(b, b') - 2 E k(a, b).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.metrics import polynomial_mmd
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.standard_normal((500, 2)), rng.standard_normal((500, 2))
    >>> abs(polynomial_mmd(a, b)) < polynomial_mmd(a, b + 1.0)
    True
    """
    A = _as_draws(draws0, "draws0")
    B = _as_draws(draws1, "draws1")
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"The draws have different dimensions: {A.shape[1]} and {B.shape[1]}.")
    n, m = A.shape[0], B.shape[0]
    kaa = _poly_kernel_sum(A, A, offset, degree)
    kbb = _poly_kernel_sum(B, B, offset, degree)
    kab = _poly_kernel_sum(A, B, offset, degree)
    if unbiased:
        if n < 2 or m < 2:
            raise ValueError("The unbiased estimate needs at least two draws in each sample.")
        kaa = (kaa - _poly_kernel_diag(A, offset, degree)) / (n * (n - 1))
        kbb = (kbb - _poly_kernel_diag(B, offset, degree)) / (m * (m - 1))
    else:
        kaa /= n * n
        kbb /= m * m
    return float(kaa + kbb - 2.0 * kab / (n * m))


def fisher_distance(
    X,
    y,
    sample_indices,
    sample_weight,
    theta,
    *,
    model="auto",
    prior_scale="auto",
    fit_intercept=True,
    data_weight=None,
    extra=None,
    normalize=False,
    noise_scale=None,
):
    """Mean over parameter draws of ||grad L(w; theta_t) - grad L(theta_t)||^2.

    L(theta) = sum_n s_n l_n(theta) is the full-data log-likelihood (s: ``data_weight``,
    ones by default) and L(w; theta) = sum_m w_m l_m(theta) the coreset's. The draws
    theta_t should come from the full posterior (e.g. MCMC on all rows, or its Laplace fit):
    the prior's gradient is the same on both sides and cancels.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The full data (in the coreset's feature space).
    y : array-like of shape (n_samples,)
        Targets.
    sample_indices : array-like of int of shape (M,)
        Coreset rows (``coreset.sample_indices_``).
    sample_weight : array-like of shape (M,)
        Coreset weights (``coreset.sample_weight_``).
    theta : array-like of shape (T, P) or (chains, draws, P)
        Parameter draws, the intercept last when ``fit_intercept`` (P = n_features + 1).
    model : 'auto', str or GLM, default='auto'
        Likelihood ('auto' infers it from ``y``).
    prior_scale : float or 'auto', default='auto'
        Unused by the distance (the prior cancels); kept for the model's construction.
    fit_intercept : bool, default=True
        Whether the model has an intercept.
    data_weight : array-like of shape (n_samples,), default=None
        Weights of the full data's log-likelihood terms.
    extra : float, default=None
        The model's extra parameter, when it has one (the Gaussian noise standard deviation,
        the negative binomial dispersion, the gamma shape; None: estimated on the full data).
    normalize : bool, default=False
        False: the distance of the papers, in squared log-likelihood-gradient units (it
        grows like N^2 with the data size). True: divided by mean_t ||grad L(theta_t)||^2,
        a scale-free relative distance (0 for a perfect coreset, 1 for empty weights).
    noise_scale : float, default=None
        ``extra``'s name before 0.1 (a ``FutureWarning``; removed in 0.2).

    Returns
    -------
    distance : float
        The mean squared gradient difference (relative when ``normalize``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.datasets import make_logistic_regression
    >>> from skcoreset.metrics import fisher_distance
    >>> X, y = make_logistic_regression(n_samples=300, n_features=2, random_state=0)
    >>> theta = np.random.default_rng(0).standard_normal((10, 3))
    >>> fisher_distance(X, y, np.arange(300), np.ones(300), theta)
    0.0
    >>> fisher_distance(X, y, [0], [300.0], theta, normalize=True) > 0
    True
    """
    if noise_scale is not None:
        extra = renamed("noise_scale=", "extra=", noise_scale, extra)
    X, y, idx, w, s = _check_data(X, y, sample_indices, sample_weight, data_weight)
    lik, yv = _resolve(model, X, y, prior_scale, fit_intercept, s)
    Xd = lik.design(X)
    if s is None:
        s = np.ones(Xd.shape[0])
    if lik.has_extra and lik.extra is None:
        lik = with_extra(lik, extra if extra is not None else lik.estimate_extra(Xd, yv, s))
    # one parameter vector of shape (P,) is one draw, not P draws of a scalar
    T = _as_draws(np.atleast_2d(theta) if np.ndim(theta) == 1 else theta, "theta")
    if T.shape[1] != Xd.shape[1]:
        raise ValueError(
            f"theta has {T.shape[1]} parameters; the model has {Xd.shape[1]} (intercept last)."
        )
    Xc, yc = np.ascontiguousarray(Xd[idx]), yv[idx]
    diff2 = np.empty(T.shape[0])
    full2 = np.empty(T.shape[0])
    for t, th in enumerate(T):
        g_full = s @ lik.loglik_grad_per_datum(th, Xd, yv)
        g_core = w @ lik.loglik_grad_per_datum(th, Xc, yc)
        diff2[t] = np.sum((g_core - g_full) ** 2)
        full2[t] = np.sum(g_full**2)
    dist = float(diff2.mean())
    if normalize:
        denom = float(full2.mean())
        if denom == 0:
            raise ValueError("The full-data gradient vanishes at every draw; cannot normalise.")
        dist /= denom
    return dist
