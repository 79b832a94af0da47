"""``n_points='auto'``: a coreset that grows until its posterior is within the target.

The first coreset is the algorithm's, of the size the parameters call for
(:func:`~._preparation.coreset_size`). When its ``laplace_kl_`` is above
:func:`~._quality.quality_target`, it grows from the pool of candidates the construction
sampled: the pooled rows in the order of their sampling keys are a sample without
replacement proportional to their projection norms (the spread of their log-likelihoods
under the Laplace fit: Hilbert importance sampling), weighted by the inverse of their
inclusion probabilities given the next key (Horvitz-Thompson, unbiased for any sum over the
data). The sample's weights are calibrated (raked) so that its log-likelihood gradient at the
data's mode is the data's exactly: the first-order error, most of a sample's, is gone, and
what is left falls like P^2 / M. The algorithm's coreset and the sample, two coresets of the
same data, are then combined with the share that minimises the second-order error of their
sum (|dG|^2 / 2 + |dH|_F^2 / 4 in the data's whitened coordinates, the KL to second order),
and calibrated again. The sample grows, by the factor its error asks for, until the coreset
is within the target or the pool is spent.

Wide data need it: the projection's 500 dimensions cannot tell apart coresets of more points
than that, and 500 points leave a posterior of 100 to 200 parameters tens to hundreds of nats
from the data's (synthetic logistic, 10^5 rows: 31 nats at 101 parameters, 880 at 201),
where the grown coreset is within the target (about 22 000 and 24 000 points of 10^5 rows:
0.10 nats at 101 parameters, 0.36 at 201; benchmarks/results/bench_fidelity.txt).
"""

import numpy as np

from .._stats import stage
from ..models._joint import JointExtra
from ._merge_reduce import Node
from ._quality import coreset_kl, quality_target


def second_order(data_fit):
    """``(fitted, G, H, L)``: the model the fit evaluates, the data's log-likelihood gradient
    and Hessian at its mode (from the mode's condition and the fit's curvature, less the
    prior's), and the factor ``L`` of its covariance ``L L^T`` that whitens them."""
    model = data_fit.free_model
    fitted = JointExtra(model) if data_fit.n_extra else model
    P = data_fit.mean.shape[0]
    _, prior_grad = fitted.add_log_prior(data_fit.mean, 0.0, np.zeros(P))
    prior_hessian = fitted.add_prior_hessian(np.zeros((P, P)))
    H = np.linalg.inv(data_fit.cov) - prior_hessian
    return fitted, -prior_grad, 0.5 * (H + H.T), data_fit.chol


def coreset_error(moments, data_fit, X, y, w):
    """``(dG, dH)``: a coreset's log-likelihood gradient and Hessian at the data's mode less
    the data's, whitened by the data's Laplace fit (``L^T dG``, ``L^T dH L``). To second order
    the KL of the coreset's Laplace fit to the data's is ``|dG|^2 / 2 + |dH|_F^2 / 4``."""
    fitted, G, H, L = moments
    Xd = data_fit.model.design(X)
    _, grad = fitted.weighted_loglik(data_fit.mean, Xd, y, w)
    hessian = fitted.weighted_loglik_hessian(data_fit.mean, Xd, y, w)
    return L.T @ (grad - G), L.T @ (hessian - H) @ L


def row_gradients(data_fit, X, y):
    """Each row's log-likelihood gradient at the data's mode, in all the parameters."""
    model = data_fit.model
    Xd = model.design(X)
    if model.family is None:
        return model.loglik_grad_per_datum(data_fit.mean, Xd, y)
    eta = Xd @ data_fit.coef_mean
    d, _ = model.loglik_derivatives(eta, y)
    grads = d[:, None] * Xd
    if data_fit.n_extra:
        grads = np.column_stack([grads, model.extra_derivatives(eta, y)[0]])
    return grads


def calibrate(moments, data_fit, X, y, w, max_iter=50):
    """The weights ``w exp(A lambda)`` whose gradient sum at the data's mode is the data's
    (raking: positive weights, the smallest change in the sense of their KL divergence from
    ``w``); ``w`` itself where Newton's method on the dual does not converge."""
    _, G, _, L = moments
    A = row_gradients(data_fit, X, y) @ L  # whitened: the dual's Hessian well scaled
    target = L.T @ G
    lam = np.zeros(A.shape[1])
    for _ in range(max_iter):
        raked = w * np.exp(np.clip(A @ lam, -30.0, 30.0))
        residual = A.T @ raked - target
        if np.linalg.norm(residual) <= 1e-10 * (1.0 + np.linalg.norm(target)):
            return raked
        H = A.T @ (A * raked[:, None])
        H[np.diag_indices_from(H)] += 1e-12 * np.trace(H)
        lam -= np.linalg.solve(H, residual)
    return w


def importance_sample(node, norms, size):
    """``(positions, weights)``: the ``size`` pooled rows of the largest keys (fewer than the
    pool's), weighted by the inverse of their inclusion probability given the next key
    (Efraimidis-Spirakis keys ``log(u) / norm``: a row is in when ``-log(u) / norm``,
    exponential of rate ``norm``, is below the next key's ``t``, so with probability
    ``1 - exp(-norm t)``: Horvitz-Thompson conditional on the threshold, unbiased)."""
    order = np.argsort(-node.keys, kind="stable")
    positions = np.sort(order[:size])
    inclusion = -np.expm1(-norms[positions] * -node.keys[order[size]])
    return positions, node.weights[positions] / inclusion


def combine(moments, data_fit, first, second):
    """The share ``a`` of ``first`` (a coreset node) and ``1 - a`` of ``second`` that
    minimises the second-order error of the sum, and the union of their rows so weighted."""
    e1 = coreset_error(moments, data_fit, first.X, first.y, first.weights)
    e2 = coreset_error(moments, data_fit, second.X, second.y, second.weights)

    def inner(a, b):  # the second-order error's inner product, |dG|^2 / 2 + |dH|_F^2 / 4
        return 0.5 * (a[0] @ b[0]) + 0.25 * np.sum(a[1] * b[1])

    diff = (e1[0] - e2[0], e1[1] - e2[1])
    denom = inner(diff, diff)
    share = 0.0 if denom <= 0 else float(np.clip(-inner(e2, diff) / denom, 0.0, 1.0))
    keep = [(node, s) for node, s in ((first, share), (second, 1.0 - share)) if s > 0]
    return Node(
        indices=np.concatenate([n.indices for n, _ in keep]),
        weights=np.concatenate([s * n.weights for n, s in keep]),
        X=np.concatenate([n.X for n, _ in keep]),
        y=np.concatenate([n.y for n, _ in keep]),
    ), share


def grow(coreset, pool, norms, data_fit, max_points):
    """The coreset of ``n_points='auto'``: ``coreset`` (the algorithm's) if it is within the
    quality target, else grown from ``pool`` (a node with keys; ``norms`` its rows' sampling
    norms) as the module says, up to ``max_points`` rows. Its ``info`` records
    ``laplace_kl``, and ``size_limit`` when the target was not reached."""
    with stage("growth"):
        return _grow(coreset, pool, norms, data_fit, max_points)


def _grow(coreset, pool, norms, data_fit, max_points):
    n_params = data_fit.mean.shape[0]
    target = quality_target(n_params)
    kl = coreset_kl(data_fit, coreset.X, coreset.y, coreset.weights)
    info = dict(coreset.info or {})
    info["laplace_kl"] = kl
    if kl <= target or pool.keys is None:
        coreset.info = info
        return coreset
    moments = second_order(data_fit)
    best, best_kl = coreset, kl
    # the last pooled row's key is the threshold of the rest: the sample leaves it out
    limit = min(max_points, len(pool) - 1)
    size = min(2 * len(coreset), limit)
    while True:
        positions, weights = importance_sample(pool, norms, size)
        X, y = pool.X[positions], pool.y[positions]
        # calibrated first: a sample's first-order error is most of its error, which the
        # share would otherwise weigh against
        weights = calibrate(moments, data_fit, X, y, weights)
        sample = Node(pool.indices[positions], weights, X, y)
        merged, share = combine(moments, data_fit, coreset, sample)
        merged = _merge_duplicates(merged)
        merged.weights = calibrate(moments, data_fit, merged.X, merged.y, merged.weights)
        kl = coreset_kl(data_fit, merged.X, merged.y, merged.weights)
        if kl < best_kl:
            best, best_kl = merged, kl
        if best_kl <= target or size >= limit:
            break
        size = min(_next_size(size, kl / target), limit)
    out = dict(info, laplace_kl=best_kl)
    if best is not coreset:
        out.update(grown_from=len(coreset), importance_rows=size)
    if best_kl > target:
        out["size_limit"] = (
            f"{len(best)} points: its pool of {len(pool)} candidates (n_candidates) was "
            "spent, and a larger pool lets it grow further"
        )
    best.info = out
    return best


def _next_size(size, ratio):
    """The sample's next size, its KL ``ratio`` times the target: the sample's error falls
    like 1 / M, so ``1.1 ratio`` times the rows (a margin for the noise), at least a quarter
    more and at most eight times."""
    return int(np.ceil(size * min(max(1.1 * ratio, 1.25), 8.0)))


def _merge_duplicates(node):
    """One row per index (the algorithm's coreset and the sample may share rows), weights
    added."""
    unique, inverse = np.unique(node.indices, return_inverse=True)
    if unique.shape[0] == node.indices.shape[0]:
        return node
    first = np.zeros(unique.shape[0], dtype=np.intp)
    first[inverse[::-1]] = np.arange(len(inverse))[::-1]
    return Node(
        indices=unique,
        weights=np.bincount(inverse, weights=node.weights),
        X=node.X[first],
        y=node.y[first],
    )
