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

from .._parallel_kernels import in_ranges
from . import _diagnostics_kernels as kernels

__all__ = ["diagnostics", "ess_bulk", "rank_normalize", "split_rhat"]

#: Draws (chains x draws x parameters) from which :func:`diagnostics` runs on threads, a range
#: of parameters each: below, each range's own overheads are a large part of the work
#: (measured: benchmarks/README.md, Thresholds).
_THREADED_DRAWS = 40_000


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


def _split_columns(draws):
    """Each chain split into two halves, each parameter's contiguous: (P, 2C, S // 2).

    An odd middle draw is dropped. The first halves come first, then the second ones.
    """
    C, S, P = draws.shape
    half = S // 2
    split = np.empty((P, 2 * C, half))
    split[:, :C] = draws[:, :half].transpose(2, 0, 1)
    split[:, C:] = draws[:, S - half :].transpose(2, 0, 1)
    return split


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
    columns = np.ascontiguousarray(draws.reshape(C * S, P).T)
    return _normal_scores(columns).T.reshape(C, S, P)


def _normal_scores(columns):
    """The normal scores of the ranks of each row of ``columns`` (P, n), one sort per row."""
    scores = np.empty_like(columns)
    order = _argsort_rows(columns)
    kernels.normal_scores(columns, order, _score_table(columns.shape[1]), scores)
    return scores


def _argsort_rows(columns):
    """An argsort of each row of ``columns`` (P, n): the kernels' bucket sort, NumPy's for the
    rows it declines."""
    order = np.empty(columns.shape, dtype=np.intp)
    declined = np.empty(columns.shape[0], dtype=np.bool_)
    kernels.bucket_argsort(columns, order, declined)
    if declined.any():
        order[declined] = np.argsort(columns[declined], axis=1)
    return order


def _score_table(n):
    """The normal scores ``Phi^-1((r - 3/8) / (n + 1/4))`` of the ranks ``r = i / 2``.

    Average ranks (ties share the mean of their ranks, as ``scipy.stats.rankdata(method=
    'average')``) are multiples of 1/2, so the kernels look their scores up here rather than
    call ``ndtri`` once per draw.
    """
    return scipy.special.ndtri((np.arange(2 * n + 1) / 2.0 - 3.0 / 8.0) / (n + 0.25))


def _split_scores(draws):
    """The normal scores of the split chains and of their folded draws, each (P, 2C, S // 2)."""
    split = _split_columns(draws)
    columns = split.reshape(split.shape[0], -1)
    bulk, folded = np.empty_like(split), np.empty_like(split)
    order = _argsort_rows(columns)
    kernels.split_scores(
        columns,
        order,
        _score_table(columns.shape[1]),
        bulk.reshape(columns.shape),
        folded.reshape(columns.shape),
    )
    return bulk, folded


def _gelman_rubin(z):
    """Classic (non-split) potential scale reduction on (params, chains, draws)."""
    S = z.shape[2]
    chain_mean = z.mean(axis=2)
    within = z.var(axis=2, ddof=1).mean(axis=1)
    between = S * chain_mean.var(axis=1, ddof=1)
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

    The same values as :func:`split_rhat` and :func:`ess_bulk`, for the cost of one sort of
    each parameter's draws: the folded draws' order is merged from it.

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
    P = draws.shape[2]
    rhat, ess = np.empty(P), np.empty(P)

    def run(p0, p1):  # parameters p0 .. p1 - 1: each parameter's values are its own
        part = draws[:, :, p0:p1]
        bulk, folded = _split_scores(part)
        rhat[p0:p1] = np.maximum(_gelman_rubin(bulk), _gelman_rubin(folded))
        const = _constant(part)
        rhat[p0:p1][const] = np.nan
        ess[p0:p1] = _ess(bulk, const)

    # NumPy's sorts and FFTs and the kernels release the GIL
    if draws.size >= _THREADED_DRAWS:
        in_ranges(run, P)
    else:
        run(0, P)
    return rhat, ess


def _constant(draws):
    flat = draws.reshape(-1, draws.shape[2])
    return (flat.max(axis=0) - flat.min(axis=0)) < np.finfo(np.float64).resolution


def _mean_autocov(z):
    """The autocovariances (biased, divided by S) along the last axis, averaged over the
    chains (axis 1), by FFT: (P, S).

    The average is taken of the power spectra, so one inverse transform per parameter serves
    all its chains; the parameters go through in groups whose spectra take about a megabyte,
    faster than all at once (measured: benchmarks/README.md, Thresholds).
    """
    P, C, S = z.shape
    m = scipy.fft.next_fast_len(2 * S)
    out = np.empty((P, S))
    group = max(1, 2**20 // (16 * C * (m // 2 + 1)))
    for start in range(0, P, group):
        part = z[start : start + group]
        f = np.fft.rfft(part - part.mean(axis=-1, keepdims=True), n=m, axis=-1)
        power = (f.real**2 + f.imag**2).mean(axis=1)
        out[start : start + group] = np.fft.irfft(power, n=m, axis=-1)[:, :S] / S
    return out


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
    split = _split_columns(draws)
    return _ess(
        _normal_scores(split.reshape(split.shape[0], -1)).reshape(split.shape), _constant(draws)
    )


def _ess(z, const):
    """Bulk ESS of each parameter from the split chains' normal scores ``z`` (P, chains, S).

    The multi-chain autocorrelations of Vehtari et al. (2021): each chain's autocovariances,
    averaged over the chains and scaled by the pooled variance ``var_plus``.
    """
    C, S = z.shape[1:]
    mean_var = z.var(axis=2, ddof=1).mean(axis=1)
    var_plus = mean_var * (S - 1.0) / S
    if C > 1:
        var_plus += z.mean(axis=2).var(axis=1, ddof=1)
    ess = kernels.geyer_ess(_mean_autocov(z), mean_var, var_plus, C * S)
    ess[const] = C * S
    return ess
