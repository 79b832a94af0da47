"""MCMC convergence diagnostics: rank-normalised split R-hat and bulk effective sample size.

Both follow Vehtari, Gelman, Simpson, Carpenter and Buerkner (2021), "Rank-normalization,
folding, and localization: an improved R-hat for assessing convergence of MCMC", Bayesian
Analysis 16(2), the same definitions as ``arviz.rhat(method="rank")`` and
``arviz.ess(method="bulk")``:

* every chain is split in two halves (so a drifting chain shows up as disagreeing halves);
* the pooled draws are replaced by normal scores of their ranks, ``Phi^-1((r - 3/8) / (S + 1/4))``;
* R-hat is the maximum of the classic Gelman-Rubin statistic on the rank-normalised draws
  ("bulk") and on the rank-normalised folded draws ``|x - median|`` ("tail");
* bulk ESS is ``S / tau`` with the integrated autocorrelation time ``tau`` estimated from the
  multi-chain autocorrelations with Geyer's initial positive and initial monotone sequences.

Rank normalisation makes both invariant to monotone transformations of a parameter (R-hat of
``sigma`` equals R-hat of ``log sigma``) and robust to heavy tails.
"""

import numpy as np
import scipy.fft
import scipy.special

__all__ = ["diagnostics", "ess_bulk", "rank_normalize", "split_rhat"]


def _as_draws(draws):
    """(chains, draws, params) float64; a 2-D input is one parameter (chains, draws)."""
    draws = np.asarray(draws, dtype=np.float64)
    if draws.ndim == 2:
        draws = draws[:, :, None]
    if draws.ndim != 3:
        raise ValueError(
            f"draws must have shape (n_chains, n_draws) or (n_chains, n_draws, n_params); "
            f"got {draws.shape}."
        )
    return draws


def _split_chains(draws):
    """Split each chain into two halves: (2C, S // 2, P). An odd middle draw is dropped."""
    half = draws.shape[1] // 2
    return np.concatenate([draws[:, :half], draws[:, draws.shape[1] - half :]], axis=0)


def rank_normalize(draws):
    """Replace each draw by the normal score of its rank among all chains' draws.

    Each parameter is ranked separately (Blom's offset 3/8, ties averaged).

    Parameters
    ----------
    draws : ndarray of shape (n_chains, n_draws, n_params)
        MCMC draws.

    Returns
    -------
    z : ndarray of shape (n_chains, n_draws, n_params)
        The normal scores.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.sampler import rank_normalize
    >>> rank_normalize(np.array([[[5.0], [1.0]], [[3.0], [2.0]]])).ravel().round(3)
    array([ 1.049, -1.049,  0.299, -0.299])
    """
    C, S, P = draws.shape
    return _normal_scores(draws.reshape(C * S, P)).reshape(C, S, P)


def _normal_scores(flat):
    """Normal scores of each column's average ranks, (n, P): one sort per column.

    Ties (a MALA chain repeats its state at every rejection, some 40% of the draws) share
    the mean of their ranks, as ``scipy.stats.rankdata(method='average')``. Average ranks
    are multiples of 1/2, so the scores come from a table of the 2n possible values rather
    than one ``ndtri`` per draw.
    """
    n, P = flat.shape
    columns = np.ascontiguousarray(flat.T)  # (P, n): each parameter's draws contiguous
    order = np.argsort(columns, axis=1)  # any order among ties: they share their rank
    ordered = np.take_along_axis(columns, order, axis=1)
    starts = np.ones((P, n), dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    first = np.flatnonzero(starts)  # where each run of equal draws begins, column by column
    length = np.diff(np.append(first, P * n))
    begin = first % n
    # twice the average rank of a run of positions begin .. begin + length - 1 (0-based)
    twice_rank = np.repeat(2 * begin + length + 1, length)
    table = scipy.special.ndtri((np.arange(2 * n + 1) / 2.0 - 3.0 / 8.0) / (n + 0.25))
    scores = np.empty(P * n)
    scores[(order + (n * np.arange(P))[:, None]).ravel()] = table[twice_rank]
    return scores.reshape(P, n).T


def _split_scores(draws):
    """The normal scores of the split chains and of their folded draws, (2C, S // 2, P)."""
    split = _split_chains(draws)
    folded = np.abs(split - np.median(split.reshape(-1, split.shape[2]), axis=0))
    return rank_normalize(split), rank_normalize(folded)


def _gelman_rubin(draws):
    """Classic (non-split) potential scale reduction on (chains, draws, params)."""
    S = draws.shape[1]
    chain_mean = draws.mean(axis=1)
    within = draws.var(axis=1, ddof=1).mean(axis=0)
    between = S * chain_mean.var(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt((between / within + S - 1) / S)


def split_rhat(draws):
    """Rank-normalised split R-hat of each parameter (Vehtari et al. 2021).

    Parameters
    ----------
    draws : array-like of shape (n_chains, n_draws, n_params) or (n_chains, n_draws)
        At least 4 draws per chain.

    Returns
    -------
    rhat : ndarray of shape (n_params,)
        ``max(bulk R-hat, tail R-hat)``; values close to 1 (say < 1.01) indicate that the
        chains agree. NaN for a parameter that is constant across all draws.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.sampler import split_rhat
    >>> draws = np.random.default_rng(0).standard_normal((4, 500, 2))
    >>> bool(np.all(np.abs(split_rhat(draws) - 1) < 0.01))
    True
    """
    return diagnostics(draws)[0]


def diagnostics(draws):
    """Rank-normalised split R-hat and bulk ESS of each parameter, sharing their ranks.

    The same values as :func:`split_rhat` and :func:`ess_bulk`, for the cost of two sorts of
    each parameter's draws (the split chains', the folded ones') instead of three.

    Parameters
    ----------
    draws : array-like of shape (n_chains, n_draws, n_params) or (n_chains, n_draws)
        At least 4 draws per chain.

    Returns
    -------
    rhat : ndarray of shape (n_params,)
        As :func:`split_rhat`.
    ess : ndarray of shape (n_params,)
        As :func:`ess_bulk`.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.sampler import diagnostics
    >>> rhat, ess = diagnostics(np.random.default_rng(0).standard_normal((4, 500, 2)))
    >>> rhat.shape, ess.shape
    ((2,), (2,))
    """
    draws = _as_draws(draws)
    if draws.shape[1] < 4:
        raise ValueError(f"R-hat and ESS need at least 4 draws per chain, got {draws.shape[1]}.")
    bulk, folded = _split_scores(draws)
    rhat = np.maximum(_gelman_rubin(bulk), _gelman_rubin(folded))
    const = _constant(draws)
    rhat[const] = np.nan
    return rhat, _ess(bulk, const)


def _constant(draws):
    flat = draws.reshape(-1, draws.shape[2])
    return (flat.max(axis=0) - flat.min(axis=0)) < np.finfo(np.float64).resolution


def _autocov(x):
    """Autocovariances (biased, divided by S) of each chain along axis 1, by FFT; x is
    (chains, draws, params): all parameters in one transform."""
    S = x.shape[1]
    x = x - x.mean(axis=1, keepdims=True)
    m = scipy.fft.next_fast_len(2 * S)
    f = np.fft.rfft(x, n=m, axis=1)
    return np.fft.irfft(f * np.conjugate(f), n=m, axis=1)[:, :S] / S


def _geyer_tau(rho_hat):
    """The integrated autocorrelation time of each column of ``rho_hat`` (S, P), the
    multi-chain autocorrelation estimates, by Geyer's initial positive and initial monotone
    sequences, as ArviZ's loops compute them, for all parameters at once.

    The pairs are ``(rho_0 = 1, rho_1)``, ``(rho_2, rho_3)``, ...; their sums ``Q_j``. The
    positive sequence keeps the pairs up to ``j_l``, the first after the first pair whose sum
    is not positive (or the last whose loop index ``2 j - 1 < S - 3``); the monotone sequence
    replaces each kept pair's sum by the least of the sums before it (a running minimum);
    ``tau = -1 + 2 sum_{j < j_l} min_{i <= j} Q_i + rho_{2 j_l}``, the last term counted when
    positive or when its pair's sum is not negative.
    """
    S, P = rho_hat.shape
    n_pairs = max(1, (S - 1) // 2)  # pair 0 and the pairs j >= 1 with 2 j - 1 < S - 3
    j = np.arange(n_pairs)
    even = rho_hat[np.minimum(2 * j, S - 1)]
    even[0] = 1.0
    odd = rho_hat[np.minimum(2 * j + 1, S - 1)]
    Q = even + odd  # (n_pairs, P)
    # j_l: the first pair j >= 1 whose sum is not positive, else the last pair; 0 when the
    # first pair's sum is not positive
    stop = np.vstack([np.zeros((1, P), dtype=bool), Q[1:] <= 0])
    j_l = np.where(stop.any(axis=0), stop.argmax(axis=0), n_pairs - 1)
    j_l = np.where(Q[0] > 0, j_l, 0)
    kept = np.arange(n_pairs)[:, None] < j_l
    total = np.where(kept, np.minimum.accumulate(Q, axis=0), 0.0).sum(axis=0)
    cols = np.arange(P)
    last = even[j_l, cols]
    last = np.where((last > 0) | (Q[j_l, cols] >= 0), last, 0.0)
    return -1.0 + 2.0 * total + last


def ess_bulk(draws):
    """Bulk effective sample size of each parameter (Vehtari et al. 2021).

    The ESS of the rank-normalised split chains: how many independent draws would estimate
    the centre of the distribution as precisely as these do.

    Parameters
    ----------
    draws : array-like of shape (n_chains, n_draws, n_params) or (n_chains, n_draws)
        At least 4 draws per chain.

    Returns
    -------
    ess : ndarray of shape (n_params,)
        Between 0 and (slightly more than, for antithetic chains) n_chains * n_draws. A
        parameter constant across all draws gets n_chains * n_draws.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.sampler import ess_bulk
    >>> draws = np.random.default_rng(0).standard_normal((4, 500, 2))
    >>> bool(np.all((ess_bulk(draws) > 1500) & (ess_bulk(draws) < 2500)))
    True
    """
    draws = _as_draws(draws)
    if draws.shape[1] < 4:
        raise ValueError(f"ESS needs at least 4 draws per chain, got {draws.shape[1]}.")
    return _ess(rank_normalize(_split_chains(draws)), _constant(draws))


def _ess(z, const):
    """Bulk ESS of each parameter from the split chains' normal scores ``z`` (C, S, P)."""
    C, S, P = z.shape
    acov = _autocov(z)  # (C, S, P)
    mean_var = acov[:, 0].mean(axis=0) * S / (S - 1.0)
    var_plus = mean_var * (S - 1.0) / S
    if C > 1:
        var_plus = var_plus + z.mean(axis=1).var(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho_hat = 1.0 - (mean_var - acov.mean(axis=0)) / var_plus
    n = C * S
    tau = np.maximum(_geyer_tau(rho_hat), 1.0 / np.log10(n))
    ess = np.where(np.isnan(rho_hat).any(axis=0), np.nan, n / tau)
    return np.where(const, float(n), ess)
