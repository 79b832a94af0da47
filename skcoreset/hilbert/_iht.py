"""Accelerated iterative hard thresholding: A-IHT and A-IHT II (doc/algorithms.md section 5)."""

import numpy as np
from sklearn.utils import check_random_state

from .._progress import ProgressBar
from . import _kernels
from ._common import (
    check_max_iter,
    check_nonneg_float,
    combination,
    finish,
    validate,
)


def _top_k_signed(b, k):
    """Indices of the k largest entries of b (O(N) argpartition)."""
    if k <= 0:
        return np.zeros(0, dtype=np.intp)
    if k >= b.shape[0]:
        return np.arange(b.shape[0])
    return np.argpartition(b, b.shape[0] - k)[b.shape[0] - k :]


def _line_search_step(V, idx, g, c):
    """c * ||g||^2 / ||Phi_idx g||^2 (0 when g = 0 or Phi_idx g = 0)."""
    gg = g @ g
    if gg == 0:
        return 0.0
    pg = combination(V, idx, g)
    den = pg @ pg
    return c * gg / den if den > 0 else 0.0


def iht(
    vectors,
    n_points,
    *,
    debias=False,
    max_iter=300,
    step_scale=0.5,
    tol=1e-5,
    batch_fraction=None,
    target=None,
    random_state=None,
    return_info=False,
    progress=False,
):
    """A-IHT / A-IHT II Hilbert coreset (Zhang, Khanna, Kyrillidis & Koyejo 2021).

    Minimises ||y - Phi w||^2 subject to w >= 0, ||w||_0 <= n_points by accelerated
    projected gradient steps with exact line searches; columns are not normalised.
    Each iteration costs one pass over the matrix (the gradient) plus an O(N) top-k selection;
    the de-biasing step of A-IHT II and the momentum line search only touch the support.

    Parameters
    ----------
    vectors : array-like of shape (N, J)
        Rows are the vectors v_n (float64 or float32 storage; never modified).
    n_points : int
        The maximum number k of nonzero weights, 1 <= k <= N.
    debias : bool, default=False
        ``False``: A-IHT.  ``True``: A-IHT II (an extra projected gradient step on the
        support after each thresholding).
    max_iter : int, default=300
        Maximum number of iterations.
    step_scale : float, default=0.5
        The c in mu = c ||d_S||^2 / ||Phi_S d_S||^2; c = 1 is the exact line search, the
        authors' code uses 1/2.
    tol : float, default=1e-5
        Stop ('converged') when ||w_{t+1} - w_t|| < tol ||w_{t+1}||.
    batch_fraction : float in (0, 1] or None
        Stochastic variant: each iteration the gradient d = Phi^T (y - Phi z) is computed only
        for a random subset of points (each included independently with this probability, plus
        the current support of z) and is 0 elsewhere, so a pass reads about that fraction of
        the matrix.  This is a randomised block-coordinate step; no rescaling is needed since
        the exact line search makes mu * d invariant to the scale of d.  Note the stop rule
        can fire early when a batch brings no change; use ``tol=0`` to run ``max_iter``.
    target : array-like of shape (J,), optional
        The vector y to approximate (default: the sum of the rows).
    random_state : int, RandomState instance or None
        Only used by the stochastic variant.
    return_info : bool, default=False
        Also return a dict: ``n_iter``, ``stop_reason`` ('converged', 'max_iter',
        'zero_target'), ``error`` (relative Hilbert error of the returned w),
        ``n_support``, ``objective`` (||y - Phi w||^2).
    progress : bool, default=False
        Show a tqdm progress bar of the iterations (needs the optional tqdm).

    Returns
    -------
    w : ndarray of shape (N,), float64
        The iterate with the smallest objective seen (A-IHT is not monotone); it is the last
        iterate unless the iteration oscillated.
    info : dict, only if ``return_info``
        The run's details (see ``return_info``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.hilbert import iht
    >>> vectors = np.random.default_rng(0).standard_normal((200, 8))
    >>> w, info = iht(vectors, 20, return_info=True)
    >>> int(np.count_nonzero(w)) <= 20, info["error"] < 1
    (True, True)
    """
    V, k, sigma, y = validate(vectors, n_points, target)
    max_iter = check_max_iter(max_iter, 300)
    c = check_nonneg_float(step_scale, "step_scale")
    if c == 0:
        raise ValueError("step_scale must be > 0")
    tol = check_nonneg_float(tol, "tol")
    if batch_fraction is not None:
        batch_fraction = check_nonneg_float(batch_fraction, "batch_fraction")
        if not 0 < batch_fraction <= 1:
            raise ValueError(f"batch_fraction must be in (0, 1], got {batch_fraction}")
    w, n_iter, reason = _iht(
        V,
        k,
        sigma,
        y,
        debias=debias,
        max_iter=max_iter,
        step_scale=c,
        tol=tol,
        batch_fraction=batch_fraction,
        random_state=random_state,
        progress=progress,
    )
    idx = np.flatnonzero(w)
    res = combination(V, idx, w[idx]) - y
    return finish(V, w, y, return_info, n_iter, reason, objective=float(res @ res))


def _iht(
    V,
    k,
    sigma,
    y,
    *,
    debias=False,
    max_iter=300,
    step_scale=0.5,
    tol=1e-5,
    batch_fraction=None,
    random_state=None,
    progress=False,
):
    """Core of :func:`iht` on validated input: ``(w, n_iter, stop_reason)``."""
    N, J = V.shape
    c = step_scale
    rng = check_random_state(random_state) if batch_fraction is not None else None
    yy = float(y @ y)
    if yy == 0:
        return np.zeros(N), 0, "zero_target"

    w = np.zeros(N)
    w_idx = np.zeros(0, dtype=np.intp)
    z = np.zeros(N)
    z_idx = np.zeros(0, dtype=np.intp)
    phi_z = np.zeros(J)
    d = np.zeros(N) if batch_fraction is None else None
    best_w, best_obj = w, yy
    n_iter = 0
    reason = "max_iter"
    bar = ProgressBar(max_iter, progress, "A-IHT II" if debias else "A-IHT", unit="iter")
    for _ in range(max_iter):
        bar.update()
        n_iter += 1
        r = y - phi_z
        # d = Phi^T (y - Phi z): the one pass over the matrix.  The selection below works on
        # the candidate rows only (all rows, or the batch, which contains supp(z)): outside the
        # batch d = 0 and z = 0, so b = z + mu d = 0 there and such rows cannot enter.
        if batch_fraction is None:
            _kernels.matvec.for_size(V.size)(V, r, d)
            rows, dc, zc, zpos = None, d, z, z_idx
        else:
            mask = rng.random_sample(N) < batch_fraction
            mask[z_idx] = True
            rows = np.flatnonzero(mask)  # sorted: the gathered rows are read in order
            dc = np.empty(rows.shape[0])
            _kernels.matvec_rows.for_size(rows.shape[0] * J)(V, rows, r, dc)
            zc = z[rows]
            zpos = np.searchsorted(rows, z_idx)
        # S = supp(z) u {k largest |d_n| outside supp(z)}
        absd = np.abs(dc)
        absd[zpos] = -1.0
        S_loc = np.union1d(zpos, _top_k_signed(absd, min(k, dc.shape[0] - zpos.size)))
        S = S_loc if rows is None else rows[S_loc]
        mu = _line_search_step(V, S, dc[S_loc], c)
        b = zc + mu * dc  # the full d, not d restricted to S
        X_loc = _top_k_signed(b, k)
        X_loc = X_loc[b[X_loc] > 0]
        X = X_loc if rows is None else rows[X_loc]
        w_new = np.zeros(N)
        w_new[X] = b[X_loc]
        if debias:
            # Projected gradient step on the support X (touches only the rows in X).
            r_new = y - combination(V, X, w_new[X])
            g = V[X].astype(np.float64) @ r_new
            mu2 = _line_search_step(V, X, g, c)
            w_new[X] = np.maximum(w_new[X] + mu2 * g, 0.0)
            X = X[w_new[X] > 0]
        X = np.sort(X)
        phi_w = combination(V, X, w_new[X])
        res = y - phi_w
        obj = float(res @ res)
        if obj < best_obj:
            best_w, best_obj = w_new, obj
        # Momentum with exact line search on D = w_{t+1} - w_t (supported on X u supp(w_t)).
        U = np.union1d(X, w_idx)
        D = w_new[U] - w[U]
        phi_D = combination(V, U, D)
        dd = phi_D @ phi_D
        tau = (res @ phi_D) / dd if dd > 0 else 0.0
        z = w_new.copy()
        z[U] += tau * D
        z_idx = U[z[U] != 0]
        phi_z = phi_w + tau * phi_D
        step = np.linalg.norm(D)
        w, w_idx = w_new, X
        if step < tol * np.linalg.norm(w_new[X]):
            reason = "converged"
            break
    bar.close()
    return best_w, n_iter, reason
