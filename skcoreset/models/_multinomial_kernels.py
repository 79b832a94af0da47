"""Numba kernels of the multinomial (softmax) likelihood over K classes, class 0 the reference.

Class ``k`` of a row has the linear predictor ``eta_k = x . beta_k`` (k = 1, ..., K - 1;
``eta_0 = 0``); the parameters are the K - 1 coefficient vectors of Q entries each,
concatenated (P = (K - 1) Q). The kernels take the draws transposed, ``thetas_t`` (P, J), so
that row ``k Q + q`` holds coordinate q of class k + 1 of every draw, and loop over the draws
(or the rows) innermost: the products are axpys and the likelihood's exponentials the
vectorisable ones of :mod:`._fastmath_kernels`.

The log-sum-exp is taken about the largest predictor ``m``, with the largest term (exactly 1)
left out of the sum: ``log sum_k e^eta_k = m + log1p(s)``, ``s = sum_{k != argmax} e^(eta_k
- m)``, so ``l = (eta_y - m) - log1p(s)`` is the difference of two non-positive numbers and
keeps its relative accuracy when the probability of the observed class is near 1 (NumPy's
``eta_y - logsumexp(eta)`` has there an absolute error of a few ulp of ``|eta|``); likewise
``1 - p_k = s / (1 + s)`` for the class of the largest predictor, in the gradients and the
Hessian. Ties for the largest predictor add one to ``s`` per extra tie.

Inputs are C-contiguous float64 (``out`` may be float32); the class codes ``y`` are float64 in
0, ..., K - 1. No kernel checks bounds: their callers, the methods of
:class:`~skcoreset.models.MultinomialModel`, check the shapes. This module imports no
scikit-learn.
"""

import numpy as np
from numba import njit

from .._parallel_kernels import (
    PARALLEL_MIN_ENTRIES,
    THREADED_ROWS,
    row_task_kernel,
    row_tasks,
    row_weights,
)
from ._fastmath_kernels import fast_exp, fast_log1p
from ._glm_kernels import (
    _CONTRACT,
    FEATURES_MIN_ENTRIES,
    SUMMARY_GROUP,
    _add_group_products,
    _set_linear_predictors,
    _symmetric_sum,
    dot2_reassoc,
    dot4_reassoc,
    dot_reassoc,
    group_rows,
    sum_reassoc,
)

# Rows per block of :func:`weighted_loglik_grad_chains`: the block's transposed design and its
# (K - 1, block) predictors stay in L1/L2 between the passes over it.
CHAIN_BLOCK = 128


@njit(cache=True, inline="always")
def _predictors_row(X, thetas_t, i, eta):
    """eta[k, j] = X[i] . beta_{j, k+1}: the K - 1 predictors of row i at every draw, vectorised
    over the draws. The columns go four at a time: one load and store of ``eta`` per four
    products."""
    Q = X.shape[1]
    J = eta.shape[1]
    first = Q % 4 if Q % 4 else min(Q, 4)  # the first group sets eta
    for k in range(eta.shape[0]):
        e = eta[k]
        base = k * Q
        if first == 4:
            x0, x1, x2, x3 = X[i, 0], X[i, 1], X[i, 2], X[i, 3]
            t0, t1 = thetas_t[base], thetas_t[base + 1]
            t2, t3 = thetas_t[base + 2], thetas_t[base + 3]
            for j in range(J):
                e[j] = (x0 * t0[j] + x1 * t1[j]) + (x2 * t2[j] + x3 * t3[j])
        elif first == 3:
            x0, x1, x2 = X[i, 0], X[i, 1], X[i, 2]
            t0, t1, t2 = thetas_t[base], thetas_t[base + 1], thetas_t[base + 2]
            for j in range(J):
                e[j] = (x0 * t0[j] + x1 * t1[j]) + x2 * t2[j]
        elif first == 2:
            x0, x1 = X[i, 0], X[i, 1]
            t0, t1 = thetas_t[base], thetas_t[base + 1]
            for j in range(J):
                e[j] = x0 * t0[j] + x1 * t1[j]
        else:
            x0 = X[i, 0]
            t0 = thetas_t[base]
            for j in range(J):
                e[j] = x0 * t0[j]
        for q in range(first, Q - 3, 4):
            x0, x1, x2, x3 = X[i, q], X[i, q + 1], X[i, q + 2], X[i, q + 3]
            b = base + q
            t0, t1, t2, t3 = thetas_t[b], thetas_t[b + 1], thetas_t[b + 2], thetas_t[b + 3]
            for j in range(J):
                e[j] += (x0 * t0[j] + x1 * t1[j]) + (x2 * t2[j] + x3 * t3[j])


@njit(cache=True, inline="always")
def _lse_parts(eta, n, m, s, ties, keep):
    """For the first ``n`` columns of the predictors ``eta`` (K - 1, .): ``m`` the largest
    predictor (the reference class's 0 included) and ``s`` the sum of ``e^(eta_k - m)`` over
    the classes but the largest (see the module notes), so that ``log sum_k e^eta_k = m +
    log1p(s)``. With ``keep``, ``eta[k]`` is overwritten with ``e^(eta_k - m)``. ``ties`` is
    scratch. Each loop runs over the columns and vectorises."""
    for r in range(n):
        m[r] = 0.0
    for k in range(eta.shape[0]):
        e = eta[k]
        for r in range(n):
            v = e[r]
            m[r] = v if v > m[r] else m[r]
    for r in range(n):  # the reference class, eta_0 = 0
        d = -m[r]
        ex = fast_exp(d)
        s[r] = ex if d < 0.0 else 0.0
        ties[r] = 0.0 if d < 0.0 else 1.0
    for k in range(eta.shape[0]):
        e = eta[k]
        for r in range(n):
            d = e[r] - m[r]
            ex = fast_exp(d)
            s[r] += ex if d < 0.0 else 0.0
            ties[r] += 0.0 if d < 0.0 else 1.0
            if keep:
                e[r] = ex
    for r in range(n):
        s[r] += ties[r] - 1.0


@njit(cache=True, inline="always")
def _one_minus_p(e, s, inv):
    """``1 - p_k`` from ``e = e^(eta_k - m)``, ``s`` of :func:`_lse_parts` and ``inv = 1 / (1
    + s)``: ``s / (1 + s)`` where class k has the largest predictor (``e`` is 1; the others'
    share, without the cancellation of ``1 - p`` when p is near 1), ``1 - e inv`` elsewhere
    (there ``p <= 1/2``)."""
    return s * inv if e == 1.0 else 1.0 - e * inv


@row_task_kernel(FEATURES_MIN_ENTRIES, rows=("X", "y", "out"), tasks=(), fastmath=_CONTRACT)
def loglik_matrix(X, thetas_t, y, scale, center, out):
    """Fused ``out[i, j] = scale * (l_i(theta_j) - [mean_j l_i])``, an (N, J) evaluation.

    ``X`` (N, Q), ``thetas_t`` (P, J) with P = (K - 1) Q, ``y`` (N,) class codes; ``out``
    (N, J), float64 or float32 (the row is centred and scaled in float64, then stored). Per
    row, the (K - 1, J) predictors and three J-vectors of scratch: no (N, J, K) temporary.
    """
    N, Q = X.shape
    P, J = thetas_t.shape
    K1 = P // Q
    eta = np.empty((K1, J))
    m = np.empty(J)
    s = np.empty(J)
    buf = np.empty(J)
    for i in range(N):
        _predictors_row(X, thetas_t, i, eta)
        _lse_parts(eta, J, m, s, buf, False)
        yk = int(y[i])
        if 0 < yk <= K1:  # (other codes read as the reference class's: never indexed)
            ey = eta[yk - 1]
            for j in range(J):
                buf[j] = (ey[j] - m[j]) - fast_log1p(s[j])
        else:
            for j in range(J):
                buf[j] = -m[j] - fast_log1p(s[j])
        shift = sum_reassoc(buf) / J if center else 0.0
        for j in range(J):
            out[i, j] = scale * (buf[j] - shift)


@row_task_kernel(FEATURES_MIN_ENTRIES, rows=("X", "y", "out"), tasks=(), fastmath=_CONTRACT)
def fisher_features(X, thetas_t, y, coords, scale, out):
    """``out[i, j] = scale * d l_i / d theta_{coords[j]}`` at ``theta_j``, (N, J).

    Coordinate ``k Q + q`` is ``(1[y_i = k + 1] - p_{i, k+1}(theta_j)) x_iq``; the softmax's
    denominator needs every class's predictor, so the row's (K - 1, J) predictors are made
    as for :func:`loglik_matrix`, then each draw's one class gathered. ``out`` may be float32.
    """
    N, Q = X.shape
    P, J = thetas_t.shape
    K1 = P // Q
    at = np.empty(J, dtype=np.int64)  # where each draw's class's predictor is in eta.ravel()
    col = np.empty(J, dtype=np.int64)
    code = np.empty(J)  # the class code of each draw's coordinate
    for j in range(J):
        k = coords[j] // Q
        at[j] = k * J + j
        col[j] = coords[j] - k * Q
        code[j] = k + 1.0
    eta = np.empty((K1, J))
    flat = eta.reshape(K1 * J)
    m = np.empty(J)
    s = np.empty(J)
    g = np.empty(J)
    xs = np.empty(J)
    for i in range(N):
        _predictors_row(X, thetas_t, i, eta)
        _lse_parts(eta, J, m, s, g, False)
        for j in range(J):  # the gathers, in a loop of their own
            g[j] = flat[at[j]]
            xs[j] = X[i, col[j]]
        yk = y[i]
        for j in range(J):
            e = fast_exp(g[j] - m[j])
            inv = np.divide(1.0, 1.0 + s[j])
            r = _one_minus_p(e, s[j], inv) if yk == code[j] else -(e * inv)
            out[i, j] = scale * (r * xs[j])


@njit(cache=True, fastmath=_CONTRACT)
def weighted_loglik_grad_chains(thetas, X, y, w, ll, grad):
    """Weighted log-likelihoods and gradients of C parameter vectors in one pass over the rows.

    ``ll[c] = sum_n w_n l_n(theta_c)``, ``grad[c, k Q + q] = sum_n w_n (1[y_n = k + 1] -
    p_{n, k+1}(theta_c)) x_nq``, for ``thetas`` (C, P), ``X`` (N, Q), ``y`` and ``w`` (N,);
    ``ll`` (C,) and ``grad`` (C, P) are overwritten. The MALA target of the multinomial model.

    The rows go in blocks of ``CHAIN_BLOCK``, each transposed once into scratch; per block and
    chain every loop runs over the block's rows and vectorises: the predictors (axpys), the
    log-sum-exp, the weighted log-likelihoods (summed like :func:`sum_reassoc`) and the
    gradient (dot products with partial sums). A chain's result does not depend on the other
    chains of the batch.
    """
    C, P = thetas.shape
    N, Q = X.shape
    K1 = P // Q
    B = CHAIN_BLOCK
    first = Q % 4 if Q % 4 else min(Q, 4)  # the first group of columns sets the predictors
    xt = np.empty((Q, B))
    eta = np.empty((K1, B))
    m = np.empty(B)
    s = np.empty(B)
    ties = np.empty(B)
    ey = np.empty(B)
    for c in range(C):
        ll[c] = 0.0
        for p in range(P):
            grad[c, p] = 0.0
    for i0 in range(0, N, B):
        i1 = min(i0 + B, N)
        nb = i1 - i0
        for r in range(nb):
            for q in range(Q):
                xt[q, r] = X[i0 + r, q]
        yb = y[i0:i1]
        wb = w[i0:i1]
        for c in range(C):
            for k in range(K1):  # the predictors, four columns at a time
                e = eta[k, :nb]
                th = thetas[c, k * Q : (k + 1) * Q]
                _set_linear_predictors(e, xt, 0, nb, th, first)
                for q in range(first, Q - 3, 4):
                    x0, x1, x2, x3 = xt[q, :nb], xt[q + 1, :nb], xt[q + 2, :nb], xt[q + 3, :nb]
                    t0, t1, t2, t3 = th[q], th[q + 1], th[q + 2], th[q + 3]
                    for r in range(nb):
                        e[r] += (t0 * x0[r] + t1 * x1[r]) + (t2 * x2[r] + t3 * x3[r])
            for r in range(nb):
                ey[r] = 0.0
            for k in range(K1):  # the observed class's predictor, by selects
                e = eta[k, :nb]
                for r in range(nb):
                    ey[r] = e[r] if yb[r] == k + 1 else ey[r]
            _lse_parts(eta, nb, m, s, ties, True)  # eta[k] <- e^(eta_k - m)
            for r in range(nb):
                ey[r] = wb[r] * ((ey[r] - m[r]) - fast_log1p(s[r]))
                ties[r] = np.divide(1.0, 1.0 + s[r])  # 1 / sum_k e^(eta_k - m)
            ll[c] += sum_reassoc(ey[:nb])
            for k in range(K1):
                e = eta[k, :nb]
                for r in range(nb):  # w_n (1[y_n = k + 1] - p_{n, k+1})
                    ek = e[r]
                    inv = ties[r]
                    res = _one_minus_p(ek, s[r], inv) if yb[r] == k + 1 else -(ek * inv)
                    e[r] = wb[r] * res
                g = grad[c, k * Q : (k + 1) * Q]
                for q in range(0, Q - 3, 4):
                    x0, x1, x2, x3 = xt[q, :nb], xt[q + 1, :nb], xt[q + 2, :nb], xt[q + 3, :nb]
                    s0, s1, s2, s3 = dot4_reassoc(x0, x1, x2, x3, e)
                    g[q] += s0
                    g[q + 1] += s1
                    g[q + 2] += s2
                    g[q + 3] += s3
                q = Q - Q % 4  # the columns left over: a pair, then a single one
                if Q % 4 >= 2:
                    s0, s1 = dot2_reassoc(xt[q, :nb], xt[q + 1, :nb], e)
                    g[q] += s0
                    g[q + 1] += s1
                    q += 2
                if q < Q:
                    g[q] += dot_reassoc(xt[q, :nb], e)


def weighted_hessian(theta, X, w):
    """``sum_n w_n (diag(p_n) - p_n p_n^T) (x) x_n x_n^T`` over the K - 1 non-reference
    classes: the Hessian of the negative weighted log-likelihood at ``theta`` (P,), (P, P).

    The rows go in a number of contiguous chunks fixed by their count (not by the threads),
    each summed by one task of :func:`_hessian_tasks` (on Python threads for large inputs)
    and the partial sums added in order: the same bits for any number of threads. Per row,
    ``x_n x_n^T`` once, then each block on or below the diagonal accumulates its multiple of
    it, a row of Q at a time (contiguous, vectorised); the upper blocks are mirrored at the
    end. The diagonal blocks' ``p (1 - p)`` keeps its relative accuracy when p is near 1
    (:func:`_one_minus_p`).

    A Python function, which chooses how to run the tasks (on Python threads, each its range
    of them, for large inputs: :class:`~skcoreset._parallel_kernels.RowTaskKernel`).
    """
    N = X.shape[0]
    w = row_weights(w)
    P = theta.shape[0]
    size, parts = row_tasks(N, (P, P))
    _hessian_tasks.for_size(N * P * P)(theta, X, w, size, parts)
    return _symmetric_sum(parts)


@row_task_kernel(PARALLEL_MIN_ENTRIES, rows=("X", "w"), fastmath=_CONTRACT)
def _hessian_tasks(theta, X, w, size, parts):
    """parts[c] += the terms of rows c size .. (c + 1) size - 1, a task each."""
    N = X.shape[0]
    for c in range(parts.shape[0]):
        _hessian_rows(theta, X, w, c * size, min(N, (c + 1) * size), parts[c])


@njit(cache=True, inline="always")
def _hessian_rows(theta, X, w, i0, i1, H):
    """Adds the lower blocks of rows i0 .. i1 - 1's terms of :func:`weighted_hessian` to H."""
    Q = X.shape[1]
    K1 = theta.shape[0] // Q
    eta = np.empty((K1, 1))
    m = np.empty(1)
    s = np.empty(1)
    ties = np.empty(1)
    p = np.empty(K1)
    cab = np.empty((K1, K1))
    xx = np.empty((Q, Q))
    for i in range(i0, i1):
        x = X[i]
        for k in range(K1):
            eta[k, 0] = dot_reassoc(x, theta[k * Q : (k + 1) * Q])
        _lse_parts(eta, 1, m, s, ties, True)  # eta <- e^(eta_k - m)
        inv = np.divide(1.0, 1.0 + s[0])
        for k in range(K1):
            p[k] = eta[k, 0] * inv
        wi = w[i]
        for ka in range(K1):
            cab[ka, ka] = wi * p[ka] * _one_minus_p(eta[ka, 0], s[0], inv)
            for kb in range(ka):
                cab[ka, kb] = -(wi * p[ka] * p[kb])
        for a in range(Q):
            xa = x[a]
            for b in range(Q):
                xx[a, b] = xa * x[b]
        for ka in range(K1):
            for kb in range(ka + 1):
                cv = cab[ka, kb]
                for a in range(Q):
                    h = H[ka * Q + a, kb * Q : (kb + 1) * Q]
                    xr = xx[a]
                    for b in range(Q):
                        h[b] += cv * xr[b]


@njit(cache=True, inline="always")
def _add_block_products(H, a0, b0, cols, weighted, m):
    """``H[a0 + a, b0 + b] += weighted[a, :m] . cols[b, :m]`` for every ``a``, ``b``: a block
    below the diagonal of the multinomial Hessian, four ``b`` at a time."""
    Q = cols.shape[0]
    for a in range(Q):
        wa = weighted[a, :m]
        b = 0
        while b + 4 <= Q:
            s0, s1, s2, s3 = dot4_reassoc(
                cols[b, :m], cols[b + 1, :m], cols[b + 2, :m], cols[b + 3, :m], wa
            )
            H[a0 + a, b0 + b] += s0
            H[a0 + a, b0 + b + 1] += s1
            H[a0 + a, b0 + b + 2] += s2
            H[a0 + a, b0 + b + 3] += s3
            b += 4
        while b < Q:
            H[a0 + a, b0 + b] += dot_reassoc(cols[b, :m], wa)
            b += 1


@row_task_kernel(THREADED_ROWS, rows=("X", "y", "w", "spread"), tasks=("parts",))
def summary_tasks(X, intercept, theta, y, w, L, want_spread, size, parts, spread):
    """``parts[c] += [G, H]`` of rows ``c size .. (c + 1) size - 1`` and each row's spread
    (``MultinomialModel.second_order_sums``): ``G = sum_n w_n r_n (x) x_n`` with ``r_n =
    1[y_n = k] - p_nk``, ``H = sum_n w_n (diag(p_n) - p_n p_n^T) (x) x_n x_n^T`` (its lower
    triangle), over the K - 1 non-reference classes; the spread ``|L^T (r_n (x) x_n)|``, the
    first-order one of a model of draws (``GeneralModel.row_spreads``; with ``want_spread``,
    into ``spread``, one entry a row; else ``spread`` may be empty).

    ``L`` is the factor's lower triangle with zeros above, its columns padded with zeros to a
    multiple of four. The rows are read as stored (float32 or float64) in groups laid out by
    column, as the single-index models' summary (``coreset._taylor_kernels``); a row of the
    design ``Q`` columns (X's, then a one with ``intercept``), the parameters class by class.
    """
    n = X.shape[0]
    P = theta.shape[0]
    Q = X.shape[1] + intercept
    K1 = P // Q
    G_ = SUMMARY_GROUP
    for c in range(parts.shape[0]):
        part = parts[c]
        H = part[P:].reshape((P, P))
        cols = np.empty((Q, G_))
        weighted = np.empty((Q, G_))
        eta = np.empty((K1, G_))
        r = np.empty((K1, G_))
        mx = np.empty(G_)
        s = np.empty(G_)
        ties = np.empty(G_)
        scale = np.empty(G_)
        z = np.empty(G_)
        z1 = np.empty(G_)
        z2 = np.empty(G_)
        z3 = np.empty(G_)
        acc = np.empty(G_)
        g = np.empty((P, G_))
        end = min(n, (c + 1) * size)
        for i0 in range(c * size, end, G_):
            m = min(G_, end - i0)
            group_rows(cols, X, i0, m, intercept)
            for k in range(K1):
                e = eta[k]
                base = k * Q
                t0 = theta[base]
                for t in range(m):
                    e[t] = cols[0, t] * t0
                for q in range(1, Q):
                    cq = cols[q]
                    tq = theta[base + q]
                    for t in range(m):
                        e[t] += cq[t] * tq
            _lse_parts(eta, m, mx, s, ties, True)  # eta <- e^(eta_k - max)
            for t in range(m):
                scale[t] = 1.0 / (1.0 + s[t])
            for k in range(K1):  # r_k = 1[y = k + 1] - p_k
                for t in range(m):
                    r[k, t] = (1.0 if y[i0 + t] == k + 1 else 0.0) - eta[k, t] * scale[t]
            for ka in range(K1):
                for kb in range(ka + 1):
                    for t in range(m):  # w (diag(p) - p p^T)_ab
                        pa = eta[ka, t] * scale[t]
                        if ka == kb:
                            cv = pa * _one_minus_p(eta[ka, t], s[t], scale[t])
                        else:
                            cv = -pa * eta[kb, t] * scale[t]
                        acc[t] = w[i0 + t] * cv
                    for q in range(Q):
                        cq = cols[q]
                        wq = weighted[q]
                        for t in range(m):
                            wq[t] = acc[t] * cq[t]
                    if ka == kb:
                        block = H[ka * Q : (ka + 1) * Q, ka * Q : (ka + 1) * Q]
                        _add_group_products(block, cols, weighted, m)
                    else:
                        _add_block_products(H, ka * Q, kb * Q, cols, weighted, m)
            for k in range(K1):
                for t in range(m):
                    acc[t] = w[i0 + t] * r[k, t]
                for q in range(Q):
                    part[k * Q + q] += dot_reassoc(cols[q, :m], acc[:m])
            if not want_spread:
                continue
            for k in range(K1):  # the row's gradient, g_(k, q) = r_k x_q
                for q in range(Q):
                    gi = g[k * Q + q]
                    cq = cols[q]
                    rk = r[k]
                    for t in range(m):
                        gi[t] = rk[t] * cq[t]
            for t in range(m):
                acc[t] = 0.0
            # z_j = sum_{i >= j} L[i, j] g_i, so |z|^2 = g^T Sigma g; four j at a time, each g_i
            # loaded once for the four (L's zeros above the diagonal make the ragged start
            # exact), a third less time than one j at a time (benchmarks/README.md, Thresholds)
            j = 0
            while j < P:
                for t in range(m):
                    z[t] = 0.0
                    z1[t] = 0.0
                    z2[t] = 0.0
                    z3[t] = 0.0
                for i in range(j, P):
                    l0 = L[i, j]
                    l1 = L[i, j + 1]
                    l2 = L[i, j + 2]
                    l3 = L[i, j + 3]
                    gi = g[i]
                    for t in range(m):
                        v = gi[t]
                        z[t] += l0 * v
                        z1[t] += l1 * v
                        z2[t] += l2 * v
                        z3[t] += l3 * v
                for t in range(m):
                    acc[t] += z[t] * z[t] + z1[t] * z1[t] + z2[t] * z2[t] + z3[t] * z3[t]
                j += 4
            for t in range(m):
                spread[i0 + t] = np.sqrt(acc[t])
