"""Frank-Wolfe and GIGA Hilbert coresets (doc/algorithms.md sections 3 and 4).

Both run one pass over the (N, J) matrix per iteration (a numba kernel in ``_kernels``) and do
everything else on J-vectors and on the current support, so an iteration costs about one
matrix-vector product.
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


class _Support:
    """Weights on a growing index set (index -> slot), so updates cost O(support), not O(N)."""

    def __init__(self, capacity):
        self.idx = np.empty(capacity, dtype=np.intp)
        self.val = np.zeros(capacity)
        self.slot = {}
        self.size = 0

    def scale(self, factor):
        self.val[: self.size] *= factor

    def add(self, n, amount):
        k = self.slot.get(n)
        if k is None:
            if self.size == self.idx.shape[0]:
                self.idx = np.concatenate([self.idx, np.empty_like(self.idx)])
                self.val = np.concatenate([self.val, np.zeros_like(self.val)])
            k = self.size
            self.slot[n] = k
            self.idx[k] = n
            self.size += 1
        self.val[k] += amount

    def n_nonzero(self):
        return int(np.count_nonzero(self.val[: self.size]))

    def dense(self, n_rows, factor=None):
        w = np.zeros(n_rows)
        idx = self.idx[: self.size]
        val = self.val[: self.size]
        w[idx] = val if factor is None else val * factor[idx]
        return w


def frank_wolfe(
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
    """Frank-Wolfe Hilbert coreset (Campbell & Broderick 2019).

    Minimises ||y - Phi w|| over the polytope {w >= 0 : sum_n sigma_n w_n = sigma}, whose
    vertices are (sigma / sigma_n) e_n, by Frank-Wolfe with exact line search.  Iterates until
    the support reaches ``n_points`` or a stop rule fires.

    Parameters
    ----------
    vectors : array-like of shape (N, J)
        Rows are the vectors v_n (float64 or float32 storage; never modified).
        Rows with sigma_n = ||v_n|| = 0 are never selected.
    n_points : int
        Maximum number of nonzero weights, 1 <= n_points <= N.
    max_iter : int or None
        Maximum number of iterations (default ``10 * n_points + 100``; a vertex can be chosen
        again, so the support grows by at most one per iteration).
    tol : float, default=1e-12
        Stop ('numerical_limit') when ||y - Phi w|| <= tol * ||y||.
    target : array-like of shape (J,), optional
        The vector y to approximate (default: the sum of the rows).
    random_state : ignored
        Accepted for a uniform signature; the algorithm is deterministic.
    return_info : bool, default=False
        Also return a dict: ``n_iter``, ``stop_reason`` ('size_reached', 'converged' when the
        line search gives gamma = 0, i.e. no vertex improves on w, 'numerical_limit',
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
    >>> from skcoreset.hilbert import frank_wolfe
    >>> vectors = np.random.default_rng(0).standard_normal((200, 8))
    >>> w, info = frank_wolfe(vectors, 20, return_info=True)
    >>> int(np.count_nonzero(w)) <= 20, info["error"] < 1
    (True, True)
    """
    V, M, sigma, y = validate(vectors, n_points, target)
    max_iter = check_max_iter(max_iter, default_max_iter(M))
    tol = check_nonneg_float(tol, "tol")
    w, n_iter, reason = _frank_wolfe(V, M, sigma, y, max_iter=max_iter, tol=tol, progress=progress)
    return finish(V, w, y, return_info, n_iter, reason)


def _frank_wolfe(V, M, sigma, y, *, max_iter=None, tol=1e-12, progress=False, random_state=None):
    """Core of :func:`frank_wolfe` on validated input: ``(w, n_iter, stop_reason)``."""
    N = V.shape[0]
    max_iter, ynorm, inv_sigma, _ = greedy_setup(M, sigma, y, max_iter)
    sigma_tot = sigma.sum()
    sup = _Support(min(M, N) + 1)
    if ynorm == 0 or sigma_tot == 0:
        return np.zeros(N), 0, "zero_target"

    def vertex(f):
        return (sigma_tot * inv_sigma[f]) * V[f].astype(np.float64)

    # t = 0: the vertex best aligned with y, with weight sigma / sigma_f.
    f, _ = _kernels.argmax_scaled_dot(V, inv_sigma, y)
    phiw = vertex(f)
    sup.add(f, sigma_tot * inv_sigma[f])
    n_iter = 1
    reason = "max_iter"
    bar = ProgressBar(M, progress, "Frank-Wolfe", unit="point")
    while True:
        bar.advance_to(sup.n_nonzero())
        if sup.n_nonzero() >= M:
            reason = "size_reached"
            break
        r = y - phiw
        if np.linalg.norm(r) <= tol * ynorm:
            reason = "numerical_limit"
            break
        if n_iter >= max_iter:
            break
        f, _ = _kernels.argmax_scaled_dot(V, inv_sigma, r)
        vf = vertex(f)
        d = vf - phiw
        dd = d @ d
        gamma = min(1.0, (d @ r) / dd) if dd > 0 else 0.0
        n_iter += 1
        if not gamma > 0:
            reason = "converged"
            break
        sup.scale(1.0 - gamma)
        sup.add(f, gamma * sigma_tot * inv_sigma[f])
        phiw = (1.0 - gamma) * phiw + gamma * vf
    bar.close()
    return sup.dense(N), n_iter, reason


def giga(
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
    """Greedy iterative geodesic ascent (GIGA, Campbell & Broderick 2018, Algorithm 1).

    Works with the normalised vectors l_n = v_n / sigma_n and l = y / ||y||; each iteration
    moves l(w) = sum_n w_n l_n / ||.|| along the great circle toward the most aligned l_n, and
    the output is rescaled optimally: w_n <- (||y|| / sigma_n) <l(w), l> w_n.
    Iterates until the support reaches ``n_points`` or a stop rule fires; an index can be
    chosen again, so this may take more than ``n_points`` iterations.

    One iteration is one pass over the matrix: for every row the kernel computes <v_n, d_t>
    and <v_n, l(w_t)> directly from the two current J-vectors (rather than updating
    <l_n, l(w_t)> incrementally), which costs the same memory traffic and accumulates no
    rounding drift, so the algorithm stays accurate down to errors ~1e-12.

    Parameters
    ----------
    vectors : array-like of shape (N, J)
        Rows are the vectors v_n (float64 or float32 storage; never modified).
        Rows with sigma_n = 0 carry no information and are never selected.
    n_points : int
        Maximum number of nonzero weights, 1 <= n_points <= N.
    max_iter : int or None
        Maximum number of iterations (default ``10 * n_points + 100``).
    tol : float, default=1e-12
        Numerical limit: stop when ||d_t|| < tol.  ||d_t|| is the sine of the angle between
        l and l(w_t), which equals the relative error of the optimally scaled coreset.
    target : array-like of shape (J,), optional
        The vector y to approximate (default: the sum of the rows).
    random_state : ignored
        Accepted for a uniform signature; the algorithm is deterministic.
    return_info : bool, default=False
        Also return a dict: ``n_iter``, ``stop_reason`` ('size_reached', 'numerical_limit'
        (||d_t|| < tol), 'no_ascent' (the step-3 rule: no geodesic ascent possible toward the
        chosen point), 'max_iter', 'zero_target'), ``error`` (relative Hilbert error),
        ``n_support``.
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
    >>> from skcoreset.hilbert import giga
    >>> vectors = np.random.default_rng(0).standard_normal((200, 8))
    >>> w, info = giga(vectors, 20, return_info=True)
    >>> int(np.count_nonzero(w)) <= 20, info["error"] < 1
    (True, True)
    """
    V, M, sigma, y = validate(vectors, n_points, target)
    max_iter = check_max_iter(max_iter, default_max_iter(M))
    tol = check_nonneg_float(tol, "tol")
    w, n_iter, reason = _giga(V, M, sigma, y, max_iter=max_iter, tol=tol, progress=progress)
    return finish(V, w, y, return_info, n_iter, reason)


def _giga(V, M, sigma, y, *, max_iter=None, tol=1e-12, progress=False, random_state=None):
    """Core of :func:`giga` on validated input: ``(w, n_iter, stop_reason)``."""
    N, J = V.shape
    max_iter, ynorm, inv_sigma, pos = greedy_setup(M, sigma, y, max_iter)
    if ynorm == 0 or not pos.any():
        return np.zeros(N), 0, "zero_target"
    ell = y / ynorm
    lw = np.zeros(J)
    sup = _Support(M + 1)
    n_iter = 0
    reason = "max_iter"
    bar = ProgressBar(M, progress, "GIGA", unit="point")
    while n_iter < max_iter:
        zeta1 = ell @ lw
        d = ell - zeta1 * lw
        dnorm = np.sqrt(d @ d)
        if dnorm < tol:
            reason = "numerical_limit"
            break
        nt, _ = _kernels.giga_select(V, inv_sigma, d, lw, dnorm)
        lnt = V[nt].astype(np.float64) * inv_sigma[nt]
        zeta0 = ell @ lnt
        zeta2 = lnt @ lw
        ga = zeta0 - zeta1 * zeta2
        gb = zeta1 - zeta0 * zeta2
        n_iter += 1
        if ga <= 0 or gb < 0:
            reason = "no_ascent"
            break
        gamma = ga / (ga + gb)
        u = (1.0 - gamma) * lw + gamma * lnt
        s = np.sqrt(u @ u)
        lw = u / s
        sup.scale((1.0 - gamma) / s)
        sup.add(nt, gamma / s)
        bar.advance_to(sup.n_nonzero())
        if sup.n_nonzero() >= M:
            reason = "size_reached"
            break
    bar.close()
    # Optimal scaling: the closest point to y on the ray through Phi w.
    w = sup.dense(N, factor=(ynorm * (lw @ ell)) * inv_sigma)
    return w, n_iter, reason
