"""Numba kernels of the generalised linear likelihoods.

Every model here is a function of the linear predictor ``eta = x . theta`` only, so three
scalar functions per model describe it completely:

* ``loglik(eta, y)``   the per-datum log-likelihood,
* ``dloglik(eta, y)``  its derivative in ``eta`` (the gradient is ``dloglik * x``),
* ``curv(eta, y)``     minus its second derivative (the Hessian weight, >= 0).

The model is selected by an integer code so that one compiled kernel serves all of them
(the branch is perfectly predictable inside the loops). This module imports no scikit-learn:
the MALA sampler and the projections call these kernels directly.
"""

import math

import numpy as np
from numba import njit, prange

LOGISTIC = 0
POISSON = 1
GAUSSIAN = 2

_LOG_2PI = math.log(2.0 * math.pi)


@njit(cache=True, inline="always")
def softplus(s):
    """log(1 + exp(s)) without overflow for any finite s.

    ``log(1 + t)`` rather than ``log1p(t)``: it is 2x faster and, for t = exp(-|s|) <= 1, its
    absolute error stays below 1e-16, which is all a log-likelihood needs.
    """
    if s > 0.0:
        return s + math.log(1.0 + math.exp(-s))
    return math.log(1.0 + math.exp(s))


@njit(cache=True, inline="always")
def sigmoid(s):
    """1 / (1 + exp(-s)) without overflow."""
    if s >= 0.0:
        return 1.0 / (1.0 + math.exp(-s))
    e = math.exp(s)
    return e / (1.0 + e)


@njit(cache=True, inline="always")
def loglik(kind, eta, y, noise):
    """Per-datum log-likelihood at linear predictor ``eta``.

    ``noise`` is the Gaussian noise scale (ignored by the other models). The Poisson constant
    ``-log(y!)`` is included so that values are true log-probabilities.
    """
    if kind == LOGISTIC:
        # y in {0, 1}: y * eta - log(1 + e^eta)
        return y * eta - softplus(eta)
    elif kind == POISSON:
        return y * eta - math.exp(eta) - math.lgamma(y + 1.0)
    else:
        r = (y - eta) / noise
        return -0.5 * r * r - math.log(noise) - 0.5 * _LOG_2PI


@njit(cache=True, inline="always")
def dloglik(kind, eta, y, noise):
    """Derivative of the per-datum log-likelihood in ``eta``."""
    if kind == LOGISTIC:
        return y - sigmoid(eta)
    elif kind == POISSON:
        return y - math.exp(eta)
    else:
        return (y - eta) / (noise * noise)


@njit(cache=True, inline="always")
def curv(kind, eta, y, noise):
    """Minus the second derivative of the log-likelihood in ``eta`` (>= 0)."""
    if kind == LOGISTIC:
        p = sigmoid(eta)
        return p * (1.0 - p)
    elif kind == POISSON:
        return math.exp(eta)
    else:
        return 1.0 / (noise * noise)


# Rows per parallel task of the fused (N, J) kernels.
_ROW_CHUNK = 256


@njit(cache=True, parallel=True)
def loglik_matrix(kind, X, thetas_t, y, noise, scale, center, out):
    """Fused ``out[i, j] = scale * (l_i(theta_j) - [mean_j l_i])``, an (N, J) evaluation.

    ``thetas_t`` is (P, J): the product ``x_i . theta_j`` is accumulated into a J-buffer per
    row, then the likelihood is applied in place, so no (N, J) temporary is ever made. We do
    not call BLAS for the product: its spinning threads would fight this kernel's threads, and
    for the small P of GLMs the loop is as fast. ``out`` may be float32.
    """
    N, P = X.shape
    J = thetas_t.shape[1]
    n_chunks = (N + _ROW_CHUNK - 1) // _ROW_CHUNK
    for c in prange(n_chunks):
        buf = np.empty(J)
        for i in range(c * _ROW_CHUNK, min(N, (c + 1) * _ROW_CHUNK)):
            linear_predictors(X, thetas_t, i, buf)
            yi = y[i]
            total = 0.0
            for j in range(J):
                v = loglik(kind, buf[j], yi, noise)
                buf[j] = v
                total += v
            shift = total / J if center else 0.0
            for j in range(J):
                out[i, j] = scale * (buf[j] - shift)


@njit(cache=True, inline="always")
def linear_predictors(X, thetas_t, i, buf):
    """buf[j] = X[i] . theta_j, vectorised over j."""
    P = X.shape[1]
    J = thetas_t.shape[1]
    for j in range(J):
        buf[j] = 0.0
    for k in range(P):
        xik = X[i, k]
        for j in range(J):
            buf[j] += xik * thetas_t[k, j]


@njit(cache=True)
def loglik_vector(kind, eta, y, noise):
    """Per-datum log-likelihoods for one parameter (``eta`` of length n)."""
    out = np.empty(eta.shape[0])
    for i in range(eta.shape[0]):
        out[i] = loglik(kind, eta[i], y[i], noise)
    return out


@njit(cache=True)
def dloglik_vector(kind, eta, y, noise):
    """Derivatives in ``eta`` for one parameter (per-datum gradient = this times ``x_n``)."""
    out = np.empty(eta.shape[0])
    for i in range(eta.shape[0]):
        out[i] = dloglik(kind, eta[i], y[i], noise)
    return out


@njit(cache=True)
def weighted_loglik_grad(kind, theta, X, y, w, noise, grad):
    """Weighted log-likelihood ``sum_n w_n l_n(theta)``; its gradient is written to ``grad``.

    One pass over ``X`` and no allocation: this is the inner loop of MALA and of Newton's
    method, O(n D).
    """
    n, d = X.shape
    for k in range(d):
        grad[k] = 0.0
    total = 0.0
    for i in range(n):
        eta = 0.0
        for k in range(d):
            eta += X[i, k] * theta[k]
        wi = w[i]
        if kind == LOGISTIC:
            # One exp shared by the log-likelihood and its derivative: the transcendental
            # functions dominate the cost of this loop at small D.
            e = math.exp(-abs(eta))
            log1pe = math.log(1.0 + e)
            if eta > 0.0:
                total += wi * (y[i] * eta - eta - log1pe)
                g = wi * (y[i] - 1.0 / (1.0 + e))
            else:
                total += wi * (y[i] * eta - log1pe)
                g = wi * (y[i] - e / (1.0 + e))
        else:
            total += wi * loglik(kind, eta, y[i], noise)
            g = wi * dloglik(kind, eta, y[i], noise)
        for k in range(d):
            grad[k] += g * X[i, k]
    return total


@njit(cache=True)
def weighted_hessian(kind, theta, X, y, w, noise):
    """``sum_n w_n curv_n x_n x_n^T``: the Hessian of the negative weighted log-likelihood."""
    n, d = X.shape
    H = np.zeros((d, d))
    for i in range(n):
        eta = 0.0
        for k in range(d):
            eta += X[i, k] * theta[k]
        c = w[i] * curv(kind, eta, y[i], noise)
        for a in range(d):
            ca = c * X[i, a]
            for b in range(a + 1):
                H[a, b] += ca * X[i, b]
    for a in range(d):
        for b in range(a):
            H[b, a] = H[a, b]
    return H
