"""Groups whose effects are integrated out: weighted marginal log-likelihoods by quadrature.

For a group g, ``m_g(beta, extra, tau) = log int exp(f_g(u)) du`` (``extra``: the base
model's free extra parameters, none, one, or the Student-t's scale and degrees of freedom) with
``f_g(u) = sum_{i in g} w_i l(y_i | x_i . beta + z_i . u, extra) + log N(u | 0, diag tau^2)``.
Adaptive Gauss-Hermite quadrature (Liu & Pierce 1994): Newton finds each group's mode
``u_hat`` and curvature ``F`` (all groups at once), the nodes are ``u_hat + sqrt(2) L x_k`` with
``L L^T = F^{-1}`` on a tensor grid (11 nodes for one effect, 5 per effect for two, 3 for
more): exact for a Gaussian base model; for Poisson, logistic and negative binomial groups of
4 or 5 rows within about 1e-6 of the integral a group (scipy's ``quad``,
tests/test_multilevel.py): over thousands of groups a few thousandths of a nat on the log
density, which varies by about 1e-4 between posterior draws. The
kernel's evaluations at the nodes are the cost of a group integrated out.

A coreset of groups weights whole marginals: ``sum_g w_g m_g``, which is not the model with the
group's rows weighted by ``w_g`` (MULTILEVEL.md). Its gradient comes from Fisher's identity,
``d m_g = E[d f_g]`` under the quadrature's own weights on its nodes: a function of the
position only, so HMC's leapfrog stays reversible and volume-preserving and the
acceptance step, which reads the same ``m_g``, keeps the chain exact for it.

This module imports no scikit-learn.
"""

import itertools

import numpy as np

from ._multilevel_likelihood import likelihood_at, log_extras

#: Gauss-Hermite nodes per effect, by the number of effects per group (the grid has
#: ``nodes^q`` points).
NODES = {1: 11, 2: 5}
_NODES_MORE = 3


def hermite_grid(q):
    """``(x, log_w)``: the tensor Gauss-Hermite nodes (K, q) and log weights (K,) for
    ``int exp(-|x|^2) g(x) dx``."""
    n = NODES.get(q, _NODES_MORE)
    x1, w1 = np.polynomial.hermite.hermgauss(n)
    x = np.array(list(itertools.product(x1, repeat=q)))
    log_w = np.array([np.log(w1[list(idx)]).sum() for idx in itertools.product(range(n), repeat=q)])
    return x, log_w


class GroupMarginals:
    """The weighted marginals of some groups, on their rows (held sorted by group).

    ``rows``: the posterior's arrays for these groups (``Xd``, ``Z``, ``y``, ``w``, local
    group codes ``g`` in ``range(n_groups)``), ``weights``: each group's ``w_g``.
    """

    def __init__(self, base, E, Xd, Z, y, w, g, n_groups, weights):
        order = np.argsort(g, kind="stable")
        self.base, self.E = base, E
        self.Xd, self.Z, self.y, self.w = (np.ascontiguousarray(a[order]) for a in (Xd, Z, y, w))
        self.g = g[order]
        self.G, self.q = int(n_groups), Z.shape[1]
        counts = np.bincount(self.g, minlength=self.G)
        self.starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self.weights = np.asarray(weights, dtype=np.float64)
        self.nodes, self.log_w = hermite_grid(self.q)
        self.u_hat = np.zeros((self.G, self.q))  # the last modes: the next Newton's start

    def _sums(self, a):
        return np.add.reduceat(a, self.starts, axis=0)

    def _model(self, s):
        return likelihood_at(self.base, s)

    def modes(self, eta0, model, tau, max_iter=50):
        """Each group's mode ``u_hat`` (G, q) and ``F`` (G, q, q), minus the Hessian of
        ``f_g`` there, by Newton from the last modes (``model``: the base likelihood at the
        extra parameters, :func:`~._multilevel_likelihood.likelihood_at`). Each step is at
        most two conditional sds long (a far start cannot overshoot into overflow); a
        likelihood that is not log-concave also halves steps that lower ``f_g``, and where a
        group's curvature is not positive (a Student-t group far from its mode, its outliers
        curving down) it steps by its rows' positive curvature only. The curvature is the
        last step's: its point differs from the mode by less than 1e-10."""
        u = self.u_hat.copy()
        prec = 1.0 / tau**2
        search = not model.log_concave
        value = self._f_value(u, eta0, model, prec) if search else None
        one = self.q == 1  # a random intercept: scalars per group, no q x q algebra
        for _ in range(max_iter):
            if one:
                z = self.Z[:, 0]
                d, c = model.derivatives(eta0 + z * u[self.g, 0], self.y)
                grad = self._sums(self.w * d * z)[:, None] - u * prec
                F = (self._sums(self.w * c * z * z) + prec[0])[:, None, None]
                if search:
                    positive = self._sums(self.w * np.maximum(c, 0.0) * z * z) + prec[0]
                    F = np.where(F > 0, F, positive[:, None, None])
                step = grad / F[:, :, 0]
                size = np.abs(step[:, 0]) * np.sqrt(F[:, 0, 0])
            else:
                eta = eta0 + np.einsum("nq,nq->n", self.Z, u[self.g])
                d, c = model.derivatives(eta, self.y)
                grad = self._sums((self.w * d)[:, None] * self.Z) - u * prec
                F = self._sums(
                    (self.w * c)[:, None, None] * self.Z[:, :, None] * self.Z[:, None, :]
                )
                F[:, np.arange(self.q), np.arange(self.q)] += prec
                if search:
                    positive = self._sums(
                        (self.w * np.maximum(c, 0.0))[:, None, None]
                        * self.Z[:, :, None]
                        * self.Z[:, None, :]
                    )
                    positive[:, np.arange(self.q), np.arange(self.q)] += prec
                    ok = np.all(np.linalg.eigvalsh(F) > 0, axis=1)
                    F = np.where(ok[:, None, None], F, positive)
                step = np.linalg.solve(F, grad[..., None])[..., 0]
                size = np.sqrt(np.einsum("gp,gpq,gq->g", step, F, step))
            # at most two conditional sds per step
            step *= np.minimum(1.0, 2.0 / np.maximum(size, 1e-300))[:, None]
            if search:
                alpha = np.ones(self.G)
                for _ in range(30):  # per group: halve where the step lowers f
                    new_value = self._f_value(u + alpha[:, None] * step, eta0, model, prec)
                    worse = ~(new_value >= value - 1e-12 * np.abs(value))
                    if not worse.any():
                        break
                    alpha = np.where(worse, 0.5 * alpha, alpha)
                step *= alpha[:, None]
                value = new_value
            u = u + step
            if not np.max(np.abs(step)) >= 1e-10:  # converged (or NaN: not kept below)
                break
        if np.all(np.isfinite(u)) and np.all(np.isfinite(F)):
            self.u_hat = u  # the next call's start
        else:  # far in the tails: the next call starts afresh
            self.u_hat = np.zeros_like(self.u_hat)
        return u, F

    def _f_value(self, u, eta0, model, prec):
        eta = eta0 + np.einsum("nq,nq->n", self.Z, u[self.g])
        ll = self.w * model.loglik(eta, self.y)
        return self._sums(ll) - 0.5 * np.sum(u**2 * prec, axis=1)

    def nodes_of(self, u_hat, F):
        """The quadrature's points (G, K, q) and the log of their Jacobian (G,)."""
        L = np.linalg.cholesky(np.linalg.inv(F))  # F^{-1} = L L^T
        points = u_hat[:, None, :] + np.sqrt(2.0) * np.einsum("gpq,kq->gkp", L, self.nodes)
        log_jac = 0.5 * self.q * np.log(2.0) + np.log(np.diagonal(L, 0, 1, 2)).sum(axis=1)
        return points, log_jac

    def log_marginals(self, beta, s, log_tau):
        """Each group's ``m_g`` (G,), unweighted."""
        return self._quadrature(beta, s, log_tau)[0]

    def _quadrature(self, beta, s, log_tau):
        model = self._model(s)
        tau = np.exp(log_tau)
        eta0 = self.Xd @ beta
        u_hat, F = self.modes(eta0, model, tau)
        points, log_jac = self.nodes_of(u_hat, F)
        f, d, score = model.node_terms(
            eta0,
            self.Z,
            np.ascontiguousarray(points),
            self.g,
            self.y,
            self.w,
            self.G,
            bool(self.E),
        )
        f -= 0.5 * np.sum(points**2 / tau**2, axis=2) + np.sum(
            np.log(tau) + 0.5 * np.log(2 * np.pi)
        )
        terms = f + self.log_w + np.sum(self.nodes**2, axis=1)  # over the Gaussian weight
        top = terms.max(axis=1, keepdims=True)
        m = top[:, 0] + np.log(np.exp(terms - top).sum(axis=1)) + log_jac
        return m, terms, log_jac, points, (d, score), model, tau

    def value_and_grad(self, beta, s, log_tau, gradient=True):
        """``(sum_g w_g m_g, gradient in (beta, log extra, log tau))``; ``-inf`` where the
        quadrature breaks down (a group sd that under- or overflows, far in the tails)."""
        try:
            with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
                m, terms, log_jac, points, rows, model, tau = self._quadrature(beta, s, log_tau)
        except np.linalg.LinAlgError:
            m = np.array([np.nan])
        if not np.all(np.isfinite(m)):
            size = beta.shape[0] + self.E + self.q
            return -np.inf, np.zeros(size) if gradient else None
        d, score = rows
        value = float(self.weights @ m)
        if not gradient:
            return value, None
        pi = np.exp(terms - m[:, None] + log_jac[:, None])  # (G, K), each row sums to 1
        rows_pi = (self.weights[:, None] * pi)[self.g]  # (N, K)
        grad_beta = self.Xd.T @ (rows_pi * d).sum(axis=1)
        grad_s = np.einsum("nk,nke->e", rows_pi, score) if self.E else []
        # d f / d log tau_k at a node: u_k^2 / tau_k^2 - 1
        grad_tau = np.einsum("g,gk,gkq->q", self.weights, pi, points**2 / tau**2 - 1.0)
        return value, np.concatenate([grad_beta, grad_s, grad_tau])

    def hessian(self, beta, s, log_tau, step=1e-4):
        """Minus the Hessian of ``sum_g w_g m_g`` in the shared parameters, by central
        differences of the gradient (a K x K block: the sampler's mass matrix)."""
        theta = np.concatenate([beta, [] if s is None else np.atleast_1d(s), log_tau])
        D, E = beta.shape[0], self.E
        H = np.empty((theta.shape[0], theta.shape[0]))
        saved = self.u_hat.copy()
        for j in range(theta.shape[0]):
            e = np.zeros_like(theta)
            e[j] = step
            grads = []
            for t in (theta + e, theta - e):
                self.u_hat = saved.copy()
                _, gr = self.value_and_grad(t[:D], log_extras(t, D, E), t[D + E :])
                grads.append(gr)
            H[:, j] = -(grads[0] - grads[1]) / (2 * step)
        self.u_hat = saved
        return 0.5 * (H + H.T)

    def _log_t(self, u, centre, L_inv):
        """The Student-t(5) density in q dimensions, up to its constant."""
        t = np.einsum("gpq,gq->gp", L_inv, u - centre)
        return -0.5 * (5.0 + self.q) * np.log1p(np.sum(t**2, axis=1) / 5.0)

    def recover(self, split, draws, rng):
        """Draws of every group's effects (S, G, q), one per draw of the shared parameters
        (``split(theta) -> (beta, log extra, log tau, ...)`` for each of ``draws``, (S, P)):
        an independence Metropolis-Hastings step per draw, within the chain of the shared
        parameters (whose moves do not read the effects, so the pairs keep the joint
        posterior). The proposal, a Student-t(5) at each group's mode given the draw with
        1.2 times its curvature's scale, depends on the draw only: the step leaves
        ``p(u_g | draw, y_g)`` invariant."""
        out = np.empty((draws.shape[0], self.G, self.q))
        current = None
        for i, theta in enumerate(draws):
            beta, s, log_tau = split(theta)[:3]
            model = self._model(s)
            prec = np.exp(-2.0 * log_tau)
            eta0 = self.Xd @ beta
            u_hat, F = self.modes(eta0, model, np.exp(log_tau))
            L = 1.2 * np.linalg.cholesky(np.linalg.inv(F))
            L_inv = np.linalg.inv(L)

            z = rng.standard_normal((self.G, self.q))
            chi = np.sqrt(rng.chisquare(5.0, (self.G, 1)) / 5.0)
            proposal = u_hat + np.einsum("gpq,gq->gp", L, z / chi)
            if current is None:
                current = proposal
            log_ratio = (
                self._f_value(proposal, eta0, model, prec)
                - self._log_t(proposal, u_hat, L_inv)
                - self._f_value(current, eta0, model, prec)
                + self._log_t(current, u_hat, L_inv)
            )
            accept = np.log(rng.random(self.G)) < log_ratio
            current = np.where(accept[:, None], proposal, current)
            out[i] = current
        return out


def recover_effects(base, n_extra, Xd, Z, y, w, local, n_groups, thetas, random_state):
    """Draws (S, n_groups, q) of groups' effects from their rows (design ``Xd``, effect
    columns ``Z``, coded ``y``, weights ``w``, group ``local`` in ``range(n_groups)``), one
    per row of ``thetas`` = ``[beta, log extras (n_extra), log tau]``
    (:meth:`GroupMarginals.recover`): the one home of the effects of groups a posterior
    integrated out or left out."""
    marginals = GroupMarginals(base, n_extra, Xd, Z, y, w, local, n_groups, np.ones(n_groups))
    D = Xd.shape[1]

    def split(theta):
        return theta[:D], log_extras(theta, D, n_extra), theta[D + n_extra :]

    return marginals.recover(split, thetas, random_state)
