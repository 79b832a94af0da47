"""Numba kernels of the single-index likelihoods, generic over the family.

Every model here is a function of the linear predictor ``eta = x . theta`` (and of one extra
scalar, e.g. the Gaussian noise scale), described by the jitted scalar functions of its
:class:`~skcoreset.models.SingleIndexFamily`: ``family.terms(eta, y, param)`` gives the
log-likelihood less its constant and its derivative in ``eta``, ``family.curvature`` minus the
second derivative, ``family.offset(y)`` and ``family.extra_offset(extra)`` the constants. Each
kernel takes the family as its first argument: numba compiles it once per family, with the
family's functions inlined into the loops (they vectorise), and caches it on disk. No kernel
knows which model it runs. This module imports no scikit-learn: the MALA sampler and the
projections call these kernels directly.
"""

import numpy as np
from numba import njit

from .._parallel_kernels import (
    THREADED_ROWS,
    row_task_kernel,
    row_tasks,
    row_weights,
    sum_in_order,
)

# The only fast-math flag of the loops that call the elementary functions: LLVM may fuse a
# multiply and an add into one FMA (one rounding instead of two: never less accurate). No
# reordering flag, which would break their exact range reductions.
_CONTRACT = {"contract"}


@njit(cache=True, inline="always")
def loglik_offset(family, y, extra, param):
    """``l0``, the part of the log-likelihood free of ``eta`` (``param`` is
    ``family.prepare(extra)``)."""
    return family.offset(y, param) + family.extra_offset(extra)


@njit(cache=True, inline="always")
def loglik(family, eta, y, extra):
    """Per-datum log-likelihood at linear predictor ``eta``, constants included (true
    log-probabilities)."""
    param = family.prepare(extra)
    return family.terms(eta, y, param)[0] + loglik_offset(family, y, extra, param)


@njit(cache=True, inline="always")
def dloglik(family, eta, y, extra):
    """Derivative of the per-datum log-likelihood in ``eta``."""
    return family.terms(eta, y, family.prepare(extra))[1]


@njit(cache=True, inline="always")
def curv(family, eta, y, extra):
    """Minus the second derivative of the log-likelihood in ``eta`` (>= 0)."""
    return family.curvature(eta, y, family.prepare(extra))


# Entries (N x J) from which the fused (N, J) kernels run on Python threads (one build:
# nothing more to compile). They are compute-bound, so threads pay from a few hundred rows of
# 500 entries; QNC's steps evaluate thousands of such rows each (measured: benchmarks/README.md,
# Thresholds).
FEATURES_MIN_ENTRIES = 250_000


def _symmetric_sum(lower_parts):
    """The symmetric matrix whose lower triangle is the in-order sum of ``lower_parts``
    (tasks, P, P): the Hessians' partial sums, each task filling its lower triangle."""
    H = sum_in_order(lower_parts)
    upper = np.triu_indices(H.shape[0], 1)
    H[upper] = H.T[upper]
    return H


@row_task_kernel(FEATURES_MIN_ENTRIES, rows=("X", "y", "out"), tasks=(), fastmath=_CONTRACT)
def loglik_matrix(family, X, thetas_t, y, extra, extras, scale, center, out):
    """Fused ``out[i, j] = scale * (l_i(theta_j) - [mean_j l_i])``, an (N, J) evaluation.

    ``thetas_t`` is (P, J): the product ``x_i . theta_j`` is accumulated into a J-buffer per
    row, then the likelihood is applied in place, so no (N, J) temporary is ever made. We do
    not call BLAS for the product: its spinning threads would fight this kernel's threads, and
    for the small P of GLMs the loop is as fast. ``out`` may be float32. ``extras`` (J,) gives
    each draw its own extra parameter; None: ``extra`` for all (numba then compiles that case
    alone: ``extras is None`` is decided at compile time).
    """
    N, P = X.shape
    J = thetas_t.shape[1]
    if extras is None:
        param = family.prepare(extra)
        buf = np.empty(J)
        for i in range(N):
            linear_predictors(X, thetas_t, i, buf)
            yi = y[i]
            loglik_inplace(family, buf, yi, param)
            # the offset is constant along the row: added once, after the centring
            shift = sum_reassoc(buf) / J if center else -loglik_offset(family, yi, extra, param)
            for j in range(J):
                out[i, j] = scale * (buf[j] - shift)
    else:
        params, offsets, level_of = extra_levels(family, extras)
        buf = np.empty(J)
        row_offsets = np.empty(offsets.shape[0])
        for i in range(N):
            linear_predictors(X, thetas_t, i, buf)
            yi = y[i]
            extra_row_offsets(family, yi, params, row_offsets)
            loglik_inplace_extras(family, buf, yi, params, offsets, level_of, row_offsets)
            shift = sum_reassoc(buf) / J if center else 0.0
            for j in range(J):
                out[i, j] = scale * (buf[j] - shift)


@njit(cache=True, inline="always")
def loglik_inplace(family, buf, y, param):
    """buf[j] <- l(buf[j]) - l0 for one datum (a loop that vectorises)."""
    for j in range(buf.shape[0]):
        buf[j] = family.terms(buf[j], y, param)[0]


@njit(cache=True, inline="always")
def extra_levels(family, extras):
    """``(params, offsets, level_of)`` of the draws' extra parameters ``extras``: each
    distinct value prepared (a list: a family's ``param`` may be a tuple, and preparing it may
    cost library calls, e.g. a digamma) with its ``extra_offset``, and which is each draw's.
    Computed once per call, not per row. The projections draw few values, so that a row's
    constants (the negative binomial's lgamma) are computed once a value, not once a draw."""
    distinct = np.unique(extras)
    offsets = np.empty(distinct.shape[0])
    for g in range(distinct.shape[0]):
        offsets[g] = family.extra_offset(distinct[g])
    params = [family.prepare(e) for e in distinct]
    return params, offsets, np.searchsorted(distinct, extras)


@njit(cache=True, inline="always")
def extra_row_offsets(family, y, params, out):
    """out[g] <- one datum's ``offset(y)`` at each prepared value ``params[g]``."""
    for g in range(out.shape[0]):
        out[g] = family.offset(y, params[g])


@njit(cache=True, inline="always")
def loglik_inplace_extras(family, buf, y, params, offsets, level_of, row_offsets):
    """buf[j] <- l(buf[j]) for one datum, draw j at the extra parameter ``level_of[j]`` of
    :func:`extra_levels`, the constants included: they change with it (``row_offsets`` from
    :func:`extra_row_offsets`)."""
    for j in range(buf.shape[0]):
        g = level_of[j]
        buf[j] = family.terms(buf[j], y, params[g])[0] + row_offsets[g] + offsets[g]


@njit(cache=True, inline="always")
def dloglik_inplace_extras(family, buf, y, params, level_of, coords, x, n_coef):
    """buf[j] <- d l / d theta_{coords[j]} for one datum at eta = buf[j] and the extra
    parameter ``level_of[j]`` of :func:`extra_levels`; coordinate ``n_coef`` is
    ``log(extra)``, the others multiply dl/deta by ``x[coords[j]]``."""
    for j in range(buf.shape[0]):
        p = params[level_of[j]]
        k = coords[j]
        if k == n_coef:
            buf[j] = family.dlog_extra(buf[j], y, p)
        else:
            buf[j] = family.terms(buf[j], y, p)[1] * x[k]


@njit(cache=True, inline="always")
def loglik_rows_inplace(family, buf, y, param):
    """buf[i] <- l(buf[i], y[i]) - l0_i for one parameter and rows i: :func:`loglik_inplace`
    with a target per entry."""
    for i in range(buf.shape[0]):
        buf[i] = family.terms(buf[i], y[i], param)[0]


@njit(cache=True, inline="always")
def dloglik_inplace(family, buf, y, param):
    """buf[j] <- dl/deta at buf[j] for one datum (a loop that vectorises)."""
    for j in range(buf.shape[0]):
        buf[j] = family.terms(buf[j], y, param)[1]


@njit(cache=True, fastmath={"reassoc"})
def sum_reassoc(a):
    """``a.sum()`` for a 1-D array, in the order LLVM vectorises it (several partial sums).

    The order is fixed by the compiled code and the length, so results depend on neither
    threads nor scheduling, and are as accurate as a sequential sum or more. Only this loop
    has the fast-math flag: the elementary functions rely on the exact IEEE order.
    """
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i]
    return s


@njit(cache=True, fastmath={"reassoc", "contract"})
def dot_reassoc(a, b):
    """``a . b`` for 1-D arrays of equal length, vectorised like :func:`sum_reassoc`."""
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


@njit(cache=True, fastmath={"reassoc", "contract"})
def dot2_reassoc(a0, a1, b):
    """``(a0 . b, a1 . b)``, each vectorised like :func:`sum_reassoc`, with one load of ``b``
    for the two."""
    s0 = 0.0
    s1 = 0.0
    for i in range(b.shape[0]):
        bi = b[i]
        s0 += a0[i] * bi
        s1 += a1[i] * bi
    return s0, s1


@njit(cache=True, fastmath={"reassoc", "contract"})
def dot4_reassoc(a0, a1, a2, a3, b):
    """``(a0 . b, a1 . b, a2 . b, a3 . b)``, each vectorised like :func:`sum_reassoc`, with one
    load of ``b`` for the four."""
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for i in range(b.shape[0]):
        bi = b[i]
        s0 += a0[i] * bi
        s1 += a1[i] * bi
        s2 += a2[i] * bi
        s3 += a3[i] * bi
    return s0, s1, s2, s3


@njit(cache=True, inline="always")
def linear_predictors(X, thetas_t, i, buf):
    """buf[j] = X[i] . theta_j, vectorised over j."""
    P = X.shape[1]
    J = thetas_t.shape[1]
    for j in range(J):
        buf[j] = 0.0
    for k in range(P):
        xik = X[i, k]
        for j in range(J):
            buf[j] += xik * thetas_t[k, j]


@njit(cache=True, fastmath=_CONTRACT)
def loglik_vector(family, eta, y, extra):
    """Per-datum log-likelihoods for one parameter (``eta`` of length n)."""
    out = np.empty(eta.shape[0])
    for i in range(eta.shape[0]):
        out[i] = loglik(family, eta[i], y[i], extra)
    return out


@njit(cache=True, fastmath=_CONTRACT)
def loglik_vector_extras(family, eta, y, extras):
    """Per-datum log-likelihoods, each with its own extra parameter (posterior draws)."""
    out = np.empty(eta.shape[0])
    for i in range(eta.shape[0]):
        out[i] = loglik(family, eta[i], y[i], extras[i])
    return out


@njit(cache=True, fastmath=_CONTRACT)
def dloglik_vector(family, eta, y, extra):
    """Derivatives in ``eta`` for one parameter (per-datum gradient = this times ``x_n``)."""
    out = np.empty(eta.shape[0])
    for i in range(eta.shape[0]):
        out[i] = dloglik(family, eta[i], y[i], extra)
    return out


@njit(cache=True, nogil=True, fastmath=_CONTRACT)
def dloglik_curv_vector(family, eta, y, extra):
    """First derivatives and curvatures (minus second derivatives) in ``eta``, for one
    parameter: the coefficients of each row's second-order Taylor expansion. Releases the
    GIL: the KL coresets' data summaries call it on the fit's threads, a chunk each."""
    d = np.empty(eta.shape[0])
    c = np.empty(eta.shape[0])
    for i in range(eta.shape[0]):
        d[i] = dloglik(family, eta[i], y[i], extra)
        c[i] = curv(family, eta[i], y[i], extra)
    return d, c


def weighted_loglik_grad(family, theta, X, y, w, extra, grad):
    """Weighted log-likelihood ``sum_n w_n l_n(theta)``; its gradient is written to ``grad``.

    One pass over ``X``: the inner loop of Newton's method, O(n D), in row chunks as
    :func:`weighted_hessian` (threaded from ``THREADED_ROWS`` rows, the same bits for any
    number of threads). (MALA evaluates several chains at once with
    :func:`weighted_loglik_grad_chains`.)
    """
    n, d = X.shape
    w = row_weights(w)
    size, parts = row_tasks(n, (d + 1,))
    _loglik_grad_tasks.for_size(n)(family, theta, X, y, w, extra, size, parts)
    total = sum_in_order(parts)
    grad[:] = total[:d]
    return total[d]


@row_task_kernel(THREADED_ROWS, rows=("X", "y", "w"), fastmath=_CONTRACT)
def _loglik_grad_tasks(family, theta, X, y, w, extra, size, parts):
    """parts[c] += (gradient, log-likelihood) of rows c size .. (c + 1) size - 1."""
    n, d = X.shape
    param = family.prepare(extra)
    for c in range(parts.shape[0]):
        part = parts[c]
        total = 0.0
        for i in range(c * size, min(n, (c + 1) * size)):
            eta = 0.0
            for k in range(d):
                eta += X[i, k] * theta[k]
            wi = w[i]
            yi = y[i]
            lv, dv = family.terms(eta, yi, param)
            total += wi * (lv + loglik_offset(family, yi, extra, param))
            g = wi * dv
            for k in range(d):
                part[k] += g * X[i, k]
        part[d] = total


# Rows per block of :func:`weighted_loglik_grad_chains`: its (2, C, block) scratch and the block
# of the transposed design stay in cache between the passes over the block.
CHAIN_BLOCK = 256

# Its arrays start on 64-byte boundaries (and so does every block, 256 rows being 2 KB): a
# 64-byte vector load that straddles two cache lines costs two, and neither NumPy nor numba
# aligns its allocations to 64 bytes. With the design off a 64-byte boundary the kernel is
# measurably slower (measured: benchmarks/README.md, Thresholds).
_ALIGN = 64


def aligned_empty(shape):
    """``np.empty(shape)`` (float64, C-contiguous) whose data start on a 64-byte boundary."""
    n = int(np.prod(shape))
    buf = np.empty(n + _ALIGN // 8)
    start = (-buf.ctypes.data % _ALIGN) // 8
    return buf[start : start + n].reshape(shape)


def chain_layout(X, y, w):
    """The inputs of :func:`weighted_loglik_grad_chains` from a design ``X`` (N, D): its
    transpose (D, N') with each row padded with zeros to whole 64-byte lines, and copies of
    ``y`` and ``w``, every one of them aligned (see ``_ALIGN``)."""
    N, D = X.shape
    per_line = _ALIGN // 8
    Xt = aligned_empty((D, -(-N // per_line) * per_line))
    Xt[:, N:] = 0.0
    Xt[:, :N] = X.T
    ya = aligned_empty((N,))
    wa = aligned_empty((N,))
    ya[:] = y
    wa[:] = w
    return Xt, ya, wa


@njit(cache=True, fastmath=_CONTRACT)
def weighted_loglik_grad_chains(
    family, extra_prior, thetas, Xt, y, w, w_sum, offset, extra, ll, grad, work
):
    """Weighted log-likelihoods and gradients of C parameter vectors in one pass over the data.

    ``ll[c] = sum_n w_n l_n(theta_c)`` and ``grad[c, :D] = sum_n w_n l_n'(theta_c) x_n`` for
    ``theta_c = thetas[c, :D]``; when the extra parameter is sampled, ``grad[c, D] = sum_n w_n
    dl_n / d log extra`` (further columns are ignored and left alone). The MALA sampler's inner
    loop: every chain advances by one such call.

    The data are traversed in blocks of ``CHAIN_BLOCK`` rows; per block and chain, three loops
    over the rows vectorise: the linear predictors (one axpy per column of the transposed
    design ``Xt``), the likelihood terms (exp and log1p of ``_fastmath_kernels``) and the
    gradient (dot products with partial sums). A chain's result does not depend on the other
    chains of the batch, bit for bit: a chain can be evaluated in any batch on any thread.

    Parameters
    ----------
    family : SingleIndexFamily
    extra_prior : None or tuple
        None: the extra parameter is fixed (each chain's in ``extra``); otherwise (the
        sampler's prior of its log, whose terms are the caller's) it is sampled and its
        derivatives computed. Decided at compile time: only the case of the call is compiled.
    thetas : ndarray (C, P), P >= D
    Xt : ndarray (D, N'), N' >= N
        The transposed design, C-contiguous (rows of ``Xt`` are contiguous over the data);
        columns past N are not read (:func:`chain_layout` pads and aligns the rows).
    y, w : ndarray (N,)
    w_sum : float
        ``sum_n w_n``.
    offset : float
        ``sum_n w_n offset(y_n)`` (:func:`weighted_offset`) at the fixed extra parameter (0
        when it is sampled: the chains' own are summed here); the extra parameter's constant
        ``w_sum * extra_offset(extra)`` is added here.
    extra : ndarray (C,)
        The extra parameter of each chain (ignored by the models without one).
    ll : ndarray (C,)
    grad : ndarray (C, P)
    work : ndarray (C, 2, CHAIN_BLOCK)
        Scratch (:func:`aligned_empty`).
    """
    C = thetas.shape[0]
    D = Xt.shape[0]
    N = y.shape[0]
    n_grad = D if extra_prior is None else D + 1
    for c in range(C):
        ll[c] = 0.0
        for k in range(n_grad):
            grad[c, k] = 0.0
    # Slices, not offset indices: numba cannot tell that ``i0 + r`` is non-negative, and its
    # wrap-around select on every such index stops the vectoriser. Columns go four at a time
    # (one load of each for every chain, one load and store of eta per four products), and
    # chains innermost, so that the block of Xt is read from L2 once per pass, not per chain.
    # The first group of columns sets eta (no pass zeroing it): the D % 4 columns left over by
    # the groups of four, as one group, or the first four.
    first = D % 4 if D % 4 else min(D, 4)
    for i0 in range(0, N, CHAIN_BLOCK):
        i1 = min(i0 + CHAIN_BLOCK, N)
        nb = i1 - i0
        for c in range(C):
            _set_linear_predictors(work[c, 0, :nb], Xt, i0, i1, thetas[c], first)
        for k in range(first, D - 3, 4):
            x0, x1, x2, x3 = Xt[k, i0:i1], Xt[k + 1, i0:i1], Xt[k + 2, i0:i1], Xt[k + 3, i0:i1]
            for c in range(C):
                t0, t1, t2, t3 = thetas[c, k], thetas[c, k + 1], thetas[c, k + 2], thetas[c, k + 3]
                e = work[c, 0, :nb]
                for r in range(nb):
                    e[r] += (t0 * x0[r] + t1 * x1[r]) + (t2 * x2[r] + t3 * x3[r])
        yb = y[i0:i1]
        wb = w[i0:i1]
        for c in range(C):
            v = work[c, 1, :nb]
            param = family.prepare(extra[c])
            if extra_prior is None:
                _weighted_terms(family, work[c, 0, :nb], v, yb, wb, param)
            else:
                # the row constants move with the extra parameter: in v, per chain
                grad[c, D] += _weighted_terms_extra(family, work[c, 0, :nb], v, yb, wb, param)
            ll[c] += sum_reassoc(v)
        for k in range(0, D - 3, 4):
            x0, x1, x2, x3 = Xt[k, i0:i1], Xt[k + 1, i0:i1], Xt[k + 2, i0:i1], Xt[k + 3, i0:i1]
            for c in range(C):
                s0, s1, s2, s3 = dot4_reassoc(x0, x1, x2, x3, work[c, 0, :nb])
                grad[c, k] += s0
                grad[c, k + 1] += s1
                grad[c, k + 2] += s2
                grad[c, k + 3] += s3
        k = D - D % 4  # the columns left over: a pair, then a single one
        if D % 4 >= 2:
            x0, x1 = Xt[k, i0:i1], Xt[k + 1, i0:i1]
            for c in range(C):
                s0, s1 = dot2_reassoc(x0, x1, work[c, 0, :nb])
                grad[c, k] += s0
                grad[c, k + 1] += s1
            k += 2
        if k < D:
            x0 = Xt[k, i0:i1]
            for c in range(C):
                grad[c, k] += dot_reassoc(x0, work[c, 0, :nb])
    for c in range(C):
        ll[c] += w_sum * family.extra_offset(extra[c]) + offset


@njit(cache=True, inline="always")
def _set_linear_predictors(e, Xt, i0, i1, theta, m):
    """e[r] = sum_{k < m} theta[k] Xt[k, i0 + r]: the first m (0 to 4) columns of the linear
    predictors of rows i0 .. i1 - 1, one loop over the rows."""
    if m == 4:
        x0, x1, x2, x3 = Xt[0, i0:i1], Xt[1, i0:i1], Xt[2, i0:i1], Xt[3, i0:i1]
        t0, t1, t2, t3 = theta[0], theta[1], theta[2], theta[3]
        for r in range(e.shape[0]):
            e[r] = (t0 * x0[r] + t1 * x1[r]) + (t2 * x2[r] + t3 * x3[r])
    elif m == 3:
        x0, x1, x2 = Xt[0, i0:i1], Xt[1, i0:i1], Xt[2, i0:i1]
        t0, t1, t2 = theta[0], theta[1], theta[2]
        for r in range(e.shape[0]):
            e[r] = (t0 * x0[r] + t1 * x1[r]) + t2 * x2[r]
    elif m == 2:
        x0, x1 = Xt[0, i0:i1], Xt[1, i0:i1]
        t0, t1 = theta[0], theta[1]
        for r in range(e.shape[0]):
            e[r] = t0 * x0[r] + t1 * x1[r]
    elif m == 1:
        x0 = Xt[0, i0:i1]
        t0 = theta[0]
        for r in range(e.shape[0]):
            e[r] = t0 * x0[r]
    else:
        for r in range(e.shape[0]):
            e[r] = 0.0


@njit(cache=True, inline="always")
def _weighted_terms(family, e, v, y, w, param):
    """At eta = e[r]: v[r] <- w[r] (l - l0) and e[r] <- w[r] dl/deta (a loop that
    vectorises)."""
    for r in range(e.shape[0]):
        lv, dv = family.terms(e[r], y[r], param)
        v[r] = w[r] * lv
        e[r] = w[r] * dv


@njit(cache=True, inline="always")
def _weighted_terms_extra(family, e, v, y, w, param):
    """:func:`_weighted_terms` with the row constants in ``v`` (they move with a sampled
    extra parameter); returns ``sum_r w[r] dl/d log(extra)``. One loop over the rows."""
    s = 0.0
    for r in range(e.shape[0]):
        lv, dv = family.terms(e[r], y[r], param)
        wr = w[r]
        s += wr * family.dlog_extra(e[r], y[r], param)
        v[r] = wr * (lv + family.offset(y[r], param))
        e[r] = wr * dv
    return s


@njit(cache=True, inline="always")
def _weighted_offset(family, y, w, param):
    """``sum_r w[r] offset(y[r])`` in index order."""
    total = 0.0
    for i in range(y.shape[0]):
        total += w[i] * family.offset(y[i], param)
    return total


@njit(cache=True, fastmath=_CONTRACT)
def weighted_dlog_extra(family, eta, y, w, extra):
    """``sum_n w_n dl_n / d log(extra)`` at linear predictors ``eta`` (one parameter)."""
    param = family.prepare(extra)
    total = 0.0
    for i in range(eta.shape[0]):
        total += w[i] * family.dlog_extra(eta[i], y[i], param)
    return total


@njit(cache=True, fastmath=_CONTRACT)
def dlog_extra_vector(family, eta, y, extra):
    """Each row's ``dl / d log(extra)`` at linear predictors ``eta`` (one parameter): the
    extra parameter's score, row by row (its joint Laplace fit's derivatives)."""
    param = family.prepare(extra)
    out = np.empty(eta.shape[0])
    for i in range(eta.shape[0]):
        out[i] = family.dlog_extra(eta[i], y[i], param)
    return out


@njit(cache=True)
def weighted_offset(family, y, w, extra):
    """``sum_n w_n offset(y_n)`` at a fixed extra parameter: the part of the weighted
    log-likelihood that no coefficient changes (the extra parameter's own constant is added
    per chain, see :func:`weighted_loglik_grad_chains`)."""
    return _weighted_offset(family, y, w, family.prepare(extra))


def weighted_hessian(family, theta, X, y, w, extra):
    """``sum_n w_n curv_n x_n x_n^T``: the Hessian of the negative weighted log-likelihood.

    The rows go in a number of contiguous chunks fixed by their count (not by the threads),
    each summed by one task, and the partial sums are added in order: the same bits for any
    number of threads. On Python threads from ``THREADED_ROWS`` rows (the Newton passes over
    large data; :class:`~skcoreset._parallel_kernels.RowTaskKernel`). A Python function, as
    the multinomial model's, which chooses how to run the tasks.
    """
    n, d = X.shape
    w = row_weights(w)
    size, parts = row_tasks(n, (d, d))
    _hessian_tasks.for_size(n)(family, theta, X, y, w, extra, size, parts)
    return _symmetric_sum(parts)


#: Rows from which a GLM evaluates the log-likelihood, gradient and Hessian of a block in one
#: pass (:func:`weighted_loglik_grad_hessian`). Its kernel compiles much slower than the
#: Hessian's alone and saves only a read of the block: below this, two passes (a small fit
#: never compiles it; measured: benchmarks/README.md, Thresholds).
FUSED_MIN_ROWS = 100_000


def weighted_loglik_grad_hessian(family, theta, X, y, w, extra, grad):
    """:func:`weighted_loglik_grad` and :func:`weighted_hessian` in one pass over ``X``.

    Returns ``(ll, H)`` and writes the gradient to ``grad``: what each Newton evaluation over
    blocks of large data asks for, for one read of each block rather than two. The sums go
    in the same row chunks (the same bits for any number of threads); the Hessian's are
    :func:`weighted_hessian`'s bits, the others agree with :func:`weighted_loglik_grad`'s
    to rounding.
    """
    n, d = X.shape
    w = row_weights(w)
    size, parts = row_tasks(n, (d, d))
    sums = np.zeros((parts.shape[0], d + 1))
    _loglik_grad_hessian_tasks.for_size(n)(family, theta, X, y, w, extra, size, parts, sums)
    total = sum_in_order(sums)
    grad[:] = total[:d]
    return total[d], _symmetric_sum(parts)


# Rows per group of the Hessian's sums: each group's columns are copied into (D, rows) buffers
# (about 2 x 21 x 64 x 8 bytes, in L1), whose dot products vectorise over the rows.
_HESSIAN_ROWS = 64


@njit(cache=True, inline="always")
def _group_columns(cols, X, i0, m):
    """``cols[:, :m]`` = rows ``i0 .. i0 + m - 1`` of ``X``, transposed: each column of the
    group contiguous, so that the loops over the group's rows below vectorise."""
    for r in range(m):
        for k in range(X.shape[1]):
            cols[k, r] = X[i0 + r, k]


#: Rows a group of the fused second-order summaries (``coreset._taylor_kernels``, the models'
#: own): its columns (about 2 x 22 x 64 x 8 bytes) stay in L1.
SUMMARY_GROUP = 64


@njit(cache=True, inline="always")
def group_rows(cols, X, i0, m, intercept):
    """``cols[:, :m]``: rows ``i0 .. i0 + m - 1`` of ``X`` (float32 or float64, as stored)
    transposed, in float64, with a row of ones last when ``intercept`` (the design's)."""
    D = X.shape[1]
    for r in range(m):
        for k in range(D):
            cols[k, r] = X[i0 + r, k]
    if intercept:
        for r in range(m):
            cols[D, r] = 1.0


@njit(cache=True, inline="always")
def _group_etas(etas, cols, theta, m):
    """``etas[:m]`` = the group's linear predictors ``x_r . theta``, an axpy per column (the
    sum of each row in index order, as a dot product row by row)."""
    e = etas[:m]
    c0 = cols[0, :m]
    t0 = theta[0]
    for r in range(m):
        e[r] = c0[r] * t0
    for k in range(1, cols.shape[0]):
        ck = cols[k, :m]
        tk = theta[k]
        for r in range(m):
            e[r] += ck[r] * tk


@njit(cache=True, inline="always")
def _group_weighted(weighted, cols, scales, m):
    """``weighted[:, :m]`` = ``cols[:, :m]`` scaled row by row by ``scales[:m]``."""
    s = scales[:m]
    for k in range(cols.shape[0]):
        ck = cols[k, :m]
        wk = weighted[k, :m]
        for r in range(m):
            wk[r] = s[r] * ck[r]


@njit(cache=True, inline="always")
def _add_group_products(H, cols, weighted, m):
    """``H[a, b] += weighted[a, :m] . cols[b, :m]`` for b <= a, four ``b`` at a time.

    Accumulating row by row instead loads and stores the whole triangle for every row, and
    is much slower (measured: benchmarks/README.md, Thresholds).
    """
    for a in range(H.shape[0]):
        wa = weighted[a, :m]
        b = 0
        while b + 3 <= a:
            s0, s1, s2, s3 = dot4_reassoc(
                cols[b, :m], cols[b + 1, :m], cols[b + 2, :m], cols[b + 3, :m], wa
            )
            H[a, b] += s0
            H[a, b + 1] += s1
            H[a, b + 2] += s2
            H[a, b + 3] += s3
            b += 4
        while b <= a:
            H[a, b] += dot_reassoc(cols[b, :m], wa)
            b += 1


@row_task_kernel(THREADED_ROWS, rows=("X", "y", "w"))
def _hessian_tasks(family, theta, X, y, w, extra, size, parts):
    """parts[c] += the lower triangle of rows c size .. (c + 1) size - 1's terms, a task each.

    The rows go in groups of ``_HESSIAN_ROWS``: a group's columns ``x_a`` and weighted columns
    ``curv w x_a`` are laid out contiguously for :func:`_add_group_products`, row by row. The
    fused pass below lays each group out by column first, so that those steps vectorise, for
    the same bits (neither contracts, and vectorised and scalar arithmetic then agree); here
    that layout compiled longer, which a fresh install's first fit of small data would pay,
    while the passes over large data are the fused ones (measured: benchmarks/README.md,
    Thresholds).
    """
    n, d = X.shape
    for c in range(parts.shape[0]):
        cols = np.empty((d, _HESSIAN_ROWS))
        weighted = np.empty((d, _HESSIAN_ROWS))
        end = min(n, (c + 1) * size)
        for i0 in range(c * size, end, _HESSIAN_ROWS):
            m = min(_HESSIAN_ROWS, end - i0)
            for r in range(m):
                i = i0 + r
                eta = 0.0
                for k in range(d):
                    eta += X[i, k] * theta[k]
                scale = w[i] * curv(family, eta, y[i], extra)
                for k in range(d):
                    cols[k, r] = X[i, k]
                    weighted[k, r] = scale * X[i, k]
            _add_group_products(parts[c], cols, weighted, m)


@row_task_kernel(THREADED_ROWS, rows=("X", "y", "w"), tasks=("parts", "sums"))
def _loglik_grad_hessian_tasks(family, theta, X, y, w, extra, size, parts, sums):
    """:func:`_hessian_tasks`, and sums[c] += the rows' (gradient, log-likelihood).

    Each group of ``_HESSIAN_ROWS`` rows is laid out by column first
    (:func:`_group_columns`): its linear predictors, likelihood terms and curvatures (exp and
    log1p included) and weighted columns are then loops over the group's rows that
    vectorise, where row by row they ran one at a time (measured: benchmarks/README.md, Thresholds).
    Each group's log-likelihoods are summed apart, then added.
    """
    n, d = X.shape
    param = family.prepare(extra)
    for c in range(parts.shape[0]):
        cols = np.empty((d, _HESSIAN_ROWS))
        weighted = np.empty((d, _HESSIAN_ROWS))
        etas = np.empty(_HESSIAN_ROWS)
        scales = np.empty(_HESSIAN_ROWS)
        slopes = np.empty(_HESSIAN_ROWS)
        values = np.empty(_HESSIAN_ROWS)
        total = 0.0
        end = min(n, (c + 1) * size)
        for i0 in range(c * size, end, _HESSIAN_ROWS):
            m = min(_HESSIAN_ROWS, end - i0)
            _group_columns(cols, X, i0, m)
            _group_etas(etas, cols, theta, m)
            e, yb, wb = etas[:m], y[i0 : i0 + m], w[i0 : i0 + m]
            sc, sl, lv = scales[:m], slopes[:m], values[:m]
            for r in range(m):
                value, slope = family.terms(e[r], yb[r], param)
                lv[r] = value
                sl[r] = wb[r] * slope
                sc[r] = wb[r] * family.curvature(e[r], yb[r], param)
            # the offsets apart: some are library calls (Poisson's lgamma), which would keep
            # the loop above from vectorising
            for r in range(m):
                lv[r] = wb[r] * (lv[r] + loglik_offset(family, yb[r], extra, param))
            total += sum_reassoc(lv)
            _group_weighted(weighted, cols, scales, m)
            _add_group_products(parts[c], cols, weighted, m)
            for a in range(d):
                sums[c, a] += dot_reassoc(cols[a, :m], sl)
        sums[c, d] = total
