"""Plain-NumPy oracles for the logistic sensitivity coreset (Huggins, Campbell & Broderick 2016).

Written from the formulas (doc/algorithms.md section 6 and the derivation in
``skcoreset/coreset/_sensitivity.py``), not from the kernels:

* ``bound_bruteforce``: for every n, the leave-one-out clusters are formed explicitly (masks) and
  their means taken with ``np.average``; O(N^2 D).
* ``bound_vectorized``: the same bound through an (N, k, P) array of differences, chunked; the
  reference for the benchmark at N = 10^6.
* ``sup_sensitivity``: the true sensitivity sup_ball N phi(Z_n.theta) / sum_m phi(Z_m.theta),
  by random search on and inside the ball and SLSQP from the best starts.
* synthetic data of the paper (Mixture and Binary10), the polynomial-kernel MMD and the test
  log-likelihood used in the comparisons.
"""

import numpy as np
import scipy.optimize


# -- data -------------------------------------------------------------------------------------
def make_mixture(n, d=10, random_state=None):
    """The paper's 'Mixture' data: y ~ Bern(1/2), x | y ~ N(mu_y, I),
    mu_0 = (0, 1, ..., 1), mu_1 = (1, 0, ..., 0). Labels in {0, 1}."""
    rng = np.random.default_rng(random_state)
    y = rng.integers(0, 2, size=n).astype(np.float64)
    mu0 = np.ones(d)
    mu0[0] = 0.0
    mu1 = np.zeros(d)
    mu1[0] = 1.0
    X = rng.standard_normal((n, d)) + np.where(y[:, None] > 0, mu1, mu0)
    return X, y


_BINARY10_P = np.array([1.0, 0.2, 0.3, 0.5, 0.01, 0.1, 0.2, 0.007, 0.005, 0.001])
_BINARY10_THETA = np.array([-3.0, 1.2, -0.5, 0.8, 3.0, -1.0, -0.7, 4.0, 3.5, 4.5])


def make_binary10(n, random_state=None):
    """The paper's 'Binary10' data: x_nd ~ Bern(p_d) (x_n1 = 1 acts as intercept),
    y_n ~ Bern(logistic(x_n . theta)), with rare but predictive features. Labels in {0, 1}."""
    rng = np.random.default_rng(random_state)
    X = (rng.random((n, 10)) < _BINARY10_P).astype(np.float64)
    eta = X @ _BINARY10_THETA
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-eta))).astype(np.float64)
    return X, y


def z_vectors(X, y01, fit_intercept=True):
    """Z_n = y_n [x_n, 1] with y in {-1, +1}."""
    X = np.asarray(X, dtype=np.float64)
    if fit_intercept:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    return X * (2.0 * np.asarray(y01, dtype=np.float64) - 1.0)[:, None]


# -- the bound --------------------------------------------------------------------------------
def bound_bruteforce(Z, labels, n_clusters, radius, theta0=None, sample_weight=None, exact=True):
    """m_n = S / (s_n + sum_i W_i^(-n) exp(-max(0, d_i . theta0 + R ||d_i||))), d_i = mean_i - Z_n.

    ``exact``: mean_i is the weighted mean of G_i without n (formed explicitly); otherwise the
    full-cluster mean, with the weight W_i - s_n for n's own cluster.
    """
    Z = np.asarray(Z, dtype=np.float64)
    N, P = Z.shape
    s = np.ones(N) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    theta0 = np.zeros(P) if theta0 is None else np.asarray(theta0, dtype=np.float64)
    S = s.sum()
    m = np.zeros(N)
    idx = np.arange(N)
    for n in range(N):
        if s[n] <= 0:
            continue
        denom = s[n]
        for i in range(n_clusters):
            full = labels == i
            loo = full & (idx != n)
            w = s[loo].sum()
            if w <= 1e-12 * s[full].sum() or w <= 0:
                continue
            members = loo if exact else full
            mean = np.average(Z[members], axis=0, weights=s[members])
            d = mean - Z[n]
            arg = max(0.0, d @ theta0 + radius * np.linalg.norm(d))
            denom += w * np.exp(-arg)
        m[n] = S / denom
    return m


def bound_vectorized(
    Z, labels, n_clusters, radius, theta0=None, sample_weight=None, exact=True, chunk=65536
):
    """The same bound, vectorised over an (chunk, k, P) array of differences."""
    Z = np.asarray(Z, dtype=np.float64)
    N, P = Z.shape
    s = np.ones(N) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    theta0 = np.zeros(P) if theta0 is None else np.asarray(theta0, dtype=np.float64)
    W = np.bincount(labels, weights=s, minlength=n_clusters)
    sums = np.zeros((n_clusters, P))
    np.add.at(sums, labels, s[:, None] * Z)
    means = np.divide(sums, W[:, None], out=np.zeros_like(sums), where=W[:, None] > 0)
    S = s.sum()
    m = np.zeros(N)
    for a in range(0, N, chunk):
        b = min(a + chunk, N)
        Zc, sc, lc = Z[a:b], s[a:b], labels[a:b]
        own = lc[:, None] == np.arange(n_clusters)[None, :]
        count = W[None, :] - own * sc[:, None]
        if exact:
            # leave-one-out mean of the own cluster, formed from the full sums
            loo_sums = sums[None, :, :] - own[:, :, None] * (sc[:, None, None] * Zc[:, None, :])
            with np.errstate(invalid="ignore", divide="ignore"):
                mu = np.where(count[:, :, None] > 0, loo_sums / count[:, :, None], 0.0)
        else:
            mu = np.broadcast_to(means[None, :, :], (b - a, n_clusters, P))
        d = mu - Zc[:, None, :]
        arg = np.maximum(0.0, d @ theta0 + radius * np.sqrt(np.einsum("nkp,nkp->nk", d, d)))
        valid = (count > 1e-12 * W[None, :]) & (count > 0)
        terms = np.where(valid, count * np.exp(-arg), 0.0)
        denom = sc + terms.sum(axis=1)
        m[a:b] = np.where(sc > 0, S / denom, 0.0)
    return m


def _phi(t):
    return np.logaddexp(0.0, -t)


def sup_sensitivity(
    Z, radius, theta0=None, sample_weight=None, n_random=20000, n_starts=3, random_state=0
):
    """Numerical sup over ||theta - theta0|| <= R of S phi(Z_n.theta) / sum_m s_m phi(Z_m.theta).

    Random search (half the points on the sphere, half uniform inside the ball, plus the centre),
    then SLSQP with the ball as a constraint from the ``n_starts`` best random points of each n.
    Returns the best value found per n (a lower bound on the true sup).
    """
    rng = np.random.default_rng(random_state)
    Z = np.asarray(Z, dtype=np.float64)
    N, P = Z.shape
    s = np.ones(N) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    theta0 = np.zeros(P) if theta0 is None else np.asarray(theta0, dtype=np.float64)
    S = s.sum()
    u = rng.standard_normal((n_random, P))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    r = np.ones(n_random)
    half = n_random // 2
    r[half:] = rng.random(n_random - half) ** (1.0 / P)
    thetas = np.vstack([theta0, theta0 + radius * r[:, None] * u])
    phi = _phi(thetas @ Z.T)  # (T, N)
    ratio = S * phi / (phi @ s)[:, None]
    best = ratio.max(axis=0)
    order = np.argsort(-ratio, axis=0)[:n_starts]  # (n_starts, N)

    def neg_log_ratio(theta, n):
        ph = _phi(Z @ theta)
        return -(np.log(S * ph[n]) - np.log(ph @ s))

    cons = {"type": "ineq", "fun": lambda th: radius**2 - np.sum((th - theta0) ** 2)}
    for n in range(N):
        for j in order[:, n]:
            res = scipy.optimize.minimize(
                neg_log_ratio,
                thetas[j],
                args=(n,),
                method="SLSQP",
                constraints=[cons],
                options={"maxiter": 200, "ftol": 1e-12},
            )
            th = res.x
            norm = np.linalg.norm(th - theta0)
            if norm > radius:  # SLSQP may end marginally outside: project back
                th = theta0 + (th - theta0) * (radius / norm)
            best[n] = max(best[n], np.exp(-neg_log_ratio(th, n)))
    return best


# -- evaluation -------------------------------------------------------------------------------
def poly_mmd2(A, B, c=0.2, degree=3):
    """Unbiased squared MMD between sample sets with the kernel (c + <a, b>)^degree."""
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    kaa = (c + A @ A.T) ** degree
    kbb = (c + B @ B.T) ** degree
    kab = (c + A @ B.T) ** degree
    n, m = len(A), len(B)
    return (
        (kaa.sum() - np.trace(kaa)) / (n * (n - 1))
        + (kbb.sum() - np.trace(kbb)) / (m * (m - 1))
        - 2.0 * kab.mean()
    )


def heldout_loglik(thetas, X, y01, fit_intercept=True):
    """Mean over draws and test points of log p(y_n | x_n, theta)."""
    Xd = np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else np.asarray(X)
    eta = np.asarray(thetas) @ Xd.T  # (S, N)
    return float(np.mean(y01[None, :] * eta - np.logaddexp(0.0, eta)))


def uniform_coreset(n_samples, size, random_state=None):
    """``size`` distinct indices drawn uniformly without replacement, weight N / size each."""
    rng = np.random.default_rng(random_state)
    idx = np.sort(rng.choice(n_samples, size=size, replace=False))
    return idx, np.full(size, n_samples / size)
