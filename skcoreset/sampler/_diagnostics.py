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
    """Autocovariances (biased, divided by S) of each chain along axis 1, by FFT."""
    S = x.shape[1]
    x = x - x.mean(axis=1, keepdims=True)
    m = scipy.fft.next_fast_len(2 * S)
    f = np.fft.rfft(x, n=m, axis=1)
    return np.fft.irfft(f * np.conjugate(f), n=m, axis=1)[:, :S] / S


def _ess_one(x):
    """Multi-chain ESS of one parameter, x of shape (chains, draws) (Geyer's sequences)."""
    C, S = x.shape
    acov = _autocov(x)
    mean_var = acov[:, 0].mean() * S / (S - 1.0)
    var_plus = mean_var * (S - 1.0) / S
    if C > 1:
        var_plus += x.mean(axis=1).var(ddof=1)
    rho = np.zeros(S)
    acov_mean = acov.mean(axis=0)
    rho_even = 1.0
    rho[0] = rho_even
    rho_odd = 1.0 - (mean_var - acov_mean[1]) / var_plus
    rho[1] = rho_odd
    # Geyer's initial positive sequence: sum pairs while they stay positive.
    t = 1
    while t < S - 3 and rho_even + rho_odd > 0.0:
        rho_even = 1.0 - (mean_var - acov_mean[t + 1]) / var_plus
        rho_odd = 1.0 - (mean_var - acov_mean[t + 2]) / var_plus
        if rho_even + rho_odd >= 0:
            rho[t + 1] = rho_even
            rho[t + 2] = rho_odd
        t += 2
    max_t = t - 2
    if rho_even > 0:
        rho[max_t + 1] = rho_even
    # Geyer's initial monotone sequence: the pair sums must not increase.
    t = 1
    while t <= max_t - 2:
        if rho[t + 1] + rho[t + 2] > rho[t - 1] + rho[t]:
            rho[t + 1] = (rho[t - 1] + rho[t]) / 2.0
            rho[t + 2] = rho[t + 1]
        t += 2
    n = C * S
    tau = -1.0 + 2.0 * rho[: max_t + 1].sum() + rho[max_t + 1 : max_t + 2].sum()
    tau = max(tau, 1.0 / np.log10(n))
    return np.nan if np.isnan(rho).any() else n / tau


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
    """Bulk ESS of each parameter from the split chains' normal scores ``z``."""
    out = np.empty(z.shape[2])
    for p in range(z.shape[2]):
        out[p] = z.shape[0] * z.shape[1] if const[p] else _ess_one(z[:, :, p])
    return out
