"""numba kernels of the groups integrated out: the log-likelihood at each quadrature node.

One pass over the rows (sorted by group) evaluates every row at every node of its group
(``eta0_i + z_i . u_{g,k}``) and sums the weighted log-likelihoods per group and node; it keeps
each row's weighted derivatives at the nodes (and its extra parameter's score), which the
gradient weights by the quadrature's posterior weights. No (rows x nodes) linear predictors are
formed in NumPy.
"""

import numpy as np
from numba import njit

from ._glm_kernels import _CONTRACT, loglik_offset


@njit(cache=True, fastmath=_CONTRACT)
def node_terms(family, eta0, Z, points, g, y, w, extra, n_groups, with_score):
    """``(f, d, s)``: ``f[g, k] = sum_{i in g} w_i l(y_i | eta0_i + z_i . points[g, k])``,
    ``d[i, k] = w_i dl/deta`` there and, with ``with_score``, ``s[i, k] = w_i dl/dlog(extra)``
    (else an empty array)."""
    n, q = Z.shape
    K = points.shape[1]
    param = family.prepare(extra)
    f = np.zeros((n_groups, K))
    d = np.empty((n, K))
    s = np.empty((n if with_score else 0, K))
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
                s[i, k] = w[i] * family.dlog_extra(e, y[i], param)
    return f, d, s
