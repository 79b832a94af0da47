"""A multilevel coreset built block by block: ``partial_fit(groups=)`` and dask collections.

A group's rows can come in any block, so the merge-reduce runs per group: each group keeps a
weighted coreset of the rows seen so far, and the exact sum of their projections (its
*summary*); when the kept rows pass twice the group's cap they are reduced to the cap, aiming
at the summary (so errors do not compound from reduction to reduction). The union of the
groups' coresets is a coreset of the data, as in :func:`~._multilevel.multilevel_coreset`.

What the projections need is fixed by the first block: the multilevel Laplace fit of its
rows, and J draws of ``(beta, extra)`` and of the effects of its groups. A group first seen
later gets its effect's draws from its conditional Laplace fit (mode and curvature given the
first fit's ``beta``, extra parameter and group sd) on its rows in that block: one Newton per
group, cheap, and its rows then live in their own block of coordinates as every group's.

The result after each call: each group reduced to its budget (``n_points`` shared as in a
fit), and a Laplace fit of the coreset with the priors of *all* the rows seen (their moments
add block by block). A stream keeps small groups whole: a coreset of groups leaves groups
out, whose effects would need their rows again.
"""

from dataclasses import dataclass

import numpy as np

from .._logging import phase
from ..models._multilevel_laplace import fit_laplace
from ..models._multilevel_likelihood import likelihood_at, log_density
from ..models._multilevel_marginal import GroupMarginals
from ..models._prior import Moments
from ._merge_reduce import FINAL, MERGE
from ._multilevel import _BLOCK_ROWS, AUTO_PER_PARAM, MIN_PER_PARAM, group_budgets


@dataclass
class _Rows:
    """A group's kept rows: stream row numbers, weights, features, coded and raw targets."""

    indices: np.ndarray
    weights: np.ndarray
    X: np.ndarray
    y: np.ndarray
    raw: np.ndarray

    def __len__(self):
        return self.indices.shape[0]

    def take(self, positions, weights):
        return _Rows(
            self.indices[positions], weights, self.X[positions], self.y[positions],
            self.raw[positions],
        )  # fmt: skip

    @staticmethod
    def join(a, b):
        if a is None:
            return b
        return _Rows(*(np.concatenate([x, y]) for x, y in zip(vars(a).values(), vars(b).values())))


class GroupedStream:
    """The state of a multilevel stream: it holds data only (a partially fitted estimator is
    pickled with it); the estimator's algorithm is passed to :meth:`add` and :meth:`result`.

    Parameters
    ----------
    spec : Multilevel
        The model.
    pilot : MultilevelLaplace
        The Laplace fit of the first block.
    labels : ndarray
        The first block's group labels (sorted), the pilot's groups.
    n_draws : int
        J, the draws the rows are projected on.
    random_state : RandomState
        Draws the pilot's J draws and the seed of every later draw.
    n_features : int
        Columns of X.
    pool : int, default=1
        A group's rows are reduced to ``pool`` times its 'auto' points (the KL coresets
        keep candidates for their final optimisation).
    """

    def __init__(self, spec, pilot, labels, n_draws, random_state, n_features, pool=1):
        post = pilot.posterior
        self.spec, self.base, self.E = spec, post.base, post.E
        self.fit_intercept = post.Xd.shape[1] > n_features
        self.prior_scale = post.prior_scale
        self.n_per = post.D + post.E + post.q
        # a group's points with n_points='auto'; its rows are reduced to ``pool`` times as
        # many (the KL coresets' candidates: their weights are optimised in the result)
        self.auto = AUTO_PER_PARAM * self.n_per
        self.cap = pool * self.auto
        draws = pilot.draws(n_draws, random_state)
        self.seed = int(random_state.randint(np.iinfo(np.int32).max))
        self.beta = np.ascontiguousarray(draws[:, : post.D])
        self.extra = np.exp(draws[:, post.D : post.D + post.E]) if post.E else None  # (J, E)
        # the pilot's mode, where a later group's conditional fit is taken
        beta, s, log_tau, _ = post.split(pilot.mean)
        self.mode = (beta, s, np.exp(log_tau))
        self.labels = []  # in order of first appearance; index: their position
        self.index = {}
        self.u = np.empty((0, n_draws, post.q))  # each group's effect draws (G, J, q)
        self.rows = []  # each group's kept rows (_Rows or None)
        self.summary = np.zeros((0, n_draws))  # the exact sums of its rows' projections
        self.count = np.zeros(0, dtype=np.int64)  # its rows seen
        self.mass = np.zeros(0)  # the sum of their projections' norms
        self.n_reduced = np.zeros(0, dtype=np.int64)
        _, u = post.effects(draws)  # (J, G_in, q)
        self._new_groups(labels[post.groups_in], np.transpose(u, (1, 0, 2)))
        self.moments = Moments(n_features)
        self.n_seen = 0
        self.n_blocks = 0

    @property
    def n_groups(self):
        return len(self.labels)

    def _new_groups(self, labels, u):
        for label in labels:
            self.index[label] = len(self.labels)
            self.labels.append(label)
        self.u = np.concatenate([self.u, u])
        self._grow()

    def _grow(self):
        extra = self.n_groups - len(self.rows)
        self.rows.extend([None] * extra)
        self.summary = np.concatenate([self.summary, np.zeros((extra, self.summary.shape[1]))])
        self.count = np.concatenate([self.count, np.zeros(extra, dtype=np.int64)])
        self.mass = np.concatenate([self.mass, np.zeros(extra)])
        self.n_reduced = np.concatenate([self.n_reduced, np.zeros(extra, dtype=np.int64)])

    # -- projection ------------------------------------------------------------------------
    def project(self, X, y, w, gidx, u=None):
        """The rows' centred log-likelihoods at the draws, ``w_i (l_ij - mean_j l_ij)``,
        each row at its group's effect draws (``u``, default the stream's): (rows, J)."""
        u = self.u if u is None else u
        out = np.empty((X.shape[0], self.beta.shape[0]))
        for start in range(0, X.shape[0], _BLOCK_ROWS):
            rows = slice(start, min(start + _BLOCK_ROWS, X.shape[0]))
            Xd = self.base.design(X[rows])
            Z = self.spec.effects_design(X[rows])
            eta = Xd @ self.beta.T + np.einsum("nq,njq->nj", Z, u[gidx[rows]])
            ll = log_density(self.base, y[rows, None], eta, self.extra)
            ll -= ll.mean(axis=1, keepdims=True)
            out[rows] = w[rows, None] * ll
        return out

    def _conditional_draws(self, X, y, w, local, labels):
        """Effect draws (G_new, J, q) of groups first seen in this block: their conditional
        Laplace fits at the pilot's mode, from their rows here."""
        beta, s, tau = self.mode
        marginals = GroupMarginals(
            self.base,
            self.E,
            self.base.design(X),
            self.spec.effects_design(X),
            y,
            w,
            local,
            len(labels),
            np.ones(len(labels)),
        )
        model = likelihood_at(self.base, s)
        u_hat, F = marginals.modes(marginals.Xd @ beta, model, tau)
        L = np.linalg.cholesky(np.linalg.inv(F))
        J, q = self.u.shape[1:]
        draws = np.empty((len(labels), J, q))
        for k in range(len(labels)):  # keyed by the group's index: the same in any run
            z = np.random.default_rng([self.seed, self.n_groups + k]).standard_normal((J, q))
            draws[k] = u_hat[k] + z @ L[k].T
        return draws

    # -- the stream ------------------------------------------------------------------------
    def add(self, X, y, w, raw, codes, labels, reduce):
        """Add a validated block (rows of positive and zero weight; ``codes`` into the
        block's sorted ``labels``). ``reduce(V, sigma, target, size, rng, g, rows) ->
        multipliers`` is the estimator's algorithm on group ``g``'s kept ``rows``. Computes
        everything that can fail before changing state."""
        keep = np.flatnonzero(w > 0)
        offset = self.n_seen
        block_moments = Moments.of(X, y, w)
        gidx_of = np.array([self.index.get(label, -1) for label in labels], dtype=np.intp)
        present = np.unique(codes[keep])
        new = present[gidx_of[present] < 0]  # block codes of groups first seen here
        if new.shape[0]:
            rows = keep[np.isin(codes[keep], new)]
            local = np.searchsorted(new, codes[rows])
            u_new = self._conditional_draws(X[rows], y[rows], w[rows], local, labels[new])
            if not np.all(np.isfinite(u_new)):
                raise ValueError("the new groups' effects could not be fitted (not finite).")
            gidx_of[new] = np.arange(self.n_groups, self.n_groups + new.shape[0])
        else:
            u_new = self.u[:0]
        gidx = gidx_of[codes[keep]]
        V = self.project(X[keep], y[keep], w[keep], gidx, np.concatenate([self.u, u_new]))
        if not np.all(np.isfinite(V)):
            raise ValueError("log-likelihoods of the rows overflow at the projection's draws.")
        # the state changes from here on
        self._new_groups(labels[new], u_new)
        self.moments += block_moments
        order = np.argsort(gidx, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(gidx[order]) != 0])[: order.shape[0]]
        for start, stop in zip(starts, np.r_[starts[1:], order.shape[0]]):
            pos = order[start:stop]
            g = int(gidx[pos[0]])
            i = keep[pos]
            block = _Rows(offset + i, w[i], X[i], y[i], raw[i])
            self.summary[g] += V[pos].sum(axis=0)
            self.mass[g] += np.linalg.norm(V[pos], axis=1).sum()
            self.count[g] += pos.shape[0]
            self.rows[g] = _Rows.join(self.rows[g], block)
            if len(self.rows[g]) > 2 * self.cap:
                self.rows[g], _ = self._reduce(g, self.cap, reduce, (MERGE, self.n_reduced[g]))
                self.n_reduced[g] += 1
        self.n_seen += X.shape[0]
        self.n_blocks += 1

    def _reduce(self, g, size, reduce, key):
        """The group's kept rows reduced to ``size`` points aiming at its summary, and the
        error left ``||summary - sum of the kept projections||``; the generator keyed by the
        group and ``key`` (the reduction's place in the stream)."""
        rows = self.rows[g]
        V = self.project(rows.X, rows.y, rows.weights, np.full(len(rows), g))
        rng = np.random.RandomState(
            np.random.SeedSequence([self.seed, g, *map(int, key)]).generate_state(4)
        )
        sel = reduce(V, np.linalg.norm(V, axis=1), self.summary[g], size, rng, g, rows)
        nz = np.flatnonzero(sel)
        error = np.linalg.norm(self.summary[g] - sel @ V)
        return rows.take(nz, sel[nz] * rows.weights[nz]), error

    def budgets(self, n_points):
        """Each group's points in the result: ``n_points`` shared as in a fit."""
        counts = self.count
        if n_points == "auto":
            total = int(np.minimum(counts, self.auto).sum())
        else:
            total = int(n_points)
        return group_budgets(counts, self.mass, total, MIN_PER_PARAM * self.n_per)

    def kept(self):
        """``(rows, codes, labels)``: every group's kept rows, each row's index into the
        sorted ``labels``."""
        return self._joined([(g, r) for g, r in enumerate(self.rows) if r is not None])

    def result(self, n_points, reduce):
        """``(rows, codes, labels, budget, error)``: the coreset of everything seen (the
        groups' kept rows, each reduced to its budget), each row's index into the sorted
        ``labels``, and the relative error of the sum of the projections."""
        counts = self.count
        budget = self.budgets(n_points)
        parts, errors = [], 0.0
        for g, rows in enumerate(self.rows):
            if rows is None:
                continue
            if len(rows) > budget[g]:  # the final key: after every reduction of the stream
                rows, error = self._reduce(g, int(budget[g]), reduce, (FINAL, self.n_blocks))
                errors += error
            elif len(rows) < counts[g]:  # reduced earlier: its error as kept
                V = self.project(rows.X, rows.y, rows.weights, np.full(len(rows), g))
                errors += np.linalg.norm(self.summary[g] - V.sum(axis=0))
            parts.append((g, rows))
        joined, codes, sorted_labels = self._joined(parts)
        targets = np.linalg.norm(self.summary, axis=1).sum()
        return joined, codes, sorted_labels, budget, errors / max(targets, 1e-300)

    def ranks(self):
        """``(sorted labels, each group's index among them)``."""
        labels = np.asarray(self.labels)
        if labels.dtype != object:
            sorted_labels = np.unique(labels)
            return sorted_labels, np.searchsorted(sorted_labels, labels)
        sorted_labels = _sorted(labels)
        where = {label: k for k, label in enumerate(sorted_labels)}
        return sorted_labels, np.array([where[label] for label in self.labels], dtype=np.intp)

    def _joined(self, parts):
        """The union of groups' rows ``[(g, rows)]``, their codes into the sorted labels."""
        sorted_labels, rank = self.ranks()
        joined = None
        codes = []
        for g, rows in parts:
            joined = _Rows.join(joined, rows)
            codes.append(np.full(len(rows), rank[g], dtype=np.intp))
        return joined, np.concatenate(codes), sorted_labels

    def fit_coreset(self, rows, codes, n_groups, prior_scale, estimator):
        """The multilevel Laplace fit of the coreset's rows, with the priors of all the rows
        seen (their moments)."""
        scale = self.spec.data_scale(self.moments, self.fit_intercept)
        post = self.spec.posterior(
            rows.X, rows.y, codes, n_groups, rows.weights, prior_scale, self.fit_intercept,
            data_scale=scale,
        )  # fmt: skip
        with phase(estimator, f"multilevel Laplace fit of the coreset ({len(rows)} rows)"):
            return fit_laplace(post)


def _sorted(labels):
    """Distinct object labels, sorted (as ``np.unique`` sorts them)."""
    try:
        return np.asarray(sorted(set(labels.tolist())), dtype=object)
    except TypeError:
        raise TypeError("groups mixes label types that cannot be sorted.") from None
