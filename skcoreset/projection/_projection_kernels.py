"""Fused numba kernel of the Fisher projection (the log-likelihood one is the model's own
``loglik_matrix`` kernel with centring and scaling)."""

import numpy as np
from numba import njit, prange

from ..models._glm_kernels import _CONTRACT, _ROW_CHUNK, dloglik_inplace, linear_predictors


@njit(cache=True, parallel=True, fastmath=_CONTRACT)
def fisher_features(kind, X, thetas_t, y, noise, coords, scale, out):
    """out[i, j] = scale * d l_i / d theta_{coords[j]} at theta_j, with no (N, J) temporary.

    The derivative is applied to the row's J linear predictors in place, in a loop of its own
    (one per model) so that it vectorises; then the gather of the coordinates.
    """
    N = X.shape[0]
    J = thetas_t.shape[1]
    inv_var = np.divide(1.0, noise * noise)
    n_chunks = (N + _ROW_CHUNK - 1) // _ROW_CHUNK
    for c in prange(n_chunks):
        buf = np.empty(J)
        for i in range(c * _ROW_CHUNK, min(N, (c + 1) * _ROW_CHUNK)):
            linear_predictors(X, thetas_t, i, buf)
            dloglik_inplace(kind, buf, y[i], inv_var)
            for j in range(J):
                out[i, j] = scale * buf[j] * X[i, coords[j]]
