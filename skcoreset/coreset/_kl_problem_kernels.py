"""Numba kernel of the KL problem: a batch of pooled rows' log-likelihood sums at a few draws.

Coreset MCMC estimates the full data's log-likelihood sum at every training step from a fresh
batch of pooled rows (1000 by default) at the chains' few states. In NumPy that took a gather of
the rows, a product, the log density and the control variate's products over the batch, most
of it call overhead. Here the batch is gathered once, transposed, so that each draw's linear
predictors, log-likelihoods and Taylor terms are loops over the rows that vectorise, and every
linear predictor serves the log-likelihood and the control variate at once.

All arrays are C-contiguous float64 but ``rows`` (intp); only ``out`` is written.
"""

import numpy as np
from numba import njit

from ..models._glm_kernels import _CONTRACT, dot_reassoc, loglik_rows_inplace


@njit(cache=True, fastmath=_CONTRACT)
def batch_sums(family, X, y, rows, weights, scale, thetas, extra, extras, eta0, d, c, out):
    """Weighted sums over the batch ``rows`` (repeats allowed) at each draw ``thetas[k]``.

    With ``v_b = scale * weights[rows[b]]`` and ``e_b = x_b . theta_k - eta0[rows[b]]``:

    * ``out[0, k] = sum_b v_b (l_b(theta_k) - l0_b)``, the log-likelihoods less their
      constants (the family's ``terms``), which are the same at every draw; with ``extras``
      (each draw's extra parameter, a sampled one; None: ``extra`` for all, the case then
      compiled alone) the constants are included, since they move with it;
    * ``out[1, k] = sum_b v_b d_b e_b`` and ``out[2, k] = sum_b v_b c_b e_b^2``, the batch's
      linear and quadratic Taylor terms around ``eta0`` (zeros when ``d`` is empty).

    The sums run in the order LLVM vectorises them (:func:`dot_reassoc`): fixed by the code,
    so the same on every run.
    """
    C, P = thetas.shape
    B = rows.shape[0]
    taylor = d.shape[0] > 0
    # the batch, gathered: x transposed (P, B) so that a draw's predictors are axpys over b
    Xt = np.empty((P, B))
    yb = np.empty(B)
    vb = np.empty(B)
    e0 = np.empty(B)
    vd = np.empty(B)
    vc = np.empty(B)
    for b in range(B):
        i = rows[b]
        for p in range(P):
            Xt[p, b] = X[i, p]
        yb[b] = y[i]
        vb[b] = scale * weights[i]
        if taylor:
            e0[b] = eta0[i]
            vd[b] = vb[b] * d[i]
            vc[b] = vb[b] * c[i]
    param = family.prepare(extra)
    v_sum = 0.0
    for b in range(B):
        v_sum += vb[b]
    eta = np.empty(B)
    e = np.empty(B)
    for k in range(C):
        for b in range(B):
            eta[b] = 0.0
        for p in range(P):
            t = thetas[k, p]
            row = Xt[p]
            for b in range(B):
                eta[b] += t * row[b]
        if taylor:
            for b in range(B):
                e[b] = eta[b] - e0[b]
            out[1, k] = dot_reassoc(vd, e)
            for b in range(B):
                e[b] *= e[b]
            out[2, k] = dot_reassoc(vc, e)
        else:
            out[1, k] = 0.0
            out[2, k] = 0.0
        if extras is None:
            loglik_rows_inplace(family, eta, yb, param)
            out[0, k] = dot_reassoc(vb, eta)
        else:
            p = family.prepare(extras[k])
            for b in range(B):
                eta[b] = family.terms(eta[b], yb[b], p)[0] + family.offset(yb[b], p)
            out[0, k] = dot_reassoc(vb, eta) + v_sum * family.extra_offset(extras[k])
    return out


@njit(cache=True)
def capped_correction(thetas, theta0, centre, G, H, whiten_t, bulk, lin, quad):
    """``(delta . G - lin) + cap * (quad - delta^T H delta) / 2`` for each draw, with
    ``delta = thetas[s] - theta0`` and ``cap = bulk / max(|(thetas[s] - centre) whiten_t|^2,
    bulk)``: the control variate of :class:`~._kl_problem.Taylor`, whose docstring derives
    it.

    The products with ``H`` and ``whiten_t`` are two matrix products (BLAS), so the cost per
    draw is O(P^2) at BLAS speed for many draws and one call for a few.
    """
    S, P = thetas.shape
    delta = np.empty((S, P))
    away = np.empty((S, P))
    for s in range(S):
        for p in range(P):
            delta[s, p] = thetas[s, p] - theta0[p]
            away[s, p] = thetas[s, p] - centre[p]
    Hd = delta @ H
    z = away @ whiten_t
    out = np.empty(S)
    for s in range(S):
        linear = 0.0
        dHd = 0.0
        d2 = 0.0
        for p in range(P):
            linear += delta[s, p] * G[p]
            dHd += delta[s, p] * Hd[s, p]
            d2 += z[s, p] * z[s, p]
        cap = bulk / max(d2, bulk)
        out[s] = (linear - lin[s]) + cap * 0.5 * (quad[s] - dHd)
    return out
