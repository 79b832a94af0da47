"""Plain NumPy oracles for skcoreset.hilbert, written directly from doc/algorithms.md sections 2-5.

No incremental tricks: every quantity is recomputed from scratch each iteration, in float64,
with dense N-vectors.  ``V`` is (N, J) with rows v_n; Phi = V.T.
"""

import numpy as np
from scipy.optimize import nnls


def _prep(V, target=None):
    V = np.asarray(V, dtype=np.float64)
    y = V.sum(axis=0) if target is None else np.asarray(target, dtype=np.float64)
    sigma = np.linalg.norm(V, axis=1)
    return V, y, sigma


def relative_error(V, w, y=None):
    V = np.asarray(V, dtype=np.float64)
    y = V.sum(axis=0) if y is None else y
    return np.linalg.norm(V.T @ w - y) / np.linalg.norm(y)


def uniform_weights(N, M, draws):
    """w_n = (N / M) count_n for the given M draws (with replacement)."""
    return (N / M) * np.bincount(np.asarray(draws), minlength=N)


def importance_weights(sigma, M, draws):
    """w_n = count_n / (M p_n), p_n = sigma_n / sigma."""
    p = sigma / sigma.sum()
    counts = np.bincount(np.asarray(draws), minlength=len(sigma))
    w = np.zeros(len(sigma))
    nz = counts > 0
    w[nz] = counts[nz] / (M * p[nz])
    return w


def frank_wolfe(V, n_points, max_iter=None, target=None):
    V, y, sigma = _prep(V, target)
    N = V.shape[0]
    max_iter = 10 * n_points + 100 if max_iter is None else max_iter
    ok = sigma > 0
    inv = np.where(ok, 1.0 / np.where(ok, sigma, 1.0), 0.0)
    stot = sigma.sum()
    L = V * inv[:, None]

    def amax(x):
        s = L @ x
        s[~ok] = -np.inf
        return int(np.argmax(s))

    w = np.zeros(N)
    f = amax(y)
    w[f] = stot / sigma[f]
    it = 1
    while np.count_nonzero(w) < n_points and it < max_iter:
        r = y - V.T @ w
        f = amax(r)
        d = (stot / sigma[f]) * V[f] - V.T @ w
        gamma = np.clip((d @ r) / (d @ d), 0.0, 1.0)
        it += 1
        if gamma <= 0:
            break
        e = np.zeros(N)
        e[f] = stot / sigma[f]
        w = (1 - gamma) * w + gamma * e
    return w


def giga(V, n_points, max_iter=None, tol=1e-12, target=None):
    V, y, sigma = _prep(V, target)
    N = V.shape[0]
    max_iter = 10 * n_points + 100 if max_iter is None else max_iter
    ok = sigma > 0
    Ln = np.zeros_like(V)
    Ln[ok] = V[ok] / sigma[ok, None]
    ell = y / np.linalg.norm(y)
    w = np.zeros(N)
    lw = np.zeros(V.shape[1])
    for _ in range(max_iter):
        d = ell - (ell @ lw) * lw
        dn = np.linalg.norm(d)
        if dn < tol:
            break
        a = Ln @ lw
        den = 1 - a**2
        score = np.zeros(N)
        pos = den > 0
        score[pos] = (Ln[pos] @ d) / (dn * np.sqrt(den[pos]))
        score[~ok] = -np.inf
        nt = int(np.argmax(score))
        z0, z1, z2 = ell @ Ln[nt], ell @ lw, Ln[nt] @ lw
        ga, gb = z0 - z1 * z2, z1 - z0 * z2
        if ga <= 0 or gb < 0:
            break
        gamma = ga / (ga + gb)
        e = np.zeros(N)
        e[nt] = 1.0
        u = (1 - gamma) * lw + gamma * Ln[nt]
        s = np.linalg.norm(u)
        lw = u / s
        w = ((1 - gamma) * w + gamma * e) / s
        if np.count_nonzero(w) >= n_points:
            break
    lw_from_w = Ln.T @ w  # recomputed, not tracked
    out = np.zeros(N)
    out[ok] = np.linalg.norm(y) / sigma[ok] * (lw_from_w @ ell) * w[ok]
    return out


def _top_k(b, k):
    return np.argsort(-b, kind="stable")[:k]


def iht(V, k, debias=False, max_iter=300, c=0.5, tol=1e-5, target=None):
    """A-IHT / A-IHT II; returns the iterate with the smallest objective (as the package)."""
    V, y, _ = _prep(V, target)
    Phi = V.T
    N = V.shape[0]
    w = np.zeros(N)
    z = np.zeros(N)
    best, best_obj = w, y @ y
    for _ in range(max_iter):
        d = Phi.T @ (y - Phi @ z)
        supp = np.flatnonzero(z)
        absd = np.abs(d)
        absd[supp] = -1
        S = np.union1d(supp, _top_k(absd, min(k, N - supp.size)))
        dS = d[S]
        den = np.linalg.norm(Phi[:, S] @ dS) ** 2
        mu = c * (dS @ dS) / den if den > 0 else 0.0
        b = z + mu * d
        X = _top_k(b, k)
        wn = np.zeros(N)
        wn[X] = np.maximum(b[X], 0)
        if debias:
            X = np.flatnonzero(wn)
            dp = Phi.T @ (y - Phi @ wn)
            g = dp[X]
            den = np.linalg.norm(Phi[:, X] @ g) ** 2
            mu2 = c * (g @ g) / den if den > 0 else 0.0
            wn[X] = np.maximum(wn[X] + mu2 * g, 0)
        obj = np.linalg.norm(y - Phi @ wn) ** 2
        if obj < best_obj:
            best, best_obj = wn, obj
        D = wn - w
        PD = Phi @ D
        tau = ((y - Phi @ wn) @ PD) / (PD @ PD) if PD @ PD > 0 else 0.0
        z = wn + tau * D
        stop = np.linalg.norm(wn - w) < tol * np.linalg.norm(wn)
        w = wn
        if stop:
            break
    return best


def omp(V, n_points, tol=1e-12, max_iter=None, target=None, per_pass=1, rerank=None):
    """NN-OMP: S <- supp(nnls(Phi_{S u {f}}, y)) with f = argmax <v_n / sigma_n, r> > 0.

    ``per_pass`` > 1: the ``per_pass`` best rows of one ranking enter in turn, each while it
    still correlates positively with the residual; then a new ranking.
    ``rerank``: the ranking is by the rows rounded to int16 multiples of max_j |v_nj| / 32767;
    its ``per_pass + rerank`` best are then ranked by their exact correlations.
    """
    V, y, sigma = _prep(V, target)
    if rerank is not None:
        top = np.abs(V).max(axis=1)
        step = np.where(top > 0, top / 32767, 1.0)
        rounded = np.rint(V / step[:, None]) * step[:, None]
    N = V.shape[0]
    max_iter = 10 * n_points + 100 if max_iter is None else max_iter
    ok = sigma > 0
    S = np.zeros(0, dtype=int)
    w = np.zeros(N)
    it = 0
    picks = []
    while S.size < n_points and it < max_iter:
        r = y - V.T @ w
        if np.linalg.norm(r) <= tol * np.linalg.norm(y):
            break
        fresh = not picks
        if fresh:
            k = min(per_pass, n_points - S.size)
            score = np.full(N, -np.inf)
            score[ok] = (V[ok] @ r) / sigma[ok]
            score[S] = -np.inf
            if rerank is None:
                ranked = np.lexsort((np.arange(N), -score))[:k]
            else:
                rough = np.where(score > -np.inf, (rounded @ r) / np.where(ok, sigma, 1), -np.inf)
                found = np.lexsort((np.arange(N), -rough))[: k + rerank]
                found = found[rough[found] > -np.inf]
                ranked = found[np.argsort(-score[found], kind="stable")][:k]
            picks = [int(f) for f in ranked[::-1] if score[f] > -np.inf]
            if not picks:
                break
        f = picks.pop()
        if not (V[f] @ r) / sigma[f] > tol * np.linalg.norm(r):
            if fresh:
                break
            picks = []
            continue
        it += 1
        C = np.append(S, f)
        wc, _ = nnls(V[C].T, y)
        w = np.zeros(N)
        w[C] = wc
        S = C[wc > 0]
    return w
