"""Sampling baselines: uniform and Hilbert importance sampling (doc/algorithms.md section 2)."""

import numpy as np
from sklearn.utils import check_random_state

from ._common import finish, validate


def uniform(vectors, n_points, *, replace=False, random_state=None, target=None, return_info=False):
    """Uniform random coreset.

    Parameters
    ----------
    vectors : array-like of shape (N, J)
        Rows are the vectors v_n (float64 or float32 storage; never modified).
    n_points : int
        Number of draws M, 1 <= M <= N.
    replace : bool, default=False
        ``False``: M distinct points chosen uniformly, each with weight N / M (exactly M points).
        ``True``: the formula of the papers, M draws with replacement and
        w_n = (N / M) * count_n; the support can then be smaller than M (repeated draws).
        Both are unbiased: E[Phi w] = sum_n v_n.
    random_state : int, RandomState instance or None
        Seed or generator (scikit-learn convention).
    target : array-like of shape (J,), optional
        Only used for the error reported in ``info`` (default: the sum of the rows).
    return_info : bool, default=False
        Also return a dict with ``n_iter`` (= M), ``stop_reason`` ('size_reached'),
        ``error`` (relative Hilbert error) and ``n_support``.

    Returns
    -------
    w : ndarray of shape (N,), float64
        The weights, nonzero on the coreset.
    info : dict, only if ``return_info``
        The run's details (see ``return_info``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.hilbert import uniform
    >>> vectors = np.random.default_rng(0).standard_normal((200, 8))
    >>> w, info = uniform(vectors, 20, random_state=0, return_info=True)
    >>> int(np.count_nonzero(w)), float(w.sum())
    (20, 200.0)
    """
    V, M, sigma, y = validate(vectors, n_points, target)
    w, n_iter, reason = _uniform(V, M, sigma, y, replace=replace, random_state=random_state)
    return finish(V, w, y, return_info, n_iter, reason)


def _uniform(V, M, sigma, y, *, replace=False, random_state=None):
    """Core of :func:`uniform` on validated input: ``(w, n_iter, stop_reason)``."""
    N = V.shape[0]
    rng = check_random_state(random_state)
    w = np.zeros(N)
    if replace:
        counts = np.bincount(rng.randint(0, N, size=M), minlength=N)
        w[:] = (N / M) * counts
    else:
        w[rng.choice(N, size=M, replace=False)] = N / M
    return w, M, "size_reached"


def _capped_inclusion_probabilities(sigma, M):
    """pi_n = min(1, c * sigma_n) with c such that sum_n pi_n = M (or all positive ones = 1)."""
    pi = np.zeros_like(sigma)
    free = sigma > 0
    certain = np.zeros_like(free)
    budget = float(M)
    while True:
        total = sigma[free].sum()
        if budget <= 0 or total <= 0:
            break
        cand = budget * sigma[free] / total
        if cand.max() < 1.0:
            pi[free] = cand
            break
        # Units that would get probability >= 1 are taken with certainty; redistribute.
        big = np.flatnonzero(free)[cand >= 1.0]
        certain[big] = True
        free[big] = False
        budget -= big.size
    pi[certain] = 1.0
    return pi


def importance(
    vectors, n_points, *, replace=True, random_state=None, target=None, return_info=False
):
    """Hilbert importance sampling, p_n proportional to sigma_n = ||v_n||.

    Parameters
    ----------
    vectors : array-like of shape (N, J)
        Rows are the vectors v_n (float64 or float32 storage; never modified).
    n_points : int
        Number of draws M, 1 <= M <= N.
    replace : bool, default=True
        ``True``: the papers' estimator: M draws with replacement from p_n = sigma_n / sigma and
        w_n = count_n / (M p_n); the support can be smaller than M.
        ``False``: exactly M distinct points (fewer only if fewer than M rows have sigma_n > 0)
        by randomised systematic PPS sampling with inclusion probabilities
        pi_n = min(1, c sigma_n) summing to M, and Horvitz-Thompson weights w_n = 1 / pi_n.
        Both are unbiased: E[Phi w] = sum_n v_n (rows with sigma_n = 0 contribute nothing).
    random_state : int, RandomState instance or None
        Seed or generator (scikit-learn convention).
    target : array-like of shape (J,), optional
        Only used for the error reported in ``info`` (default: the sum of the rows).
    return_info : bool, default=False
        Also return a dict with ``n_iter``, ``stop_reason``, ``error``, ``n_support``.

    Returns
    -------
    w : ndarray of shape (N,), float64
        The weights, nonzero on the coreset.
    info : dict, only if ``return_info``
        The run's details (see ``return_info``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.hilbert import importance
    >>> vectors = np.random.default_rng(0).standard_normal((200, 8))
    >>> w, info = importance(vectors, 20, random_state=0, return_info=True)
    >>> int(np.count_nonzero(w)) <= 20, info["stop_reason"]
    (True, 'size_reached')
    """
    V, M, sigma, y = validate(vectors, n_points, target)
    w, n_iter, reason = _importance(V, M, sigma, y, replace=replace, random_state=random_state)
    return finish(V, w, y, return_info, n_iter, reason)


def _importance(V, M, sigma, y, *, replace=True, random_state=None):
    """Core of :func:`importance` on validated input: ``(w, n_iter, stop_reason)``."""
    N = V.shape[0]
    rng = check_random_state(random_state)
    w = np.zeros(N)
    total = sigma.sum()
    if total == 0:
        return w, 0, "zero_vectors"
    if replace:
        p = sigma / total
        counts = rng.multinomial(M, p)
        idx = np.flatnonzero(counts)
        w[idx] = counts[idx] / (M * p[idx])
    else:
        pi = _capped_inclusion_probabilities(sigma, M)
        certain = np.flatnonzero(pi >= 1.0)
        w[certain] = 1.0
        # Systematic sampling of the others on a random permutation: the grid u, u+1, ...
        # hits unit n's interval of length pi_n < 1 with probability exactly pi_n.
        order = rng.permutation(np.flatnonzero((pi > 0) & (pi < 1.0)))
        if order.size:
            cum = np.cumsum(pi[order])
            u = rng.uniform()
            hits = np.floor(cum - u) - np.floor(np.concatenate(([0.0], cum[:-1])) - u)
            chosen = order[hits > 0]
            w[chosen] = 1.0 / pi[chosen]
    return w, M, "size_reached"
