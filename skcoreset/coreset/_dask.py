"""Construction on dask arrays and DataFrames: per-chunk coresets built where the chunks live.

Each chunk of rows gets its coreset from a task (a merge tree over its blocks, as for data in
memory), and the chunk coresets are merged pairwise in a balanced tree of tasks: only the
final coreset - a few hundred rows - and a few summaries reach the client. Randomness is
keyed by place in the tree, so for a fixed ``random_state`` the result is the same on the
local schedulers and on a ``dask.distributed`` cluster of any size.

dask is imported only when a dask collection is passed (the optional extra ``skcoreset[dask]``).
"""

import threading
from dataclasses import dataclass, replace

import numpy as np
from scipy.sparse import issparse
from sklearn.utils.validation import validate_data

from .._progress import ProgressBar
from .._sklearn_compat import _check_sample_weight
from .._stats import rows_read, stage, untracked
from ..models import GLM, model_from_targets, with_extra
from ..models._joint import JointExtra
from ..models._laplace import LAST_STEP, _Posterior, as_joint, fit_posterior
from ..models._prior import Moments
from ._blocks import _FLOATS, block_bounds, read_block, sample_rows, validate_rows
from ._construction import Construction
from ._merge_reduce import FINAL, Node, reduce_pairwise
from ._preparation import (
    check_classes,
    encode_targets,
    model_name,
    pilot_rows,
    resolve_model,
    set_sizes,
    with_prior,
)
from ._taylor import taylor_sums

#: The most distinct target values a chunk reports: all the class labels of any classifier
#: a coreset serves; more values than that are counts or measurements, never classes.
_MAX_VALUES = 1000


def is_dask_collection(data):
    """Whether ``data`` is a dask array, DataFrame or Series (without importing dask)."""
    return hasattr(data, "__dask_graph__") and type(data).__module__.startswith("dask")


def as_dask_array(data, name, lengths=None):
    """A dask array with known chunk sizes (DataFrames and Series are converted: with
    ``lengths``, the rows of their partitions, else computed)."""
    if hasattr(data, "to_dask_array"):
        data = data.to_dask_array(lengths=True if lengths is None else list(lengths))
    if any(np.isnan(c) for c in data.chunks[0]):
        data = data.compute_chunk_sizes()
    if data.ndim == 2:
        data = data.rechunk({1: -1})  # every chunk holds whole rows
    return data


def _refuse_sparse_chunks(X):
    """A clear error for a dask array of sparse chunks (scipy.sparse or pydata sparse), whose
    tasks would fail on ``np.asarray`` of a chunk with scipy's "length is ambiguous"."""
    meta = getattr(X, "_meta", None)
    if meta is not None and (issparse(meta) or hasattr(meta, "todense")):
        raise TypeError(
            f"X is a dask array of sparse chunks ({type(meta).__name__}), which a dask fit "
            "does not read: pass dense chunks (X.map_blocks(lambda b: b.toarray())), or the "
            "scipy.sparse matrix itself, which a fit in memory densifies one block at a time."
        )


def with_lengths(X):
    """``(X, lengths)``: a dask DataFrame optimised, and the rows of each of its partitions
    where its source knows them without reading its rows (a Parquet source's statistics,
    through dask's expressions); None where it does not (the conversion then computes them, a
    pass over X), and for an array (its chunks say)."""
    if not hasattr(X, "to_dask_array") or not hasattr(X, "optimize"):
        return X, None
    try:  # dask's expression of the partitions' lengths, which a source may answer itself
        from dask.dataframe.dask_expr._expr import Lengths, Literal
    except ImportError:  # a dask without expressions
        return X, None
    X = X.optimize()
    lengths = Lengths(X.expr).optimize()
    return X, list(lengths.value) if isinstance(lengths, Literal) else None


def aligned(data, chunks, name):
    """``data`` (None, a NumPy array or a dask array) as dask chunks matching ``chunks``."""
    import dask.array as da

    if data is None:
        return None
    if not is_dask_collection(data):
        return da.from_array(np.asarray(data), chunks=(chunks,))
    # optimised first: the lengths dask computes are those of its optimised partitions (a
    # Parquet column's, fused), which the plain collection's count would not match
    frame, lengths = with_lengths(data)
    data = as_dask_array(frame, name, lengths)
    if data.shape[0] != sum(chunks):
        raise ValueError(
            f"{name} has {data.shape[0]} rows but X has {sum(chunks)}; they must match."
        )
    return data.rechunk((chunks,))


def target_digest(y, w=None):
    """What a chunk of targets tells about the model: its distinct values (up to
    ``_MAX_VALUES``, for 'auto' and the class labels), their number, whether every value is an
    integer, whether all are finite, and the distinct values among rows of positive weight."""
    y = np.asarray(y)
    numeric = y.dtype.kind in "biuf"
    finite = bool(np.all(np.isfinite(y))) if y.dtype.kind == "f" else True
    values = np.unique(y[np.isfinite(y)] if y.dtype.kind == "f" else y)
    integer = bool(numeric and np.all(values == np.round(values))) if numeric else False
    positive = values if w is None else np.unique(y[_weights(w, len(y)) > 0])
    return values[:_MAX_VALUES], len(values), integer, finite, positive[:_MAX_VALUES]


def model_from_digests(digests):
    """What ``model='auto'`` means for targets known by the digests of their chunks: the rule
    of :func:`skcoreset.models.model_from_targets`, with the chunks' integer flags."""
    values = np.unique(np.concatenate([d[0] for d in digests]))
    n_distinct = max(len(values), max(d[1] for d in digests))
    if values.dtype.kind in "biuf" and n_distinct > 2 and not all(d[2] for d in digests):
        return "gaussian"
    return model_from_targets(values[:3])


def chunked_coreset(estimator, X, y, sample_weight, composed=None):
    """``(construction, final node)`` of ``estimator``'s coreset of a dask array or
    DataFrame: per-chunk coresets built by tasks where the chunks live, merged pairwise by
    tasks; only the final coreset reaches the client. ``composed``: the model a composition
    resolved (None: the estimator's own)."""
    try:
        return _chunked_coreset(estimator, X, y, sample_weight, composed)
    finally:
        _DESIGNS.clear()


def _chunked_coreset(estimator, X, y, sample_weight, composed):
    import dask
    from dask import delayed

    if y is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y is None."
        )
    validate_data(estimator, X, reset=True, skip_check_array=True)
    if hasattr(X, "columns") and all(isinstance(c, str) for c in X.columns):
        estimator.feature_names_in_ = np.asarray(X.columns, dtype=object)
    X, lengths = with_lengths(_float_columns(X))
    X = as_dask_array(X, "X", lengths)
    _refuse_sparse_chunks(X)
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D dask array for X, got {X.ndim} dimensions.")
    if X.shape[0] == 0:
        raise ValueError("X has 0 rows; a coreset needs at least one row.")
    y = aligned(y, X.chunks[0], "y")
    w = aligned(sample_weight, X.chunks[0], "sample_weight")
    w_parts = w.to_delayed().ravel() if w is not None else [None] * len(X.chunks[0])
    digests = dask.compute(
        *[delayed(target_digest)(yc, wc) for yc, wc in zip(y.to_delayed().ravel(), w_parts)]
    )
    if not all(d[3] for d in digests):
        raise ValueError("y contains NaN or infinity.")
    values = np.unique(np.concatenate([d[0] for d in digests]))
    inferred = model_from_digests(digests) if model_name(estimator, composed) is None else None
    model, labels, inferred = resolve_model(estimator, values, composed, inferred_name=inferred)
    if labels is not None:  # the whole data's rule, on the chunks' positive-weight labels
        positive = np.unique(np.concatenate([d[4] for d in digests]))
        check_classes(labels, labels.encode(positive) if positive.size else [])
    estimator._single_block = False
    _, block_rows = set_sizes(estimator, model, X.shape[1])
    pilot = pilot_rows(estimator, int(X.shape[0]), block_rows)
    data = DaskData(estimator, X, y, w, model, labels, block_rows, pilot)
    with stage("validation and moments"):
        prior = with_prior(estimator, model, data)
    construction = Construction.start(estimator, prior, labels, data)
    construction.n_seen, construction.calls = int(X.shape[0]), 1
    nodes, merged, final_key = build(construction, X, y, w, data.validated)
    with stage("pass over the data"):
        merged_node = compute(nodes, merged, estimator.progress)
        rows_read(int(X.shape[0]))
    if merged_node is None:
        raise ValueError("No row of X has a positive sample_weight.")
    # the final step here, on the client's threads: as a task it ran on one worker thread
    # while the cluster stood idle; here the client's memory peaks higher (measured:
    # benchmarks/README.md, Thresholds)
    node = construction.finalize(merged_node, final_key, passes=data.taylor_pass)
    # a later partial_fit continues from the merged chunk coresets, as from a fit's tree
    construction.tree.push(merged_node, construction.reduce)
    return construction, node


def build(construction, X, y, w, checked=False):
    """The delayed chunk coresets, their merged coreset, and the key of the final step, of
    dask arrays X, y, w (w may be None: unit weights; ``checked``: a pass of tasks validated
    the chunks)."""
    from dask import delayed

    offsets = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]])
    X_blocks = X.to_delayed().ravel()
    y_blocks = y.to_delayed().ravel()
    w_blocks = w.to_delayed().ravel() if w is not None else [None] * len(X_blocks)
    task = delayed(_chunk_task, pure=True)
    nodes = [
        task(construction, Xc, yc, wc, int(off), c, checked)
        for c, (Xc, yc, wc, off) in enumerate(zip(X_blocks, y_blocks, w_blocks, offsets))
    ]
    merge = delayed(construction.merge, pure=True)
    merged = reduce_pairwise(nodes, merge)
    # the key of the final step counts the blocks, as for data in memory (one chunk: same bits)
    n_blocks = sum(len(block_bounds(int(n), construction.block_rows)) for n in X.chunks[0])
    return nodes, merged, (FINAL, 0, 1, n_blocks)


def compute(nodes, merged, progress):
    """The merged coreset, with a progress bar of the chunks done when asked."""
    import dask

    if not progress:
        return dask.compute(merged)[0]
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
            return client.compute(merged, sync=True)
        from dask.callbacks import Callback

        keys = {n.key for n in nodes}

        def posttask(key, result, dsk, state, worker_id):
            if key in keys:
                bar.update()

        with Callback(posttask=posttask):
            return dask.compute(merged)[0]


def _weights(w, n):
    """A chunk's weights, checked (unit weights when none are given)."""
    if w is None:
        return np.ones(n)
    return _check_sample_weight(
        w,
        np.empty((n, 0)),
        dtype=np.float64,
        ensure_non_negative=True,
        allow_all_zero_weights=True,
    )


@untracked
def _chunk_task(construction, X, y, w, offset, chunk, checked=False):
    """The coreset of one chunk (a task): its targets coded, its blocks reduced."""
    X = np.asarray(X)
    w = _weights(w, X.shape[0])
    y = encode_targets(np.asarray(y), construction.model, construction.labels)
    return construction.chunk(X, y, w, offset, chunk, checked)


@dataclass
class _Coding:
    """What a task needs to read a chunk as the fit does (small: it is sent with each task)."""

    estimator: object
    model: object
    labels: object
    block_rows: int
    #: Whether a pass has validated every chunk (later passes read the rows as they are, as
    #: an in-memory fit's later passes do).
    validated: bool = False


def _coded_chunk(coding, X, y, w, label=None, dtype=np.float64):
    """A chunk's rows, coded targets and weights, rows of weight 0 dropped (copied only
    then). The rows are validated until a pass has checked every chunk, then read as they
    are (for a pass that builds its float64 design from them). ``dtype`` as for
    :func:`read_block`: ``_FLOATS`` keeps float32 rows."""
    if coding.validated:
        X = np.asarray(X)
    else:
        X = read_block(
            np.asarray(X), 0, len(X), label=label, estimator=coding.estimator, dtype=dtype
        )
    w = _weights(w, X.shape[0])
    y = encode_targets(np.asarray(y), coding.model, coding.labels)
    keep = w > 0
    if not keep.all():
        X, y, w = X[keep], y[keep], w[keep]
    return X, y, w


@untracked
def _chunk_moments(coding, X, y, w, rows, label):
    """``(moments, pilot)``: the weighted moments of a chunk's rows (float32 rows as stored),
    and its rows ``rows`` (positions in the chunk) of the pilot's sample, ``(X, y, w)`` (a
    dask task; None without rows)."""
    X = read_block(np.asarray(X), 0, len(X), label=label, estimator=coding.estimator, dtype=_FLOATS)
    w = _weights(w, X.shape[0])
    y = encode_targets(np.asarray(y), coding.model, coding.labels)
    pilot = None
    if rows is not None and rows.shape[0]:
        pilot = (X[rows], y[rows], w[rows])  # as stored: float32 rows travel at half size
    keep = w > 0
    if not keep.all():
        X, y, w = X[keep], y[keep], w[keep]
    return Moments(X.shape[1]).add(X, y, w), pilot


@untracked
def _chunk_pilot(coding, X, y, w, rows, label):
    """A chunk's rows of the pilot's sample (a dask task): ``_chunk_moments``'s ``pilot``."""
    if rows is None or rows.shape[0] == 0:
        return None
    X = read_block(np.asarray(X)[rows], 0, len(rows), label=label, estimator=coding.estimator)
    y = np.asarray(y)
    w = _weights(w, y.shape[0])[rows]
    return X, encode_targets(y[rows], coding.model, coding.labels), w


#: Where each thread running the tasks builds its blocks' designs (by thread id): one array
#: reused from task to task, as an in-memory fit reuses one for all its passes (a fresh one
#: per task, 44 MB at 262 144 rows of 21 columns, comes from the system page by page).
#: Emptied when a fit ends, for the local schedulers, whose threads are the client's; a
#: distributed worker keeps one block's design a thread, within the fit's block size.
_DESIGNS = {}


def _chunk_designs(coding, X, y, w, label):
    """``(Xd, y, w)`` of each of a chunk's blocks in order, its float64 design built in the
    thread's array (each block is used before the next is built)."""
    X, y, w = _coded_chunk(coding, X, y, w, label, dtype=_FLOATS)
    for start, stop in block_bounds(len(w), coding.block_rows):
        rows = X[start:stop]
        design = coding.model.design(rows, out=_DESIGNS.get(threading.get_ident()))
        if design is not rows and design.base is None:  # a new array: ours from now on
            _DESIGNS[threading.get_ident()] = design
        yield design, y[start:stop], w[start:stop]


@untracked
def _chunk_loglik(coding, X, y, w, theta, value, label):
    """The log-likelihood parts of a chunk's blocks, in order: ``(ll, gradient, Hessian)``
    of each (``value``), or its Hessian alone. Summed like the blocks of an in-memory fit,
    they give the same bits."""
    model = coding.model
    part = model.weighted_loglik_grad_hessian if value else model.weighted_loglik_hessian
    return [part(theta, *block) for block in _chunk_designs(coding, X, y, w, label)]


@untracked
def _chunk_taylor(coding, X, y, w, point, label):
    """The second-order sums of a chunk's rows at ``point``'s mean (a dask task; None for a
    chunk without a row of positive weight)."""
    X, y, w = _coded_chunk(coding, X, y, w, label, dtype=_FLOATS)
    if w.shape[0] == 0:
        return None
    return taylor_sums(point, Node(np.arange(w.shape[0]), w, X, y))


class _DaskPosterior(_Posterior):
    """The weighted log posterior of all rows, each evaluation a pass of tasks over the
    chunks: ``models._laplace._Posterior`` (fused) with the chunks' parts from the workers.

    The parts are added in chunk order, as the in-memory posterior adds its blocks: a fit of
    the same blocks gives the same bits.
    """

    def __init__(self, data, model):
        super().__init__(model, blocks=None, fused=True)
        self.data = data

    def _parts(self, theta, value):
        for parts in self.data.map_chunks(_chunk_loglik, theta, value, model=self.model):
            yield from parts


class DaskData:
    """The rows of a dask fit as its preparation sees them (the interface of
    ``_blocks.InMemoryData``): samples and sums are computed by tasks, only small results
    reach the client. ``model`` is the model the rows are coded for (its prior set later)."""

    def __init__(self, estimator, X, y, w, model, labels, block_rows, pilot=None):
        self.estimator, self.X, self.y, self.w = estimator, X, y, w
        self.model, self.labels = model, labels
        self.block_rows = block_rows
        #: The sorted rows of the pilot's sample (``_preparation.pilot_rows``), gathered by
        #: the first pass of tasks (the moments'), or None.
        self.pilot = pilot
        self._pilot_rows = None
        self.X_blocks = X.to_delayed().ravel()
        self.y_blocks = y.to_delayed().ravel()
        self.w_blocks = w.to_delayed().ravel() if w is not None else [None] * len(self.X_blocks)
        bounds = np.cumsum([0, *X.chunks[0]])
        self.where = [
            f"chunk {c} (rows {a} to {b - 1})" for c, (a, b) in enumerate(zip(bounds, bounds[1:]))
        ]
        self._total = None
        self.validated = False  # set by the first pass of tasks over every chunk

    def coding(self):
        return _Coding(self.estimator, self.model, self.labels, self.block_rows, self.validated)

    def map_chunks(self, task, *args, model=None, per_chunk=None):
        """``task(coding, X, y, w, *args, where)`` of every chunk, a pass of tasks: their
        results in chunk order (the coding's model ``model`` when given; ``per_chunk``: one
        more argument of each chunk's, before ``where``). The first pass validates the rows;
        it marks them so for the later ones."""
        import dask
        from dask import delayed

        coding = self.coding() if model is None else replace(self.coding(), model=model)
        task = delayed(task, pure=True)
        own = [()] * len(self.X_blocks) if per_chunk is None else [(a,) for a in per_chunk]
        results = dask.compute(
            *[
                task(coding, Xc, yc, wc, *args, *extra, where)
                for Xc, yc, wc, extra, where in zip(
                    self.X_blocks, self.y_blocks, self.w_blocks, own, self.where
                )
            ]
        )
        rows_read(self.n_rows)
        self.validated = True
        return results

    def _pilot_by_chunk(self):
        """The pilot's rows as positions in each chunk (None for a chunk without any)."""
        if self.pilot is None:
            return [None] * len(self.X_blocks)
        bounds = np.cumsum([0, *self.X.chunks[0]])
        parts = []
        for a, b in zip(bounds, bounds[1:]):
            lo, hi = np.searchsorted(self.pilot, [a, b])
            parts.append(self.pilot[lo:hi] - a if hi > lo else None)
        return parts

    def _keep_pilot(self, parts):
        """The pilot's rows of positive weight, from the chunks' parts, in row order."""
        bounds = np.cumsum([0, *self.X.chunks[0]])
        found = [
            (rows + bounds[c], part)
            for c, (rows, part) in enumerate(zip(self._pilot_by_chunk(), parts))
            if part is not None
        ]
        if not found:
            self._pilot_rows = (np.empty(0, dtype=np.int64), None, None, None)
            return
        rows = np.concatenate([r for r, _ in found])
        X, y, w = (np.concatenate([p[k] for _, p in found]) for k in range(3))
        keep = w > 0
        rows_read(rows.shape[0], at_random=True)
        self._pilot_rows = (rows[keep], X[keep], y[keep], w[keep])

    def pilot_sample(self):
        """``(indices, X, y, w)`` of the pilot's rows of positive weight (gathered by the
        moments' pass, or by a pass of their own), or None when there is no pilot. Given
        once: the client does not hold them past the pilot's fit."""
        if self.pilot is None:
            return None
        if self._pilot_rows is None:
            self._keep_pilot(self.map_chunks(_chunk_pilot, per_chunk=self._pilot_by_chunk()))
        rows, self._pilot_rows = self._pilot_rows, None
        return rows

    @property
    def n_rows(self):
        return int(self.X.shape[0])

    @property
    def total_weight(self):
        if self._total is None:
            self._total = float(self.n_rows if self.w is None else self.w.sum().compute())
        return self._total

    def _rows(self, rows):
        import dask

        X, y = dask.compute(self.X[rows], self.y[rows])
        w = None if self.w is None else self.w[rows].compute()
        X = validate_rows(X, rows, self.estimator)
        keep = _weights(w, len(rows)) > 0
        return (rows[keep], *_coded_chunk(self.coding(), X, y, w))

    def taylor_pass(self, point):
        """The data's second-order sums at ``point``'s mean: a pass of tasks over the chunks,
        added in chunk order (:func:`~._taylor.fit_from_sums`'s ``passes``)."""
        total = None
        for part in self.map_chunks(_chunk_taylor, point):
            if part is not None:
                total = part if total is None else total + part
        return total

    def moments(self):
        """The weighted moments of the rows: a pass of tasks over the chunks, which validates
        them and gathers the pilot's rows too."""
        parts = self.map_chunks(_chunk_moments, per_chunk=self._pilot_by_chunk())
        if self.pilot is not None:
            self._keep_pilot([p[1] for p in parts])
        total = parts[0][0]
        for part, _ in parts[1:]:  # in chunk order
            total += part
        self._total = float(total.w)
        return total

    def sample(self, size, random_state):
        if size is None or size >= self.n_rows:
            return None
        return self._rows(sample_rows(self.n_rows, size, random_state))

    def all_rows(self):
        if self.n_rows > self.block_rows:
            return None
        return self._rows(np.arange(self.n_rows))[1:]

    def laplace(self, model, start=None):
        # A free extra parameter starts at its estimate on a large uniform sample (fixed
        # seed: not the fit's random stream); the Newton passes then run over every chunk,
        # from the start the in-memory fit uses (zeros, or the constant rate of all the
        # counts), of the coefficients and the log extra parameter together.
        joint = model.n_extra > 0
        fixed = model
        if joint and start is None:
            _, X, y, w = self.sample(min(self.n_rows - 1, 100_000), np.random.RandomState(0))
            fixed = with_extra(model, model.estimate_extra(model.design(X), y, w))
        if start is not None:
            theta0 = start.mean.copy()
        elif type(model).initial_params is not GLM.initial_params:
            # a start of the model's own (least squares, class log-odds): from a sample
            _, X, y, w = self.sample(min(self.n_rows - 1, 100_000), np.random.RandomState(0))
            theta0 = fixed.initial_params(fixed.design(X), y, w)
        else:
            mean = None
            if model.starts_from_mean:
                w = self.w if self.w is not None else 1.0
                mean = float((self.y * w).sum().compute()) / self.total_weight
            n_params = model.n_params(self.X.shape[1] + model.fit_intercept)
            theta0 = model.mean_start(np.zeros(n_params), mean)
        if joint and start is None:
            theta0 = np.append(theta0, np.log(fixed.extra_value))
        fitted = JointExtra(model) if joint else model
        posterior = _DaskPosterior(self, fitted)
        laplace = fit_posterior(fitted, posterior, theta0, last_step=LAST_STEP)
        return as_joint(laplace, model) if joint else laplace


def _float_columns(X):
    """A dask DataFrame's nullable columns (``Int64``, ``boolean``, ``Float64``) as float64,
    missing values NaN: each chunk's check then reports them as missing values, where the
    conversion of ``pd.NA`` would fail with a bare TypeError."""
    if not hasattr(X, "dtypes") or not hasattr(X.dtypes, "items"):
        return X
    from pandas.api import types

    nullable = [
        c
        for c, t in X.dtypes.items()
        if types.is_extension_array_dtype(t)
        and (types.is_numeric_dtype(t) or types.is_bool_dtype(t))
    ]
    return X.astype({c: "float64" for c in nullable}) if nullable else X
