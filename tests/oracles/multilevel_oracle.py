"""Multilevel posteriors written from the formulas (doc/multilevel and MULTILEVEL.md), with
scipy.stats densities and dense linear algebra: no code shared with the package."""

import numpy as np
from scipy import stats
from scipy.special import expit

TAU_DF = 3.0


def row_loglik(base, y, eta, extra):
    """log p(y | eta, extra) of the base likelihoods, from scipy.stats (``extra`` the
    Student-t's ``(scale, df)``)."""
    if base == "logistic":
        return stats.bernoulli.logpmf(y, expit(eta))
    if base == "poisson":
        return stats.poisson.logpmf(y, np.exp(eta))
    if base == "negative_binomial":  # NB2: variance mu + alpha mu^2
        mu, r = np.exp(eta), 1.0 / extra
        return stats.nbinom.logpmf(y, r, r / (r + mu))
    if base == "gaussian":
        return stats.norm.logpdf(y, eta, extra)
    if base == "gamma":  # mean exp(eta), shape extra
        return stats.gamma.logpdf(y, extra, scale=np.exp(eta) / extra)
    if base == "student_t":  # location eta, scale sigma, df nu
        sigma, nu = extra
        return stats.t.logpdf(y, nu, eta, sigma)
    raise ValueError(base)


def log_joint(
    base, Xd, Z, y, w, g, beta, log_extra, log_tau, u, prior_scale, extra_prior, tau_scale
):
    """The log density of (beta, log extra, log tau, u) given the rows: the weighted
    likelihood, N(0, prior_scale^2) coefficients, a normal log extra (each of the Student-t's
    log scale and log df: ``extra_prior`` their two (mean, sd) pairs), half-Student-t(3,
    tau_scale) sds (with the log's Jacobian) and N(0, tau^2) effects."""
    extra = None if log_extra is None else np.exp(log_extra)
    eta = Xd @ beta + np.sum(Z * u[g], axis=1)
    lp = np.sum(w * row_loglik(base, y, eta, extra))
    lp += stats.norm.logpdf(beta, 0.0, prior_scale).sum()
    if base == "student_t":
        for value, (mean, sd) in zip(log_extra, extra_prior):
            lp += stats.norm.logpdf(value, mean, sd)
    elif log_extra is not None:
        lp += stats.norm.logpdf(log_extra, *extra_prior)
    tau = np.exp(log_tau)
    lp += np.sum(np.log(2) + stats.t.logpdf(tau, TAU_DF, 0.0, tau_scale) + log_tau)
    lp += stats.norm.logpdf(u, 0.0, tau).sum()
    return lp


def gaussian_exact(Xd, Z, y, g, n_groups, noise, prior_scale, tau_scale, grid):
    """The exact posterior of a Gaussian multilevel model with known noise, by quadrature
    over log tau (q = 1): for each tau the conditional posterior of (beta, u) is Gaussian
    (dense solve); ``grid`` of log tau values. Returns the posterior means and sds of beta,
    u (G,) and tau."""
    D = Xd.shape[1]
    A = np.hstack([Xd, np.zeros((Xd.shape[0], n_groups))])
    A[np.arange(Xd.shape[0]), D + g] = Z[:, 0]
    logm, means, seconds = [], [], []
    for lt in grid:
        tau = np.exp(lt)
        prec0 = np.concatenate([1 / prior_scale**2, np.full(n_groups, 1 / tau**2)])
        P = A.T @ A / noise**2 + np.diag(prec0)
        b = A.T @ y / noise**2
        L = np.linalg.cholesky(P)
        m = np.linalg.solve(P, b)
        # log p(y | tau) for y ~ N(0, noise^2 I + A diag(1/prec0) A^T), by the matrix
        # determinant lemma and Woodbury
        quad = y @ y / noise**2 - b @ m
        logdet = 2 * np.log(np.diag(L)).sum() - np.log(prec0).sum() + 2 * y.size * np.log(noise)
        lml = -0.5 * (quad + logdet + y.size * np.log(2 * np.pi))
        prior = np.log(2) + stats.t.logpdf(tau, TAU_DF, 0, tau_scale) + lt
        logm.append(lml + prior)
        cov = np.linalg.inv(P)
        means.append(m)
        seconds.append(np.diag(cov) + m**2)
    logm = np.array(logm)
    p = np.exp(logm - logm.max())
    p /= p.sum()
    mean = p @ np.array(means)
    sd = np.sqrt(p @ np.array(seconds) - mean**2)
    taus = np.exp(np.asarray(grid))
    tau_mean = p @ taus
    tau_sd = np.sqrt(p @ taus**2 - tau_mean**2)
    return mean[:D], sd[:D], mean[D:], sd[D:], tau_mean, tau_sd


def laplace_moments(lap, n_draws=4000):
    """Means and sds of beta, log tau and every group's intercept effect, from draws of a
    multilevel Laplace fit: the scale the coreset tests compare two posteriors on."""
    d = lap.draws(n_draws, np.random.default_rng(0))
    tau, u = lap.posterior.effects(d)
    nat = np.concatenate([d[:, : lap.posterior.D], np.log(tau), u[..., 0]], axis=1)
    return nat.mean(0), nat.std(0)
