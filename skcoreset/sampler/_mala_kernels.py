"""Numba kernels of the preconditioned Metropolis-adjusted Langevin algorithm (MALA).

The target is the weighted GLM posterior

    log pi(theta) = -||theta||^2 / (2 prior_scale^2) + sum_n w_n l_n(theta)   (+ const),

optionally extended by ``s = log sigma`` (the Gaussian noise scale) with prior N(s_mu, s_sd^2).

With a lower-triangular factor ``L`` of the preconditioner ``A = L L^T`` the proposal is

    theta' = theta + (eps^2 / 2) A g + eps L xi,      g = grad log pi(theta),  xi ~ N(0, I).

Writing ``u = L^T g`` and ``u' = L^T g'`` the reverse proposal residual is
``theta - theta' - (eps^2/2) A g' = -eps L (xi + (eps/2)(u + u'))``, so the Metropolis-Hastings
log ratio of proposal densities needs no triangular solve:

    log q(theta | theta') - log q(theta' | theta) = (||xi||^2 - ||xi + (eps/2)(u + u')||^2) / 2.

All chains are advanced inside one compiled call; the state is three arrays (theta, logp, grad)
plus preallocated scratch, so a step costs one O(N D) pass over the data per chain and
allocates nothing. This module imports no scikit-learn.
"""

import math

import numpy as np
from numba import njit

from ..models._glm_kernels import GAUSSIAN, weighted_loglik_grad

_LOG_2PI = math.log(2.0 * math.pi)

# Dual averaging constants of Hoffman & Gelman (2014), as in Stan.
_DA_GAMMA = 0.05
_DA_T0 = 10.0
_DA_KAPPA = 0.75

# Layout of the adaptation state vector (a float64 array so it crosses the Python boundary).
DA_ITER, DA_HBAR, DA_LOG_EPS, DA_LOG_EPS_BAR, DA_MU, DA_TARGET = range(6)
DA_SIZE = 6


@njit(cache=True)
def log_target(kind, sample_noise, theta, X, y, w, w_sum, prior_prec, noise, s_mu, s_prec, grad):
    """Log posterior (up to a constant) at ``theta``; its gradient is written to ``grad``.

    ``theta`` has ``X.shape[1]`` entries, plus a trailing ``log sigma`` when ``sample_noise``
    (Gaussian likelihood only). One pass over ``X``, no allocation.
    """
    P = X.shape[1]
    if sample_noise:
        s = theta[P]
        sigma = math.exp(s)
        ll = weighted_loglik_grad(GAUSSIAN, theta[:P], X, y, w, sigma, grad[:P])
        # ll = -Q/2 - W (s + log(2 pi)/2) with Q = sum_n w_n r_n^2 / sigma^2, and
        # d ll / d s = Q - W: recovered from ll, so no second pass over the data.
        q = -2.0 * (ll + (s + 0.5 * _LOG_2PI) * w_sum)
        ds = s - s_mu
        grad[P] = q - w_sum - s_prec * ds
        lp = ll - 0.5 * s_prec * ds * ds
    else:
        lp = weighted_loglik_grad(kind, theta, X, y, w, noise, grad)
    for k in range(P):
        lp -= 0.5 * prior_prec * theta[k] * theta[k]
        grad[k] -= prior_prec * theta[k]
    return lp


@njit(cache=True)
def _all_finite(v):
    for k in range(v.shape[0]):
        if not math.isfinite(v[k]):
            return False
    return True


@njit(cache=True)
def _whiten_grad(L, g, u):
    """u = L^T g for lower-triangular L."""
    P = L.shape[0]
    for a in range(P):
        acc = 0.0
        for b in range(a, P):
            acc += L[b, a] * g[b]
        u[a] = acc


@njit(cache=True)
def mala_init(kind, sample_noise, theta, X, y, w, prior_prec, noise, s_mu, s_prec, logp, grad):
    """Evaluate log density and gradient at the starting points ``theta`` (chains x P).

    Writes ``logp`` (chains,) and ``grad`` (chains x P). Returns the number of chains whose
    start is not finite (the caller should treat that as an error).
    """
    w_sum = 0.0
    for i in range(w.shape[0]):
        w_sum += w[i]
    bad = 0
    for c in range(theta.shape[0]):
        logp[c] = log_target(kind, sample_noise, theta[c], X, y, w, w_sum, prior_prec, noise,
                             s_mu, s_prec, grad[c])
        if not (math.isfinite(logp[c]) and _all_finite(grad[c])):
            bad += 1
    return bad


@njit(cache=True)
def mala_run(kind, sample_noise, theta, logp, grad, X, y, w, prior_prec, noise, s_mu, s_prec,
             L, step, adapt, da, n_steps, seed, draws, offset, store, n_accept):
    """Advance every chain ``n_steps`` MALA steps.

    Parameters
    ----------
    theta, logp, grad : arrays (C, P), (C,), (C, P)
        Chain state, updated in place.
    L : ndarray (P, P)
        Lower-triangular factor of the preconditioner.
    step : float
        Step size when not adapting.
    adapt : bool
        Warm-up: adapt ``log eps`` by dual averaging (state in ``da``) toward the target
        acceptance ``da[DA_TARGET]``, one shared step size, updated after every sweep over the
        chains with their mean acceptance probability.
    seed : int
        Seeds numba's generator so that each call is reproducible on its own.
    draws : ndarray (C, S, P)
        When ``store``, the state after step ``i`` is written to ``draws[:, offset + i]``.
    n_accept : ndarray (C,)
        Accepted proposals, incremented in place.

    Returns
    -------
    eps : float
        The step size used by the last step.
    """
    np.random.seed(seed)
    C, P = theta.shape
    w_sum = 0.0
    for i in range(w.shape[0]):
        w_sum += w[i]
    prop = np.empty(P)
    gprop = np.empty(P)
    xi = np.empty(P)
    u = np.empty(P)
    uprop = np.empty(P)
    eps = step
    for it in range(n_steps):
        if adapt:
            eps = math.exp(da[DA_LOG_EPS])
        half_eps2 = 0.5 * eps * eps
        acc_sum = 0.0
        for c in range(C):
            th = theta[c]
            g = grad[c]
            _whiten_grad(L, g, u)
            for a in range(P):
                xi[a] = np.random.standard_normal()
            # prop = theta + (eps^2/2) L u + eps L xi = theta + L ((eps^2/2) u + eps xi)
            for a in range(P):
                acc = 0.0
                for b in range(a + 1):
                    acc += L[a, b] * (half_eps2 * u[b] + eps * xi[b])
                prop[a] = th[a] + acc
            lp_prop = -np.inf
            if _all_finite(prop):
                lp_prop = log_target(kind, sample_noise, prop, X, y, w, w_sum, prior_prec, noise,
                                     s_mu, s_prec, gprop)
            log_alpha = -np.inf
            if math.isfinite(lp_prop) and _all_finite(gprop):
                _whiten_grad(L, gprop, uprop)
                sq_fwd = 0.0
                sq_rev = 0.0
                for a in range(P):
                    r = xi[a] + 0.5 * eps * (u[a] + uprop[a])
                    sq_fwd += xi[a] * xi[a]
                    sq_rev += r * r
                log_alpha = lp_prop - logp[c] + 0.5 * (sq_fwd - sq_rev)
            if log_alpha >= 0.0:
                acc_prob = 1.0
            elif math.isfinite(log_alpha):
                acc_prob = math.exp(log_alpha)
            else:
                acc_prob = 0.0  # non-finite proposals and NaN ratios are rejected
            acc_sum += acc_prob
            if np.random.random() < acc_prob:
                for a in range(P):
                    th[a] = prop[a]
                    g[a] = gprop[a]
                logp[c] = lp_prop
                n_accept[c] += 1
            if store:
                for a in range(P):
                    draws[c, offset + it, a] = th[a]
        if adapt:
            # Dual averaging (Hoffman & Gelman 2014, Algorithm 5) on log eps.
            m = da[DA_ITER] + 1.0
            da[DA_ITER] = m
            eta = 1.0 / (m + _DA_T0)
            da[DA_HBAR] = (1.0 - eta) * da[DA_HBAR] + eta * (da[DA_TARGET] - acc_sum / C)
            log_eps = da[DA_MU] - math.sqrt(m) / _DA_GAMMA * da[DA_HBAR]
            # Keep the step finite whatever the early acceptance history.
            log_eps = min(max(log_eps, -30.0), 5.0)
            da[DA_LOG_EPS] = log_eps
            mk = m ** (-_DA_KAPPA)
            da[DA_LOG_EPS_BAR] = mk * log_eps + (1.0 - mk) * da[DA_LOG_EPS_BAR]
    return eps
