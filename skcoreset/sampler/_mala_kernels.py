"""Numba kernels of the preconditioned Metropolis-adjusted Langevin algorithm (MALA).

The target is the weighted GLM posterior

    log pi(theta) = -||theta||^2 / (2 prior_scale^2) + sum_n w_n l_n(theta)   (+ const),

optionally extended by ``s = log(extra)``, the model's extra parameter (e.g. the Gaussian noise
scale), with prior N(s_mu, s_sd^2). The likelihood is the model's
:class:`~skcoreset.models.SingleIndexFamily`, the kernels' first argument.

With a lower-triangular factor ``L`` of the preconditioner ``A = L L^T`` the proposal is

    theta' = theta + (eps^2 / 2) A g + eps L xi,      g = grad log pi(theta),  xi ~ N(0, I).

Writing ``u = L^T g`` and ``u' = L^T g'`` the reverse proposal residual is
``theta - theta' - (eps^2/2) A g' = -eps L (xi + (eps/2)(u + u'))``, so the Metropolis-Hastings
log ratio of proposal densities needs no triangular solve:

    log q(theta | theta') - log q(theta' | theta) = (||xi||^2 - ||xi + (eps/2)(u + u')||^2) / 2.

All chains are advanced inside one compiled call, and together: a step proposes a move for
every chain, then evaluates all proposals in one pass over the data
(``weighted_loglik_grad_chains``, whose loops over the rows vectorise), then accepts or rejects
each. The random numbers are drawn by the caller and passed in, and a chain's arithmetic does
not depend on which other chains share its batch, so the driver :func:`mala_run` gives the
same bits in one call and with its chains split over threads, whatever the number of threads.

What no parameter changes is prepared once, in NumPy, by :func:`target_data` (the transposed,
aligned design, the weights' sum and offset), and the kernels take it as arguments; so do the
preconditioner's exactly triangular factor and its transpose. Whether the extra parameter is
sampled is the type of ``extra_prior``: None (fixed) or the normal prior of its log, ``(mean,
precision)``; numba compiles the case of the call alone. This module imports no scikit-learn.
"""

import math

import numpy as np
from numba import njit

from .._parallel_kernels import row_task_kernel
from ..models._glm_kernels import (
    CHAIN_BLOCK,
    aligned_empty,
    chain_layout,
    sum_reassoc,
    weighted_loglik_grad_chains,
    weighted_offset,
)

# Dual averaging constants of Hoffman & Gelman (2014), as in Stan.
_DA_GAMMA = 0.05
_DA_T0 = 10.0
_DA_KAPPA = 0.75

# Layout of the adaptation state vector (a float64 array so it crosses the Python boundary).
DA_ITER, DA_HBAR, DA_LOG_EPS, DA_LOG_EPS_BAR, DA_MU, DA_TARGET = range(6)
DA_SIZE = 6


def target_data(family, X, y, w, extra, extra_prior):
    """What every evaluation of the target needs and no parameter changes, ``(Xt, y, w,
    w_sum, offset)``: the transposed design (its rows contiguous over the data, for the
    vectorised loops) and aligned copies of ``y`` and ``w`` (:func:`chain_layout`), sum(w) and
    the weighted offset (0 when the extra parameter is sampled: the chains' own offsets are
    summed as they go). ``X``, ``y``, ``w`` are C-contiguous float64."""
    Xt, ya, wa = chain_layout(X, y, w)
    offset = 0.0 if extra_prior is not None else weighted_offset(family, y, w, extra)
    return Xt, ya, wa, sum_reassoc(w), offset


def chain_work(n_chains):
    """The scratch of :func:`log_target_chains` for ``n_chains`` chains, 64-byte aligned."""
    return aligned_empty((n_chains, 2, CHAIN_BLOCK))


def mala_init(family, theta, data, prior_prec, extra, extra_prior, logp, grad):
    """Evaluate log density and gradient at the starting points ``theta`` (chains x P).

    ``data`` is :func:`target_data`'s. Writes ``logp`` (chains,) and ``grad`` (chains x P).
    Returns the number of chains whose start is not finite (the caller should treat that as
    an error).
    """
    C = theta.shape[0]
    log_target_chains(
        family, theta, *data, prior_prec, extra, extra_prior, logp, grad, chain_work(C), np.empty(C)
    )
    return int(np.count_nonzero(~(np.isfinite(logp) & np.isfinite(grad).all(axis=1))))


def log_target_chains(
    family, thetas, Xt, y, w, w_sum, offset, prior_prec, extra, extra_prior, lp, grad, work, extras
):
    """Log posterior (up to a constant) of each row of ``thetas``; gradients into ``grad``.

    ``thetas`` is (C, P) with P = D, or D + 1 with a trailing ``log(extra)`` when
    ``extra_prior`` is not None. ``Xt``, ``y``, ``w``, ``w_sum``, ``offset`` come from
    :func:`target_data`; ``work`` (:func:`chain_work`) and ``extras`` (C,) are scratch. One
    pass over the data for all chains, no allocation.

    Three kernels called in turn, here and in :func:`mala_run`'s steps (the same bits): this
    function as a kernel of its own, wrapping them, compiled noticeably longer on a fresh
    install, for nothing (measured: benchmarks/README.md, Thresholds).
    """
    D = Xt.shape[0]
    _set_extras(thetas, D, extra, extra_prior, extras)
    weighted_loglik_grad_chains(
        family, extra_prior, thetas, Xt, y, w, w_sum, offset, extras, lp, grad, work
    )
    _add_log_prior(thetas, D, prior_prec, extra_prior, lp, grad)


@njit(cache=True)
def _set_extras(thetas, D, extra, extra_prior, extras):
    """Each chain's extra parameter: ``extra``, or ``exp`` of its trailing coordinate."""
    for c in range(thetas.shape[0]):
        extras[c] = extra if extra_prior is None else math.exp(thetas[c, D])


@njit(cache=True)
def _add_log_prior(thetas, D, prior_prec, extra_prior, lp, grad):
    """Add the log prior and its gradient to each chain's ``lp`` and ``grad``."""
    for c in range(thetas.shape[0]):
        th = thetas[c]
        if extra_prior is not None:
            s_mu, s_prec = extra_prior
            ds = th[D] - s_mu
            grad[c, D] -= s_prec * ds
            lp[c] -= 0.5 * s_prec * ds * ds
        lp[c] -= 0.5 * _weighted_square(prior_prec, th[:D])
        for k in range(D):
            grad[c, k] -= prior_prec[k] * th[k]


@njit(cache=True, fastmath={"reassoc"})
def _all_finite(v):
    """Whether every entry of ``v`` is finite: ``v * 0`` is 0 for finite entries and NaN for
    the others, so one sum decides, in a loop that vectorises (``reassoc`` lets the sum use
    several partial sums; it does not let LLVM assume away NaN or infinities)."""
    s = 0.0
    for k in range(v.shape[0]):
        s += v[k] * 0.0
    return s == 0.0


@njit(cache=True, fastmath={"reassoc", "contract"})
def _weighted_square(prec, t):
    """``sum_k prec[k] t[k]^2``, vectorised like ``sum_reassoc``."""
    s = 0.0
    for k in range(t.shape[0]):
        s += prec[k] * (t[k] * t[k])
    return s


@njit(cache=True, fastmath={"reassoc", "contract"})
def _log_proposal_ratio(xi, u, up, half_eps):
    """``(||xi||^2 - ||xi + h||^2) / 2 = -sum_a h_a (xi_a + h_a / 2)``, ``h = half_eps (u + up)``:
    one vectorised sum, free of the cancellation between the two squared norms."""
    s = 0.0
    for a in range(xi.shape[0]):
        h = half_eps * (u[a] + up[a])
        s += h * (xi[a] + 0.5 * h)
    return -s


# The triangular products below add four rows of the factor per pass over the output: one load and
# store of each output entry per four products. A pass per row is bound by those loads and stores
# (measured: benchmarks/README.md, Thresholds); eight rows per pass were no faster than four. Inside
# the four-row blocks they read the zeros on the other side of the diagonal: the factor must be
# exactly triangular (see :func:`mala_run`). Whitened coordinates (theta = mu + L z, the design
# multiplied by L once) would not save them: the prior's gradient in z, L^T diag(prior_prec) L z, is
# a dense P x P product per step, and a kept draw needs theta back. Estimated no faster.


@njit(cache=True)
def _whiten_grad(L, g, u):
    """u = L^T g for lower-triangular L, as axpys over the rows of L (they vectorise; a dot
    product per entry is a sequential reduction, latency-bound at large P)."""
    P = L.shape[0]
    for a in range(P):
        u[a] = 0.0
    for b in range(0, P - 3, 4):
        g0, g1, g2, g3 = g[b], g[b + 1], g[b + 2], g[b + 3]
        r0, r1, r2, r3 = L[b], L[b + 1], L[b + 2], L[b + 3]
        for a in range(b + 4):
            u[a] += (r0[a] * g0 + r1[a] * g1) + (r2[a] * g2 + r3[a] * g3)
    for b in range(P - P % 4, P):  # the rows left over
        gb = g[b]
        row = L[b]
        for a in range(b + 1):
            u[a] += row[a] * gb


@njit(cache=True)
def _add_tril_product(LT, v, out):
    """out += L v for L = LT^T lower-triangular, as axpys over the rows of LT (columns of L)."""
    P = LT.shape[0]
    for b in range(0, P - 3, 4):
        v0, v1, v2, v3 = v[b], v[b + 1], v[b + 2], v[b + 3]
        r0, r1, r2, r3 = LT[b, b:], LT[b + 1, b:], LT[b + 2, b:], LT[b + 3, b:]
        ob = out[b:]
        for a in range(P - b):
            ob[a] += (r0[a] * v0 + r1[a] * v1) + (r2[a] * v2 + r3[a] * v3)
    for b in range(P - P % 4, P):  # the rows left over
        vb = v[b]
        row = LT[b, b:]
        ob = out[b:]
        for a in range(P - b):
            ob[a] += row[a] * vb


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


@njit(cache=True, inline="always")
def _propose(th, uc, xi, LT, eps, up, pr):
    """One chain's proposal ``pr = theta + (eps^2/2) L u + eps L xi = theta + L v`` with
    ``v = (eps^2/2) u + eps xi``; ``up`` holds v until the proposal's whitened gradient
    overwrites it (:func:`_accept`)."""
    half_eps2 = 0.5 * eps * eps
    for b in range(th.shape[0]):
        up[b] = half_eps2 * uc[b] + eps * xi[b]
        pr[b] = th[b]
    _add_tril_product(LT, up, pr)


@njit(cache=True, inline="always")
def _accept(th, logp, gc, uc, pr, lp_prop, gp, up, xi, L, eps, u01, c, n_accept):
    """Accept or reject one chain's proposal ``pr`` (log density ``lp_prop``, gradient ``gp``)
    with the uniform ``u01``; on acceptance the chain's state (``th``, ``logp[c]``, ``gc``,
    its whitened gradient ``uc``) moves and ``n_accept[c]`` grows. Returns the acceptance
    probability."""
    log_alpha = -np.inf
    if _all_finite(pr) and math.isfinite(lp_prop) and _all_finite(gp):
        _whiten_grad(L, gp, up)
        log_alpha = lp_prop - logp[c] + _log_proposal_ratio(xi, uc, up, 0.5 * eps)
    if log_alpha >= 0.0:
        acc_prob = 1.0
    elif math.isfinite(log_alpha):
        acc_prob = math.exp(log_alpha)
    else:
        acc_prob = 0.0  # non-finite proposals and NaN ratios are rejected
    # uniforms are in [0, 1): a zero acceptance probability never accepts.
    if u01 < acc_prob:
        for a in range(th.shape[0]):
            th[a] = pr[a]
            gc[a] = gp[a]
            uc[a] = up[a]
        logp[c] = lp_prop
        n_accept[c] += 1
    return acc_prob


@njit(cache=True)
def propose_chains(theta, u, xi, LT, eps, up, prop):
    """Every chain's proposal (:func:`_propose`), for the NumPy driver of the models of
    draws; ``xi`` (C, P) the step's normals, ``LT`` the factor's transpose."""
    for c in range(theta.shape[0]):
        _propose(theta[c], u[c], xi[c], LT, eps, up[c], prop[c])


@njit(cache=True)
def accept_chains(theta, logp, grad, u, prop, lprop, gprop, up, xi, L, eps, u01, n_accept, acc):
    """Every chain's acceptance (:func:`_accept`) into ``acc``, for the NumPy driver."""
    for c in range(theta.shape[0]):
        acc[c] = _accept(
            theta[c], logp, grad[c], u[c], prop[c], lprop[c], gprop[c], up[c], xi[c], L, eps,
            u01[c], c, n_accept,
        )  # fmt: skip


@njit(cache=True)
def whiten_chains(L, grad, u):
    """``u[c] = L^T grad[c]`` for every chain."""
    for c in range(grad.shape[0]):
        _whiten_grad(L, grad[c], u[c])


# n_rows x P from which the fixed-step phase runs the chains on threads (with >= 2 chains and
# >= 2 threads): from 10^4 a default fit is faster with the other core free and a little
# slower with it busy; below, barely faster. Draws are identical either way (measured:
# benchmarks/README.md, Thresholds).
CHAINS_MIN_WORK = 10_000


@row_task_kernel(
    CHAINS_MIN_WORK,
    rows=("theta", "logp", "grad", "normals", "uniforms", "draws", "n_accept", "work"),
    tasks=(),
)
def mala_run(
    family,
    theta,
    logp,
    grad,
    Xt,
    y,
    w,
    w_sum,
    offset,
    prior_prec,
    extra,
    extra_prior,
    L,
    LT,
    step,
    adapt,
    da,
    normals,
    uniforms,
    draws,
    offset_draws,
    store,
    n_accept,
    work,
):
    """Advance every chain ``normals.shape[1]`` MALA steps, all chains as one batch.

    A row-task kernel over the chains: ``mala_run.serial`` advances them all in one call;
    at a fixed step (``adapt`` False, the chains then independent) ``mala_run.threaded``
    runs it on each thread's share of the chains (their rows of the state, the random
    numbers, ``draws`` and the scratch), with the same bits: a chain's arithmetic does not
    depend on its batch. It returns nothing; the step size is then ``step``. Warm-up stays
    in one call: its shared step size would need a barrier after every step.

    Parameters
    ----------
    family : SingleIndexFamily
    theta, logp, grad : arrays (C, P), (C,), (C, P)
        Chain state, updated in place.
    Xt, y, w, w_sum, offset
        The data, from :func:`target_data`.
    prior_prec : ndarray (D,)
        Prior precisions of the coefficients.
    extra : float
        The model's extra parameter when it is fixed.
    extra_prior : None or (float, float)
        None: ``extra`` is fixed; otherwise the (mean, precision) of the normal prior of its
        log, sampled as the last of the P coordinates.
    L, LT : ndarray (P, P)
        Exactly lower-triangular factor of the preconditioner, and its transpose
        (C-contiguous: the products read the zeros above the diagonal).
    step : float
        Step size when not adapting.
    adapt : bool
        Warm-up: adapt ``log eps`` by dual averaging (state in ``da``) toward the target
        acceptance ``da[DA_TARGET]``, one shared step size, updated after every step of the
        chains with their mean acceptance probability (summed in chain order).
    normals : ndarray (C, S, P)
        Standard normal draws of the proposals: ``normals[c, i]`` is used by step ``i`` of
        chain ``c``. Drawn by the caller so that results depend on neither thread count nor
        scheduling.
    uniforms : ndarray (C, S)
        Uniform [0, 1) draws of the accept/reject decisions.
    draws : ndarray (C, S_total, P)
        When ``store``, the state after step ``i`` is written to ``draws[:, offset_draws +
        i]``.
    n_accept : ndarray (C,)
        Accepted proposals, incremented in place.
    work : ndarray (C, 2, CHAIN_BLOCK)
        Scratch (:func:`chain_work`).

    Returns
    -------
    eps : float
        The step size used by the last step.
    """
    G, P = theta.shape
    n_steps = normals.shape[1]
    u = np.empty((G, P))  # L^T grad of the current states
    prop = np.empty((G, P))
    gprop = np.empty((G, P))
    uprop = np.empty((G, P))
    lprop = np.empty(G)
    acc = np.empty(G)
    extras = np.empty(G)
    for g in range(G):
        _whiten_grad(L, grad[g], u[g])
    eps = step
    for it in range(n_steps):
        if adapt:
            eps = math.exp(da[DA_LOG_EPS])
        for g in range(G):
            _propose(theta[g], u[g], normals[g, it], LT, eps, uprop[g], prop[g])
        # log_target_chains, its kernels called here
        D = Xt.shape[0]
        _set_extras(prop, D, extra, extra_prior, extras)
        weighted_loglik_grad_chains(
            family, extra_prior, prop, Xt, y, w, w_sum, offset, extras, lprop, gprop, work
        )
        _add_log_prior(prop, D, prior_prec, extra_prior, lprop, gprop)
        for g in range(G):
            acc[g] = _accept(
                theta[g], logp, grad[g], u[g], prop[g], lprop[g], gprop[g], uprop[g],
                normals[g, it], L, eps, uniforms[g, it], g, n_accept,
            )  # fmt: skip
            if store:
                for a in range(P):
                    draws[g, offset_draws + it, a] = theta[g, a]
        if adapt:
            _dual_average(da, _ordered_mean(acc))
    return eps


@njit(cache=True)
def _ordered_mean(v):
    """Mean summed in index order (not a parallel reduction): the same bits in both drivers."""
    s = 0.0
    for i in range(v.shape[0]):
        s += v[i]
    return s / v.shape[0]
