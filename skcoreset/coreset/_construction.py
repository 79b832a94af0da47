"""One fit's state, and the straight path of its blocks: leaf -> merge tree -> final coreset.

:func:`construct` is a fit of data in memory, from what :func:`._preparation.prepare` gives to
the final coreset. A :class:`Construction` is made once per fit - by ``fit``, by the first
``partial_fit``, or by a dask fit - and holds everything the blocks of that fit share: the
model with its prior,
the class labels, the :class:`Context` the estimator prepared (its ``_begin`` hook), the
keyed random generators and the merge tree. ``fit`` and ``partial_fit`` push blocks through it,
the dask tasks (:mod:`._dask`) run its :meth:`~Construction.chunk` and
:meth:`~Construction.merge` where the chunks live; the estimator only contributes its hooks
(``_summarize``, ``_reduce``, ``_finalize``, ``_finish``), which read the context and return
nodes: what a hook measures travels in ``Node.info``, never in attributes of the estimator
(a dask task's estimator is a copy).

A call of ``partial_fit`` is applied atomically (:meth:`Construction.add`): its blocks are read,
validated and reduced, pushed onto a *copy* of the tree, and the copy's final coreset computed;
only then are the tree and the counters replaced, so an error leaves the construction exactly
as it was.
"""

import copy
import logging
from dataclasses import dataclass, field, replace

import numpy as np
from sklearn.utils import check_random_state

from .._logging import phase, report
from .._progress import ProgressBar
from .._stats import stage
from .._threads import one_numba_thread
from .._warnings import warn
from ..models._laplace import laplace_of_all_rows
from ._blocks import InMemoryData, as_source, block_bounds, describe_block, read_block
from ._merge_reduce import FINAL, LEAF, SAMPLE, MergeTree, Node, NodeSeeds, union
from ._taylor import data_summary, draw_sample, fit_from_sums, sample_size


def construct(estimator, prepared):
    """``(construction, final node)`` of a fit of data in memory (:class:`~._preparation.
    Prepared`): every row with positive weight, with its own weight, when the fit keeps
    them all; else the blocks of ``block_rows`` rows, each reduced and pushed onto the
    merge tree, then the final coreset of all of them."""
    X, coded, w, bounds = prepared.X, prepared.coded, prepared.w, prepared.bounds
    estimator._single_block = len(bounds) == 1
    if not prepared.exact:
        report(
            estimator,
            "%s of %d rows (%d with positive weight) in %d block(s), %s model",
            type(estimator).__name__,
            w.shape[0],
            np.count_nonzero(w),
            len(bounds),
            prepared.prior.model.name,
        )
    construction = Construction.start(
        estimator, prepared.prior, prepared.labels, prepared.data, exact=prepared.exact
    )
    construction.n_seen, construction.calls = w.shape[0], 1
    construction.classes_seen = prepared.classes_seen
    if prepared.exact:
        positive = np.flatnonzero(w)
        info = {"stop_reason": "all_rows"}
        node = Node(positive, w[positive], X[positive], coded[positive], info=info)
        construction.final_context = construction.fitted_context(node)
        return construction, node
    show = estimator.progress and len(bounds) > 1
    with stage("pass over the data"), ProgressBar(len(bounds), show, "blocks", "block") as bar:
        for index, (start, stop) in enumerate(bounds):
            where = describe_block(index, start, stop) if len(bounds) > 1 else None
            node = construction.leaf(
                X, coded, w, start, stop, index=index, where=where, checked=prepared.data.validated
            )
            if node is not None:
                construction.tree.push(node, construction.reduce)
            bar.update()
    return construction, construction.final(passes=prepared.data.taylor_pass)


def stream_params(estimator):
    """The parameters a stream keeps from its start (all but the display's)."""
    return {
        k: v
        for k, v in estimator.get_params(deep=False).items()
        if k not in ("progress", "verbose")
    }


@dataclass
class Context:
    """What every block of a fit shares: the estimator's ``_begin`` prepares it once.

    Attributes
    ----------
    model : GLM
        The model with its prior.
    laplace : LaplaceApproximation or None
        The Laplace fit of the data (the Hilbert and KL coresets).
    projection : Projection or None
        The random projection every block is projected with (the Hilbert coresets).
    laplace_indices : ndarray of int or None
        The rows of the fit that started the Laplace fit (reported as ``laplace_indices_``).
    random_state : RandomState or None
        The generator of a fit that kept every row (the chains of :class:`CoresetMCMC`).
    laplace_weight : float or None
        The total weight of the rows the Laplace fit saw (a stream's first chunk's).
    summarised : bool
        Every block is summarised at ``laplace``'s mean (``Node.taylor``, ``Node.spread``):
        the estimator reads the data's second-order sums (a pool's control variate).
    pilot : bool
        ``laplace`` is the fit of a sample of the rows (a pilot), not of all of them: every
        block is summarised at its mean with a sample of its rows (``Node.sample``), and the
        data's fit made from those sums when the final coreset is
        (:func:`~._taylor.fit_from_sums`), as a stream's is.
    data_fit : LaplaceApproximation or None
        The Laplace fit of all the data, when the final coreset is made
        (:meth:`Construction.data_fit`): ``laplace`` itself, but for a pilot's or a stream's,
        whose ``laplace`` saw a sample or the first call only.
    expansion : LaplaceApproximation or None
        With ``data_fit``: the fit at whose mean ``sums`` were taken (``laplace``, or the
        point of the last pass that confirmed the data's fit).
    sums : ndarray or None
        With ``data_fit``: the data's second-order sums at ``expansion``'s mean
        (:func:`~._taylor.data_summary`), when the blocks were summarised.
    fit_info : dict or None
        With ``data_fit``: how it was made (:func:`~._taylor.fit_from_sums`'s ``info``).
    """

    model: object
    laplace: object = None
    projection: object = None
    laplace_indices: np.ndarray | None = None
    random_state: object = None
    laplace_weight: float | None = None
    summarised: bool = False
    pilot: bool = False
    data_fit: object = None
    expansion: object = None
    sums: np.ndarray | None = None
    fit_info: dict | None = None


@dataclass
class Construction:
    """The state of one fit and the path of its blocks (see the module's docstring).

    Attributes
    ----------
    estimator : BaseCoreset
        Whose hooks reduce the nodes.
    labels : ClassLabels or None
        The coding of class labels (None for numeric targets).
    context : Context
        What the blocks share.
    seeds : NodeSeeds
        Generators keyed by place in the tree.
    capacity : int or None
        The most rows a node of the tree holds (None: every union is reduced).
    block_rows : int
        Rows per block.
    tree : MergeTree
        The coresets of the blocks pushed so far.
    n_seen : int
        Rows seen (including rows of zero weight).
    calls : int
        Calls of ``partial_fit`` applied (1 after ``fit``).
    classes_seen : set
        Coded classes seen among rows of positive weight (class labels only): whether the
        data so far hold the classes the model needs is a rule of all the data, checked on
        this set, not block by block.
    prior_scale : ndarray
        The prior's standard deviations (reported as ``prior_scale_``).
    moments : Moments or None
        The data's moments, when the prior followed them (for the coverage check).
    data_prior : DataPrior
        The full data's prior, with the data scale behind the extra parameters' priors.
    params : dict
        The estimator's parameters when the construction began (a stream keeps them).
    exact : bool
        The fit kept every row: there is no tree to continue.
    stream : bool
        Made by ``partial_fit``: every block's second-order sums and a sample of its rows are
        kept (``Node.taylor``, ``Node.sample``), from which the data's Laplace fit of
        everything seen is made (:meth:`data_fit`), as for a pilot's construction.
    final_context : Context or None
        The context of the last final coreset, with the Laplace fit of all the data under it
        (``data_fit``): what the estimator's ``_finish`` and ``laplace_kl_`` read.
    stats : FitStats or None
        What a stream's calls have cost so far (``fit_stats_``).
    """

    estimator: object
    labels: object
    context: Context
    seeds: NodeSeeds
    capacity: int | None
    block_rows: int
    tree: MergeTree = None
    n_seen: int = 0
    calls: int = 0
    classes_seen: set = field(default_factory=set)
    prior_scale: np.ndarray | None = None
    moments: object = None
    data_prior: object = None
    params: dict = field(default_factory=dict)
    exact: bool = False
    stream: bool = False
    final_context: Context = None
    stats: object = None

    def __post_init__(self):
        if self.tree is None:
            self.tree = MergeTree(self.capacity)

    @classmethod
    def start(cls, estimator, prior, labels, data, exact=False, stream=False):
        """The construction of a fit (its coreset size and ``prior``, a
        :class:`~._preparation.Prior`, already set): the context every block shares (the
        estimator's ``_begin``, or ``_begin_exact`` for a fit that keeps every row) with the
        data's Laplace fit, which every coreset is measured against (``laplace_kl_``), and
        the keyed generators. ``data`` gives samples, moments or blocks of the rows
        (``_blocks.InMemoryData`` or ``_dask.DaskData``); ``stream``: made by
        ``partial_fit``."""
        rng = check_random_state(estimator.random_state)
        model = prior.model
        with stage("first Laplace fit"):
            if exact:
                context = estimator._begin_exact(data, model, rng)
            else:
                # a stream's blocks are summarised at its first call's fit, a fit's of many
                # blocks may be (Context.pilot)
                summarised = stream or data.n_rows > data.block_rows
                context = estimator._begin(data, model, rng, summarised)
        if context.laplace is None and not exact:
            # an estimator that needs no Laplace fit itself: one for its quality figure, on a
            # generator of its own (the estimator's stream, and its coreset, stay as they were)
            own = np.random.RandomState(copy.deepcopy(rng).randint(np.iinfo(np.int32).max))
            with phase(estimator, f"Laplace fit ({model.name} model)"):
                laplace, indices = laplace_of_all_rows(data, model, own)
            context = replace(context, laplace=laplace, laplace_indices=indices)
        if context.laplace is not None and context.laplace_weight is None:
            context = replace(context, laplace_weight=data.total_weight)
        return cls(
            estimator=estimator,
            labels=labels,
            context=context,
            seeds=NodeSeeds(rng),
            capacity=estimator._capacity(),
            block_rows=data.block_rows,
            prior_scale=prior.scale,
            moments=prior.moments,
            data_prior=prior.data_prior,
            params=stream_params(estimator),
            exact=exact,
            stream=stream,
        )

    @property
    def model(self):
        return self.context.model

    @property
    def summarises(self):
        """Whether every block is summarised at the first fit's mean (its second-order sums,
        spreads and a sample of its rows), from which the data's fit is made at the end when
        the first fit saw part of the data only: a stream's, a pilot's, an estimator's that
        reads the sums (``Context.summarised``), which a ``partial_fit`` may continue."""
        context = self.context
        return context.laplace is not None and (self.stream or context.pilot or context.summarised)

    def warn_changed_params(self, estimator):
        """A warning when parameters changed (``set_params``) since the stream began."""
        changed = [
            k
            for k, v in stream_params(estimator).items()
            if k in self.params and not _same(v, self.params[k])
        ]
        if changed:
            warn(
                f"{', '.join(changed)} changed since the stream began: the coreset keeps the "
                "settings of its first call of partial_fit (or of fit). Refit, or start a new "
                "stream on a clone, to apply them.",
                UserWarning,
            )

    # -- one block ------------------------------------------------------------------------
    def leaf(self, X, y, w, start, stop, *, index, offset=0, where=None, chunk=0, checked=False):
        """The coreset of rows ``start:stop`` of ``X`` (None when none has positive weight):
        the rows kept whole with their summary when they fit in a node, else reduced
        (``checked``: a pass before validated the rows)."""
        est = self.estimator
        rows = read_block(
            X, start, stop, label=where, estimator=est, dtype=est._leaf_dtype, checked=checked
        )
        weights = w[start:stop]
        positive = np.flatnonzero(weights > 0)
        if positive.shape[0] == 0:
            return None
        if positive.shape[0] < rows.shape[0]:
            rows = rows[positive]
        node = Node(
            indices=(offset + start + positive).astype(np.int64),
            weights=weights[positive],
            X=rows,
            y=y[start:stop][positive],
        )
        rng = self.seeds((LEAF, chunk, 0, index))
        try:
            laplace = self.context.laplace
            if self.summarises:  # what the data fit reads (Context.pilot)
                level = est._block_level()
                with phase(est, f"second-order sums of {len(node)} rows", level):
                    node.taylor, node.spread = data_summary(laplace, node)
                check_overflow(node.spread)
                size = sample_size(laplace.mean.shape[0])
                node.sample = draw_sample(node, size, self.seeds((SAMPLE, chunk, 0, index)))
            taylor, sample = node.taylor, node.sample
            if self.capacity is not None and len(node) <= self.capacity:
                node = est._summarize(node, self.context, rng)
            else:
                node = est._reduce(node, self.context, rng)
            node = _with_sums(node, taylor, sample)  # kept, whatever the hook returns
            for sums in (node.summary, node.taylor):
                if sums is not None:
                    check_overflow(sums)
        except ValueError as exc:
            raise ValueError(f"In {where}: {exc}" if where else str(exc)) from None
        if node.X.dtype != np.float64:  # the rows kept, as every node holds them
            node.X = np.ascontiguousarray(node.X, dtype=np.float64)
        return node

    def leaves(self, X, y, w, *, offset=0, label=None, chunk=0, first_index=0, checked=False):
        """The coresets of the blocks of ``X`` (None for blocks without positive weight;
        ``checked``: a pass before validated the rows)."""
        bounds = block_bounds(X.shape[0], self.block_rows)
        nodes = []
        for k, (start, stop) in enumerate(bounds):
            where = describe_block(first_index + k, offset + start, offset + stop)
            if label is not None:
                where = f"{label}, {where}"
            elif len(bounds) == 1 and offset == 0 and chunk == 0:
                where = None  # the whole data: no block to name
            nodes.append(
                self.leaf(
                    X,
                    y,
                    w,
                    start,
                    stop,
                    index=first_index + k,
                    offset=offset,
                    where=where,
                    chunk=chunk,
                    checked=checked,
                )
            )
        return nodes

    def reduce(self, node, key):
        """A coreset of the union ``node`` (a merge of the tree), with the generator of
        ``key``."""
        est = self.estimator
        # one per merge of two coresets of the tree: DEBUG, as there are many
        with phase(est, f"merge: reduction of {len(node)} rows", logging.DEBUG):
            reduced = est._reduce(node, self.context, self.seeds(key))
        return _with_sums(reduced, node.taylor, node.sample)

    def final(self, tree=None, passes=None):
        """The coreset of everything in ``tree`` (default: this construction's): its held
        nodes merged, then finalized, the data's Laplace fit in the context (``passes``: a
        pass over all the data, as :meth:`final_context` takes it)."""
        tree = self.tree if tree is None else tree
        node = tree.result(self.reduce)
        key = (FINAL, tree.chunk, 1, tree.n_blocks)
        context = self.fitted_context(node, passes, tree.n_blocks)
        with stage("selection"):
            final = self.estimator._finalize(node, context, self.seeds(key))
        self.final_context = context
        return _with_sums(final, node.taylor, node.sample)

    def fitted_context(self, node, passes=None, n_blocks=0):
        """The context with the Laplace fit of all the data under ``node`` (the final one):
        the context's own fit, unless the blocks were summarised at a first fit (a pilot's,
        a stream's of more than its first call); then the fit from the data's second-order
        sums and sample (:func:`~._taylor.fit_from_sums`), confirmed by ``passes`` over the
        data when given (``passes(fit)``: the data's sums at ``fit``'s mean; ``n_blocks``
        keys its generator). A construction without a Laplace fit (one that kept every row)
        has none."""
        context, laplace = self.context, self.context.laplace
        if laplace is None:
            return context
        exact = not context.pilot and (
            node.taylor is None or node.taylor[0] <= context.laplace_weight * (1 + 1e-9)
        )
        if exact or not self.summarises:  # the first fit saw every row there is
            return replace(context, data_fit=laplace, expansion=laplace, sums=node.taylor)
        key = (FINAL, 0, 2, n_blocks)
        with stage("data fit"), phase(self.estimator, "data fit: from the sums of the pass"):
            fit, expansion, sums, info = fit_from_sums(
                laplace, node.taylor, node.sample, self.seeds(key), passes
            )
        if info["passes"]:
            report(self.estimator, "data fit confirmed by %d more pass(es)", info["passes"])
        return replace(context, data_fit=fit, expansion=expansion, sums=sums, fit_info=info)

    # -- a call of partial_fit ------------------------------------------------------------
    def add(self, X, y, w, n_rows, label, finalize=True):
        """The final coreset with the blocks of one call added, applied atomically.

        The blocks are reduced and pushed onto a copy of the tree and the copy's final
        coreset computed (not with ``finalize=False``: None is returned); only when all of
        that succeeds do the tree and the counters change.
        """
        with stage("pass over the data"):
            nodes = [
                n
                for n in self.leaves(
                    X, y, w, offset=self.n_seen, label=label, first_index=self.tree.n_blocks
                )
                if n is not None
            ]
        tree = copy.copy(self.tree)
        tree.levels = list(self.tree.levels)
        for node in nodes:
            tree.push(node, self.reduce)
        # the first call holds a row of positive weight
        final = self.final(tree) if finalize else None
        self.tree = tree
        self.n_seen += n_rows
        self.calls += 1
        return final

    def stream_passes(self, chunks):
        """``passes(point)`` of :func:`~._taylor.fit_from_sums` for a stream whose rows can
        be read again (``chunks()`` yields its ``(X, y)`` in order, unit weights): the data's
        second-order sums at ``point``'s mean, a pass over the chunks, each coded as the
        stream's were."""
        model, labels = self.model, self.labels

        def passes(point):
            total = None
            for X, y in chunks():
                X = as_source(X)
                coded = (
                    labels.encode(np.asarray(y))
                    if labels is not None
                    else (model.encode_targets(np.asarray(y)))
                )
                w = np.ones(coded.shape[0])
                data = InMemoryData(X, coded, w, self.block_rows)
                data.validated = True  # the stream's first pass validated the rows
                sums = data.taylor_pass(point)
                if sums is not None:
                    total = sums if total is None else total + sums
            return total

        return passes

    # -- dask tasks -----------------------------------------------------------------------
    def chunk(self, X, y, w, offset, chunk, checked=False):
        """The coreset of one chunk: its blocks through a merge tree of its own (a task;
        ``checked``: a pass before validated the rows)."""
        with one_numba_thread():
            tree = MergeTree(self.capacity, chunk=chunk)
            label = f"chunk {chunk}"
            leaves = self.leaves(X, y, w, offset=offset, label=label, chunk=chunk, checked=checked)
            for node in leaves:
                if node is not None:
                    tree.push(node, self.reduce)
            return tree.result(self.reduce) if tree.n_blocks else None

    def merge(self, nodes, key):
        """A coreset of the union of chunk coresets (a task)."""
        nodes = [n for n in nodes if n is not None]
        if not nodes:
            return None
        merged = union(nodes)
        if self.capacity is not None and len(merged) <= self.capacity:
            return merged
        with one_numba_thread():
            return self.reduce(merged, key)

    def finalize(self, node, key, passes=None):
        """The coreset of the merged chunk coresets, on the caller's threads (the client's:
        not a task, which would have one worker thread while the rest of the cluster waits);
        ``passes`` as for :meth:`fitted_context`."""
        if node is None:
            return None
        context = self.fitted_context(node, passes, key[-1])
        with stage("selection"):
            final = self.estimator._finalize(node, context, self.seeds(key))
        self.final_context = context
        return final


def _same(a, b):
    """Whether two parameter values are the same (arrays compared by value)."""
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(np.all(a == b))
    except (TypeError, ValueError):
        return False


def _with_sums(node, taylor, sample):
    """``node`` with the second-order sums and the sample of the data under it (a hook's
    new node has neither)."""
    if node.taylor is None:
        node.taylor = taylor
    if node.sample is None:
        node.sample = sample
    return node


def check_overflow(*arrays):
    """Refuse rows whose log-likelihood terms overflowed (X or the weights far too large): a
    non-finite sum or norm would poison every later merge, so a block is refused before it
    reaches the tree (and named by :meth:`Construction.leaf`)."""
    if not all(np.all(np.isfinite(a)) for a in arrays):
        raise ValueError(OVERFLOW)


#: What a user reads when the log-likelihood terms of some rows overflow.
OVERFLOW = (
    "the log-likelihood terms of these rows overflow (infinite or NaN), so they cannot be "
    "summed: X or sample_weight is far too large. Standardise X (e.g. "
    "sklearn.preprocessing.StandardScaler) and check the weights."
)
