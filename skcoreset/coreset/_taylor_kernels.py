"""Numba kernel of the data's second-order sums (``_taylor.data_summary``): one pass over rows.

A single-index model's rows are read once, as stored (float32 or float64), in groups of 64
laid out by column: their linear predictors, the family's derivatives, the weighted gradient
and curvature sums (in the log extra parameter too when it is free) and each row's spread
under the Laplace fit are loops over the group's rows that vectorise. In NumPy the same sums
took a float64 design copy, three BLAS products and their temporaries per chunk of rows, most
of a large fit's one pass over its data (measured: benchmarks/README.md, Thresholds). The
rows go in tasks fixed by their count, each summed apart, and the sums are added in order: the
same bits on any number of threads. This module imports no scikit-learn.
"""

import numpy as np

from .._parallel_kernels import THREADED_ROWS, row_task_kernel
from ..models._glm_kernels import (
    SUMMARY_GROUP as _GROUP,
)
from ..models._glm_kernels import (
    _add_group_products,
    dot_reassoc,
    group_rows,
    sum_reassoc,
)


@row_task_kernel(THREADED_ROWS, rows=("X", "y", "w", "spread"), tasks=("parts",))
def summary_tasks(family, X, intercept, theta, y, w, extra, joint, step, L, size, parts, spread):
    """``parts[c] += [G, H]`` of rows ``c size .. (c + 1) size - 1`` and each row's spread.

    ``theta`` is the coefficients' point (the design's columns: X's, then the intercept's);
    with ``joint`` the sums extend to the log extra parameter ``s`` (its derivatives by
    central differences of step ``step`` in ``s``, as ``GLM.extra_derivatives``). A part is
    the gradient (``P + joint``) then the lower triangle of ``H`` row by row in a (P + joint)
    square, flattened. ``L`` is the lower Cholesky factor of the fit's covariance
    (``P + joint`` square): the spread is ``sqrt(|g|^2 + c^2 s^4 / 2)`` with ``s^2 = x^T
    Sigma x`` and ``g`` the row's gradient whitened (``d L^T x``, plus ``score L[P]`` with a
    free extra parameter), as ``_taylor.row_spread``.
    """
    n = X.shape[0]
    P = theta.shape[0]
    Q = P + joint
    param = family.prepare(extra)
    up = family.prepare(extra * np.exp(step))
    down = family.prepare(extra * np.exp(-step))
    for c in range(parts.shape[0]):
        part = parts[c]
        H = part[Q:].reshape((Q, Q))
        coef_H = H[:P, :P]
        cols = np.empty((P, _GROUP))
        weighted = np.empty((P, _GROUP))
        z = np.empty((Q, _GROUP))
        etas = np.empty(_GROUP)
        slopes = np.empty(_GROUP)
        wslopes = np.empty(_GROUP)
        scales = np.empty(_GROUP)
        curvs = np.empty(_GROUP)
        scores = np.empty(_GROUP)
        cross = np.empty(_GROUP)
        extra_curv = np.empty(_GROUP)
        end = min(n, (c + 1) * size)
        for i0 in range(c * size, end, _GROUP):
            m = min(_GROUP, end - i0)
            group_rows(cols, X, i0, m, intercept)
            e = etas[:m]
            for r in range(m):
                e[r] = cols[0, r] * theta[0]
            for k in range(1, P):
                ck = cols[k]
                tk = theta[k]
                for r in range(m):
                    e[r] += ck[r] * tk
            for r in range(m):
                i = i0 + r
                _, slope = family.terms(e[r], y[i], param)
                cv = family.curvature(e[r], y[i], param)
                slopes[r] = slope
                curvs[r] = cv
                scales[r] = w[i] * cv
                wslopes[r] = w[i] * slope
            for k in range(P):
                ck = cols[k]
                wk = weighted[k]
                for r in range(m):
                    wk[r] = scales[r] * ck[r]
            _add_group_products(coef_H, cols, weighted, m)
            for k in range(P):
                part[k] += dot_reassoc(cols[k, :m], wslopes[:m])
            if joint:
                h2 = 2.0 * step
                for r in range(m):
                    i = i0 + r
                    scores[r] = family.dlog_extra(e[r], y[i], param)
                    cross[r] = (
                        w[i]
                        * (family.terms(e[r], y[i], down)[1] - family.terms(e[r], y[i], up)[1])
                        / h2
                    )
                    extra_curv[r] = (
                        w[i]
                        * (family.dlog_extra(e[r], y[i], down) - family.dlog_extra(e[r], y[i], up))
                        / h2
                    )
                for k in range(P):
                    H[P, k] += dot_reassoc(cols[k, :m], cross[:m])
                H[P, P] += sum_reassoc(extra_curv[:m])
                ws = 0.0
                for r in range(m):
                    ws += w[i0 + r] * scores[r]
                part[P] += ws
            # the spread: z = L^T x (the coefficients' block of L is lower triangular)
            for k in range(Q):
                zk = z[k]
                for r in range(m):
                    zk[r] = 0.0
            for k in range(P):
                zk = z[k]
                for j in range(k, P):
                    ljk = L[j, k]
                    cj = cols[j]
                    for r in range(m):
                        zk[r] += ljk * cj[r]
            for r in range(m):
                s2 = 0.0
                for k in range(P):
                    s2 += z[k, r] * z[k, r]
                cv = curvs[r]
                quad = 0.5 * cv * cv * s2 * s2
                d = slopes[r]
                if joint:
                    g2 = 0.0
                    sc = scores[r]
                    for k in range(Q):
                        g = d * z[k, r] + sc * L[P, k]
                        g2 += g * g
                    spread[i0 + r] = np.sqrt(g2 + quad)
                else:
                    spread[i0 + r] = np.sqrt(s2 * d * d + quad)
