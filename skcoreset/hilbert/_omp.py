"""Non-negative orthogonal matching pursuit (NN-OMP) Hilbert coreset.

Selection uses the normalised correlation <v_n / sigma_n, r> with the residual r = y - Phi w
(one pass over the matrix per iteration); the weights are the exact non-negative least-squares
solution on the selected set, maintained by a warm-started Lawson-Hanson active-set method with
a Cholesky factor of the Gram matrix of the passive set that is updated by one row when a point
enters (its Gram row needs only the products with the current support rows) and downdated by
Givens rotations when a point leaves.
"""

import numpy as np

from .._progress import ProgressBar
from . import _kernels
from ._common import (
    check_max_iter,
    check_nonneg_float,
    default_max_iter,
    finish,
    greedy_setup,
    validate,
)

# A new column whose squared Cholesky pivot is below this fraction of its squared norm lies
# (numerically) in the span of the support: adding it cannot reduce the residual.
_RANK_TOL = 1e-12


# The rows more than it takes that a quantised search ranks from the rows as given
_RERANK = 8


def _rerank(V, rows, inv_sigma, r):
    """The rows by their correlations <v_n / sigma_n, r> from V, best first (ties: in order)."""
    values = (V[rows].astype(np.float64) @ r) * inv_sigma[rows]
    return rows[np.argsort(-values, kind="stable")]


class _ActiveSet:
    """Passive set P with rows Phi_P (float64), b_P = Phi_P y, weights w_P > 0 and L L^T = G_PP."""

    def __init__(self, y, capacity):
        J = y.shape[0]
        self.y = y
        self.idx = []
        self.rows = np.empty((capacity, J))
        self.b = np.empty(capacity)
        self.w = np.empty(capacity)
        self.L = np.zeros((capacity, capacity))
        self.p = 0

    def _grow(self):
        cap = 2 * self.rows.shape[0]
        p = self.p
        rows = np.empty((cap, self.rows.shape[1]))
        rows[:p] = self.rows[:p]
        L = np.zeros((cap, cap))
        L[:p, :p] = self.L[:p, :p]
        b = np.empty(cap)
        b[:p] = self.b[:p]
        w = np.empty(cap)
        w[:p] = self.w[:p]
        self.rows, self.L, self.b, self.w = rows, L, b, w

    def try_add(self, n, row):
        """Append column n with weight 0; False (and no change) if it is numerically dependent."""
        p = self.p
        g = self.rows[:p] @ row  # the new Gram row: one product per added point
        gnn = row @ row
        ell = _kernels.forward_solve(self.L, g, p)
        piv2 = gnn - ell @ ell
        if not piv2 > _RANK_TOL * gnn:
            return False
        if p == self.rows.shape[0]:
            self._grow()
        self.L[p, :p] = ell
        self.L[p, p] = np.sqrt(piv2)
        self.rows[p] = row
        self.b[p] = row @ self.y
        self.w[p] = 0.0
        self.idx.append(n)
        self.p = p + 1
        return True

    def remove(self, k):
        """Delete position k; restore the triangular factor with Givens rotations (O(p^2))."""
        p = self.p
        _kernels.delete_factor_row(self.L, k, p)
        for arr in (self.rows, self.b, self.w):
            arr[k : p - 1] = arr[k + 1 : p]
        del self.idx[k]
        self.p = p - 1

    def solve(self):
        return _kernels.cholesky_solve(self.L, self.b, self.p)

    def residual(self):
        p = self.p
        return self.y - self.w[:p] @ self.rows[:p]

    def refine(self):
        """Lawson-Hanson inner loop: from feasible w (w_P >= 0) to the LS solution on P, backing
        off along the segment and dropping points whose weight reaches 0.  Returns the dropped
        data indices."""
        dropped = []
        while self.p:
            z = self.solve()
            w = self.w[: self.p]
            if np.all(z > 0):
                w[:] = z
                break
            neg = np.flatnonzero(z <= 0)
            # how far along w -> z each such weight reaches 0: w / (w - z); a point at weight
            # 0 whose least-squares weight is 0 too (exactly degenerate rows) is there already
            gap = w[neg] - z[neg]
            ratios = np.zeros(neg.shape[0])
            np.divide(w[neg], gap, out=ratios, where=gap > 0)
            j = int(np.argmin(ratios))
            alpha = ratios[j]
            w += alpha * (z - w)
            w[neg[j]] = 0.0
            for k in sorted(np.flatnonzero(w <= 0), reverse=True):
                dropped.append(self.idx[k])
                self.remove(int(k))
        return dropped


# A large pool's search (:func:`pool_search`): two rows a pass from this many points per
# parameter, int16 rows from this many entries (16 MB of float32, where a pass no longer fits
# in the caches and reading half the bytes pays). The passes are most of a large pool's time
# (QNC at 10^6 rows, 253 points: 793 passes; two a pass: 396). Where each point is a large part
# of the fit, taking two at once made the result worse (at P + 5 to 3 P points, the small-size
# benchmark's eight data sets, four seeds: the median Laplace KL of QNC's start 0.7 to 10
# times, typically 1.3 times); from 10 P points (ijcnn1, Phishing, DS1, credit, BikeTrips,
# AirportDelays at 250 to 1000 points, three seeds) it was 0.6 to 1.8 times, at most 0.009
# nats, and faster (measured: benchmarks/README.md, Thresholds).
TWO_PER_PASS_FROM = 10
QUANTIZE_FROM = 4_000_000


def pool_search(n_points, n_params, n_entries):
    """``(per_pass, quantize)`` of :func:`_omp` on a pool of ``n_entries`` (rows x J) for a
    coreset of ``n_points`` of a posterior of ``n_params`` parameters (see
    ``TWO_PER_PASS_FROM`` and ``QUANTIZE_FROM``)."""
    return 2 if n_points >= TWO_PER_PASS_FROM * n_params else 1, n_entries >= QUANTIZE_FROM


def omp(
    vectors,
    n_points,
    *,
    max_iter=None,
    tol=1e-12,
    target=None,
    random_state=None,
    return_info=False,
    progress=False,
):
    """Non-negative orthogonal matching pursuit Hilbert coreset.

    Each iteration adds the point most aligned with the residual r = y - Phi w (largest
    <v_n / sigma_n, r>, which must be positive) to the selected set S and re-solves
    min ||y - Phi_S w_S|| subject to w_S >= 0 exactly (warm-started active set with an updated
    Cholesky factor).  Points whose NNLS weight is 0 leave S (they may be selected again later),
    so every point of S has a positive weight and the iteration continues until
    ``|S| = n_points`` or a stop rule fires.

    Parameters
    ----------
    vectors : array-like of shape (N, J)
        Rows are the vectors v_n (float64 or float32 storage; never modified).
        Rows with sigma_n = 0 are never selected.
    n_points : int
        Maximum number of nonzero weights, 1 <= n_points <= N.  At most rank(Phi) <= J points
        can be useful: once the residual vanishes (relative ``tol``) or the best new point is
        numerically in the span of S, the iteration stops ('numerical_limit').
    max_iter : int or None
        Maximum number of additions (default ``10 * n_points + 100``).
    tol : float, default=1e-12
        Stop ('numerical_limit') when ||r|| <= tol * ||y||; a point counts as positively
        correlated only if <v_n / sigma_n, r> > tol * ||r||.
    target : array-like of shape (J,), optional
        The vector y to approximate (default: the sum of the rows).
    random_state : ignored
        Accepted for a uniform signature; the algorithm is deterministic.
    return_info : bool, default=False
        Also return a dict: ``n_iter``, ``stop_reason`` ('size_reached', 'converged' (no
        positive correlation left: w is the NNLS optimum over all points), 'numerical_limit',
        'max_iter', 'zero_target'), ``error`` (relative Hilbert error), ``n_support``.
    progress : bool, default=False
        Show a tqdm progress bar of the support size (needs the optional tqdm).

    Returns
    -------
    w : ndarray of shape (N,), float64
        The weights, nonzero on the coreset.
    info : dict, only if ``return_info``
        The run's details (see ``return_info``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.hilbert import omp
    >>> vectors = np.random.default_rng(0).standard_normal((200, 8))
    >>> w, info = omp(vectors, 20, return_info=True)
    >>> int(np.count_nonzero(w)) <= 20, info["error"] < 1
    (True, True)
    """
    V, M, sigma, y = validate(vectors, n_points, target)
    max_iter = check_max_iter(max_iter, default_max_iter(M))
    tol = check_nonneg_float(tol, "tol")
    w, n_iter, reason = _omp(V, M, sigma, y, max_iter=max_iter, tol=tol, progress=progress)
    return finish(V, w, y, return_info, n_iter, reason)


def _omp(
    V,
    M,
    sigma,
    y,
    *,
    max_iter=None,
    tol=1e-12,
    progress=False,
    random_state=None,
    per_pass=1,
    quantize=False,
):
    """Core of :func:`omp` on validated input: ``(w, n_iter, stop_reason)``.

    ``per_pass`` > 1 takes that many rows from each pass, best first (generalised OMP, Wang,
    Kwon and Shim 2012): each one after the first enters only if it still correlates
    positively with the residual its predecessors left, else a new pass follows. The passes
    are the cost (memory-bound), so this divides them by up to ``per_pass``, for a slightly
    different selection than OMP's.

    ``quantize`` searches int16 copies of the rows (:func:`~._kernels.quantize_rows`), half
    float32's bytes: each pass keeps ``_RERANK`` rows more than it takes and ranks them by
    their correlations from the rows as given. A row the quantisation moved out of them is
    missed, so the pick may be a row whose correlation is next to the best's, within the
    quantisation's error (its sd ``step / sqrt(12)`` times the residual's norm over sigma_n:
    about 1e-6 of the residual's norm for rows of even entries, more for rows a few entries
    dominate): a weak greedy step.
    """
    N, J = V.shape
    max_iter, ynorm, inv_sigma, pos = greedy_setup(M, sigma, y, max_iter)
    if ynorm == 0 or not pos.any():
        return np.zeros(N), 0, "zero_target"
    # The search streams every row each iteration and is memory-bound: a float32 copy halves
    # the bytes it reads and so its time (measured: benchmarks/README.md, Thresholds). It
    # only ranks the rows: the chosen row's correlation (the stop rule) and the weights come
    # from the rows as given.
    if quantize:
        search, step = _kernels.quantize_rows(V)
    else:
        search = V if V.dtype == np.float32 else V.astype(np.float32)
        if search is not V and not np.isfinite(search).all():
            search = V  # beyond float32's range: search the rows as given
    act = _ActiveSet(y, min(M, J) + 2)
    # The scale vector doubles as the "not yet selected" mask (0 = skip in the kernel).
    scale = inv_sigma.copy()
    r = y.copy()
    n_iter = 0
    reason = "max_iter"
    picks = []  # the rest of the last pass's best rows, best last
    bar = ProgressBar(M, progress, "OMP", unit="point")
    while True:
        bar.advance_to(act.p)
        if act.p >= M:
            reason = "size_reached"
            break
        rnorm = np.linalg.norm(r)
        if rnorm <= tol * ynorm:
            reason = "numerical_limit"
            break
        if n_iter >= max_iter:
            break
        fresh = not picks
        if fresh:
            k = min(per_pass, M - act.p)
            if quantize:
                found, _ = _kernels.top_quantized_dots(search, scale * step, r, k + _RERANK)
                best = _rerank(V, found, inv_sigma, r)[:k]
            else:
                best, _ = _kernels.top_scaled_dots(search, scale, r, k)
            picks = best[::-1].tolist() or [-1]
        f = picks.pop()
        row = V[f].astype(np.float64) if f >= 0 else None
        if f < 0 or not (row @ r) * inv_sigma[f] > tol * rnorm:
            if fresh:
                reason = "converged"
                break
            picks = []  # the residual moved away from the pass's next rows: a new pass
            continue
        added = act.try_add(f, row)
        if not added and not fresh:
            picks = []  # in the span of the support now: a new pass
            continue
        n_iter += 1
        if not added:
            reason = "numerical_limit"
            break
        scale[f] = 0.0
        # Lawson-Hanson on S u {f}, warm-started at (w_S, 0): the inner loop restores
        # feasibility; the outer loop re-admits a dropped point whose gradient is positive.
        candidates = []
        readmitted = set()
        while True:
            dropped = act.refine()
            for n in dropped:
                scale[n] = inv_sigma[n]
            # Anti-cycling: near the numerical limit rounding can make a re-admitted point drop
            # out again forever; each point is re-admitted at most once per addition.
            candidates.extend(n for n in dropped if n not in readmitted)
            if not candidates:
                break
            r = act.residual()
            rows = np.asarray(candidates, dtype=np.intp)
            grad = (V[rows].astype(np.float64) @ r) * inv_sigma[rows]
            k = int(np.argmax(grad))
            if not grad[k] > tol * np.linalg.norm(r):
                break
            n = candidates.pop(k)
            readmitted.add(n)
            if not act.try_add(n, V[n].astype(np.float64)):
                break
            scale[n] = 0.0
        r = act.residual()
    bar.close()
    w = np.zeros(N)
    w[np.asarray(act.idx, dtype=np.intp)] = act.w[: act.p]
    return w, n_iter, reason
