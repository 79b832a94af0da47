"""Numba kernel of the KL methods: the weight step's quadratic model minimised over a box.

A Newton step on the weights minimises the quadratic model
``1/2 (v - w)^T H (v - w) + grad^T (v - w)`` of the KL divergence. Clipping the unconstrained
minimiser at 0 is not the minimiser over ``v >= 0`` when ``H`` couples the points, and on a
large support it is far from it: the log-likelihoods of hundreds of points under a posterior
of a few parameters are nearly collinear, so the unconstrained step puts large negative
weights on many of them, and clipping those to 0 leaves the rest wrong. :func:`box_qp` solves the
constrained model instead.

All inputs are C-contiguous float64; only ``v`` is written.
"""

import numpy as np
from numba import njit


@njit(cache=True)
def box_qp(H, q, v, upper, rtol, max_sweeps):
    """Minimise ``1/2 v^T H v + q^T v`` over ``0 <= v <= upper``, in place from ``v``.

    Cyclic coordinate descent: each coordinate in turn moves to the minimum of the objective
    along it, clipped to its bounds, and the gradient ``H v + q`` follows by one row of ``H``
    (symmetric, positive diagonal). A sweep over every coordinate never raises the objective.
    The loop stops when a sweep lowers it by at most ``rtol`` times the total decrease so far
    (a relative rule, so it means the same for any scale of ``H`` and ``q``), or after
    ``max_sweeps`` sweeps.

    Parameters
    ----------
    H : ndarray of shape (C, C)
        Symmetric with a positive diagonal (positive definite for a unique minimiser).
    q : ndarray of shape (C,)
    v : ndarray of shape (C,)
        The start, inside the box; overwritten with the result.
    upper : ndarray of shape (C,)
        Upper bounds (``inf`` for none), each ``>= 0``.
    rtol : float
    max_sweeps : int

    Returns
    -------
    sweeps : int
        Sweeps taken.
    """
    C = v.shape[0]
    g = np.empty(C)
    for i in range(C):
        s = q[i]
        for j in range(C):
            s += H[i, j] * v[j]
        g[i] = s
    total = 0.0
    for sweep in range(max_sweeps):
        decrease = 0.0
        for i in range(C):
            h = H[i, i]
            vi = v[i]
            new = min(max(vi - g[i] / h, 0.0), upper[i])
            d = new - vi
            if d != 0.0:
                # the objective falls by -(g_i d + h d^2 / 2) >= 0 along the coordinate
                decrease -= g[i] * d + 0.5 * h * d * d
                v[i] = new
                Hi = H[i]
                for j in range(C):
                    g[j] += Hi[j] * d
        total += decrease
        if decrease <= rtol * total:
            return sweep + 1
    return max_sweeps
