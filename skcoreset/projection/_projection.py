"""Random projections of the per-datum log-likelihoods into R^J (doc/algorithms.md section 1).

Both draw J parameters from a cheap posterior approximation (the Laplace fit):

* ``'loglik'``: v_n = J^(-1/2) (l_n(theta_j) - mean_i l_n(theta_i))_j, the L2(pi_hat) norm;
* ``'fisher'``: v_n = sqrt(P/J) (d l_n(theta_j) / d theta_{d_j})_j with random coordinates d_j,
  an unbiased estimate of the weighted Fisher information inner product.

The (N, J) output is the largest allocation of a coreset fit; it is filled block by block so
that no other (N, J) temporary exists, and may be stored in float32.
"""

import numpy as np
from sklearn.utils import check_consistent_length, check_random_state

from ..models._glm_kernels import loglik_matrix
from ._projection_kernels import fisher_features

PROJECTIONS = ("loglik", "fisher")


def project(
    model,
    Xd,
    y,
    laplace,
    *,
    projection="loglik",
    n_projections=500,
    dtype=np.float64,
    sample_weight=None,
    random_state=None,
):
    """Project every datum's log-likelihood into R^J.

    Parameters
    ----------
    model : GLM
        The likelihood (its noise scale resolved, e.g. ``laplace.model``).
    Xd : ndarray of shape (N, P)
        Design matrix, C-contiguous float64 (intercept column included).
    y : ndarray of shape (N,)
        Checked targets.
    laplace : LaplaceApproximation
        The distribution the parameters are drawn from.
    projection : {'loglik', 'fisher'}, default='loglik'
    n_projections : int, default=500
        J, the dimension of the projection.
    dtype : {np.float64, np.float32}, default=np.float64
        Storage of the output; float32 halves the memory of large problems.
    sample_weight : ndarray of shape (N,), default=None
        Each row is scaled by its weight, so the rows sum to the projection of the weighted
        log-likelihood.
    random_state : int, RandomState or None

    Returns
    -------
    vectors : ndarray of shape (N, J)
        One row per datum.
    """
    if projection not in PROJECTIONS:
        raise ValueError(f"projection must be one of {PROJECTIONS}, got {projection!r}.")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}.")
    rng = check_random_state(random_state)
    # the kernels do not bounds-check: mismatched lengths must fail here, not read garbage
    check_consistent_length(Xd, y, sample_weight)
    N, P = Xd.shape
    J = int(n_projections)
    thetas_t = np.ascontiguousarray(laplace.sample(J, random_state=rng).T)
    out = np.empty((N, J), dtype=dtype)
    if projection == "fisher":
        coords = rng.randint(0, P, size=J).astype(np.int64)
        fisher_features(model.code, Xd, thetas_t, y, model.noise, coords, np.sqrt(P / J), out)
    else:
        loglik_matrix(model.code, Xd, thetas_t, y, model.noise, 1.0 / np.sqrt(J), True, out)
    if sample_weight is not None:
        sw = np.asarray(sample_weight)
        if not np.all(sw == 1.0):
            out *= sw[:, None].astype(dtype, copy=False)
    return out
