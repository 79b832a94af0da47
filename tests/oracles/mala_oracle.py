"""Plain NumPy MALA, written straight from the formulas (doc/algorithms.md section 8).

Deliberately simple and independent of the numba sampler: the proposal density is evaluated
with an explicit triangular solve (not the whitened shortcut of the kernels), and the step size
is tuned by Robbins-Monro on log eps (not dual averaging).
"""

import numpy as np
import scipy.linalg


def glm_log_posterior(kind, X, y, w, prior_scale, noise=1.0):
    """Return ``f(theta) -> (log posterior, gradient)`` for a weighted GLM, in NumPy.

    ``kind``: 'logistic', 'poisson' or 'gaussian' (with fixed noise scale ``noise``).
    """
    prec = 1.0 / prior_scale**2

    def f(theta):
        eta = X @ theta
        if kind == "logistic":
            ll = y * eta - np.logaddexp(0.0, eta)
            d = y - 1.0 / (1.0 + np.exp(-eta))
        elif kind == "poisson":
            with np.errstate(over="ignore"):
                mu = np.exp(eta)
            ll = y * eta - mu
            d = y - mu
        elif kind == "gaussian":
            r = y - eta
            ll = -0.5 * (r / noise) ** 2
            d = r / noise**2
        else:
            raise ValueError(kind)
        return w @ ll - 0.5 * prec * theta @ theta, X.T @ (w * d) - prec * theta

    return f


def log_q(to, frm, grad_frm, eps, A, L):
    """log N(to | frm + eps^2/2 A grad, eps^2 A) up to a constant shared by both directions."""
    diff = to - frm - 0.5 * eps**2 * A @ grad_frm
    z = scipy.linalg.solve_triangular(L, diff, lower=True)
    return -0.5 * (z @ z) / eps**2


def mala_oracle(
    log_post, theta0, n_samples, n_warmup, *, A=None, step_size=None, target_accept=0.574, seed=0
):
    """One MALA chain.

    Parameters
    ----------
    log_post : callable
        ``theta -> (log density, gradient)``.
    theta0 : ndarray of shape (P,)
    n_samples, n_warmup : int
    A : ndarray of shape (P, P) or None
        Preconditioner (identity if None).
    step_size : float or None
        Fixed step; None adapts log eps by Robbins-Monro during warm-up, then freezes it.

    Returns
    -------
    draws : ndarray of shape (n_samples, P)
    acceptance_rate : float
        After warm-up.
    eps : float
    """
    rng = np.random.default_rng(seed)
    theta = np.array(theta0, dtype=float)
    P = theta.shape[0]
    A = np.eye(P) if A is None else np.asarray(A, dtype=float)
    L = np.linalg.cholesky(A)
    lp, g = log_post(theta)
    log_eps = np.log(1.65 * P ** (-1 / 6) if step_size is None else step_size)
    draws = np.empty((n_samples, P))
    n_acc = 0
    for it in range(n_warmup + n_samples):
        eps = np.exp(log_eps)
        prop = theta + 0.5 * eps**2 * A @ g + eps * L @ rng.standard_normal(P)
        lp_p, g_p = log_post(prop)
        if np.isfinite(lp_p) and np.all(np.isfinite(g_p)):
            log_alpha = (
                lp_p - lp + log_q(theta, prop, g_p, eps, A, L) - log_q(prop, theta, g, eps, A, L)
            )
            alpha = min(1.0, np.exp(min(log_alpha, 0.0)))
        else:
            alpha = 0.0
        if rng.random() < alpha:
            theta, lp, g = prop, lp_p, g_p
            if it >= n_warmup:
                n_acc += 1
        if it < n_warmup and step_size is None:
            log_eps += (alpha - target_accept) / (it + 1) ** 0.6
        if it >= n_warmup:
            draws[it - n_warmup] = theta
    return draws, n_acc / max(n_samples, 1), float(np.exp(log_eps))
