"""The data's second-order sums at a Laplace fit's mode, block by block.

Every row's log-likelihood, expanded to second order around the mode ``theta0`` of a Laplace
fit, is summed over the data: ``G = sum_n w_n dl_n`` and ``H = sum_n w_n (-d2l_n)`` in all
the posterior's parameters (the coefficients and, when it is free, the log extra parameter).
They add up block by block, so a stream and a merge tree carry them exactly. Two uses:

* the data's Laplace fit (:func:`fit_from_sums`) of a construction whose blocks were
  summarised at a first fit (a pilot's of a sample of rows, a stream's first call's): Newton
  on the prior, a sample of the rows and the quadratic the sums define for the rest, so that
  one pass over the data gives the fit that Newton's passes would;
* the control variate of the full data's log-likelihood sum (:class:`~._kl_problem.Taylor`:
  the KL coresets' and the Hilbert coresets' target), and the pools' keys
  (:func:`row_spread`).
"""

import numpy as np

from .._parallel_kernels import (
    in_ranges,
    row_tasks,
    row_weights,
    sum_in_order,
    summed_gradient_hessian,
)
from ..metrics._fidelity import gaussian_kl
from ..models._glm import _LOG_EXTRA_STEP
from ..models._joint import JointExtra
from ..models._laplace import _Posterior, as_joint, fit_posterior
from ._merge_reduce import Node
from ._quality import quality_target
from ._taylor_kernels import summary_tasks

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
    if model.family is None:  # a model of draws: its own sums and spreads
        y, w = np.ascontiguousarray(node.y, dtype=np.float64), row_weights(node.weights)
        G, H, spreads = model.second_order_sums(laplace.mean, laplace.chol, node.X, y, w, spread)
        summary = np.concatenate([[node.weights.sum(), float(len(node))], G, H.ravel()])
        return summary, spreads
    P = laplace.mean.shape[0]
    if len(node) >= FUSED_SUMMARY_ROWS:
        return _fused_summary(laplace, node, spread)
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


#: Rows from which a single-index model's summary comes from the fused kernel
#: (:func:`~._taylor_kernels.summary_tasks`), which reads the rows as stored once: below, the
#: chunks' NumPy products (a small fit does not compile the kernel).
FUSED_SUMMARY_ROWS = 100_000


def _fused_summary(laplace, node, spread):
    """:func:`data_summary` of a single-index model's node by the fused kernel."""
    model = laplace.model
    P = laplace.mean.shape[0]
    X = node.X  # float32 rows as they are (the kernel reads them in float64)
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    X = np.ascontiguousarray(X)
    size, parts = row_tasks(len(node), (P + P * P,))
    spreads = np.empty(len(node))
    summary_tasks.for_size(len(node))(
        model.family,
        X,
        bool(model.fit_intercept),
        np.ascontiguousarray(laplace.coef_mean, dtype=np.float64),
        np.ascontiguousarray(node.y, dtype=np.float64),
        row_weights(node.weights),
        model.extra_value,
        int(laplace.n_extra),
        _LOG_EXTRA_STEP,
        np.ascontiguousarray(laplace.chol, dtype=np.float64),
        size,
        parts,
        spreads,
    )
    G, H = summed_gradient_hessian(parts, P)
    summary = np.concatenate([[node.weights.sum(), float(len(node))], G, H.ravel()])
    return summary, spreads if spread else None


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
        y = np.ascontiguousarray(y, dtype=np.float64)
        return model.row_spreads(laplace.mean, laplace.chol, model.design(X), y)
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


#: Rows of the sample a construction keeps for its data fit, proportional to weight times
#: spread (at least; 20 per parameter beyond; see
#: :func:`~skcoreset.models._laplace.pilot_rows`), and beside them, proportional to weight,
#: this share of them.
SAMPLE_ROWS = 10_000
WEIGHT_SHARE = 1.0


def sample_size(n_params):
    """``(by weight, by weight times spread)``: the rows of the two parts of the sample a
    construction keeps for a posterior of ``n_params`` parameters (:func:`draw_sample`)."""
    spread = max(SAMPLE_ROWS, 20 * int(n_params))
    return int(WEIGHT_SHARE * spread), spread


def spread_keys(weights, spread, random_state):
    """Efraimidis-Spirakis keys ``log(u) / (w s)`` of rows of weights ``w`` and spreads ``s``:
    the rows of the largest keys are a sample without replacement with probabilities
    proportional to ``w s`` (rows of no spread: never, key -inf)."""
    return _keys(weights * spread, random_state)


def _keys(norms, random_state):
    # uniforms from a Generator seeded by the caller's (twice as fast as its own draws),
    # the keys computed in place (NumPy's where of the quotient took four times as long)
    seed = random_state.randint(2**32, size=4, dtype=np.uint64)
    keys = np.random.default_rng(seed).random(norms.shape[0])
    np.log(keys, out=keys)
    with np.errstate(divide="ignore", invalid="ignore"):
        keys /= norms
    keys[~(norms > 0)] = -np.inf
    return keys


def draw_sample(node, sizes, random_state):
    """A sample of a leaf's rows (``node.spread`` set): the union of ``sizes[0]`` rows drawn
    proportionally to weight and ``sizes[1]`` proportionally to weight times spread (the
    largest of two columns of Efraimidis-Spirakis keys; all rows when it has no more), whose
    largest a merge keeps (``Node.sample``). A row's spread is the size of its
    log-likelihood's variation across the posterior, of which the remainder of its
    second-order expansion, what the sample estimates (:class:`SampledPosterior`), is the
    next term; the part by weight keeps the design defensive where the spreads, measured at
    the first fit, mislead (a stream whose first call is unlike the rest)."""
    keys = np.column_stack(
        [_keys(node.weights, random_state), spread_keys(node.weights, node.spread, random_state)]
    )
    rows = Node(node.indices, node.weights, node.X, node.y, keys=keys, spread=node.spread)
    sample = rows.subset(rows.top_parts(sizes))
    sample.info = {"sizes": tuple(sizes)}
    return sample


def sample_weights(sample, count):
    """``(positions, weights, variances)``: the rows of ``sample`` (a :func:`draw_sample`
    of all ``count`` rows of the data) that estimate sums over the data, their
    Horvitz-Thompson weights, and each term's variance factor ``w^ (w^ - w)``.

    Every row at its own weight (variance 0) when the sample is all the rows. Otherwise each
    column of keys has a threshold ``-t_j``, the key of its last row kept (that row left
    out): a row of weight ``w`` and spread ``s`` is in with probability ``pi = 1 - exp(-w
    t_0 - w s t_1)`` given them (either part may hold it), and weighs ``w / pi`` (unbiased
    for any sum over the data). A pool of one column of keys (a Hilbert coreset's: by weight
    times spread alone) is the same with ``t_0 = 0``.
    """
    n = len(sample)
    if n >= int(count) or n == 0:
        return np.arange(n), sample.weights.copy(), np.zeros(n)
    keys = sample.keys if sample.keys.ndim == 2 else sample.keys[:, None]
    sizes = sample.info["sizes"] if keys.shape[1] == 2 else (None,)
    norms = np.column_stack([sample.weights, sample.weights * sample.spread])[:, -keys.shape[1] :]
    rate = np.zeros(n)
    left_out = np.zeros(n, dtype=bool)
    for j in range(keys.shape[1]):
        size = min(n, sizes[j] if sizes[j] is not None else n)
        top = np.argsort(-keys[:, j], kind="stable")[:size]
        last = top[-1]
        threshold = -keys[last, j]
        if np.isfinite(threshold):
            left_out[last] = True
            rate += norms[:, j] * threshold
        else:  # fewer rows of positive norm than the part holds: all of them are in
            rate = np.where(norms[:, j] > 0, np.inf, rate)
    positions = np.flatnonzero(~left_out & (rate > 0))
    inclusion = -np.expm1(-rate[positions])
    weights = sample.weights[positions] / inclusion
    return positions, weights, weights * (weights - sample.weights[positions])


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


#: A data fit from sums and a sample is taken when the predicted KL of its error (see
#: :func:`fit_from_sums`) is below this fraction of the coreset quality target: its error
#: then moves a coreset's ``laplace_kl_`` by a twentieth of what the target allows (the
#: target itself a fifth of the default sampler's Monte Carlo error: 1% of it), its mode by
#: about 0.02 posterior sd at 21 parameters.
FIT_ERROR_SHARE = 0.05

#: The most passes over the data that :func:`fit_from_sums` makes to confirm a fit.
MAX_PASSES = 10


def fit_from_sums(expansion, sums, sample, random_state, passes=None):
    """The data's Laplace fit from its second-order sums and a sample of its rows.

    ``sums`` (:func:`data_summary`) are all the data's, taken at ``expansion``'s mean (a
    Laplace fit: the construction's first, a pilot's or a stream's first call's); ``sample``
    a :func:`draw_sample` of the data's rows, at their Horvitz-Thompson weights
    (:func:`sample_weights`). The fit is Newton's on the sample's rows plus the quadratic of
    the rest of the sums (:func:`sampled_fit`): its error is the sample's error in the
    remainder of the second-order expansion, third order in the distance from the expansion
    point, which the sample's own spread predicts: two fits at weights ``w^ +- r sqrt(v)``
    (``v`` each term's variance factor, ``r`` random signs) differ by twice the sample's
    error in law, so a quarter of their symmetrised KL is the KL the fit's error is expected
    to cost.

    When that prediction is above :data:`FIT_ERROR_SHARE` of the quality target and
    ``passes`` is given (``passes(fit)``: the data's sums at ``fit``'s mean, a pass over the
    data), the sums are taken again at the fit's mode, where the remainder is far smaller,
    and the fit repeated (at most :data:`MAX_PASSES` times): a Newton pass whose step the
    sample has corrected to third order. A stream cannot read its rows again (``passes``
    None): its fit stands, with its predicted error in ``info``.

    Returns
    -------
    fit : LaplaceApproximation
        The data's fit.
    expansion : LaplaceApproximation
        The fit at whose mean ``sums`` were last taken.
    sums : ndarray
        The data's sums there.
    info : dict
        ``passes`` (made here) and ``predicted_kl`` (of the error of the fit taken).
    """
    P = expansion.mean.shape[0]
    tolerance = FIT_ERROR_SHARE * quality_target(P)
    n_passes = 0
    while True:
        fit, predicted = _sampled_data_fit(expansion, sums, sample, random_state)
        settled = fit is not None and predicted <= tolerance
        if settled or passes is None or n_passes >= MAX_PASSES:
            break
        at = expansion if fit is None else fit
        sums = passes(at)
        expansion = at
        n_passes += 1
    if fit is None:  # no proper mode from this sample: the expansion point's fit stands
        fit, predicted = expansion, np.inf
    return fit, expansion, sums, {"passes": n_passes, "predicted_kl": float(predicted)}


def _sampled_data_fit(expansion, sums, sample, random_state):
    """``(fit, predicted KL of its error)`` of :func:`fit_from_sums`, ``(None, inf)`` when
    the sampled posterior has no proper mode."""
    P = expansion.mean.shape[0]
    total, count, G, H = split_summary(sums, P)
    if sample is None or len(sample) == 0:
        Xd, y, weights = np.empty((0, 0)), np.empty(0), np.empty(0)
        try:
            return sampled_fit(expansion, Xd, y, weights, G, H), np.inf
        except (ValueError, np.linalg.LinAlgError):
            return None, np.inf
    positions, weights, variances = sample_weights(sample, count)
    rows = Node(sample.indices[positions], weights, sample.X[positions], sample.y[positions])
    Xd = expansion.model.design(rows.X)

    def fit_at(w):
        rows.weights = w
        _, _, G_sample, H_sample = split_summary(taylor_sums(expansion, rows), P)
        return sampled_fit(expansion, Xd, rows.y, w, G - G_sample, H - H_sample)

    try:
        fit = fit_at(weights)
    except (ValueError, np.linalg.LinAlgError):
        return None, np.inf
    if not np.any(variances > 0):
        return fit, 0.0
    signs = np.where(random_state.random_sample(weights.shape[0]) < 0.5, -1.0, 1.0)
    spread = signs * np.sqrt(variances)
    try:
        plus, minus = fit_at(weights + spread), fit_at(weights - spread)
    except (ValueError, np.linalg.LinAlgError):
        return fit, np.inf
    kl = gaussian_kl(plus.mean, plus.cov, minus.mean, minus.cov)
    kl += gaussian_kl(minus.mean, minus.cov, plus.mean, plus.cov)
    return fit, kl / 8.0
