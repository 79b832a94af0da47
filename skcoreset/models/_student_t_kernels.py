"""Numba kernels of the Student-t model: the projections' features and the sampler's target.

A draw is ``(beta, sigma, nu)``; its constants are prepared once (:func:`draw_constants`:
``1/sigma``, ``1/nu``, ``(nu + 1)/2``, the log density's constant and the row-free part of
the derivative in ``log nu``), so a row costs one product with the coefficients and one
``fast_log1p`` per draw, in loops that vectorise. The sampler's target takes its linear
predictors and its coefficients' gradient from BLAS (:func:`chain_terms` does the rest).
Imports no scikit-learn nor SciPy.
"""

import math

import numpy as np
from numba import njit

from .._parallel_kernels import THREADED_ROWS, row_task_kernel
from ._fastmath_kernels import fast_log1p
from ._glm_kernels import (
    FEATURES_MIN_ENTRIES,
    SUMMARY_GROUP,
    _add_group_products,
    dot_reassoc,
    group_rows,
    sum_reassoc,
)
from ._special_kernels import digamma

_CONTRACT = {"contract"}


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


@row_task_kernel(FEATURES_MIN_ENTRIES, rows=("X", "y", "out"), tasks=(), fastmath=_CONTRACT)
def loglik_features(X, beta_t, y, consts, scale, center, out):
    """``out[i, j] = scale * (l_i(theta_j) - mean_j l_i)`` (no centring without ``center``):
    the log-likelihood projection. ``beta_t`` (Q, J); ``consts`` from :func:`draw_constants`."""
    N = X.shape[0]
    J = beta_t.shape[1]
    half_nu1, const = consts[2], consts[3]
    e = np.empty(J)
    z2 = np.empty(J)
    for i in range(N):
        _row_terms(X[i], beta_t, y[i], consts, e, z2)
        total = 0.0
        for j in range(J):
            v = const[j] - half_nu1[j] * fast_log1p(z2[j])
            e[j] = v
            total += v
        shift = total / J if center else 0.0
        for j in range(J):
            out[i, j] = scale * (e[j] - shift)


@row_task_kernel(FEATURES_MIN_ENTRIES, rows=("X", "y", "out"), tasks=(), fastmath=_CONTRACT)
def fisher_features(X, beta_t, y, consts, coords, scale, out):
    """``out[i, j] = scale * d l_i / d theta_{coords[j]}`` at draw j: a coefficient's
    derivative, or that of log sigma (coordinate Q) or log nu (Q + 1)."""
    N, Q = X.shape
    J = beta_t.shape[1]
    inv_sigma, inv_nu, half_nu1, dnu0 = consts[0], consts[1], consts[2], consts[4]
    e = np.empty(J)
    z2 = np.empty(J)
    for i in range(N):
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
def chain_terms(E, y, w, consts, ll, d_eta, grad_extra):
    """From the linear predictors ``E`` (C, N) of C draws: ``ll[c]``, the weighted
    log-likelihoods; ``d_eta`` (C, N), each row's weighted derivative in its predictor (the
    caller's product with the design gives the coefficients' gradient); ``grad_extra`` (C, 2),
    the weighted derivatives in log sigma and log nu. The rows' terms are written in a loop
    that vectorises (no reduction in it: the elementary functions need the exact IEEE order),
    then summed by :func:`sum_reassoc`."""
    C, N = E.shape
    inv_sigma, inv_nu, half_nu1, const, dnu0 = consts[0], consts[1], consts[2], consts[3], consts[4]
    t_ll = np.empty(N)
    t_sigma = np.empty(N)
    t_nu = np.empty(N)
    for c in range(C):
        e = E[c]
        out = d_eta[c]
        a, b, h, k, g0 = inv_sigma[c], inv_nu[c], half_nu1[c], const[c], dnu0[c]
        half_nu = 0.5 * np.divide(1.0, b)  # inf: a far proposal, rejected
        for i in range(N):
            z = (y[i] - e[i]) * a
            z2 = z * z * b
            r = np.divide(1.0, 1.0 + z2)
            frac = z2 * r
            lg = fast_log1p(z2)
            wi = w[i]
            t_ll[i] = wi * (k - h * lg)
            out[i] = wi * 2.0 * h * z * a * b * r
            t_sigma[i] = wi * (2.0 * h * frac - 1.0)
            t_nu[i] = wi * (g0 - half_nu * lg + h * frac)
        ll[c] = sum_reassoc(t_ll)
        grad_extra[c, 0] = sum_reassoc(t_sigma)
        grad_extra[c, 1] = sum_reassoc(t_nu)


@njit(cache=True, inline="always")
def point_terms(eta, y, inv_sigma, inv_nu, half_nu1, const, dnu0):
    """One row at one draw (its constants from :func:`draw_constants`): the log density and
    its derivatives in ``eta``, ``log sigma`` and ``log nu`` (the multilevel quadrature's
    nodes; :func:`chain_terms` writes the same terms in a loop that vectorises)."""
    z = (y - eta) * inv_sigma
    z2 = z * z * inv_nu
    r = np.divide(1.0, 1.0 + z2)
    frac = z2 * r
    lg = math.log1p(z2)
    d_eta = 2.0 * half_nu1 * z * inv_sigma * inv_nu * r
    d_sigma = 2.0 * half_nu1 * frac - 1.0
    d_nu = dnu0 - 0.5 * np.divide(1.0, inv_nu) * lg + half_nu1 * frac
    return const - half_nu1 * lg, d_eta, d_sigma, d_nu


#: From these degrees of freedom on, the constants come from asymptotic series: the
#: differences of lgamma and digamma at (nu + 1)/2 and nu/2 cancel nu log nu and log nu (at
#: nu = 1e10, 1e-5 of error in the constant; times weights of 1e12, noise of 1e7 in the
#: sampler's target, whose chains then stuck).
SERIES_NU = 50.0
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


@njit(cache=True, inline="always")
def _stirling_tail(x):
    # lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2), x >= 25: below 1e-15 truncated
    inv = 1.0 / x
    inv2 = inv * inv
    return inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0 - inv2 / 1680.0)))


@njit(cache=True, inline="always")
def _digamma_tail(x):
    # digamma(x) - (log x - 1/(2x)), x >= 25 (terms to x^-10: below 1e-19 truncated)
    inv2 = 1.0 / (x * x)
    return -inv2 * (
        1.0 / 12.0
        - inv2 * (1.0 / 120.0 - inv2 * (1.0 / 252.0 - inv2 * (1.0 / 240.0 - inv2 / 132.0)))
    )


@njit(cache=True, inline="always")
def _log1pmx_over_u2(u):
    # (log1p(u) - u) / u^2 for 0 <= u <= 0.02 (series to u^9: 1e-18 truncated)
    tail = u * (-1.0 / 8.0 + u * (1.0 / 9.0 + u * (-1.0 / 10.0 + u / 11.0)))
    return -0.5 + u * (
        1.0 / 3.0 + u * (-0.25 + u * (0.2 + u * (-1.0 / 6.0 + u * (1.0 / 7.0 + tail))))
    )


@njit(cache=True)
def log_density_constant(v):
    """``lgamma((nu + 1)/2) - lgamma(nu/2) - log(pi nu) / 2``, accurate for any ``nu > 0``
    (-log(2 pi) / 2 as nu -> inf; see ``SERIES_NU``)."""
    if v < SERIES_NU:
        return math.lgamma(0.5 * (v + 1.0)) - math.lgamma(0.5 * v) - 0.5 * math.log(math.pi * v)
    if v == math.inf:
        return -_HALF_LOG_2PI
    # with x = nu/2: x log1p(1/(2x)) - 1/2 + c(x + 1/2) - c(x) - log(2 pi)/2, and
    # x log1p(u) - 1/2 = (log1p(u) - u) x, u = 1/nu, x u^2 = 1 / (2 nu)
    x, u = 0.5 * v, 1.0 / v
    gap = _stirling_tail(x + 0.5) - _stirling_tail(x)
    return -_HALF_LOG_2PI + 0.5 * u * _log1pmx_over_u2(u) + gap


@njit(cache=True)
def dlog_nu_constant(v):
    """``nu/2 (digamma((nu + 1)/2) - digamma(nu/2) - 1/nu)``, the row-free part of the
    derivative in log nu, accurate for any ``nu > 0`` (1/(4 nu) as nu -> inf)."""
    if v < SERIES_NU:
        return 0.5 * v * (digamma(0.5 * (v + 1.0)) - digamma(0.5 * v) - np.divide(1.0, v))
    if v == math.inf:
        return 0.0
    # digamma(x + 1/2) - digamma(x) - 1/(2x) = log1p(u) - u/(1 + u) + tails, u = 1/(2x) = 1/nu
    # (nu u^2 = u: no underflow of u^2 for nu up to 1e308)
    x, u = 0.5 * v, 1.0 / v
    head = 0.5 * u * (_log1pmx_over_u2(u) + 1.0 / (1.0 + u))
    return head + 0.5 * v * (_digamma_tail(x + 0.5) - _digamma_tail(x))


@njit(cache=True)
def draw_constants(sigma, nu):
    """Per draw, the rows of a (5, J) array: ``1/sigma``, ``1/nu``, ``(nu + 1)/2``, the log
    density's constant and the row-free part of the derivative in log nu."""
    J = sigma.shape[0]
    out = np.empty((5, J))
    for j in range(J):
        s, v = sigma[j], nu[j]
        out[0, j] = np.divide(1.0, s)
        out[1, j] = np.divide(1.0, v)
        out[2, j] = 0.5 * (v + 1.0)
        out[3, j] = log_density_constant(v) - math.log(s)
        out[4, j] = dlog_nu_constant(v)
    return out


@row_task_kernel(THREADED_ROWS, rows=("X", "y", "w", "spread"), tasks=("parts",))
def summary_tasks(X, intercept, beta, y, w, point, L, want_spread, size, parts, spread):
    """``parts[c] += [G, H]`` of rows ``c size .. (c + 1) size - 1`` and each row's spread, in
    the coefficients, log sigma and log nu (``StudentTModel.second_order_sums``).

    ``point = (sigma, nu, dnu0, dnu0')``: the scale, the degrees of freedom, the row-free
    part of the score in log nu and its derivative in log nu. The rows are read as stored
    (float32 or float64) in groups laid out by column, as the single-index models' summary
    (``coreset._taylor_kernels``). A part is ``G`` (Q + 2) then ``H``'s lower triangle in a
    (Q + 2) square; the spread is ``sqrt(|g|^2 + c^2 s^4 / 2)`` with ``g`` the row's whole
    gradient whitened by ``L`` and ``s^2 = x^T Sigma_beta x`` (``want_spread``: computed,
    into ``spread``, one entry a row; else ``spread`` may be empty).
    """
    n = X.shape[0]
    Q = beta.shape[0]
    S = Q + 2
    sigma, nu, dnu0, ddnu0 = point[0], point[1], point[2], point[3]
    nu1 = nu + 1.0
    for c in range(parts.shape[0]):
        part = parts[c]
        H = part[S:].reshape((S, S))
        coef_H = H[:Q, :Q]
        cols = np.empty((Q, SUMMARY_GROUP))
        weighted = np.empty((Q, SUMMARY_GROUP))
        z = np.empty((Q, SUMMARY_GROUP))
        e = np.empty(SUMMARY_GROUP)
        terms = np.empty((9, SUMMARY_GROUP))  # d, c, ds, dn, xs, xn, css, csn, cnn
        end = min(n, (c + 1) * size)
        for i0 in range(c * size, end, SUMMARY_GROUP):
            m = min(SUMMARY_GROUP, end - i0)
            group_rows(cols, X, i0, m, intercept)
            for r in range(m):
                e[r] = cols[0, r] * beta[0]
            for k in range(1, Q):
                ck = cols[k]
                bk = beta[k]
                for r in range(m):
                    e[r] += ck[r] * bk
            for r in range(m):
                # in u = z^2 / q and 1 / q (q = nu + z^2), bounded however far the residual
                # z: the squares of a target of 1e100 would overflow the textbook forms
                zr = (y[i0 + r] - e[r]) / sigma
                az = abs(zr)
                if az > 1e100:
                    inv_q = (1.0 / az) / az
                    u = 1.0 - nu * inv_q
                    l1p = 2.0 * math.log(az) - math.log(nu)
                else:
                    z2 = zr * zr
                    inv_q = 1.0 / (nu + z2)
                    u = z2 * inv_q
                    l1p = math.log1p(z2 / nu)
                zq = zr * inv_q  # z / q
                terms[0, r] = nu1 * zq / sigma
                terms[1, r] = nu1 * (nu * inv_q - u) * inv_q / (sigma * sigma)
                terms[2, r] = nu1 * u - 1.0
                terms[3, r] = dnu0 + 0.5 * (nu1 * u - nu * l1p)
                terms[4, r] = 2.0 * nu * nu1 * zq * inv_q / sigma
                terms[5, r] = -nu * zq * (u - inv_q) / sigma
                terms[6, r] = 2.0 * nu * nu1 * u * inv_q
                terms[7, r] = -nu * u * (u - inv_q)
                terms[8, r] = -(ddnu0 + 0.5 * nu * u * (u - inv_q) - 0.5 * nu * l1p + 0.5 * nu * u)
            for k in range(Q):
                ck = cols[k]
                wk = weighted[k]
                for r in range(m):
                    wk[r] = w[i0 + r] * terms[1, r] * ck[r]
            _add_group_products(coef_H, cols, weighted, m)
            wd = np.empty(m)
            for t in (0, 4, 5):  # the gradient's and the cross curvatures' products with x
                for r in range(m):
                    wd[r] = w[i0 + r] * terms[t, r]
                for k in range(Q):
                    s = dot_reassoc(cols[k, :m], wd)
                    if t == 0:
                        part[k] += s
                    elif t == 4:
                        H[Q, k] += s
                    else:
                        H[Q + 1, k] += s
            for r in range(m):
                wr = w[i0 + r]
                part[Q] += wr * terms[2, r]
                part[Q + 1] += wr * terms[3, r]
                H[Q, Q] += wr * terms[6, r]
                H[Q + 1, Q] += wr * terms[7, r]
                H[Q + 1, Q + 1] += wr * terms[8, r]
            if not want_spread:
                continue
            for k in range(Q):  # z = L^T x over the coefficients (L lower triangular)
                zk = z[k]
                for r in range(m):
                    zk[r] = 0.0
                for j in range(k, Q):
                    ljk = L[j, k]
                    cj = cols[j]
                    for r in range(m):
                        zk[r] += ljk * cj[r]
            for r in range(m):
                s2 = 0.0
                g2 = 0.0
                d, ds, dn = terms[0, r], terms[2, r], terms[3, r]
                for k in range(Q):
                    zk = z[k, r]
                    s2 += zk * zk
                    g = d * zk + ds * L[Q, k] + dn * L[Q + 1, k]
                    g2 += g * g
                g = ds * L[Q, Q] + dn * L[Q + 1, Q]
                g2 += g * g
                g = dn * L[Q + 1, Q + 1]
                g2 += g * g
                cr = terms[1, r]
                spread[i0 + r] = math.sqrt(g2 + 0.5 * cr * cr * s2 * s2)
