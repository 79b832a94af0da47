"""Synthetic regression data with a known parameter, for tests and benchmarks."""

import numpy as np
from sklearn.utils import check_random_state


def _design(n_samples, n_features, coef, intercept, feature_scale, rng):
    X = rng.standard_normal((n_samples, n_features)) * feature_scale
    if coef is None:
        coef = rng.standard_normal(n_features) / np.sqrt(n_features)
    coef = np.asarray(coef, dtype=np.float64)
    if coef.shape != (n_features,):
        raise ValueError(f"coef must have shape ({n_features},), got {coef.shape}.")
    return X, coef, X @ coef + intercept


def make_logistic_regression(
    n_samples=1000,
    n_features=10,
    *,
    coef=None,
    intercept=0.0,
    feature_scale=1.0,
    return_coef=False,
    random_state=None,
):
    """Draw binary data from a logistic regression, y ~ Bernoulli(sigmoid(X @ coef + intercept)).

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    n_features : int, default=10
        Number of features (the intercept excluded).
    coef : array-like of shape (n_features,), default=None
        True coefficients; by default standard normal scaled by 1/sqrt(n_features).
    intercept : float, default=0.0
        True intercept.
    feature_scale : float, default=1.0
        Standard deviation of the Gaussian features.
    return_coef : bool, default=False
        Also return the true coefficients.
    random_state : int, RandomState instance or None, default=None
        Seeds the features, the coefficients and the targets.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The features.
    y : ndarray of shape (n_samples,)
        Labels in {0, 1} (int64).
    coef : ndarray of shape (n_features,)
        The true coefficients; only if ``return_coef``.

    Examples
    --------
    >>> from skcoreset.datasets import make_logistic_regression
    >>> X, y = make_logistic_regression(n_samples=100, n_features=3, random_state=0)
    >>> X.shape, y.shape
    ((100, 3), (100,))
    """
    rng = check_random_state(random_state)
    X, coef, eta = _design(n_samples, n_features, coef, intercept, feature_scale, rng)
    y = (rng.random_sample(n_samples) < 1.0 / (1.0 + np.exp(-eta))).astype(np.int64)
    return (X, y, coef) if return_coef else (X, y)


def make_poisson_regression(
    n_samples=1000,
    n_features=10,
    *,
    coef=None,
    intercept=1.0,
    feature_scale=0.5,
    return_coef=False,
    random_state=None,
):
    """Draw count data from a Poisson regression, y ~ Poisson(exp(X @ coef + intercept)).

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    n_features : int, default=10
        Number of features (the intercept excluded).
    coef : array-like of shape (n_features,), default=None
        True coefficients; by default standard normal scaled by 1/sqrt(n_features).
    intercept : float, default=1.0
        True intercept.
    feature_scale : float, default=0.5
        Standard deviation of the Gaussian features.
    return_coef : bool, default=False
        Also return the true coefficients.
    random_state : int, RandomState instance or None, default=None
        Seeds the features, the coefficients and the targets.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The features.
    y : ndarray of shape (n_samples,)
        Counts (int64).
    coef : ndarray of shape (n_features,)
        The true coefficients; only if ``return_coef``.

    Examples
    --------
    >>> from skcoreset.datasets import make_poisson_regression
    >>> X, y = make_poisson_regression(n_samples=100, n_features=3, random_state=0)
    >>> X.shape, y.shape
    ((100, 3), (100,))
    """
    rng = check_random_state(random_state)
    X, coef, eta = _design(n_samples, n_features, coef, intercept, feature_scale, rng)
    y = rng.poisson(np.exp(eta)).astype(np.int64)
    return (X, y, coef) if return_coef else (X, y)


def make_linear_regression(
    n_samples=1000,
    n_features=10,
    *,
    coef=None,
    intercept=0.0,
    noise_scale=1.0,
    feature_scale=1.0,
    return_coef=False,
    random_state=None,
):
    """Draw real data from a Gaussian-linear model, y = X @ coef + intercept + noise.

    The noise is ``noise_scale * N(0, 1)``, independent across rows.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    n_features : int, default=10
        Number of features (the intercept excluded).
    coef : array-like of shape (n_features,), default=None
        True coefficients; by default standard normal scaled by 1/sqrt(n_features).
    intercept : float, default=0.0
        True intercept.
    noise_scale : float, default=1.0
        Standard deviation of the noise.
    feature_scale : float, default=1.0
        Standard deviation of the Gaussian features.
    return_coef : bool, default=False
        Also return the true coefficients.
    random_state : int, RandomState instance or None, default=None
        Seeds the features, the coefficients and the targets.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The features.
    y : ndarray of shape (n_samples,)
        Real targets (float64).
    coef : ndarray of shape (n_features,)
        The true coefficients; only if ``return_coef``.

    Examples
    --------
    >>> from skcoreset.datasets import make_linear_regression
    >>> X, y = make_linear_regression(n_samples=100, n_features=3, random_state=0)
    >>> X.shape, y.shape
    ((100, 3), (100,))
    """
    rng = check_random_state(random_state)
    X, coef, eta = _design(n_samples, n_features, coef, intercept, feature_scale, rng)
    y = eta + noise_scale * rng.standard_normal(n_samples)
    return (X, y, coef) if return_coef else (X, y)
