"""Plain NumPy multinomial (softmax) regression with the first class the reference, written
from the formulas and independent of ``skcoreset.models.MultinomialModel``.

K classes, a design matrix of Q columns (the intercept's column of ones last, if any); the
parameters ``theta`` (P = (K - 1) Q) are the coefficient vectors of classes 1, ..., K - 1,
concatenated. With ``eta_0 = 0`` and ``eta_k = x . beta_k``:

    l(theta; x, y) = eta_y - log sum_{k=0}^{K-1} exp(eta_k),
    d l / d beta_k = (1[y = k] - p_k) x,                              k = 1, ..., K - 1,
    -d^2 (sum_n w_n l_n) / d beta_a d beta_b = sum_n w_n p_na (1[a = b] - p_nb) x_n x_n^T.

The Hessian is a loop over rows (the plainest statement of its formula; the tests' data are
small), the rest is vectorised over rows only.
"""

import numpy as np


def coefficients(theta, K, Q):
    """``B`` of shape (K, Q): row 0 the reference class's zeros, row k = beta_k."""
    B = np.zeros((K, Q))
    B[1:] = np.asarray(theta, dtype=float).reshape(K - 1, Q)
    return B


def log_proba(theta, Xd, K):
    """``log p(y_n = k | x_n, theta)``, shape (n, K): the predictors shifted by their row
    maximum before exponentiation."""
    E = Xd @ coefficients(theta, K, Xd.shape[1]).T
    m = E.max(axis=1, keepdims=True)
    return E - m - np.log(np.exp(E - m).sum(axis=1, keepdims=True))


def proba_draws(thetas, Xd, K):
    """``p(y_n = k | x_n, theta_s)`` at S parameter vectors at once, shape (S, n, K)."""
    thetas = np.atleast_2d(thetas)
    B = thetas.reshape(thetas.shape[0], K - 1, Xd.shape[1])
    E = np.concatenate([np.zeros((B.shape[0], Xd.shape[0], 1)), Xd @ B.transpose(0, 2, 1)], 2)
    e = np.exp(E - E.max(axis=2, keepdims=True))
    return e / e.sum(axis=2, keepdims=True)


def one_hot(y, K):
    """``Y[n, k] = 1[y_n = k]``, shape (n, K)."""
    return (np.asarray(y, dtype=int)[:, None] == np.arange(K)[None, :]).astype(float)


def loglik(theta, Xd, y, K):
    """Per-datum log-likelihoods ``sum_k 1[y_n = k] log p_nk``, shape (n,)."""
    return np.sum(one_hot(y, K) * log_proba(theta, Xd, K), axis=1)


def grad_per_datum(theta, Xd, y, K):
    """Per-datum gradients, shape (n, P): row n is ``[(1[y_n = k] - p_nk) x_n]_{k=1..K-1}``."""
    r = (one_hot(y, K) - np.exp(log_proba(theta, Xd, K)))[:, 1:]  # (n, K - 1)
    return (r[:, :, None] * Xd[:, None, :]).reshape(Xd.shape[0], -1)


def weighted_loglik(theta, Xd, y, w, K):
    """``sum_n w_n l_n(theta)`` and its gradient."""
    return float(w @ loglik(theta, Xd, y, K)), w @ grad_per_datum(theta, Xd, y, K)


def neg_hessian(theta, Xd, y, w, K):
    """Hessian of ``-sum_n w_n l_n(theta)``, shape (P, P): per row, the Kronecker product of
    the class covariance ``diag(p) - p p^T`` (classes 1..K-1) with ``x x^T``."""
    p = np.exp(log_proba(theta, Xd, K))[:, 1:]
    P = (K - 1) * Xd.shape[1]
    H = np.zeros((P, P))
    for i in range(Xd.shape[0]):
        C = np.diag(p[i]) - np.outer(p[i], p[i])
        H += w[i] * np.kron(C, np.outer(Xd[i], Xd[i]))
    return H


def weighted_loglik_chains(thetas, Xd, y, w, K):
    """``weighted_loglik`` at each row of ``thetas`` (S, P): values (S,), gradients (S, P)."""
    out = [weighted_loglik(t, Xd, y, w, K) for t in np.atleast_2d(thetas)]
    return np.array([v for v, _ in out]), np.array([g for _, g in out])


def log_posterior(Xd, y, w, K, prior_scale):
    """``f(theta) -> (log posterior up to a constant, gradient)`` with the prior
    N(0, prior_scale^2 I) on every parameter (the input of ``mala_oracle``)."""
    prec = 1.0 / float(prior_scale) ** 2

    def f(theta):
        ll, g = weighted_loglik(theta, Xd, y, w, K)
        return ll - 0.5 * prec * theta @ theta, g - prec * theta

    return f


def laplace(Xd, y, w, K, prior_scale, tol=1e-12, max_iter=100):
    """Laplace approximation by plain Newton steps (with step halving): the mode and the
    inverse of the negative log posterior's Hessian there."""
    P = (K - 1) * Xd.shape[1]
    prec = 1.0 / float(prior_scale) ** 2
    f = log_posterior(Xd, y, w, K, prior_scale)
    theta = np.zeros(P)
    lp, g = f(theta)
    for _ in range(max_iter):
        H = neg_hessian(theta, Xd, y, w, K) + prec * np.eye(P)
        step = np.linalg.solve(H, g)
        t = 1.0
        while True:
            lp_new, g_new = f(theta + t * step)
            if lp_new >= lp - 1e-12 * abs(lp) or t < 1e-10:
                break
            t *= 0.5
        theta, lp, g = theta + t * step, lp_new, g_new
        if np.max(np.abs(t * step)) < tol:
            break
    H = neg_hessian(theta, Xd, y, w, K) + prec * np.eye(P)
    cov = np.linalg.inv(H)
    return theta, 0.5 * (cov + cov.T)


def simulate(theta, Xd, K, rng):
    """Class codes drawn from the model at ``theta``, shape (n,)."""
    p = np.exp(log_proba(theta, Xd, K))
    return np.array([rng.choice(K, p=row / row.sum()) for row in p], dtype=float)
