"""The KL coresets (quasi-Newton, SparseVI, Coreset MCMC) of a multilevel model, group by
group.

The log-likelihood is a sum over groups of ``L_g(beta, extra, u_g)``, and a coreset of rows
matches it group by group (:mod:`._multilevel`). For the KL methods each large group is a
problem of its own (:class:`GroupProblem`, the interface of :mod:`._kl`): its candidates are
its rows, its parameters ``(beta, extra, u_g)``, its full sum ``L_g``, and the estimator's
algorithm optimises its weights against ``KL(pi_w || pi)`` with the gradient
``-Cov_{pi_w}[l_m, L_g - w . l]`` as for a single-level model.

The draws of ``pi_w`` come by sampling-importance-resampling from a bank of draws of the
data's multilevel Laplace fit (its ``(beta, extra, u_g)``): the bank's log-likelihoods are
computed once, and a draw of ``pi_w`` costs a product of the support's log-likelihoods with
``w``. The log importance weight ``w . l(theta) - L_g(theta)`` is the coreset's error itself,
small where the algorithms work (from a start matching the group's projection), so the
resampled draws stay many; the few shared parameters move little when one group's weights
move among hundreds, and their draws are the data's. From a start far from the data's
posterior (``init='uniform'`` at a few points a parameter) few bank draws carry the weight:
the steps improve such a start without reaching OMP's, and a result whose estimated KL
(:meth:`GroupProblem.kl`) exceeds its start's is replaced by the start.
"""

import numpy as np

from ..hilbert._omp import _omp
from ..models._multilevel_likelihood import log_density

#: The bank of Laplace draws each group's problem resamples from.
BANK_DRAWS = 1000
#: SparseVI's candidates in a group: a uniform sample of its rows beyond this many (as the
#: single-level KL coresets pool their candidates), so its (draws x candidates) arrays stay
#: bounded however large the group.
MAX_CANDIDATES = 10_000
#: Rows whose log-likelihoods at the draws are computed at a time (the full sums).
_ROWS = 4096


class GroupProblem:
    """One group's KL problem (:mod:`._kl`'s interface), on its rows.

    Parameters
    ----------
    base : GLM
        The base model, its priors set.
    n_extra : int
        Its free extra parameters (0, 1, or 2 for the Student-t): ``bank``'s columns after
        ``beta``, their logs.
    Xd, Z, y, w : ndarray
        The group's design rows, effect columns, coded targets and weights.
    bank : ndarray of shape (B, D + E + q)
        Draws of ``(beta, log extra, u_g)`` from the data's Laplace fit.
    n_chains : int
        Draws per transition (Coreset MCMC's chains).
    random_state : RandomState
        Draws the resampling.
    """

    def __init__(self, base, n_extra, Xd, Z, y, w, bank, n_chains, random_state):
        self.base, self.D, self.E = base, Xd.shape[1], n_extra
        self.Xd, self.Z, self.y, self.full_weights = Xd, Z, y, w
        self.n_params = bank.shape[1]
        self.bank = bank
        self.rng = random_state
        self.n_chains = n_chains
        self.pool = None  # the candidates' rows (None: every row)
        # the group's full sum at the bank's draws, once
        self._bank_full = self._full_sum(bank)
        self._support = None  # (idx, its log-likelihoods at the bank)
        self._last = None  # (thetas, their places in the bank)

    def _rows_loglik(self, thetas, rows):
        """(S, rows) log-likelihoods of some of the group's rows."""
        thetas = np.asarray(thetas)
        D, E = self.D, self.E
        extras = np.exp(thetas[:, D : D + E]) if E else None  # (S, E)
        eta = self.Xd[rows] @ thetas[:, :D].T + self.Z[rows] @ thetas[:, D + E :].T
        return log_density(self.base, self.y[rows, None], eta, extras).T

    def _full_sum(self, thetas):
        """The group's weighted log-likelihood sum at ``thetas``, ``_ROWS`` rows at a time."""
        total = np.zeros(np.shape(thetas)[0])
        for start in range(0, self.y.shape[0], _ROWS):
            rows = slice(start, start + _ROWS)
            total += self._rows_loglik(thetas, rows) @ self.full_weights[rows]
        return total

    def loglik(self, thetas, idx, out=None):
        """The (S, len(idx)) log-likelihoods of candidates ``idx`` (None: all of them)."""
        if self.pool is None:
            rows = slice(None) if idx is None else idx
        else:
            rows = self.pool if idx is None else self.pool[idx]
        return self._rows_loglik(thetas, rows)

    def full(self, thetas, g_all=None, step=False):
        """The group's weighted log-likelihood sum at ``thetas`` (looked up for the bank's)."""
        if self._last is not None and thetas is self._last[0]:
            return self._bank_full[self._last[1]]
        if g_all is not None and self.pool is None:
            return g_all @ self.full_weights
        return self._full_sum(thetas)

    def draws(self, idx, w, n):
        """n draws of ``pi_w``: the bank resampled by ``exp(w . l - L_g)``."""
        idx = np.asarray(idx, dtype=np.intp)
        if self._support is None or not np.array_equal(self._support[0], idx):
            self._support = (idx.copy(), self.loglik(self.bank, idx))
        log_ratio = self._support[1] @ np.asarray(w, dtype=np.float64) - self._bank_full
        return self._resample(log_ratio, n)

    def _resample(self, log_p, n):
        p = np.exp(log_p - log_p.max())
        places = self.rng.choice(self.bank.shape[0], size=n, p=p / p.sum())
        thetas = self.bank[places]
        self._last = (thetas, places)
        return thetas

    def kl(self, idx, w):
        """An importance estimate of the group's ``KL(pi_w || pi)`` from the bank:
        ``E_w[d] - log E[exp(d)]``, ``d = w . l - L_g`` (its other groups held)."""
        d = self.loglik(self.bank, idx) @ np.asarray(w, dtype=np.float64) - self._bank_full
        d -= d.max()
        p = np.exp(d)
        return float(p @ d / p.sum() - np.log(p.mean()))

    def laplace_draws(self, n):
        """n draws of the data's Laplace fit."""
        return self.bank[np.arange(n) % self.bank.shape[0]]

    def transition(self, idx, w):
        """The chains' next states: independent draws of ``pi_w``."""
        return self.draws(idx, w, self.n_chains)


def group_bank(laplace, random_state, groups):
    """``{group: (B, D + E + q) draws of (beta, log extra, u_g)}`` from the Laplace fit, for
    the groups given (indices among the posterior's ``n_groups_all``)."""
    post = laplace.posterior
    draws = laplace.draws(BANK_DRAWS, random_state)
    _, u = post.effects(draws)
    shared = draws[:, : post.D + post.E]
    place = np.searchsorted(post.groups_in, groups)
    return {g: np.concatenate([shared, u[:, p, :]], axis=1) for g, p in zip(groups, place)}


def kl_multipliers(estimator, problem, V, sigma, target, rng):
    """A KL estimator's multipliers of one group's rows (``V``: their projection, scaled by
    their weights): its start (OMP on the projection, or uniform), then its algorithm
    against the group's KL, at ``estimator._target_size`` points."""
    size = estimator._target_size
    weights = problem.full_weights
    init = getattr(estimator, "init", None)  # None: SparseVI, which chooses its points
    if init == "omp":
        start = omp_start(V, sigma, target, size, weights)
    elif init == "uniform":
        start = uniform_start(weights.shape[0], size, float(weights.sum()), rng)
    else:
        start = None
    idx, w = kl_weights(estimator, problem, start, size)
    sel = np.zeros(weights.shape[0])
    sel[idx] = w / weights[idx]
    return sel


def omp_start(V, sigma, target, size, weights):
    """``(idx, w0)``: OMP on the group's projection (as the KL estimators' 'omp' start)."""
    sel, _, _ = _omp(V, size, sigma, target)
    idx = np.flatnonzero(sel)
    return idx, sel[idx] * weights[idx]


def uniform_start(n_rows, size, total, random_state):
    """``(idx, w0)``: ``size`` rows drawn uniformly, each weighted ``total / size``."""
    idx = np.sort(random_state.choice(n_rows, size=size, replace=False))
    return idx, np.full(size, total / size)


def kl_weights(estimator, problem, start, size):
    """The estimator's algorithm on one group (its ``_optimise``, as for a single-level fit;
    no time budget: ``max_seconds`` is the fit's): ``(idx, w)``, positive weights only."""
    total = float(problem.full_weights.sum())
    n_rows = problem.y.shape[0]
    if start is None and n_rows > MAX_CANDIDATES:  # SparseVI chooses among candidates
        problem.pool = np.sort(problem.rng.choice(n_rows, MAX_CANDIDATES, replace=False))
    n_candidates = n_rows if problem.pool is None else MAX_CANDIDATES
    idx, w, _, _ = estimator._optimise(problem, start, n_candidates, size, total, None, False)
    if start is not None and problem.kl(*start) < problem.kl(idx, w):
        idx, w = start  # the steps went astray (draws of a coreset posterior far away)
    keep = w > 0
    idx = np.asarray(idx)[keep]
    if problem.pool is not None:  # candidates' places -> the group's rows
        idx, problem.pool = problem.pool[idx], None
    return idx, np.asarray(w)[keep]
