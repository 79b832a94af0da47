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
plus per-chain scratch allocated once per call, so a step costs one O(N D) pass over the data
per chain and allocates nothing. The random numbers are drawn by the caller and passed in, so
a step of one chain (:func:`mala_step`) is a pure function of its own state and draws: the
serial driver :func:`mala_run` and the threaded one :func:`mala_run_parallel` give the same
bits whatever the number of threads. This module imports no scikit-learn.
"""

import math

import numpy as np
from numba import njit, prange

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
        logp[c] = log_target(
            kind, sample_noise, theta[c], X, y, w, w_sum, prior_prec, noise, s_mu, s_prec, grad[c]
        )
        if not (math.isfinite(logp[c]) and _all_finite(grad[c])):
            bad += 1
    return bad


@njit(cache=True)
def _dual_average(da, mean_accept):
    """One dual-averaging update of log eps (Hoffman & Gelman 2014, Algorithm 5)."""
    m = da[DA_ITER] + 1.0
    da[DA_ITER] = m
    eta = 1.0 / (m + _DA_T0)
    da[DA_HBAR] = (1.0 - eta) * da[DA_HBAR] + eta * (da[DA_TARGET] - mean_accept)
    log_eps = da[DA_MU] - math.sqrt(m) / _DA_GAMMA * da[DA_HBAR]
    # Keep the step finite whatever the early acceptance history.
    log_eps = min(max(log_eps, -30.0), 5.0)
    da[DA_LOG_EPS] = log_eps
    mk = m ** (-_DA_KAPPA)
    da[DA_LOG_EPS_BAR] = mk * log_eps + (1.0 - mk) * da[DA_LOG_EPS_BAR]


@njit(cache=True)
def mala_step(
    kind,
    sample_noise,
    c,
    it,
    theta,
    logp,
    grad,
    u,
    X,
    y,
    w,
    w_sum,
    prior_prec,
    noise,
    s_mu,
    s_prec,
    L,
    eps,
    normals,
    uniforms,
    prop,
    gprop,
    uprop,
    draws,
    offset,
    store,
    n_accept,
):
    """One MALA step of chain ``c`` (step ``it`` of this call); returns its acceptance probability.

    Touches only row ``c`` of the state (theta, logp, grad, u = L^T grad), of the scratch
    (prop, gprop, uprop) and of ``draws`` / ``n_accept``, and reads the pre-drawn
    ``normals[c, it]`` and ``uniforms[c, it]``: chains can be stepped concurrently, and the
    result does not depend on the order in which they are.
    """
    P = theta.shape[1]
    th = theta[c]
    g = grad[c]
    uc = u[c]
    xi = normals[c, it]
    pr = prop[c]
    gp = gprop[c]
    up = uprop[c]
    half_eps2 = 0.5 * eps * eps
    # prop = theta + (eps^2/2) L u + eps L xi = theta + L v,  v = (eps^2/2) u + eps xi.
    # ``up`` holds v until the proposal's whitened gradient overwrites it.
    for b in range(P):
        up[b] = half_eps2 * uc[b] + eps * xi[b]
    for a in range(P):
        acc = 0.0
        for b in range(a + 1):
            acc += L[a, b] * up[b]
        pr[a] = th[a] + acc
    lp_prop = -np.inf
    if _all_finite(pr):
        lp_prop = log_target(
            kind, sample_noise, pr, X, y, w, w_sum, prior_prec, noise, s_mu, s_prec, gp
        )
    log_alpha = -np.inf
    if math.isfinite(lp_prop) and _all_finite(gp):
        _whiten_grad(L, gp, up)
        sq_fwd = 0.0
        sq_rev = 0.0
        for a in range(P):
            r = xi[a] + 0.5 * eps * (uc[a] + up[a])
            sq_fwd += xi[a] * xi[a]
            sq_rev += r * r
        log_alpha = lp_prop - logp[c] + 0.5 * (sq_fwd - sq_rev)
    if log_alpha >= 0.0:
        acc_prob = 1.0
    elif math.isfinite(log_alpha):
        acc_prob = math.exp(log_alpha)
    else:
        acc_prob = 0.0  # non-finite proposals and NaN ratios are rejected
    # uniforms are in [0, 1): a zero acceptance probability never accepts.
    if uniforms[c, it] < acc_prob:
        for a in range(P):
            th[a] = pr[a]
            g[a] = gp[a]
            uc[a] = up[a]
        logp[c] = lp_prop
        n_accept[c] += 1
    if store:
        for a in range(P):
            draws[c, offset + it, a] = th[a]
    return acc_prob


@njit(cache=True)
def _prepare(L, grad, w):
    """Scratch for one driver call: u = L^T grad per chain, three (C, P) buffers, sum(w)."""
    C, P = grad.shape
    u = np.empty((C, P))
    for c in range(C):
        _whiten_grad(L, grad[c], u[c])
    w_sum = 0.0
    for i in range(w.shape[0]):
        w_sum += w[i]
    return u, np.empty((C, P)), np.empty((C, P)), np.empty((C, P)), w_sum


@njit(cache=True)
def mala_run(
    kind,
    sample_noise,
    theta,
    logp,
    grad,
    X,
    y,
    w,
    prior_prec,
    noise,
    s_mu,
    s_prec,
    L,
    step,
    adapt,
    da,
    normals,
    uniforms,
    draws,
    offset,
    store,
    n_accept,
):
    """Advance every chain ``normals.shape[1]`` MALA steps, one chain after the other.

    The serial driver, for small problems (``n_rows * P`` below a few 10^4) where a parallel
    region (~10 us) costs more than a step. :func:`mala_run_parallel` takes the same arguments
    and returns bit-identical results.

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
        chains with their mean acceptance probability (summed in chain order).
    normals : ndarray (C, S, P)
        Standard normal draws of the proposals: ``normals[c, i]`` is used by step ``i`` of
        chain ``c``. Drawn by the caller so that results depend on neither thread count nor
        scheduling.
    uniforms : ndarray (C, S)
        Uniform [0, 1) draws of the accept/reject decisions.
    draws : ndarray (C, S_total, P)
        When ``store``, the state after step ``i`` is written to ``draws[:, offset + i]``.
    n_accept : ndarray (C,)
        Accepted proposals, incremented in place.

    Returns
    -------
    eps : float
        The step size used by the last step.
    """
    C = theta.shape[0]
    n_steps = normals.shape[1]
    u, prop, gprop, uprop, w_sum = _prepare(L, grad, w)
    eps = step
    if adapt:
        acc = np.empty(C)
        for it in range(n_steps):
            eps = math.exp(da[DA_LOG_EPS])
            for c in range(C):
                acc[c] = mala_step(
                    kind,
                    sample_noise,
                    c,
                    it,
                    theta,
                    logp,
                    grad,
                    u,
                    X,
                    y,
                    w,
                    w_sum,
                    prior_prec,
                    noise,
                    s_mu,
                    s_prec,
                    L,
                    eps,
                    normals,
                    uniforms,
                    prop,
                    gprop,
                    uprop,
                    draws,
                    offset,
                    store,
                    n_accept,
                )
            _dual_average(da, _ordered_mean(acc))
    else:
        # Chains are independent at a fixed step: run each to the end (state stays in cache).
        for c in range(C):
            for it in range(n_steps):
                mala_step(
                    kind,
                    sample_noise,
                    c,
                    it,
                    theta,
                    logp,
                    grad,
                    u,
                    X,
                    y,
                    w,
                    w_sum,
                    prior_prec,
                    noise,
                    s_mu,
                    s_prec,
                    L,
                    eps,
                    normals,
                    uniforms,
                    prop,
                    gprop,
                    uprop,
                    draws,
                    offset,
                    store,
                    n_accept,
                )
    return eps


@njit(cache=True, parallel=True)
def mala_run_parallel(
    kind,
    sample_noise,
    theta,
    logp,
    grad,
    X,
    y,
    w,
    prior_prec,
    noise,
    s_mu,
    s_prec,
    L,
    step,
    normals,
    uniforms,
    draws,
    offset,
    store,
    n_accept,
):
    """:func:`mala_run` at a fixed step, with the chains spread over numba's threads.

    At a fixed step the chains are independent: each runs all its steps inside one parallel
    region, with bit-identical results to :func:`mala_run`. (Warm-up stays serial: its
    shared step size would need a barrier after every step.) Worth it when a step's
    O(n_rows P) pass over the data dwarfs the ~10 us cost of a parallel region.
    """
    C = theta.shape[0]
    n_steps = normals.shape[1]
    u, prop, gprop, uprop, w_sum = _prepare(L, grad, w)
    for c in prange(C):
        for it in range(n_steps):
            mala_step(
                kind,
                sample_noise,
                c,
                it,
                theta,
                logp,
                grad,
                u,
                X,
                y,
                w,
                w_sum,
                prior_prec,
                noise,
                s_mu,
                s_prec,
                L,
                step,
                normals,
                uniforms,
                prop,
                gprop,
                uprop,
                draws,
                offset,
                store,
                n_accept,
            )
    return step


@njit(cache=True)
def _ordered_mean(v):
    """Mean summed in index order (not a parallel reduction): the same bits in both drivers."""
    s = 0.0
    for i in range(v.shape[0]):
        s += v[i]
    return s / v.shape[0]
