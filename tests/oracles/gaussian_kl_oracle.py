"""The conjugate Gaussian model of the coreset papers, in closed form (plain NumPy).

Data x_n ~ N(theta, I_d), prior theta ~ N(0, I_d), per-datum log-likelihood
l_n(theta) = -||x_n - theta||^2 / 2 (+ const). A coreset with weights w has the posterior
N(mu_w, s_w^2 I) with s_w^2 = 1 / (1 + sum w) and mu_w = s_w^2 sum_n w_n x_n, so draws are
exact and KL(pi_w || pi) has a closed form.

:class:`GaussianProblem` is the *problem* object of ``skcoreset.coreset._kl`` for this model,
with exact draws in place of MCMC.
"""

import numpy as np


def posterior(x, w):
    """Mean and variance s^2 of the isotropic Gaussian posterior with weights w on rows x."""
    var = 1.0 / (1.0 + np.sum(w))
    return var * (w @ x), var


def gaussian_kl(mean0, var0, mean1, var1):
    """KL(N(mean0, var0 I) || N(mean1, var1 I))."""
    r = var0 / var1
    return 0.5 * (mean0.size * (r - 1.0 - np.log(r)) + np.sum((mean0 - mean1) ** 2) / var1)


def reverse_kl(x, w, x_full, w_full=None):
    """KL(pi_w || pi) for weights w on rows x against the posterior of x_full."""
    w_full = np.ones(x_full.shape[0]) if w_full is None else w_full
    return gaussian_kl(*posterior(x, w), *posterior(x_full, w_full))


def forward_kl(x, w, x_full, w_full=None):
    """KL(pi || pi_w)."""
    w_full = np.ones(x_full.shape[0]) if w_full is None else w_full
    return gaussian_kl(*posterior(x_full, w_full), *posterior(x, w))


def loglik(x, thetas):
    """Per-datum log-likelihoods -||x_n - theta_s||^2 / 2, shape (S, N)."""
    sq = (thetas**2).sum(axis=1)[:, None] - 2.0 * thetas @ x.T + (x**2).sum(axis=1)[None, :]
    return -0.5 * sq


class GaussianProblem:
    """Candidates ``x`` (all the data by default), exact draws and exact full sums."""

    def __init__(self, x_full, random_state, candidates=None, n_chains=2):
        self.x_full = np.asarray(x_full, dtype=np.float64)
        self.x = self.x_full if candidates is None else self.x_full[candidates]
        self.rng = np.random.default_rng(random_state)
        self.n_chains = n_chains
        self.n_params = self.x_full.shape[1]

    def loglik(self, thetas, idx):
        return loglik(self.x if idx is None else self.x[idx], thetas)

    def full(self, thetas, g_all=None, step=False):
        if g_all is not None and self.x is self.x_full:
            return g_all.sum(axis=1)
        return loglik(self.x_full, thetas).sum(axis=1)

    def draws(self, idx, w, n):
        mean, var = posterior(self.x[idx], w)
        return mean + np.sqrt(var) * self.rng.standard_normal((n, mean.shape[0]))

    def laplace_draws(self, n):
        # the model is conjugate: the Laplace fit of the data is its exact posterior
        mean, var = posterior(self.x_full, np.ones(self.x_full.shape[0]))
        return mean + np.sqrt(var) * self.rng.standard_normal((n, mean.shape[0]))

    def transition(self, idx, w):
        return self.draws(idx, w, self.n_chains)
