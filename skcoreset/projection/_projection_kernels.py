"""Fused numba kernels of the projections: the Fisher features, and the statistics of either
kind of features (column sums, row norms) computed without storing them. The log-likelihood
features themselves are the model's own ``loglik_matrix`` kernel with centring and scaling."""

import numpy as np
from numba import njit, prange

from ..models._glm_kernels import (
    _CONTRACT,
    _ROW_CHUNK,
    dloglik_inplace,
    dloglik_inplace_extras,
    extra_levels,
    extra_row_offsets,
    linear_predictors,
    loglik_inplace,
    loglik_inplace_extras,
    sum_reassoc,
)


@njit(cache=True, parallel=True, fastmath=_CONTRACT)
def fisher_features(family, X, thetas_t, y, extra, extras, coords, scale, out):
    """out[i, j] = scale * d l_i / d theta_{coords[j]} at theta_j, with no (N, J) temporary.

    The derivative is applied to the row's J linear predictors in place, in a loop of its own
    so that it vectorises; then the gather of the coordinates. With ``extras`` (J,) each draw
    has its own extra parameter and coordinate P (the number of coefficients) is its log.
    """
    N, P = X.shape
    J = thetas_t.shape[1]
    param = family.prepare(extra)
    params, _, level_of = extra_levels(family, extras)
    n_chunks = (N + _ROW_CHUNK - 1) // _ROW_CHUNK
    for c in prange(n_chunks):
        buf = np.empty(J)
        for i in range(c * _ROW_CHUNK, min(N, (c + 1) * _ROW_CHUNK)):
            linear_predictors(X, thetas_t, i, buf)
            if extras.shape[0]:
                dloglik_inplace_extras(family, buf, y[i], params, level_of, coords, X[i], P)
                for j in range(J):
                    out[i, j] = scale * buf[j]
            else:
                dloglik_inplace(family, buf, y[i], param)
                for j in range(J):
                    out[i, j] = scale * buf[j] * X[i, coords[j]]


@njit(cache=True, parallel=True, fastmath=_CONTRACT)
def feature_stats(
    family, fisher, X, thetas_t, y, w, extra, extras, coords, scale, nchunks, colsums, norms
):
    """Column sums and row norms of the weighted features, without storing them.

    The features of row i are those of ``loglik_matrix`` (centred, times ``scale``) or of
    :func:`fisher_features` (``extras`` as there), times ``w[i]``. ``colsums`` (nchunks, J)
    receives the partial sums of each of ``nchunks`` contiguous chunks of rows (the caller
    adds them in order: the result does not depend on the number of threads); ``norms`` (N,)
    the row norms.
    """
    N, P = X.shape
    J = thetas_t.shape[1]
    per_draw = extras.shape[0] > 0
    param = family.prepare(extra)
    params, offsets, level_of = extra_levels(family, extras)
    size = (N + nchunks - 1) // nchunks
    for c in prange(nchunks):
        buf = np.empty(J)
        row_offsets = np.empty(offsets.shape[0])
        for i in range(c * size, min(N, (c + 1) * size)):
            linear_predictors(X, thetas_t, i, buf)
            wi = w[i]
            if fisher and per_draw:
                dloglik_inplace_extras(family, buf, y[i], params, level_of, coords, X[i], P)
                for j in range(J):
                    buf[j] = (scale * buf[j]) * wi
            elif fisher:
                dloglik_inplace(family, buf, y[i], param)
                for j in range(J):
                    buf[j] = (scale * buf[j] * X[i, coords[j]]) * wi
            else:
                if per_draw:
                    extra_row_offsets(family, y[i], params, row_offsets)
                    loglik_inplace_extras(family, buf, y[i], params, offsets, level_of, row_offsets)
                else:
                    loglik_inplace(family, buf, y[i], param)
                shift = sum_reassoc(buf) / J
                for j in range(J):
                    buf[j] = (scale * (buf[j] - shift)) * wi
            acc = 0.0
            for j in range(J):
                v = buf[j]
                acc += v * v
                colsums[c, j] += v
            norms[i] = np.sqrt(acc)
