"""Plain NumPy MALA, written straight from the formulas (doc/algorithms.md section 8).

Deliberately simple and independent of the numba sampler: the proposal density is evaluated
with an explicit triangular solve (not the whitened shortcut of the kernels), and the step size
is tuned by Robbins-Monro on log eps (not dual averaging).
"""

import numpy as np
import scipy.linalg


def glm_log_posterior(name, X, y, w, prior_scale, noise=1.0):
    """Return ``f(theta) -> (log posterior, gradient)`` for a weighted GLM, in NumPy.

    ``name``: 'logistic', 'poisson' or 'gaussian' (with fixed noise scale ``noise``).
    """
    prec = 1.0 / prior_scale**2

    def f(theta):
        eta = X @ theta
        if name == "logistic":
            ll = y * eta - np.logaddexp(0.0, eta)
            d = y - 1.0 / (1.0 + np.exp(-eta))
        elif name == "poisson":
            with np.errstate(over="ignore"):
                mu = np.exp(eta)
            ll = y * eta - mu
            d = y - mu
        elif name == "gaussian":
            r = y - eta
            ll = -0.5 * (r / noise) ** 2
            d = r / noise**2
        else:
            raise ValueError(name)
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


def mala_chains(
    name,
    X,
    y,
    w,
    init,
    *,
    prior_scale=1.0,
    noise=1.0,
    precond_chol=None,
    n_samples=1000,
    n_warmup=500,
    step_size=None,
    target_accept=0.574,
    seed=0,
    chunk=100,
):
    """Preconditioned MALA with all chains advanced together, in plain NumPy.

    The fast NumPy formulation, the baseline of benchmarks/bench_mala.py: per step one matrix
    product ``X @ Theta^T`` (N x D by D x C), the likelihood elementwise on the (N, C) array,
    one product ``(w d)^T @ X`` for the gradients, all into preallocated buffers. Same target,
    preconditioner (``A = L L^T``, whitened MH ratio), dual averaging of a shared step size and
    random-number layout as ``skcoreset.sampler.sample_mala`` (per chunk of ``chunk`` steps:
    (C, n, P) normals, then (C, n) uniforms, from ``RandomState(seed)``), so with the same seed
    both produce the same chains up to rounding.

    ``name``: 'logistic', 'poisson' or 'gaussian' (fixed noise scale ``noise``).

    Returns
    -------
    draws : ndarray of shape (C, n_samples, P)
    acceptance_rate : ndarray of shape (C,)
    eps : float
    """
    X = np.ascontiguousarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.asarray(w, dtype=float)
    theta = np.array(init, dtype=float, ndmin=2)
    C, P = theta.shape
    N = X.shape[0]
    L = np.eye(P) if precond_chol is None else np.tril(np.asarray(precond_chol, dtype=float))
    LT = np.ascontiguousarray(L.T)
    prec = 1.0 / prior_scale**2
    rng = np.random.RandomState(seed)
    ycol, wcol, ymh = y[:, None], w[:, None], y[:, None] - 0.5
    eta, t1, t2 = np.empty((N, C)), np.empty((N, C)), np.empty((N, C))
    if name == "poisson":
        const = -w @ scipy.special.gammaln(y + 1.0)
    elif name == "gaussian":
        const = -w.sum() * (np.log(noise) + 0.5 * np.log(2 * np.pi))
    else:
        const = 0.0

    def log_post(th):
        """Log posterior and gradient of every row of ``th`` (C, P)."""
        np.matmul(X, th.T, out=eta)
        if name == "logistic":
            # softplus(eta) = max(eta, 0) + log1p(e), sigmoid(eta) = 1/2 + sign(eta) (r - 1/2)
            # with e = exp(-|eta|), r = 1 / (1 + e)
            np.abs(eta, out=t1)
            np.negative(t1, out=t1)
            np.exp(t1, out=t1)
            np.log1p(t1, out=t2)
            np.add(t1, 1.0, out=t1)
            np.reciprocal(t1, out=t1)
            np.subtract(t1, 0.5, out=t1)
            np.copysign(t1, eta, out=t1)
            np.subtract(ymh, t1, out=t1)  # d = y - sigmoid(eta)
            np.add(t2, np.maximum(eta, 0.0), out=t2)  # softplus(eta)
            np.multiply(eta, ycol, out=eta)
            np.subtract(eta, t2, out=eta)  # l = y eta - softplus(eta)
        elif name == "poisson":
            np.exp(eta, out=t2)
            np.subtract(ycol, t2, out=t1)
            np.multiply(eta, ycol, out=eta)
            np.subtract(eta, t2, out=eta)
        else:
            np.subtract(ycol, eta, out=t1)
            np.multiply(t1, t1, out=eta)
            np.multiply(eta, -0.5 / noise**2, out=eta)
            np.multiply(t1, 1.0 / noise**2, out=t1)
        np.multiply(t1, wcol, out=t1)
        lp = w @ eta + const - 0.5 * prec * np.einsum("cp,cp->c", th, th)
        return lp, t1.T @ X - prec * th

    state = {}
    with np.errstate(over="ignore", invalid="ignore"):
        state["lp"], state["g"] = log_post(theta)
    state["u"] = state["g"] @ L
    adapt = step_size is None
    eps = 1.65 * P ** (-1 / 6) if adapt else float(step_size)
    # dual averaging state (Hoffman & Gelman 2014), as in the numba sampler
    da = {"m": 0, "hbar": 0.0, "log_eps": np.log(eps), "log_eps_bar": 0.0, "mu": np.log(10 * eps)}
    draws = np.empty((C, n_samples, P))
    n_acc = np.zeros(C)
    v, prop = np.empty((C, P)), np.empty((C, P))

    def run(n_steps, eps, adapting, store):
        for c0 in range(0, n_steps, chunk):
            n = min(chunk, n_steps - c0)
            normals = rng.standard_normal((C, n, P))
            uniforms = rng.random_sample((C, n))
            for i in range(n):
                if adapting:
                    eps = np.exp(da["log_eps"])
                xi = normals[:, i]
                u = state["u"]
                np.multiply(u, 0.5 * eps * eps, out=v)
                np.add(v, eps * xi, out=v)
                np.matmul(v, LT, out=prop)
                np.add(prop, state["theta"], out=prop)
                with np.errstate(over="ignore", invalid="ignore"):
                    lp_p, g_p = log_post(prop)
                    u_p = g_p @ L
                    r = xi + 0.5 * eps * (u + u_p)
                    sq = np.einsum("cp,cp->c", xi, xi) - np.einsum("cp,cp->c", r, r)
                    log_alpha = lp_p - state["lp"] + 0.5 * sq
                    ok = np.isfinite(log_alpha)
                    alpha = np.where(ok, np.exp(np.minimum(np.where(ok, log_alpha, 0.0), 0.0)), 0.0)
                acc = uniforms[:, i] < alpha
                a2 = acc[:, None]
                state["theta"] = np.where(a2, prop, state["theta"])
                state["g"] = np.where(a2, g_p, state["g"])
                state["u"] = np.where(a2, u_p, u)
                state["lp"] = np.where(acc, lp_p, state["lp"])
                if store:
                    draws[:, c0 + i] = state["theta"]
                    n_acc[:] += acc
                if adapting:
                    m = da["m"] = da["m"] + 1
                    e = 1.0 / (m + 10.0)
                    da["hbar"] = (1 - e) * da["hbar"] + e * (target_accept - alpha.sum() / C)
                    log_eps = min(max(da["mu"] - np.sqrt(m) / 0.05 * da["hbar"], -30.0), 5.0)
                    mk = m**-0.75
                    da["log_eps"] = log_eps
                    da["log_eps_bar"] = mk * log_eps + (1 - mk) * da["log_eps_bar"]

    state["theta"] = theta
    run(n_warmup, eps, adapt, False)
    if adapt and n_warmup > 0:
        eps = float(np.exp(da["log_eps_bar"]))
    run(n_samples, eps, False, True)
    return draws, n_acc / max(n_samples, 1), eps
