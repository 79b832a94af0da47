"""Coresets of grouped data for a multilevel model: rows inside large groups, a coreset of
small groups.

The log-likelihood is a sum over groups of ``L_g(beta, extra, u_g)``. Each row is projected
onto J draws of ``(beta, extra, u_{g(i)})`` from the multilevel Laplace fit (its own group's
effects), so a group's rows live in their own block of coordinates: matching every block
matches the total, and the error of the total is at most the sum of the blocks' errors. The
estimator's algorithm (``_select``: OMP, GIGA, Frank-Wolfe, IHT, importance or uniform
sampling) runs on each group's block with that group's budget.

The budget follows what each group contributes: ``M_g`` proportional to the sum of its rows'
norms (the share of the total's error it can cause), at least ``MIN_PER_PARAM`` points per
parameter a group's rows inform (``D + E + q``); a group with no more rows than its budget
is small.

Small groups are kept whole, unless there are many more of them than a coreset of groups
needs (``AUTO_GROUPS_PER_PARAM`` per shared parameter): then each small group is one point,
its marginal log-likelihood ``m_g`` (its effect integrated out) projected onto the draws of
the shared parameters, and the algorithm weights a few of them (``group_weight``; the rest are
left out, their effects recovered afterwards from their rows, given the posterior).
"""

import numpy as np

from .._logging import phase, report
from ..models._multilevel_laplace import fit_laplace
from ..models._multilevel_likelihood import integrates_groups, log_density
from ..models._multilevel_marginal import GroupMarginals
from ._merge_reduce import Node
from ._multilevel_kl import GroupProblem, group_bank, kl_multipliers

#: The least points a reduced group keeps, per parameter its rows inform (beta, the extra
#: parameters, its effects): fewer cannot pin down a quadratic in them.
MIN_PER_PARAM = 4
#: ``n_points='auto'``: points per parameter a group gets (its rows permitting).
AUTO_PER_PARAM = 10
#: ``n_points='auto'``: small groups chosen per shared parameter (coefficients, the extra
#: parameter, the group sds) by a coreset of groups.
AUTO_GROUPS_PER_PARAM = 20
#: Rows projected at a time (J log-likelihoods each): bounds the working memory.
_BLOCK_ROWS = 1 << 16


def group_budgets(n_rows, mass, total, floor):
    """Points per group: ``total`` shared in proportion to ``mass`` (the groups' projected
    norms), each between ``min(floor, n_g)`` and ``n_g``, the surplus of capped groups
    shared again among the others."""
    n_rows = np.asarray(n_rows, dtype=np.int64)
    budget = np.minimum(n_rows, floor)
    free = budget < n_rows
    left = total - budget.sum()
    while left > 0 and free.any():
        share = mass * free
        if share.sum() <= 0:
            share = free.astype(float)
        extra = np.floor(left * share / share.sum()).astype(np.int64)
        if extra.sum() == 0:  # the remainder: one point each to the heaviest free groups
            order = np.argsort(-share)[: int(left)]
            extra = np.zeros_like(budget)
            extra[order[free[order]]] = 1
        budget = np.minimum(n_rows, budget + extra)
        left = total - budget.sum()
        free = budget < n_rows
        if extra.sum() == 0:
            break
    return budget


def projected_rows(laplace, draws, rows):
    """The rows' centred log-likelihoods at the draws, ``w_i (l_ij - mean_j l_ij)``,
    ``rows`` a slice of the posterior's (group-sorted) rows: shape (rows, J)."""
    post = laplace.posterior
    D, E = post.D, post.E
    tau, u = post.effects(draws)  # (J, q), (J, G, q)
    g = post.g[rows]
    eta = post.Xd[rows] @ draws[:, :D].T + np.einsum("nq,jnq->nj", post.Z[rows], u[:, g, :])
    extras = np.exp(draws[:, D : D + E]) if E else None  # (J, E)
    ll = log_density(post.base, post.y[rows, None], eta, extras)
    ll -= ll.mean(axis=1, keepdims=True)
    return post.w[rows, None] * ll


def group_coreset(estimator, laplace, draws, small, n_chosen, rng):
    """The weights (one per small group, 0 for those left out) of a coreset of the small
    groups' marginal log-likelihoods: each group is projected onto the draws of the shared
    parameters as one point, its marginal at each (adaptive Gauss-Hermite,
    :class:`~skcoreset.models._multilevel_marginal.GroupMarginals`), and the estimator's
    algorithm chooses ``n_chosen`` of them."""
    post = laplace.posterior
    chosen = np.flatnonzero(small)
    rows = small[post.g]
    local = np.searchsorted(chosen, post.g[rows])
    marginals = GroupMarginals(
        post.base,
        post.E,
        post.Xd[rows],
        post.Z[rows],
        post.y[rows],
        post.w[rows],
        local,
        chosen.shape[0],
        np.ones(chosen.shape[0]),
    )
    M = np.empty((chosen.shape[0], draws.shape[0]))
    for j, theta in enumerate(draws):
        beta, s, log_tau, _ = post.split(theta)
        M[:, j] = marginals.log_marginals(beta, s, log_tau)
    V = M - M.mean(axis=1, keepdims=True)
    size = estimator._target_size
    estimator._target_size = int(n_chosen)
    weights, _, _ = estimator._select(V, np.linalg.norm(V, axis=1), V.sum(axis=0), rng)
    estimator._target_size = size
    return weights


def multilevel_coreset(estimator, X, y, w, codes, n_groups, spec, rng):
    """``(node, laplace, info)``: the coreset of validated rows ``X``, coded ``y``, weights
    ``w`` and group indices ``codes``, with the estimator's algorithm."""
    post = spec.posterior(X, y, codes, n_groups, w, estimator.prior_scale, estimator.fit_intercept)
    with phase(estimator, f"multilevel Laplace fit ({X.shape[0]} rows, {n_groups} groups)"):
        laplace = fit_laplace(post)
    n_per = post.D + post.E + post.q
    counts = np.bincount(post.g, minlength=post.G)
    if estimator.n_points == "auto":
        total = int(np.minimum(counts, AUTO_PER_PARAM * n_per).sum())
    else:
        total = int(estimator.n_points)
    # a group's block needs more dimensions than its points, or any M points match it
    # exactly and the error measures nothing: twice the largest budget a group can get
    largest = min(counts.max(), max(AUTO_PER_PARAM * n_per, total * counts.max() // counts.sum()))
    J = int(min(getattr(estimator, "n_projections", 500), max(40, 2 * largest)))
    draws = laplace.draws(J, rng)
    bounds = np.concatenate([[0], np.cumsum(counts)])
    # the groups' masses (sums of their rows' norms), one block of rows at a time
    norms = np.empty(post.g.shape[0])
    for start in range(0, norms.shape[0], _BLOCK_ROWS):
        rows = slice(start, min(start + _BLOCK_ROWS, norms.shape[0]))
        norms[rows] = np.linalg.norm(projected_rows(laplace, draws, rows), axis=1)
    mass = np.bincount(post.g, weights=norms, minlength=post.G)
    budget = group_budgets(counts, mass, total, MIN_PER_PARAM * n_per)
    # small groups (no more rows than their budget): one weighted marginal each, when there
    # are many more of them than a coreset of groups needs
    small = (budget >= counts) & (counts > 0)
    shared = post.K
    if estimator.n_points == "auto":
        n_chosen = AUTO_GROUPS_PER_PARAM * shared
    else:
        rows_small = counts[small].sum()
        n_chosen = max(
            2 * shared,
            round(
                total
                * rows_small
                / counts.sum()
                / max(counts[small].mean() if small.any() else 1, 1)
            ),
        )
    group_weight = np.ones(post.G)
    # (a random intercept only: with slopes the marginals' grid and the sds' search grow
    # slow, and the small groups are kept whole; so they are for a Student-t base, whose
    # small groups' marginals the quadrature does not give accurately; the KL coresets
    # optimise rows only)
    kl = estimator._multilevel == "kl"
    marginal = (
        post.q == 1 and small.sum() > 2 * n_chosen and not kl and integrates_groups(post.base)
    )
    if marginal:
        with phase(estimator, f"coreset of {n_chosen} among {small.sum()} small groups"):
            group_weight[small] = group_coreset(estimator, laplace, draws, small, n_chosen, rng)
    kept_idx, kept_w = [], []
    errors, targets = 0.0, 0.0
    size = estimator._target_size
    if kl:  # each reduced group's KL problem resamples the Laplace fit's draws
        reduced = np.flatnonzero((budget < counts) & (counts > 0))
        bank = group_bank(laplace, rng, post.groups_in[reduced])
    with phase(estimator, f"selection: {type(estimator).__name__} in {post.G} groups"):
        for gidx in np.flatnonzero(counts):
            rows = slice(bounds[gidx], bounds[gidx + 1])
            if budget[gidx] >= counts[gidx]:
                if group_weight[gidx] > 0:  # whole, or one of the coreset of groups
                    kept_idx.append(np.arange(rows.start, rows.stop))
                    kept_w.append(post.w[rows])
                continue
            V = projected_rows(laplace, draws, rows)
            sigma = np.linalg.norm(V, axis=1)
            target = V.sum(axis=0)
            estimator._target_size = int(budget[gidx])
            if kl:
                problem = GroupProblem(
                    post.base, post.E, post.Xd[rows], post.Z[rows], post.y[rows],
                    post.w[rows], bank[post.groups_in[gidx]], estimator.n_chains, rng,
                )  # fmt: skip
                sel = kl_multipliers(estimator, problem, V, sigma, target, rng)
            else:
                sel, _, _ = estimator._select(V, sigma, target, rng)
            nz = np.flatnonzero(sel)
            kept_idx.append(rows.start + nz)
            kept_w.append(sel[nz] * post.w[rows][nz])
            errors += np.linalg.norm(target - sel @ V)
            targets += np.linalg.norm(target)
    estimator._target_size = size
    sorted_rows = np.concatenate(kept_idx)
    weights = np.concatenate(kept_w)
    indices = post.order[sorted_rows]  # back to the caller's row numbers
    whole = int(np.sum(small & (group_weight == 1))) if not marginal else 0
    chosen = int(np.sum(small & (group_weight > 0))) if marginal else 0
    dropped = post.order[np.flatnonzero(group_weight[post.g] == 0)]
    report(
        estimator,
        "%d of %d groups kept whole, %d by weighted marginals (%d left out); %d points",
        whole,
        post.G,
        chosen,
        int(np.sum(group_weight == 0)),
        len(indices),
    )
    info = {
        "error": errors / targets if targets > 0 else 0.0,
        "groups_kept_whole": whole,
        "groups_marginal": chosen,
        "group_weight": group_weight[post.g[sorted_rows]],
        "left_out": np.sort(dropped),
    }
    node = Node(indices, weights, X[indices], y[indices])
    return node, laplace, info
