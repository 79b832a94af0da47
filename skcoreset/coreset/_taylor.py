"""The data's second-order sums at a Laplace fit's mode, block by block.

Every row's log-likelihood, expanded to second order around the mode ``theta0`` of a Laplace
fit, is summed over the data: ``G = sum_n w_n dl_n`` and ``H = sum_n w_n (-d2l_n)`` in all
the posterior's parameters (the coefficients and, when it is free, the log extra parameter).
They add up block by block, so a stream and a merge tree carry them exactly. Two uses:

* the data's Laplace fit of a stream (:func:`stream_fit`), whose blocks were summarised at the
  fit of its first call: Newton on the prior plus the quadratic the sums define;
* the KL coresets' control variate of the full data's log-likelihood sum
  (:class:`~._kl_problem.Taylor`), and their pool's keys (:func:`row_spread`).
"""

import numpy as np

from .._parallel_kernels import in_ranges, sum_in_order
from ..models._joint import JointExtra
from ..models._laplace import _Posterior, as_joint, fit_posterior
from ._merge_reduce import Node

# Rows of a chunk of data_summary: its temporaries (the design, the weighted design, the
# projected rows; some 2.5 MB at 20 columns, per thread) stay in cache and are reused from
# the heap, where a node's whole rows (266 000 of them in a 10^7-row fit) made 45 MB arrays
# that the system maps afresh, page by page, for each. The chunks are also what the fit's
# threads share out, and on two threads this size ran faster than twice it (measured:
# benchmarks/README.md, Thresholds).
_SUMMARY_ROWS = 16_384


def data_summary(laplace, node, spread=True):
    """``(summary, spread)`` of a node's rows.

    ``summary = [W, n, G, H.ravel()]``: the total weight, the row count, and the weighted sums
    of the log-likelihood's gradient and curvature at the Laplace mean (in the coefficients
    and the log extra parameter together when it is free); sums, so that the summaries of
    blocks add up to that of their union. ``spread``: each row's
    :func:`row_spread`, from the same derivatives (None without ``spread``). Computed in
    chunks of rows.
    """
    model = laplace.model
    if model.family is None:  # a model of draws: its own sums, each row's gradient's spread
        Xd = model.design(node.X)
        _, G = model.weighted_loglik(laplace.mean, Xd, node.y, node.weights)
        H = model.weighted_loglik_hessian(laplace.mean, Xd, node.y, node.weights)
        summary = np.concatenate([[node.weights.sum(), float(len(node))], G, H.ravel()])
        return summary, row_spread(laplace, node.X, node.y) if spread else None
    P = laplace.mean.shape[0]
    n_chunks = -(-len(node) // _SUMMARY_ROWS)
    parts = np.zeros((n_chunks, P + P * P))
    spreads = np.empty(len(node)) if spread else None

    def run(k0, k1):  # chunks k0 .. k1 - 1, on one thread (with its own design array)
        design = None
        for k in range(k0, k1):
            rows = slice(k * _SUMMARY_ROWS, (k + 1) * _SUMMARY_ROWS)
            design = Xd = model.design(node.X[rows], out=design)
            y, w = node.y[rows], node.weights[rows]
            eta = Xd @ laplace.coef_mean
            d, c = model.loglik_derivatives(eta, y)
            G, H = Xd.T @ (w * d), Xd.T @ (Xd * (w * c)[:, None])
            score = None
            if laplace.n_extra:
                score, cross, curv = model.extra_derivatives(eta, y)
                G, H = joint_sums(G, H, Xd, w, score, cross, curv)
            parts[k, :P] = G
            parts[k, P:] = H.ravel()
            if spread:
                spreads[rows] = _spread(laplace, Xd, d, c, score)

    # the chunks' NumPy and BLAS work releases the GIL: on the fit's threads (its BLAS runs
    # on one), each chunk summed alone and the sums added in order, the same bits for any
    # number of threads
    in_ranges(run, n_chunks)
    G_H = sum_in_order(parts) if n_chunks else np.zeros(P + P * P)
    summary = np.concatenate([[node.weights.sum(), float(len(node))], G_H])
    return summary, spreads


def joint_sums(G, H, Xd, w, score, cross, curv):
    """The coefficients' Taylor sums ``(G, H)`` of rows extended by the log extra parameter:
    ``sum_n w_n dl_n/ds`` after ``G``, and ``H``'s last row and column ``sum_n w_n
    (-d2l_n/(deta ds)) x_n`` and ``sum_n w_n (-d2l_n/ds2)``
    (:meth:`~skcoreset.models.GLM.extra_derivatives`)."""
    P = G.shape[0]
    out = np.empty((P + 1, P + 1))
    out[:P, :P] = H
    out[:P, P] = out[P, :P] = Xd.T @ (w * cross)
    out[P, P] = w @ curv
    return np.append(G, w @ score), out


def row_spread(laplace, X, y):
    """How much each row's log-likelihood varies under the data's Laplace fit.

    The standard deviation of its second-order expansion at the mean,
    ``l_n(theta) - l_n(mu) ~ d_n e - c_n e^2 / 2`` with ``e = x_n . (theta - mu)`` normal of
    variance ``s_n^2 = x_n^T Sigma x_n``: ``sqrt(d_n^2 s_n^2 + c_n^2 s_n^4 / 2)``; with a free
    extra parameter, the first-order term is the row's whole gradient's (the log extra
    parameter's score included). Large for the rows the posterior is uncertain about (a rare
    category's, a point near the decision boundary), near 0 for rows the fit already
    explains; it is the Laplace counterpart of the norm of a row's log-likelihood projection.
    For a model of draws, the first-order term alone: ``sqrt(g_n^T Sigma g_n)`` with ``g_n``
    the row's gradient at the mean.
    """
    model = laplace.model
    if model.family is None:
        g = model.loglik_grad_per_datum(laplace.mean, model.design(X), y)
        return np.linalg.norm(g @ laplace.chol, axis=1)
    Xd = model.design(X)
    eta = Xd @ laplace.coef_mean
    d, c = model.loglik_derivatives(eta, y)
    score = model.extra_derivatives(eta, y)[0] if laplace.n_extra else None
    return _spread(laplace, Xd, d, c, score)


def _spread(laplace, Xd, d, c, score=None):
    L = laplace.chol
    XL = Xd @ L[: Xd.shape[1]]  # Sigma = L L^T: s_n^2 = ||x_n L||^2 (coefficients' block)
    s2 = np.einsum("ij,ij->i", XL, XL)
    if score is None:
        return np.sqrt(s2 * (d * d + 0.5 * (c * c) * s2))
    grad = d[:, None] * XL + score[:, None] * L[-1]  # the row's gradient, whitened
    return np.sqrt(np.einsum("ij,ij->i", grad, grad) + 0.5 * (c * c) * s2 * s2)


def split_summary(summary, P):
    """``(W, n, G, H)`` from :func:`data_summary`."""
    return summary[0], summary[1], summary[2 : 2 + P], summary[2 + P :].reshape(P, P)


def taylor_sums(laplace, node):
    """:func:`data_summary` of a node's rows without their spread: the sums a stream's data
    fit needs (:func:`stream_fit`)."""
    return data_summary(laplace, node, spread=False)[0]


#: Rows of the sample a stream keeps for its data fit (at least; 20 per parameter beyond).
SAMPLE_ROWS = 4000


def sample_size(n_params):
    """Rows of a stream's sample for a posterior of ``n_params`` parameters."""
    return max(SAMPLE_ROWS, 20 * int(n_params))


def draw_sample(node, size, random_state):
    """A sample of a leaf's rows proportional to their weights (at most ``size``; all of
    them when it has no more): their Efraimidis-Spirakis keys ``log(u) / w``, whose largest
    a merge keeps (``Node.sample``)."""
    with np.errstate(divide="ignore"):
        keys = np.log(random_state.random_sample(len(node))) / node.weights
    rows = Node(node.indices, node.weights, node.X, node.y, keys=keys)
    sample = rows.subset(rows.top_keys(size))
    sample.info = {"size": size}
    return sample


class SampledPosterior(_Posterior):
    """The data's log posterior from a sample of its rows at their weights in the data's
    sum, plus the rest of the data's second-order sums (theirs less the sample's, about
    ``theta0``): the remainder the sample estimates is third order in ``theta - theta0``
    (Bardenet, Doucet & Holmes 2017), tiny across the posterior. With no rows, the data's
    quadratic alone; with all of them at their own weights, the exact posterior."""

    def __init__(self, model, Xd, y, weights, theta0, G_rest, H_rest):
        super().__init__(model, lambda: [(Xd, y, weights)] if len(y) else [])
        self.theta0, self.G_rest, self.H_rest = theta0, G_rest, H_rest

    def _parts(self, theta, value):
        yield from super()._parts(theta, value)
        delta = theta - self.theta0
        Hd = self.H_rest @ delta
        yield (self.G_rest @ delta - 0.5 * (delta @ Hd), self.G_rest - Hd) if value else self.H_rest


def sampled_fit(laplace, Xd, y, weights, G_rest, H_rest):
    """The data's Laplace fit from a sample of its rows (design ``Xd``) at their weights in
    its sum and the rest of its second-order sums at ``laplace``'s mode, where Newton starts:
    in all the posterior's parameters."""
    model = laplace.free_model
    fitted = JointExtra(model) if laplace.n_extra else model
    posterior = SampledPosterior(fitted, Xd, y, weights, laplace.mean, G_rest, H_rest)
    fit = fit_posterior(fitted, posterior, laplace.mean)
    return as_joint(fit, model) if laplace.n_extra else fit


def stream_fit(laplace, sums, sample=None):
    """The data's Laplace fit of a stream, from its second-order sums at ``laplace``'s mode
    (the fit of its first call) and its weight-proportional ``sample`` of rows
    (:func:`sampled_fit`: each sampled row weighs the data's total weight over their
    number, or its own when the sample is every row).

    The sample carries what the quadratic misses: the expansion's error is third order in
    the distance from the first call's mode to the data's, some sqrt(N / n) of the data's
    posterior sds for a first call of n of N rows drawn like the rest, far more for a first
    call unlike the rest (sorted, degenerate). Phishing in four calls (OMP): the quadratic
    alone was 0.11-0.17 nats from the data's fit.
    """
    P = laplace.mean.shape[0]
    total, count, G, H = split_summary(sums, P)
    if sample is None or len(sample) == 0:
        Xd, y, weights = np.empty((0, 0)), np.empty(0), np.empty(0)
        return sampled_fit(laplace, Xd, y, weights, G, H)
    every_row = len(sample) >= int(count)
    weights = sample.weights if every_row else np.full(len(sample), total / len(sample))
    rows = Node(sample.indices, weights, sample.X, sample.y)
    _, _, G_sample, H_sample = split_summary(taylor_sums(laplace, rows), P)
    Xd = laplace.model.design(sample.X)
    return sampled_fit(laplace, Xd, sample.y, weights, G - G_sample, H - H_sample)
