"""The bulk ESS's Geyer sequences as ArviZ writes them: one parameter at a time, in loops.

The oracle of the vectorised ``skcoreset.sampler._diagnostics._geyer_tau`` (the package's
code before it was vectorised, verbatim).
"""

import numpy as np
import scipy.fft


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
