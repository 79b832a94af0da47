"""Fused numba kernel of the Fisher projection (the log-likelihood one is the model's own
``loglik_matrix`` kernel with centring and scaling)."""

import numpy as np
from numba import njit, prange

from ..models._glm_kernels import _ROW_CHUNK, dloglik, linear_predictors


@njit(cache=True, parallel=True)
def fisher_features(kind, X, thetas_t, y, noise, coords, scale, out):
    """out[i, j] = scale * d l_i / d theta_{coords[j]} at theta_j, with no (N, J) temporary."""
    N = X.shape[0]
    J = thetas_t.shape[1]
    n_chunks = (N + _ROW_CHUNK - 1) // _ROW_CHUNK
    for c in prange(n_chunks):
        buf = np.empty(J)
        for i in range(c * _ROW_CHUNK, min(N, (c + 1) * _ROW_CHUNK)):
            linear_predictors(X, thetas_t, i, buf)
            yi = y[i]
            for j in range(J):
                out[i, j] = scale * dloglik(kind, buf[j], yi, noise) * X[i, coords[j]]
