"""Merge-reduce: coresets of blocks combined into a coreset of all the data.

The union of coresets of disjoint blocks (weights side by side) is a coreset of the union of
the blocks, and a coreset of a weighted coreset is a coreset of the data under it
(doc/algorithms.md, section 6). A :class:`MergeTree` holds the coresets of a stream of blocks
like the digits of a binary counter: two coresets of the same level are merged (their union
reduced to ``n_points``) into one of the next level, so after B blocks it holds at most
log2(B) + 1 of them, and its :meth:`~MergeTree.result` merges what it holds.

Each :class:`Node` keeps, besides its rows and weights, an exact *summary* of the data under it
(for the Hilbert coresets the sum of the projected rows): a reduction aims at the summary of
all the data below it, not at its own (approximate) union, so errors do not compound from
level to level.

Randomness is keyed, not sequential: every reduction draws from a generator seeded by its
place in the tree (:class:`NodeSeeds`), so the result depends on the blocks and on
``random_state`` only - not on the order in which a parallel scheduler runs the reductions.
"""

import copy
from dataclasses import dataclass

import numpy as np

# The kinds of place in a tree, the first entry of a reduction's key (SAMPLE: a leaf's draw of
# its rows into the sample a data fit reads; PILOT: the rows of the pilot's fit, drawn before
# the data are read, which a dask fit gathers in its first pass).
LEAF, MERGE, FINAL, CHUNKS, SAMPLE, PILOT = 0, 1, 2, 3, 4, 5


@dataclass
class Node:
    """A weighted coreset of some rows of the data.

    Attributes
    ----------
    indices : ndarray of int64, shape (m,)
        Global row numbers.
    weights : ndarray of float64, shape (m,)
        Positive weights.
    X : ndarray of float64, shape (m, n_features)
        The rows.
    y : ndarray of float64, shape (m,)
        Their targets, coded for the model.
    summary : ndarray of float64 or None
        An exact summary of all the data under the node (the projected sum for the Hilbert
        coresets), or None.
    info : dict or None
        What the reduction that made the node reported (``n_iter``, ``stop_reason``,
        ``error``, ...); for a union, ``{"union_of": [the parts' info]}``; None for a leaf
        kept whole.
    keys : ndarray of float64 or None
        Sampling keys of the rows (one column, or several), for reductions that keep the rows
        with the largest keys (candidate pools), or None.
    taylor : ndarray of float64 or None
        The second-order sums of all the data under the node at the construction's Laplace
        mode (:func:`~._taylor.data_summary`), when the construction tracks them (a stream,
        the KL coresets); a reduction keeps them, as it keeps the summary.
    sample : Node or None
        A sample of the rows under the node proportional to their weights times their
        spreads (its ``keys`` the Efraimidis-Spirakis keys), kept beside the coreset by a
        construction that fits the data from its sums (:func:`~._taylor.fit_from_sums`), or
        None.
    spread : ndarray of float64 or None
        Each row's spread under the construction's first Laplace fit
        (:func:`~._taylor.row_spread`), when the construction tracks its sums: times the
        weight, the norm its sampling keys were drawn with.
    """

    indices: np.ndarray
    weights: np.ndarray
    X: np.ndarray
    y: np.ndarray
    summary: np.ndarray | None = None
    info: dict | None = None
    keys: np.ndarray | None = None
    taylor: np.ndarray | None = None
    sample: "Node | None" = None
    spread: np.ndarray | None = None

    def __len__(self):
        return self.indices.shape[0]

    def top_keys(self, size):
        """Positions (sorted) of the ``size`` rows with the largest keys: a weighted sample
        without replacement, when the keys are Efraimidis-Spirakis keys."""
        return largest(self.keys, size)

    def top_parts(self, sizes):
        """Positions (sorted) of the rows among the ``sizes[j]`` largest keys of some column
        ``j`` of ``keys`` (each row once): the union of independent weighted samples without
        replacement, when each column holds Efraimidis-Spirakis keys."""
        kept = np.zeros(len(self), dtype=bool)
        for j, size in enumerate(sizes):
            kept[largest(self.keys[:, j], size)] = True
        return np.flatnonzero(kept)

    def subset(self, positions):
        """The node restricted to some of its rows (the summary of all the data is kept)."""

        def rows(a):  # take gathers rows several times faster than fancy indexing
            return None if a is None else a.take(positions, axis=0)

        return Node(
            indices=rows(self.indices),
            weights=rows(self.weights),
            X=self.X[positions] if not hasattr(self.X, "take") else rows(self.X),
            y=rows(self.y),
            summary=self.summary,
            keys=rows(self.keys),
            taylor=self.taylor,
            sample=self.sample,
            spread=rows(self.spread),
        )


def largest(keys, size):
    """Positions (sorted) of the ``size`` largest ``keys`` (all of them, or none, at the
    ends)."""
    n = keys.shape[0]
    if size >= n:
        return np.arange(n)
    if size <= 0:
        return np.empty(0, dtype=np.intp)
    # a key column of a node is strided: selecting in a contiguous copy is faster (measured:
    # benchmarks/README.md, Thresholds)
    keys = np.ascontiguousarray(keys)
    return np.sort(np.argpartition(keys, n - size)[n - size :])


def union(nodes):
    """The union of coresets of disjoint data: rows side by side, summaries added."""
    if len(nodes) == 1:
        return nodes[0]
    summary, taylor = _sum(n.summary for n in nodes), _sum(n.taylor for n in nodes)
    keys = spread = None
    if all(n.keys is not None for n in nodes):
        keys = np.concatenate([n.keys for n in nodes])
    if all(n.spread is not None for n in nodes):
        spread = np.concatenate([n.spread for n in nodes])
    return Node(
        indices=np.concatenate([n.indices for n in nodes]),
        weights=np.concatenate([n.weights for n in nodes]),
        X=np.concatenate([n.X for n in nodes]),
        y=np.concatenate([n.y for n in nodes]),
        summary=summary,
        info={"union_of": [n.info for n in nodes]},
        keys=keys,
        taylor=taylor,
        sample=_union_samples([n.sample for n in nodes]),
        spread=spread,
    )


def _union_samples(samples):
    """The sample of a union: the rows of the parts' samples with the largest keys of each
    column (as many as a sample holds of each, its ``info["sizes"]``), None unless every part
    has one."""
    if any(s is None for s in samples):
        return None
    sizes = samples[0].info["sizes"]
    merged = union(samples)
    kept = merged.subset(merged.top_parts(sizes))
    kept.info = {"sizes": sizes}
    return kept


def _sum(parts):
    """The sum of the nodes' summaries (or Taylor sums), in order: the same bits whatever the
    tree's shape; None unless every node has one."""
    parts = list(parts)
    if any(p is None for p in parts):
        return None
    total = parts[0].copy()
    for p in parts[1:]:
        total += p
    return total


class NodeSeeds:
    """Random generators keyed by the place of a reduction in the tree.

    The first leaf of a fit (key ``(LEAF, 0, 0, 0)``) uses the estimator's own generator, in
    the state the preparation (Laplace fit, projection draws) left it: a fit of one block is
    then exactly the single-shot construction. Every other reduction gets a generator seeded
    from a value peeked (not drawn) from that same state and its key.
    """

    def __init__(self, random_state):
        self._first = random_state
        self._base = int(copy.deepcopy(random_state).randint(np.iinfo(np.int32).max))

    def __call__(self, key):
        if key == (LEAF, 0, 0, 0):
            return self._first
        seq = np.random.SeedSequence([self._base, *(int(k) for k in key)])
        return np.random.RandomState(seq.generate_state(4))


class MergeTree:
    """A binary merge tree over a stream of blocks (a binary counter of coresets).

    It holds data only (it is pickled with a partially fitted estimator); the reduction is
    passed to :meth:`push` and :meth:`result`: ``reduce(node, key) -> node``, a coreset of the
    union ``node`` (summary kept) using the generator of ``key``.

    Parameters
    ----------
    n_points : int or None
        A union of at most this many rows is kept as it is (it already is a coreset); None
        reduces every union.
    chunk : int, default=0
        Which chunk of the data the tree covers (part of every key).
    """

    def __init__(self, n_points, chunk=0):
        self.n_points = n_points
        self.chunk = chunk
        self.levels = []  # levels[l]: the coreset of 2^l blocks, or None
        self.n_blocks = 0

    def push(self, node, reduce):
        """Add the coreset of the next block, merging equal levels as a binary counter."""
        block = self.n_blocks
        self.n_blocks += 1
        level = 0
        while level < len(self.levels) and self.levels[level] is not None:
            # the merged node covers blocks [j 2^(level+1), (j+1) 2^(level+1)): j is its index
            key = (MERGE, self.chunk, level + 1, block >> (level + 1))
            node = self._merge([self.levels[level], node], key, reduce)
            self.levels[level] = None
            level += 1
        if level == len(self.levels):
            self.levels.append(None)
        self.levels[level] = node

    def held(self):
        """The coresets held, largest level first (the order of the blocks)."""
        return [n for n in reversed(self.levels) if n is not None]

    def result(self, reduce):
        """The coreset of everything pushed so far (the held coresets merged)."""
        held = self.held()
        if not held:
            raise ValueError("No block has been pushed.")
        if len(held) == 1:
            return held[0]
        return self._merge(held, (FINAL, self.chunk, 0, self.n_blocks), reduce)

    def _merge(self, nodes, key, reduce):
        merged = union(nodes)
        if self.n_points is not None and len(merged) <= self.n_points:
            return merged
        return reduce(merged, key)


def reduce_pairwise(nodes, merge):
    """Merge a list of coresets pairwise, level by level, in order (a balanced tree).

    ``merge(nodes, key)`` returns the coreset of a list of nodes; keys are
    ``(CHUNKS, 0, level, index)``. Used for the coresets of the chunks of a parallel fit.
    """
    level = 0
    while len(nodes) > 1:
        level += 1
        paired = []
        for i in range(0, len(nodes), 2):
            group = nodes[i : i + 2]
            paired.append(group[0] if len(group) == 1 else merge(group, (CHUNKS, 0, level, i // 2)))
        nodes = paired
    return nodes[0]
