"""Numba kernels of the Student-t model: the projections' features and the sampler's target.

A draw is ``(beta, sigma, nu)``; its constants are prepared once by the model
(``StudentTModel._kernel_args``: ``1/sigma``, ``1/nu``, ``(nu + 1)/2``, the log density's
constant and the row-free part of the derivative in ``log nu``), so a row costs one product
with the coefficients and one ``fast_log1p`` per draw, in loops over the draws that
vectorise. Imports no scikit-learn nor SciPy.
"""

import numpy as np
from numba import njit, prange

from ._fastmath_kernels import fast_log1p

_CONTRACT = {"contract"}

#: Rows per task of the threaded kernels (enough work to pay for a task).
_ROW_CHUNK = 256


@njit(cache=True, fastmath=_CONTRACT)
def _row_terms(x, beta_t, y, consts, e, z2):
    """Each draw's linear predictor at row ``x`` into ``e``, then its standardised residual
    ``z = (y - eta) / sigma`` into ``e`` and ``z^2 / nu`` into ``z2``."""
    Q, J = beta_t.shape
    for j in range(J):
        e[j] = 0.0
    for q in range(Q):
        xq = x[q]
        row = beta_t[q]
        for j in range(J):
            e[j] += xq * row[j]
    inv_sigma, inv_nu = consts[0], consts[1]
    for j in range(J):
        z = (y - e[j]) * inv_sigma[j]
        e[j] = z
        z2[j] = z * z * inv_nu[j]


@njit(cache=True, parallel=True, fastmath=_CONTRACT)
def loglik_features(X, beta_t, y, consts, scale, center, out):
    """``out[i, j] = scale * (l_i(theta_j) - mean_j l_i)`` (no centring without ``center``):
    the log-likelihood projection. ``beta_t`` (Q, J); ``consts`` (5, J), see the module."""
    N = X.shape[0]
    J = beta_t.shape[1]
    half_nu1, const = consts[2], consts[3]
    n_chunks = (N + _ROW_CHUNK - 1) // _ROW_CHUNK
    for c in prange(n_chunks):
        e = np.empty(J)
        z2 = np.empty(J)
        for i in range(c * _ROW_CHUNK, min(N, (c + 1) * _ROW_CHUNK)):
            _row_terms(X[i], beta_t, y[i], consts, e, z2)
            total = 0.0
            for j in range(J):
                v = const[j] - half_nu1[j] * fast_log1p(z2[j])
                e[j] = v
                total += v
            shift = total / J if center else 0.0
            for j in range(J):
                out[i, j] = scale * (e[j] - shift)


@njit(cache=True, parallel=True, fastmath=_CONTRACT)
def fisher_features(X, beta_t, y, consts, coords, scale, out):
    """``out[i, j] = scale * d l_i / d theta_{coords[j]}`` at draw j: a coefficient's
    derivative, or that of log sigma (coordinate Q) or log nu (Q + 1)."""
    N, Q = X.shape
    J = beta_t.shape[1]
    inv_sigma, inv_nu, half_nu1, dnu0 = consts[0], consts[1], consts[2], consts[4]
    n_chunks = (N + _ROW_CHUNK - 1) // _ROW_CHUNK
    for c in prange(n_chunks):
        e = np.empty(J)
        z2 = np.empty(J)
        for i in range(c * _ROW_CHUNK, min(N, (c + 1) * _ROW_CHUNK)):
            x = X[i]
            _row_terms(x, beta_t, y[i], consts, e, z2)
            for j in range(J):
                k = coords[j]
                r = np.divide(1.0, 1.0 + z2[j])  # nu / (nu + z^2)
                frac = z2[j] * r  # z^2 / (nu + z^2)
                if k < Q:
                    # (nu + 1) z / (sigma (nu + z^2)) x_k
                    v = 2.0 * half_nu1[j] * e[j] * inv_sigma[j] * inv_nu[j] * r * x[k]
                elif k == Q:
                    # (nu + 1) z^2 / (nu + z^2) - 1
                    v = 2.0 * half_nu1[j] * frac - 1.0
                else:
                    # nu/2 (psi((nu+1)/2) - psi(nu/2) - 1/nu - log1p(z^2/nu))
                    #   + (nu + 1)/2 z^2 / (nu + z^2)
                    nu = np.divide(1.0, inv_nu[j])  # inf: a far proposal, rejected
                    v = dnu0[j] - 0.5 * nu * fast_log1p(z2[j]) + half_nu1[j] * frac
                out[i, j] = scale * v


@njit(cache=True, fastmath=_CONTRACT)
def weighted_chains(X, y, w, beta_t, consts, ll, grad):
    """The weighted log-likelihood ``ll[c]`` and its gradient ``grad[c]`` (coefficients, log
    sigma, log nu) of each draw c (a column of ``beta_t``), one pass over the rows."""
    N, Q = X.shape
    C = beta_t.shape[1]
    inv_sigma, inv_nu, half_nu1, const, dnu0 = consts[0], consts[1], consts[2], consts[3], consts[4]
    e = np.empty(C)
    z2 = np.empty(C)
    d = np.empty(C)
    for c in range(C):
        ll[c] = 0.0
        for p in range(Q + 2):
            grad[c, p] = 0.0
    for i in range(N):
        wi = w[i]
        x = X[i]
        _row_terms(x, beta_t, y[i], consts, e, z2)
        for c in range(C):
            r = np.divide(1.0, 1.0 + z2[c])
            frac = z2[c] * r
            lg = fast_log1p(z2[c])
            ll[c] += wi * (const[c] - half_nu1[c] * lg)
            d[c] = wi * 2.0 * half_nu1[c] * e[c] * inv_sigma[c] * inv_nu[c] * r
            grad[c, Q] += wi * (2.0 * half_nu1[c] * frac - 1.0)
            nu = np.divide(1.0, inv_nu[c])  # inf: a far proposal, rejected
            grad[c, Q + 1] += wi * (dnu0[c] - 0.5 * nu * lg + half_nu1[c] * frac)
        for q in range(Q):
            xq = x[q]
            for c in range(C):
                grad[c, q] += d[c] * xq
