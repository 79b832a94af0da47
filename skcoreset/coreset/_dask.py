"""Construction on dask arrays and DataFrames: per-chunk coresets built where the chunks live.

Each chunk of rows gets its coreset from a task (a merge tree over its blocks, as for data in
memory), and the chunk coresets are merged pairwise in a balanced tree of tasks: only the
final coreset - a few hundred rows - and a few summaries reach the client. Randomness is
keyed by place in the tree, so for a fixed ``random_state`` the result is the same on the
local schedulers and on a ``dask.distributed`` cluster of any size.

dask is imported only when a dask collection is passed (the optional extra ``skcoreset[dask]``).
"""

import numba
import numpy as np

from .._sklearn_compat import _check_sample_weight
from ..models import GLM, model_from_targets
from ._blocks import block_bounds, describe_block, validate_rows
from ._merge_reduce import FINAL, MergeTree, reduce_pairwise, union


def is_dask_collection(data):
    """Whether ``data`` is a dask array, DataFrame or Series (without importing dask)."""
    return hasattr(data, "__dask_graph__") and type(data).__module__.startswith("dask")


def as_dask_array(data, name):
    """A dask array with known chunk sizes (DataFrames and Series are converted)."""
    if hasattr(data, "to_dask_array"):
        data = data.to_dask_array(lengths=True)
    if any(np.isnan(c) for c in data.chunks[0]):
        data = data.compute_chunk_sizes()
    if data.ndim == 2:
        data = data.rechunk({1: -1})  # every chunk holds whole rows
    return data


def aligned(data, chunks, name):
    """``data`` (None, a NumPy array or a dask array) as dask chunks matching ``chunks``."""
    import dask.array as da

    if data is None:
        return None
    if not is_dask_collection(data):
        return da.from_array(np.asarray(data), chunks=(chunks,))
    data = as_dask_array(data, name)
    if data.shape[0] != sum(chunks):
        raise ValueError(
            f"{name} has {data.shape[0]} rows but X has {sum(chunks)}; they must match."
        )
    return data.rechunk((chunks,))


def target_digest(y):
    """What a chunk of targets tells about the model: its first three distinct values (for
    'auto' and the class labels), whether every value is an integer, NaN/inf present."""
    y = np.asarray(y)
    numeric = y.dtype.kind in "biuf"
    finite = bool(np.all(np.isfinite(y))) if y.dtype.kind == "f" else True
    values = np.unique(y[np.isfinite(y)] if y.dtype.kind == "f" else y)
    integer = bool(numeric and np.all(values == np.round(values))) if numeric else False
    return values[:3], len(values), integer, finite


def model_from_digests(digests):
    """What ``model='auto'`` means for targets known by the digests of their chunks.

    Returns ``(name, values)`` with up to three distinct values (two for class labels); the
    rule is :func:`skcoreset.models.model_from_targets`.
    """
    values = np.unique(np.concatenate([d[0] for d in digests]))
    n_distinct = max(len(values), max(d[1] for d in digests))
    if not all(d[3] for d in digests):
        raise ValueError("y contains NaN or infinity.")
    if values.dtype.kind in "biuf" and n_distinct > 2 and not all(d[2] for d in digests):
        return "gaussian", values[:3]
    return model_from_targets(values[:3]), values[:3]


def chunk_coreset(estimator, X, y, s, offset, chunk, stream):
    """The coreset of one chunk: its blocks reduced through a merge tree (a dask task)."""
    previous = numba.get_num_threads()
    numba.set_num_threads(1)  # one core per task: the scheduler runs tasks side by side
    try:
        coded, _ = estimator._encode_targets(y, stream["model"], s, False, stream["labels"])
        tree = MergeTree(estimator._capacity(), chunk=chunk)
        reduce = estimator._reducer(stream)
        nodes = []
        for index, (start, stop) in enumerate(block_bounds(X.shape[0], estimator._block_rows(X))):
            where = f"chunk {chunk}, " + describe_block(index, offset + start, offset + stop)
            node = estimator._leaf(X, coded, s, start, stop, offset, where, stream, index, chunk)
            if node is not None:
                tree.push(node, reduce)
                nodes.append(index)
        return tree.result(reduce) if nodes else None
    finally:
        numba.set_num_threads(previous)


def merge_chunk_coresets(estimator, nodes, key, stream):
    """A coreset of the union of chunk coresets (a dask task)."""
    nodes = [n for n in nodes if n is not None]
    if not nodes:
        return None
    merged = union(nodes)
    capacity = estimator._capacity()
    if capacity is not None and len(merged) <= capacity:
        return merged
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        return estimator._reducer(stream)(merged, key)
    finally:
        numba.set_num_threads(previous)


def build(estimator, X, y, s, stream):
    """The delayed final coreset of dask arrays X, y, s (s may be None: unit weights)."""
    from dask import delayed

    offsets = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]])
    X_blocks = X.to_delayed().ravel()
    y_blocks = y.to_delayed().ravel()
    s_blocks = s.to_delayed().ravel() if s is not None else [None] * len(X_blocks)
    task = delayed(_chunk_task, pure=True)
    nodes = [
        task(estimator, Xc, yc, sc, int(off), c, stream)
        for c, (Xc, yc, sc, off) in enumerate(zip(X_blocks, y_blocks, s_blocks, offsets))
    ]
    merge = delayed(merge_chunk_coresets, pure=True)
    merged = reduce_pairwise(nodes, lambda group, key: merge(estimator, group, key, stream))
    # the key of the final step counts the blocks, as for data in memory (one chunk: same bits)
    block_rows = estimator._block_rows(X)
    n_blocks = sum(len(block_bounds(int(n), block_rows)) for n in X.chunks[0])
    final = delayed(finalize_task, pure=True)(estimator, merged, stream, (FINAL, 0, 1, n_blocks))
    return nodes, final


def finalize_task(estimator, node, stream, key):
    """The coreset of the merged chunk coresets (a dask task)."""
    if node is None:
        return None
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        return estimator._finalize(node, stream["context"], stream["seeds"](key))
    finally:
        numba.set_num_threads(previous)


def compute(nodes, final, progress):
    """The final coreset, with a progress bar of the chunks done when asked."""
    if not progress:
        return final.compute()
    from .._progress import ProgressBar

    with ProgressBar(len(nodes), True, "chunks", "chunk") as bar:
        try:
            from distributed import as_completed, get_client

            client = get_client()
        except (ImportError, ValueError):
            client = None
        if client is not None:
            futures = client.compute(nodes)
            for _ in as_completed(futures):
                bar.update()
            return client.compute(final).result()
        from dask.callbacks import Callback

        keys = {n.key for n in nodes}

        def posttask(key, result, dsk, state, worker_id):
            if key in keys:
                bar.update()

        with Callback(posttask=posttask):
            return final.compute()


def _weights(s, n):
    """A chunk's weights, checked (unit weights when none are given)."""
    if s is None:
        return np.ones(n)
    return _check_sample_weight(
        s,
        np.empty((n, 0)),
        dtype=np.float64,
        ensure_non_negative=True,
        allow_all_zero_weights=True,
    )


def _chunk_task(estimator, X, y, s, offset, chunk, stream):
    X = np.asarray(X)
    s = _weights(s, X.shape[0])
    return chunk_coreset(estimator, X, np.asarray(y), s, offset, chunk, stream)


def _coded_chunk(estimator, X, y, s, stream, label=None):
    """A chunk's validated design rows, coded targets and weights (rows of weight 0 dropped)."""
    from ._blocks import read_block

    X = read_block(np.asarray(X), 0, len(X), label=label, estimator=estimator)
    s = _weights(s, X.shape[0])
    y, _ = estimator._encode_targets(np.asarray(y), stream["model"], s, False, stream["labels"])
    keep = s > 0
    return stream["model"].design(X[keep]), y[keep], s[keep]


def _chunk_moments(estimator, X, y, s, stream, label):
    """The weighted moments of a chunk's rows (a dask task)."""
    from ..models._prior import Moments

    Xd, y, w = _coded_chunk(estimator, X, y, s, stream, label)
    return Moments.of(_features(Xd, stream["model"]), y, w)


def _chunk_loglik(estimator, X, y, s, stream, theta, hessian, label):
    """The log-likelihood parts of a chunk's blocks (its gradients, or Hessians), in order:
    summed like the blocks of an in-memory fit, they give the same bits."""
    model = stream["model"]
    Xd, y, w = _coded_chunk(estimator, X, y, s, stream, label)
    parts = []
    for start, stop in block_bounds(len(w), estimator._block_rows(X)):
        args = theta, Xd[start:stop], y[start:stop], w[start:stop]
        parts.append(
            model.weighted_loglik_hessian(*args) if hessian else model.weighted_loglik(*args)
        )
    return parts


def _chunk_extra_information(estimator, X, y, s, stream, theta, label):
    """A chunk's information on the model's log extra parameter (a dask task)."""
    Xd, y, w = _coded_chunk(estimator, X, y, s, stream, label)
    return stream["model"].log_extra_information(Xd @ theta, y, w)


class _DaskPosterior:
    """The weighted log posterior of all rows, each evaluation a pass of tasks over the
    chunks (the interface of ``models._laplace._Posterior``)."""

    def __init__(self, estimator, data, model):
        self.estimator, self.data, self.model = estimator, data, model
        self.stream = dict(data.stream, model=model)

    def _map(self, theta, hessian):
        import dask
        from dask import delayed

        task = delayed(_chunk_loglik, pure=True)
        d = self.data
        return dask.compute(
            *[
                task(self.estimator, Xc, yc, sc, self.stream, theta, hessian, label)
                for Xc, yc, sc, label in zip(d.X_blocks, d.y_blocks, d.s_blocks, d.labels)
            ]
        )

    # The parts are added in chunk order, as the in-memory posterior adds its blocks: a fit
    # of the same blocks gives the same bits.
    def value_and_grad(self, theta):
        ll, grad = 0.0, 0.0
        for parts in self._map(theta, False):
            for part, g in parts:
                ll, grad = ll + part, grad + g
        return self.model.add_log_prior(theta, ll, grad)

    def neg_hessian(self, theta):
        H = 0.0
        for parts in self._map(theta, True):
            for part in parts:
                H = H + part
        return self.model.add_prior_hessian(H)

    def extra_information(self, theta):
        """The information on the log extra parameter at ``theta``, a pass of tasks."""
        import dask
        from dask import delayed

        task = delayed(_chunk_extra_information, pure=True)
        d = self.data
        parts = dask.compute(
            *[
                task(self.estimator, Xc, yc, sc, self.stream, theta, label)
                for Xc, yc, sc, label in zip(d.X_blocks, d.y_blocks, d.s_blocks, d.labels)
            ]
        )
        return float(sum(parts))


class DaskData:
    """The rows of a dask fit as its preparation sees them (the interface of
    ``_blocks.InMemoryData``): samples and sums are computed by tasks, only small results
    reach the client."""

    def __init__(self, estimator, X, y, s, stream, block_rows):
        self.estimator, self.X, self.y, self.s = estimator, X, y, s
        self.stream = stream
        self.block_rows = block_rows
        self.X_blocks = X.to_delayed().ravel()
        self.y_blocks = y.to_delayed().ravel()
        self.s_blocks = s.to_delayed().ravel() if s is not None else [None] * len(self.X_blocks)
        bounds = np.cumsum([0, *X.chunks[0]])
        self.labels = [
            f"chunk {c} (rows {a} to {b - 1})" for c, (a, b) in enumerate(zip(bounds, bounds[1:]))
        ]
        self._total = None

    @property
    def n_rows(self):
        return int(self.X.shape[0])

    @property
    def total_weight(self):
        if self._total is None:
            self._total = float(self.n_rows if self.s is None else self.s.sum().compute())
        return self._total

    def _rows(self, rows):
        import dask

        X, y = dask.compute(self.X[rows], self.y[rows])
        s = None if self.s is None else self.s[rows].compute()
        X = validate_rows(X, rows, self.estimator)
        Xd, y, w = _coded_chunk(self.estimator, X, y, s, self.stream)
        keep = _weights(s, len(rows)) > 0
        return rows[keep], Xd, y, w

    def moments(self):
        import dask
        from dask import delayed

        task = delayed(_chunk_moments, pure=True)
        parts = dask.compute(
            *[
                task(self.estimator, Xc, yc, sc, self.stream, label)
                for Xc, yc, sc, label in zip(
                    self.X_blocks, self.y_blocks, self.s_blocks, self.labels
                )
            ]
        )
        total = parts[0]
        for part in parts[1:]:  # in chunk order
            total += part
        return total

    def sample(self, size, random_state):
        if size is None or size >= self.n_rows:
            return None
        rows = np.sort(random_state.choice(self.n_rows, size=size, replace=False))
        rows, Xd, y, w = self._rows(rows)
        return rows, _features(Xd, self.stream["model"]), y, w

    def all_rows(self):
        if self.n_rows > self.block_rows:
            return None
        _, Xd, y, w = self._rows(np.arange(self.n_rows))
        return _features(Xd, self.stream["model"]), y, w

    def laplace(self, model, start=None):
        from ..models import with_noise
        from ..models._laplace import fit_posterior, with_extra_information

        # The noise scale from a large uniform sample (fixed seed: not the fit's random
        # stream); the Newton passes then run over every chunk, from the start the in-memory
        # fit uses (zeros, or the constant rate of all the counts).
        estimated = model.has_noise and model.noise_scale is None
        if estimated:
            _, X, y, w = self.sample(min(self.n_rows - 1, 100_000), np.random.RandomState(0))
            model = with_noise(model, model.estimate_noise(model.design(X), y, w))
        theta0 = np.zeros(model.n_params(self.X.shape[1] + model.fit_intercept))
        if start is not None:
            theta0 = start.mean.copy()
        elif type(model).initial_params is not GLM.initial_params:
            # a start of the model's own (least squares, class log-odds): from a sample
            _, X, y, w = self.sample(min(self.n_rows - 1, 100_000), np.random.RandomState(0))
            theta0 = model.initial_params(model.design(X), y, w)
        elif model.starts_from_mean:
            w = self.s if self.s is not None else 1.0
            mean = float((self.y * w).sum().compute()) / self.total_weight
            theta0[-1] = model.initial_intercept(mean)
        posterior = _DaskPosterior(self.estimator, self, model)
        laplace = fit_posterior(model, posterior, theta0)
        if estimated:  # the projections draw the extra parameter too (LaplaceApproximation)
            laplace = with_extra_information(laplace, posterior.extra_information(laplace.mean))
        return laplace


def _features(Xd, model):
    """The features of a design matrix (its intercept column removed)."""
    return Xd[:, :-1] if model.fit_intercept else Xd
