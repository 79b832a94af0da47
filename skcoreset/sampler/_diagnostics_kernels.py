"""Numba kernels of the rank-normalised R-hat and bulk ESS (see ``_diagnostics``).

In NumPy the rank normalisation cost more than the sampling it judges: sorting each
parameter's draws, finding the runs of tied draws (a MALA chain repeats its state at every
rejection) and scattering the scores back took four array passes per step, twice (the draws and
the folded draws ``|x - median|``). Here one sort per parameter serves both: the folded draws in
ascending order are a merge of the draws below the median, read backwards, and those above it.
The sort is a bucket sort (:func:`bucket_argsort`): MCMC draws of a parameter spread over their
range much as a normal sample does, so one bucket per draw holds a draw or two and the sort is
a few linear passes, faster than NumPy's ``argsort`` (measured: benchmarks/README.md,
Thresholds). Rows whose buckets crowd (heavy tails, a far outlier) are left to NumPy.

The kernels compute exactly what the formulas in ``_diagnostics`` say, in the same order of
operations, so the values stay those of ArviZ (the tests check to 1e-10). They release the
GIL: the diagnostics run on threads, a range of parameters each. This module imports no
scikit-learn.
"""

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, error_model="numpy")
def bucket_argsort(columns, order, declined):
    """``order[p]`` <- an argsort of ``columns[p]`` (ties in any order), or ``declined[p]``.

    Each row's values go to ``n`` equal buckets over their range (counting sort), then one
    insertion pass puts each bucket in order: it moves a value only past the larger ones of its
    own bucket (ties, as rejected MCMC steps make, cost nothing). A row whose insertion pass
    passes ``8 n`` moves, or whose buckets hold more than ``64 n`` pairs of draws (the draws
    bunch in few buckets: heavy tails, an outlier), or whose range is not finite and positive
    (NaN, inf, a constant row) is declined: ``order[p]`` is then not an argsort.
    """
    P, n = columns.shape
    if n == 0:  # no first value to start the range from
        declined[:] = True
        return
    starts = np.empty(n + 1, dtype=np.int64)
    bucket = np.empty(n, dtype=np.int64)
    values = np.empty(n)
    for p in range(P):
        x, o = columns[p], order[p]
        lo, hi, nonfinite = x[0], x[0], 0.0
        for t in range(n):
            lo = min(lo, x[t])
            hi = max(hi, x[t])
            nonfinite += x[t] - x[t]  # NaN after a NaN or an infinity (min and max skip NaN)
        scale = (n - 1) / (hi - lo)  # bucket b holds lo + [b, b + 1) / scale
        declined[p] = not (nonfinite == 0.0 and 0.0 < scale < np.inf)
        if declined[p]:
            continue
        starts[:] = 0
        for t in range(n):
            b = np.int64((x[t] - lo) * scale)
            bucket[t] = b
            starts[b + 1] += 1
        pairs = 0  # of draws sharing a bucket: the insertion moves at most this many
        for b in range(1, n + 1):
            pairs += starts[b] * (starts[b] - 1) // 2
            starts[b] += starts[b - 1]
        declined[p] = pairs > 64 * n  # bunched beyond hope (a Cauchy's range): no pass wasted
        if declined[p]:
            continue
        for t in range(n):
            s = starts[bucket[t]]
            starts[bucket[t]] = s + 1
            values[s] = x[t]
            o[s] = t
        moves = 0
        for t in range(1, n):
            v, i, j = values[t], o[t], t - 1
            while j >= 0 and values[j] > v:
                values[j + 1] = values[j]
                o[j + 1] = o[j]
                j -= 1
            values[j + 1] = v
            o[j + 1] = i
            moves += t - 1 - j
            if moves > 8 * n:
                declined[p] = True
                break


@njit(cache=True, nogil=True, error_model="numpy")
def _score_runs(values, positions, table, out, first):
    """``out[positions[t]] = table[2 * average rank]`` for ``values`` in ascending order.

    A run of equal values at sorted places ``b .. e - 1`` (0-based) shares the average
    1-based rank ``b + (e - b + 1) / 2``, whose double ``b + e + 1`` indexes ``table``.
    ``first`` (scratch) gets each place's ``b`` in a forward scan, the backward scan finds
    ``e``: selects, not branches, for runs whose lengths (rejections) no branch predicts.
    """
    n = values.shape[0]
    if n == 0:
        return
    b = 0
    first[0] = 0
    for t in range(1, n):
        b = b if values[t] == values[t - 1] else t
        first[t] = b
    e = n
    out[positions[n - 1]] = table[first[n - 1] + e + 1]
    for t in range(n - 2, -1, -1):
        e = e if values[t + 1] == values[t] else t + 1
        out[positions[t]] = table[first[t] + e + 1]


@njit(cache=True, nogil=True, error_model="numpy")
def normal_scores(columns, order, table, out):
    """The normal scores of each row's average ranks: ``out[p] = table[2 rank(columns[p])]``.

    ``columns`` is (P, n), one parameter's pooled draws per row, and ``order`` its argsort
    along the rows (any order among ties: they share their rank).
    """
    n = columns.shape[1]
    ordered = np.empty(n)
    first = np.empty(n, dtype=np.int64)
    for p in range(columns.shape[0]):
        for t in range(n):
            ordered[t] = columns[p, order[p, t]]
        _score_runs(ordered, order[p], table, out[p], first)


@njit(cache=True, nogil=True, error_model="numpy")
def split_scores(columns, order, table, bulk, folded):
    """The normal scores of each row's ranks (``bulk``) and of its folded draws' (``folded``).

    ``columns`` is (P, n), the split chains' draws of each parameter, and ``order`` its
    argsort along the rows. The folded draws are
    ``|x - median(x)|``, the median as NumPy's (the mean of the two middle draws for even n).
    """
    n = columns.shape[1]
    ordered = np.empty(n)
    merged = np.empty(n, dtype=np.int64)
    first = np.empty(n, dtype=np.int64)
    half = n // 2
    for p in range(columns.shape[0]):
        x, rank_order = columns[p], order[p]
        for t in range(n):
            ordered[t] = x[rank_order[t]]
        _score_runs(ordered, rank_order, table, bulk[p], first)
        if n % 2:
            med = ordered[half]
        else:
            med = (ordered[half - 1] + ordered[half]) / 2.0
        below = 0  # the draws below the median are ordered[:below]
        while below < n and ordered[below] < med:
            below += 1
        # Merge the draws below the median, backwards (med - x ascending), with those from it
        # up (x - med ascending); each is |x - med| exactly as NumPy computes it. Selects,
        # not branches: which side comes next is a coin toss no branch predicts.
        i, j = below - 1, below
        for t in range(n):
            ii, jj = max(i, 0), min(j, n - 1)
            take_i = (i >= 0) & ((j >= n) | (med - ordered[ii] <= ordered[jj] - med))
            merged[t] = rank_order[ii] if take_i else rank_order[jj]
            i -= np.int64(take_i)
            j += 1 - np.int64(take_i)
        for t in range(n):
            ordered[t] = abs(x[merged[t]] - med)
        _score_runs(ordered, merged, table, folded[p], first)


@njit(cache=True, nogil=True, error_model="numpy")
def geyer_ess(acov_mean, mean_var, var_plus, n_total):
    """Bulk ESS of each parameter from its chain-averaged autocovariances (Geyer's sequences).

    ``acov_mean`` is (P, S): the autocovariances at lags 0 .. S - 1 averaged over the chains;
    ``mean_var`` and ``var_plus`` (P,) are the within-chain variance and its sum with the
    between-chain one; ``n_total`` is the number of draws. Geyer's initial positive sequence
    sums the autocorrelation pairs while they stay positive, and his initial monotone sequence
    keeps the pair sums from increasing. NaN where an autocorrelation is NaN.
    """
    P, S = acov_mean.shape
    out = np.empty(P)
    rho = np.empty(S)
    # scalar loops and math's functions rather than array expressions, which numba compiles
    # into loops of their own, each added to a first fit's compilation (measured:
    # benchmarks/README.md, Thresholds)
    for p in range(P):
        a = acov_mean[p]
        for k in range(S):
            rho[k] = 0.0
        rho_even = 1.0
        rho[0] = rho_even
        rho_odd = 1.0 - (mean_var[p] - a[1]) / var_plus[p]
        rho[1] = rho_odd
        t = 1
        while t < S - 3 and rho_even + rho_odd > 0.0:
            rho_even = 1.0 - (mean_var[p] - a[t + 1]) / var_plus[p]
            rho_odd = 1.0 - (mean_var[p] - a[t + 2]) / var_plus[p]
            if rho_even + rho_odd >= 0:
                rho[t + 1] = rho_even
                rho[t + 2] = rho_odd
            t += 2
        max_t = t - 2
        if rho_even > 0:
            rho[max_t + 1] = rho_even
        t = 1
        while t <= max_t - 2:
            if rho[t + 1] + rho[t + 2] > rho[t - 1] + rho[t]:
                rho[t + 1] = (rho[t - 1] + rho[t]) / 2.0
                rho[t + 2] = rho[t + 1]
            t += 2
        nan = False
        for k in range(S):
            nan |= math.isnan(rho[k])
        if nan:
            out[p] = np.nan
            continue
        total = 0.0
        for k in range(max_t + 1):
            total += rho[k]
        tau = -1.0 + 2.0 * total
        if max_t + 1 < S:
            tau += rho[max_t + 1]
        out[p] = n_total / max(tau, 1.0 / math.log10(n_total))
    return out
