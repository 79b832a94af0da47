"""The Laplace fit of a multilevel posterior: Newton's method on the block-arrow Hessian.

Each Newton step solves with the Schur complement of the group blocks
(:class:`~._multilevel.BlockArrow`): ``O(N (D + q)^2 + G q^3 + K^3)``, one pass over the rows,
whatever the number of groups. The fit runs twice: non-centred first (its mode always exists:
at ``tau -> 0`` the non-centred density vanishes), then in the parameterisation chosen per
effect from that mode (:func:`choose_centring`), where the sampler runs.

This module imports no scikit-learn.
"""

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize, minimize_scalar

from ._laplace import laplace_approximation
from ._multilevel import BlockArrow, MultilevelPosterior
from ._multilevel_likelihood import pooled_log_extras

#: The search for the group sds reads at most this many rows of each group (measured:
#: benchmarks/README.md, Thresholds).
SEARCH_ROWS_PER_GROUP = 200


@dataclass
class MultilevelLaplace:
    """The Laplace approximation ``N(mean, H^{-1})`` of a multilevel posterior.

    Attributes
    ----------
    posterior : MultilevelPosterior
        The posterior (its ``centring`` is the parameterisation of ``mean``).
    mean : ndarray of shape (P,)
        The mode.
    factor : BlockArrow
        The factored Hessian of ``-log p`` at the mode.
    n_iter : int
        Newton steps taken (both fits).
    """

    posterior: MultilevelPosterior
    mean: np.ndarray
    factor: BlockArrow
    n_iter: int

    def draws(self, n_draws, random_state):
        """``n_draws`` parameter vectors from the approximation, shape (n_draws, P)."""
        z = random_state.standard_normal((n_draws, self.mean.shape[0]))
        return self.mean + self.factor.inv_rt(z)


def newton(posterior, theta, *, fix_tau=False, max_iter=200, tol=1e-9):
    """``(mode, factor, n_iter)``: Newton's method with a backtracking line search, the
    Hessian shifted (Levenberg) while it is not positive definite. ``fix_tau``: the mode
    in the other parameters at ``theta``'s group sds (their rows of the Hessian replaced by
    the identity's, their gradient by 0: the step leaves them)."""
    taus = np.arange(posterior.D + posterior.E, posterior.K)

    def derivatives(theta):
        lp, grad = posterior.log_posterior(theta)
        if fix_tau:
            grad[taus] = 0.0
        return lp, grad

    def hessian(theta):
        A, C, D = posterior.hessian(theta)
        if fix_tau:
            A[taus, :] = A[:, taus] = 0.0
            A[taus, taus] = 1.0
            C[:, taus, :] = 0.0
        return A, C, D

    lp, grad = derivatives(theta)
    if not np.isfinite(lp):
        raise FloatingPointError("The multilevel log posterior is not finite at the start.")
    it = 0
    while it < max_iter:
        it += 1
        factor = _factor_shifted(*hessian(theta))
        step = factor.solve(grad)
        decrement = float(grad @ step)
        alpha = 1.0
        while alpha > 1e-12:
            new = theta + alpha * step
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                # a far trial point (a Student-t scale near 0) may overflow: halved
                lp_new = posterior.log_posterior(new, gradient=False)
            if np.isfinite(lp_new) and lp_new >= lp - 1e-12 * abs(lp):
                break
            alpha *= 0.5
        else:
            break  # no ascent along the step: at the mode to rounding
        theta = new
        lp, grad = derivatives(theta)
        if decrement < tol:
            break
    return theta, _factor_shifted(*hessian(theta)), it


def _factor_shifted(A, C, D):
    """The factor of ``H + shift I`` with the least shift (0 first) that makes it positive
    definite: Newton's direction far from the mode, where the curvature may be negative."""
    shift = 0.0
    scale = max(np.abs(np.diagonal(A)).max(), np.abs(np.diagonal(D, 0, 1, 2)).max(initial=0), 1.0)
    eye_k, eye_q = np.eye(A.shape[0]), np.eye(D.shape[1])
    while True:
        try:
            return BlockArrow.factor(A + shift * eye_k, C, D + shift * eye_q)
        except np.linalg.LinAlgError:
            shift = max(2.0 * shift, 1e-8 * scale)
            if shift > 1e8 * scale:
                raise FloatingPointError(
                    "The multilevel posterior's Hessian is not positive definite at any "
                    "shift: the data or the priors are degenerate."
                ) from None


def choose_centring(posterior, theta, rule="auto"):
    """The (G, q) centring ``c`` of the effects: ``u_g = tau^(1 - c) v_g``.

    'auto' is the partially non-centred parameterisation of Papaspiliopoulos, Roberts and
    Skold (2003): ``c = I tau^2 / (1 + I tau^2)``, ``I`` the group's rows' precision on the
    effect; for a Gaussian effect it makes ``v_g`` and ``tau`` independent a posteriori.
    'centred' is 1 everywhere, 'non-centred' 0.
    """
    shape = (posterior.G, posterior.q)
    if rule == "centred":
        return np.ones(shape)
    if rule == "non-centred":
        return np.zeros(shape)
    tau, _ = posterior.effects(theta)
    ratio = posterior.information(theta) * tau**2
    return ratio / (1.0 + ratio)


def fit_laplace(posterior, parameterisation="auto"):
    """The :class:`MultilevelLaplace` fit, started at the base model's fit without groups.

    The group sds are set at the mode of their Laplace marginal, as lme4 and INLA do: the
    joint mode is no estimate of them (centred, it is the funnel's spike at ``tau = 0``;
    non-centred, it drifts to large ``tau``). For each ``log tau`` Newton finds the mode of
    the other parameters, centred, and ``log p(theta_hat) - log det H / 2`` is the marginal
    (Brent's method for one sd, Nelder-Mead for more). The search runs on at most
    :data:`SEARCH_ROWS_PER_GROUP` rows of each group (weights scaled to the group's total):
    a sd needs the groups' effects, not every row. At the sds found, Newton on all the rows
    gives the mode of the others; there the parameterisation is chosen per effect
    (:func:`choose_centring`) and the Hessian of all the parameters is the approximation's
    precision.
    """
    search = posterior.subsample(SEARCH_ROWS_PER_GROUP)
    rows = (search.Xd, search.y, search.w)
    marginals = search.marginals
    if marginals is not None:  # the start reads every row, a marginal's at its weight
        rows = [
            np.concatenate(pair)
            for pair in zip(
                rows, (marginals.Xd, marginals.y, marginals.w * marginals.weights[marginals.g])
            )
        ]
    pooled = laplace_approximation(search.base, *rows, design=True).mean
    D, q = search.D, search.q
    beta, s = pooled[:D], pooled_log_extras(search.base, pooled, D)
    for post in (search, posterior):
        post.centring = np.ones((post.G, q))
    state = {"theta": search.to_theta(beta, s, np.zeros(q), np.zeros((search.G, q))), "n": 0}
    taus = slice(D + search.E, search.K)

    def minus_marginal(log_tau, post=search):
        theta = state["theta"].copy()
        theta[taus] = log_tau
        theta, factor, n = newton(post, theta, fix_tau=True)
        state["theta"], state["n"] = theta, state["n"] + n
        return -(post.log_posterior(theta, gradient=False) - 0.5 * factor.logdet())

    x0 = np.full(q, np.log(search.tau_scale / 2.5))
    if q == 1:
        best = minimize_scalar(
            lambda t: minus_marginal(np.array([t])), bracket=(x0[0] - 1, x0[0]), tol=1e-4
        )
        best_x = np.array([best.x])
    else:
        best_x = minimize(
            minus_marginal,
            x0,
            method="Nelder-Mead",
            options={"xatol": 1e-3, "fatol": 1e-6, "initial_simplex": _simplex(x0)},
        ).x
    if search is posterior:
        minus_marginal(best_x)
    else:  # the others' mode on every row, at the sds the search found
        minus_marginal(best_x, posterior)
    theta = posterior.reparameterise(
        state["theta"], choose_centring(posterior, state["theta"], parameterisation)
    )
    return MultilevelLaplace(
        posterior, theta, _factor_shifted(*posterior.hessian(theta)), state["n"]
    )


def _simplex(x0):
    """Nelder-Mead's first simplex: steps of 1 in each log sd (factors of e)."""
    return np.vstack([x0, x0 + np.eye(x0.shape[0])])
