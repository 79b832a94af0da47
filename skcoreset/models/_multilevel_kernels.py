"""numba kernels of the groups integrated out: the log-likelihood at each quadrature node.

One pass over the rows (sorted by group) evaluates every row at every node of its group
(``eta0_i + z_i . u_{g,k}``) and sums the weighted log-likelihoods per group and node; it keeps
each row's weighted derivatives at the nodes (and its extra parameters' scores), which the
gradient weights by the quadrature's posterior weights. No (rows x nodes) linear predictors are
formed in NumPy. A single-index family's kernel (:func:`node_terms`) and the Student-t model's
(:func:`node_terms_student_t`: two extra parameters) write the same pass. Imports no
scikit-learn.
"""

import numpy as np
from numba import njit

from ._glm_kernels import _CONTRACT, loglik_offset
from ._student_t_kernels import point_terms


@njit(cache=True, fastmath=_CONTRACT)
def node_terms(family, eta0, Z, points, g, y, w, extra, n_groups, with_score):
    """``(f, d, s)``: ``f[g, k] = sum_{i in g} w_i l(y_i | eta0_i + z_i . points[g, k])``,
    ``d[i, k] = w_i dl/deta`` there and, with ``with_score``, ``s[i, k, 0] = w_i
    dl/dlog(extra)`` (else an empty array)."""
    n, q = Z.shape
    K = points.shape[1]
    param = family.prepare(extra)
    f = np.zeros((n_groups, K))
    d = np.empty((n, K))
    s = np.empty((n if with_score else 0, K, 1))
    for i in range(n):
        gi = g[i]
        off = loglik_offset(family, y[i], extra, param)
        for k in range(K):
            e = eta0[i]
            for p in range(q):
                e += Z[i, p] * points[gi, k, p]
            value, deriv = family.terms(e, y[i], param)
            f[gi, k] += w[i] * (value + off)
            d[i, k] = w[i] * deriv
            if with_score:
                s[i, k, 0] = w[i] * family.dlog_extra(e, y[i], param)
    return f, d, s


@njit(cache=True, fastmath=_CONTRACT)
def node_terms_student_t(eta0, Z, points, g, y, w, consts, n_groups):
    """:func:`node_terms` of the Student-t model at one draw of its scale and degrees of
    freedom (``consts``: that draw's column of ``_student_t_kernels.draw_constants``); the
    scores ``s[i, k]`` in log sigma and log nu, always."""
    n, q = Z.shape
    K = points.shape[1]
    inv_sigma, inv_nu, half_nu1, const, dnu0 = consts[0], consts[1], consts[2], consts[3], consts[4]
    f = np.zeros((n_groups, K))
    d = np.empty((n, K))
    s = np.empty((n, K, 2))
    for i in range(n):
        gi = g[i]
        for k in range(K):
            e = eta0[i]
            for p in range(q):
                e += Z[i, p] * points[gi, k, p]
            value, d_eta, d_sigma, d_nu = point_terms(
                e, y[i], inv_sigma, inv_nu, half_nu1, const, dnu0
            )
            f[gi, k] += w[i] * value
            d[i, k] = w[i] * d_eta
            s[i, k, 0] = w[i] * d_sigma
            s[i, k, 1] = w[i] * d_nu
    return f, d, s
