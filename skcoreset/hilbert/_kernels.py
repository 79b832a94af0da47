"""numba kernels shared by the Hilbert coreset algorithms.

Every kernel reads the (N, J) matrix ``V`` whose rows are the vectors v_n, stored C-contiguous in
float64 or float32, and accumulates in float64 (the search of int16 rows, from
:func:`quantize_rows`, in float32).  The per-iteration work of every greedy algorithm is one pass
over ``V``; those passes are memory-bound, so they are split into contiguous tasks of rows, run on
Python threads for large matrices (from ``PARALLEL_MIN_ENTRIES``;
:class:`~skcoreset._parallel_kernels.RowTaskKernel`): one build, compiled faster than numba's
threaded one and as fast to run (measured: benchmarks/README.md, Thresholds). The searches' tasks
report their best row as an offset within the task, which a thread, seeing its tasks' rows alone,
computes the same.

``fastmath`` is restricted to re-association/contraction so that the length-J dot products
vectorise; it never assumes finite values (inputs are validated before they get here).
"""

import numpy as np
from numba import njit

from .._parallel_kernels import (
    PARALLEL_MIN_ENTRIES,
    in_ranges,
    row_task_kernel,
    sum_in_order,
    wide_row_tasks,
)

# Re-association lets LLVM vectorise the dot-product reductions; results differ from a
# sequential sum only by rounding (~1e-16 relative).
_FM = {"reassoc", "contract", "nsz", "arcp"}


def norms_and_sum(V):
    """Row norms sigma_n = ||v_n|| and the row sum y = sum_n v_n, in one pass.

    Returns ``(sigma, y)``, both float64.  Non-finite input shows up as a non-finite sigma_n.
    """
    N, J = V.shape
    size, partial = wide_row_tasks(N, (J,))
    sigma = np.empty(N)
    _norms_and_sum_tasks.for_size(V.size)(V, size, sigma, partial)
    return sigma, sum_in_order(partial)


@row_task_kernel(PARALLEL_MIN_ENTRIES, rows=("V", "sigma"), tasks=("partial",), fastmath=_FM)
def _norms_and_sum_tasks(V, size, sigma, partial):
    """sigma[n] = ||v_n||, and partial[c] += the rows of task c."""
    N, J = V.shape
    for c in range(partial.shape[0]):
        part = partial[c]
        for n in range(c * size, min(N, (c + 1) * size)):
            acc = 0.0
            for j in range(J):
                v = np.float64(V[n, j])
                acc += v * v
                part[j] += v
            sigma[n] = np.sqrt(acc)


@row_task_kernel(PARALLEL_MIN_ENTRIES, rows=("V", "out"), tasks=(), fastmath=_FM)
def matvec(V, x, out):
    """out[n] = <v_n, x> for all rows (x float64, out float64)."""
    N, J = V.shape
    for n in range(N):
        acc = 0.0
        for j in range(J):
            acc += V[n, j] * x[j]
        out[n] = acc


@row_task_kernel(PARALLEL_MIN_ENTRIES, rows=("rows", "out"), tasks=(), fastmath=_FM)
def matvec_rows(V, rows, x, out):
    """out[i] = <v_{rows[i]}, x>: the pass restricted to a subset of rows."""
    J = V.shape[1]
    for i in range(rows.shape[0]):
        n = rows[i]
        acc = 0.0
        for j in range(J):
            acc += V[n, j] * x[j]
        out[i] = acc


def argmax_scaled_dot(V, scale, x):
    """argmax_n scale[n] * <v_n, x> over rows with scale[n] != 0 (first index on ties).

    Used with scale = 1/sigma_n by Frank-Wolfe and OMP (rows to skip get scale 0).
    Returns ``(index, value)``; index is -1 when every scale is 0.
    """
    rows, values = top_scaled_dots(V, scale, x, 1)
    return _first(rows, values)


def _first(rows, values):
    """``(row, value)`` of the best of a search's merged results; ``(-1, -inf)`` when none."""
    return (int(rows[0]), float(values[0])) if rows.shape[0] else (-1, -np.inf)


def top_scaled_dots(V, scale, x, k):
    """The ``k`` rows of largest scale[n] * <v_n, x> among rows with scale[n] != 0, in one pass:
    ``(rows, values)``, best first (the first row on ties), fewer when fewer rows count."""
    return _top(V, scale, x, k, 0.0)


def _top(V, scale, x, k, zero):
    # zero: the dot products' first value, whose type is that of their sums
    size, best_val = wide_row_tasks(V.shape[0], (k,))
    best_at = np.empty(best_val.shape, dtype=np.int64)
    _top_tasks.for_size(V.size)(V, scale, x, zero, size, best_val, best_at)
    rows, values = np.empty(k, dtype=np.int64), np.empty(k)
    found = _merge_tasks(best_val, best_at, size, rows, values)
    return rows[:found], values[:found]


# The largest code of a quantised row: its entries are int16 multiples of max|v_n| / _LEVELS
_LEVELS = 32767
# Rows a chunk of the quantisation converts at once
_QUANTIZE_ROWS = 512


def quantize_rows(V):
    """``(Q, step)``: the rows as int16 multiples of ``step[n] = max_j |v_nj| / 32767``, half
    the bytes of float32 for a memory-bound search. An entry is off by half a step, and by
    float32's rounding of the quotient for float32 rows (at most 0.504 steps). A zero row gets
    step 1."""
    N = V.shape[0]
    Q = np.empty(V.shape, dtype=np.int16)
    step = np.empty(N)

    def run(c0, c1):  # chunks of rows whose temporaries stay in cache, on the fit's threads
        for i0 in range(c0 * _QUANTIZE_ROWS, min(N, c1 * _QUANTIZE_ROWS), _QUANTIZE_ROWS):
            rows = V[i0 : i0 + _QUANTIZE_ROWS]
            top = np.maximum(rows.max(axis=1), -rows.min(axis=1)).astype(np.float64)
            s = step[i0 : i0 + _QUANTIZE_ROWS]
            s[:] = np.where(top > 0, top / _LEVELS, 1.0)
            scaled = rows / s[:, None].astype(rows.dtype)
            Q[i0 : i0 + _QUANTIZE_ROWS] = np.rint(scaled, out=scaled)

    in_ranges(run, -(-N // _QUANTIZE_ROWS))
    return Q, step


def top_quantized_dots(Q, scale, x, k):
    """:func:`top_scaled_dots` of quantised rows (int16, from :func:`quantize_rows`; ``scale``
    times the rows' steps), the dot products summed in float32: ranking values that differ from
    float64 ones by the quantisation, relative to the row's largest entry."""
    return _top(Q, scale, x.astype(np.float32), k, np.float32(0.0))


@row_task_kernel(
    PARALLEL_MIN_ENTRIES, rows=("V", "scale"), tasks=("best_val", "best_at"), fastmath=_FM
)
def _top_tasks(V, scale, x, zero, size, best_val, best_at):
    """Task c's best values, best first, and where they are, as offsets in the task (a thread
    sees its tasks' rows alone, numbered from its first: the offsets are the same either
    way); -1: none. A later row enters only if strictly better, so ties keep the first."""
    N, J = V.shape
    k = best_val.shape[1]
    for c in range(best_val.shape[0]):
        lo = c * size
        bv = best_val[c]
        bi = best_at[c]
        bv[:] = -np.inf
        bi[:] = -1
        for n in range(lo, min(N, lo + size)):
            s = scale[n]
            if s == 0.0:
                continue
            acc = zero
            for j in range(J):
                acc += V[n, j] * x[j]
            val = acc * s
            if val > bv[k - 1]:
                i = k - 1
                while i > 0 and val > bv[i - 1]:
                    bv[i] = bv[i - 1]
                    bi[i] = bi[i - 1]
                    i -= 1
                bv[i] = val
                bi[i] = n - lo


@njit(cache=True)
def _merge_tasks(best_val, best_at, size, rows, values):
    """Merge the tasks' best lists (each best first) into the best ``rows.shape[0]`` of all,
    best first, as rows and values; returns how many were found. A later task must be
    strictly better, so ties go to the first row, as in one scan."""
    n_tasks, k = best_val.shape
    head = np.zeros(n_tasks, dtype=np.int64)
    found = 0
    while found < rows.shape[0]:
        bc = -1
        bv = -np.inf
        for c in range(n_tasks):
            h = head[c]
            if h < k and best_at[c, h] >= 0 and (bc < 0 or best_val[c, h] > bv):
                bc = c
                bv = best_val[c, h]
        if bc < 0:
            break
        rows[found] = bc * size + best_at[bc, head[bc]]
        values[found] = bv
        head[bc] += 1
        found += 1
    return found


@njit(cache=True, fastmath={"reassoc", "contract"})
def forward_solve(L, b, p):
    """z with ``L[:p, :p] z = b[:p]`` (L lower triangular). The active set solves thousands of
    small systems a fit: here, without a library call's overhead each time. Each entry is a
    dot product with a row of L, summed in several partial sums (``reassoc``): one running
    sum waits on each addition's latency."""
    z = np.empty(p)
    for i in range(p):
        acc = 0.0
        for k in range(i):
            acc += L[i, k] * z[k]
        z[i] = (b[i] - acc) / L[i, i]
    return z


@njit(cache=True)
def cholesky_solve(L, b, p):
    """x with ``L L^T x = b[:p]``, L the lower factor in ``L[:p, :p]``. The solve with L^T
    goes up the rows of L, each taken off the entries above it as one vectorised update: a
    dot product per entry would read a column of L, one cache line an element."""
    x = forward_solve(L, b, p)
    for i in range(p - 1, -1, -1):
        x[i] /= L[i, i]
        xi = x[i]
        row = L[i]
        for k in range(i):
            x[k] -= row[k] * xi
    return x


@njit(cache=True)
def delete_factor_row(L, k, p):
    """In place: from the lower Cholesky factor ``L[:p, :p]`` of a Gram matrix G to the factor
    of G without row and column k (in ``L[:p-1, :p-1]``; row and column p-1 zeroed).

    Rows k+1.. move up one, which leaves the block lower-Hessenberg; Givens rotations of
    columns (i, i+1) restore the triangle. O(p^2), compiled: the Python loop it replaces was
    slow at a few hundred points (measured: benchmarks/README.md, Thresholds).
    """
    for i in range(k, p - 1):
        for j in range(p):
            L[i, j] = L[i + 1, j]
    for i in range(k, p - 1):
        a = L[i, i]
        c = L[i, i + 1]
        r = np.hypot(a, c)
        if r == 0.0:
            continue
        cs = a / r
        sn = c / r
        for m in range(i, p - 1):
            li = L[m, i]
            lj = L[m, i + 1]
            L[m, i] = cs * li + sn * lj
            L[m, i + 1] = -sn * li + cs * lj
    for m in range(p):
        L[m, p - 1] = 0.0
        L[p - 1, m] = 0.0


@njit(cache=True, inline="always")
def _giga_score(p, q, inv_sigma, dnorm):
    # cos(d_t, d_tn) = <l_n, d_t> / (||d_t|| sqrt(1 - <l_n, l(w_t)>^2)); 0 where the
    # denominator vanishes (l_n parallel to l(w_t)).
    a = q * inv_sigma
    den = 1.0 - a * a
    if den > 0.0:
        return (p * inv_sigma) / (dnorm * np.sqrt(den))
    return 0.0


def giga_select(V, inv_sigma, d, lw, dnorm):
    """GIGA step 2 in one pass: argmax_n of the geodesic-alignment score.

    For every row both <v_n, d_t> and <v_n, l(w_t)> are computed directly from the current
    J-vectors d_t and l(w_t) (two dot products on the same cached row, so still one pass over
    memory).  Rows with inv_sigma == 0 (sigma_n == 0) are skipped.
    Returns ``(index, score)``; ties go to the first index.
    """
    size, best_val = wide_row_tasks(V.shape[0], ())
    size = -(-size // 4) * 4  # whole groups of four rows a task
    best_at = np.empty(best_val.shape[0], dtype=np.int64)
    _giga_tasks.for_size(V.size)(V, inv_sigma, d, lw, dnorm, size, best_val, best_at)
    rows, values = np.empty(1, dtype=np.int64), np.empty(1)
    found = _merge_tasks(best_val.reshape(-1, 1), best_at.reshape(-1, 1), size, rows, values)
    return _first(rows[:found], values[:found])


@row_task_kernel(
    PARALLEL_MIN_ENTRIES, rows=("V", "inv_sigma"), tasks=("best_val", "best_at"), fastmath=_FM
)
def _giga_tasks(V, inv_sigma, d, lw, dnorm, size, best_val, best_at):
    """Each task's best score and its offset in the task (as :func:`_top_tasks` with one). Four rows
    go together, so that float32 storage is not limited by the latency of the float64
    reductions."""
    N, J = V.shape
    for c in range(best_val.shape[0]):
        lo = c * size
        hi = min(N, lo + size)
        bv = -np.inf
        bi = -1
        n = lo
        while n + 4 <= hi:
            p0 = 0.0
            p1 = 0.0
            p2 = 0.0
            p3 = 0.0
            q0 = 0.0
            q1 = 0.0
            q2 = 0.0
            q3 = 0.0
            for j in range(J):
                dj = d[j]
                lj = lw[j]
                v0 = np.float64(V[n, j])
                v1 = np.float64(V[n + 1, j])
                v2 = np.float64(V[n + 2, j])
                v3 = np.float64(V[n + 3, j])
                p0 += v0 * dj
                p1 += v1 * dj
                p2 += v2 * dj
                p3 += v3 * dj
                q0 += v0 * lj
                q1 += v1 * lj
                q2 += v2 * lj
                q3 += v3 * lj
            if inv_sigma[n] != 0.0:
                s = _giga_score(p0, q0, inv_sigma[n], dnorm)
                if s > bv:
                    bv = s
                    bi = n - lo
            if inv_sigma[n + 1] != 0.0:
                s = _giga_score(p1, q1, inv_sigma[n + 1], dnorm)
                if s > bv:
                    bv = s
                    bi = n + 1 - lo
            if inv_sigma[n + 2] != 0.0:
                s = _giga_score(p2, q2, inv_sigma[n + 2], dnorm)
                if s > bv:
                    bv = s
                    bi = n + 2 - lo
            if inv_sigma[n + 3] != 0.0:
                s = _giga_score(p3, q3, inv_sigma[n + 3], dnorm)
                if s > bv:
                    bv = s
                    bi = n + 3 - lo
            n += 4
        while n < hi:
            if inv_sigma[n] != 0.0:
                p = 0.0
                q = 0.0
                for j in range(J):
                    v = np.float64(V[n, j])
                    p += v * d[j]
                    q += v * lw[j]
                s = _giga_score(p, q, inv_sigma[n], dnorm)
                if s > bv:
                    bv = s
                    bi = n - lo
            n += 1
        best_val[c] = bv
        best_at[c] = bi
