"""Fused numba kernels of the projections: the Fisher features, and the statistics of either
kind of features (column sums, row norms) computed without storing them, or added from
stored ones. The log-likelihood features themselves are the model's own ``loglik_matrix``
kernel with centring and scaling."""

import numpy as np
from numba import njit

from .._parallel_kernels import row_task_kernel
from ..models._glm_kernels import (
    _CONTRACT,
    FEATURES_MIN_ENTRIES,
    dloglik_inplace,
    dloglik_inplace_extras,
    extra_levels,
    extra_row_offsets,
    linear_predictors,
    loglik_inplace,
    loglik_inplace_extras,
    sum_reassoc,
)


@row_task_kernel(FEATURES_MIN_ENTRIES, rows=("X", "y", "out"), tasks=(), fastmath=_CONTRACT)
def fisher_features(family, X, thetas_t, y, extra, extras, coords, scale, out):
    """out[i, j] = scale * d l_i / d theta_{coords[j]} at theta_j, with no (N, J) temporary.

    The derivative is applied to the row's J linear predictors in place, in a loop of its own
    so that it vectorises; then the gather of the coordinates. With ``extras`` (J,) each draw
    has its own extra parameter and coordinate P (the number of coefficients) is its log;
    None: ``extra`` for all (decided at compile time, as in ``loglik_matrix``).
    """
    N, P = X.shape
    J = thetas_t.shape[1]
    if extras is None:
        param = family.prepare(extra)
        buf = np.empty(J)
        for i in range(N):
            linear_predictors(X, thetas_t, i, buf)
            dloglik_inplace(family, buf, y[i], param)
            for j in range(J):
                out[i, j] = scale * buf[j] * X[i, coords[j]]
    else:
        params, _, level_of = extra_levels(family, extras)
        buf = np.empty(J)
        for i in range(N):
            linear_predictors(X, thetas_t, i, buf)
            dloglik_inplace_extras(family, buf, y[i], params, level_of, coords, X[i], P)
            for j in range(J):
                out[i, j] = scale * buf[j]


@row_task_kernel(
    FEATURES_MIN_ENTRIES, rows=("X", "y", "w", "norms"), tasks=("colsums",), fastmath=_CONTRACT
)
def feature_stats(family, X, thetas_t, y, w, extra, extras, coords, scale, size, colsums, norms):
    """Column sums and row norms of the weighted features, without storing them.

    The features of row i are those of ``loglik_matrix`` (centred, times ``scale``) when
    ``coords`` is None, or of :func:`fisher_features` at the coordinates ``coords``, times
    ``w[i]``; ``extras`` as there. Only the case of the call is compiled (``coords is None``
    and ``extras is None`` are decided at compile time). ``colsums`` (tasks, J) receives the
    partial sums of the tasks, ``size`` consecutive rows each (the caller adds them in order:
    the result does not depend on the number of threads); ``norms`` (N,) the row norms.
    """
    N, P = X.shape
    J = thetas_t.shape[1]
    nchunks = colsums.shape[0]
    if extras is None:
        param = family.prepare(extra)
        for c in range(nchunks):
            buf = np.empty(J)
            for i in range(c * size, min(N, (c + 1) * size)):
                linear_predictors(X, thetas_t, i, buf)
                wi = w[i]
                if coords is None:
                    loglik_inplace(family, buf, y[i], param)
                    shift = sum_reassoc(buf) / J
                    for j in range(J):
                        buf[j] = (scale * (buf[j] - shift)) * wi
                else:
                    dloglik_inplace(family, buf, y[i], param)
                    for j in range(J):
                        buf[j] = (scale * buf[j] * X[i, coords[j]]) * wi
                norms[i] = _add_row(buf, colsums[c])
    else:
        params, offsets, level_of = extra_levels(family, extras)
        for c in range(nchunks):
            buf = np.empty(J)
            row_offsets = np.empty(offsets.shape[0])
            for i in range(c * size, min(N, (c + 1) * size)):
                linear_predictors(X, thetas_t, i, buf)
                wi = w[i]
                if coords is None:
                    extra_row_offsets(family, y[i], params, row_offsets)
                    loglik_inplace_extras(family, buf, y[i], params, offsets, level_of, row_offsets)
                    shift = sum_reassoc(buf) / J
                    for j in range(J):
                        buf[j] = (scale * (buf[j] - shift)) * wi
                else:
                    dloglik_inplace_extras(family, buf, y[i], params, level_of, coords, X[i], P)
                    for j in range(J):
                        buf[j] = (scale * buf[j]) * wi
                norms[i] = _add_row(buf, colsums[c])


@njit(cache=True, nogil=True, fastmath=_CONTRACT)
def add_rows(V, colsum, norms):
    """``colsum += V``'s rows, ``norms`` their norms: :func:`feature_stats`'s sums of rows
    already computed (the same arithmetic, row by row)."""
    for i in range(V.shape[0]):
        norms[i] = _add_row(V[i], colsum)


@njit(cache=True, inline="always")
def _add_row(buf, colsum):
    """colsum += buf; returns the norm of buf (one loop)."""
    acc = 0.0
    for j in range(buf.shape[0]):
        v = buf[j]
        acc += v * v
        colsum[j] += v
    return np.sqrt(acc)
