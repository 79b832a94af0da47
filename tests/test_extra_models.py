"""The models with an extra parameter (negative binomial dispersion, gamma shape): each
Bayesian regression against an independent NumPy MALA of the same posterior, and the gamma
model's kernels against scipy.stats."""

import warnings

import numpy as np
import pytest
import scipy.stats

from skcoreset import (
    BayesianGammaRegression,
    BayesianLinearRegression,
    BayesianNegativeBinomialRegression,
    CoresetMCMC,
    OMPCoreset,
    QuasiNewtonCoreset,
    SparseVICoreset,
    UniformCoreset,
)
from skcoreset.coreset import CoresetQualityWarning
from skcoreset.metrics import coreset_laplace_kl
from skcoreset.models import _glm_kernels as GK
from skcoreset.models import get_model
from skcoreset.sampler import ess_bulk

from .oracles.extra_oracle import log_posterior
from .oracles.mala_oracle import mala_oracle


def _data(name, n, seed, extra):
    """Features, and targets of ``name`` with mean exp(0.5 x0 - 0.3 x1 + 1) and extra
    parameter ``extra`` (the dispersion alpha, or the shape)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    mu = np.exp(X @ [0.5, -0.3] + 1.0)
    if name == "negative_binomial":
        r = 1.0 / extra
        return X, rng.negative_binomial(r, r / (r + mu)).astype(float)
    return X, rng.gamma(extra, mu / extra)


CASES = [
    ("negative_binomial", BayesianNegativeBinomialRegression, "alpha", 0.5),
    ("gamma", BayesianGammaRegression, "shape", 3.0),
]


@pytest.mark.parametrize(("name", "Est", "extra_name", "extra"), CASES)
def test_posterior_against_numpy_mala(name, Est, extra_name, extra):
    """The estimator samples the posterior of (coef, intercept, log extra): its means agree
    with an independent NumPy MALA's within 4.5 Monte Carlo standard errors (from both
    samplers' ESS), its standard deviations within 20% (the sd of an sd estimate at these
    ESS is below 5%), and the data's extra parameter lies within 3 posterior sd."""
    X, y = _data(name, 400, seed=1, extra=extra)
    reg = Est(n_samples=2000, n_warmup=500, random_state=0).fit(X, y)
    draws = getattr(reg, f"{extra_name}_samples_")
    ours = np.column_stack(
        [
            reg.coef_samples_.reshape(-1, 2),
            reg.intercept_samples_.reshape(-1),
            np.log(draws.reshape(-1)),
        ]
    )
    f = log_posterior(name, X, y, reg.prior_scale_, reg._extra_prior)
    oracle, acc, _ = mala_oracle(f, ours.mean(axis=0), 6000, 500, A=np.cov(ours.T), seed=2)
    assert 0.3 < acc < 0.9
    ess_o = ess_bulk(oracle[None])
    ess_n = ess_bulk(ours.reshape(4, -1, 4))
    sd_o, sd_n = oracle.std(axis=0), ours.std(axis=0)
    se = np.sqrt(sd_o**2 / ess_o + sd_n**2 / ess_n)
    assert np.all(np.abs(oracle.mean(axis=0) - ours.mean(axis=0)) < 4.5 * se)
    np.testing.assert_allclose(sd_n, sd_o, rtol=0.2)
    s = ours[:, -1]
    assert abs(s.mean() - np.log(extra)) < 3 * s.std()
    assert getattr(reg, f"{extra_name}_") == pytest.approx(draws.mean())


@pytest.mark.parametrize(("name", "Est", "extra_name", "extra"), CASES)
def test_omp_coreset_beats_uniform(name, Est, extra_name, extra):
    """An OMP coreset of 100 points is at least 10x closer (Laplace KL to the full posterior)
    than a uniform subsample of the same size, at each of three seeds."""
    X, y = _data(name, 20_000, seed=3, extra=extra)
    for seed in range(3):
        kl = {}
        for est in (UniformCoreset(n_points=100), OMPCoreset(n_points=100)):
            est.set_params(model=name, random_state=seed).fit(X, y)
            kl[type(est).__name__] = coreset_laplace_kl(
                X, y, est.sample_indices_, est.sample_weight_, model=name
            )
        assert kl["OMPCoreset"] * 10 < kl["UniformCoreset"], (seed, kl)


@pytest.mark.parametrize(
    ("Est", "extra_name", "y_of"),
    [
        (
            BayesianLinearRegression,
            "noise_scale",
            lambda rng, mu: np.log(mu) + 0.7 * rng.standard_normal(mu.size),
        ),
        (
            BayesianNegativeBinomialRegression,
            "alpha",
            lambda rng, mu: rng.negative_binomial(1.0, 1.0 / (1.0 + mu)),
        ),
        (BayesianGammaRegression, "shape", lambda rng, mu: rng.gamma(3.0, mu / 3.0)),
    ],
)
def test_coreset_posterior_of_the_extra_parameter(Est, extra_name, y_of):
    """MCMC on a 100-point OMP coreset gives the full data's posterior of the coefficients and
    of the extra parameter: every posterior mean within 0.5 full-posterior sd, every sd within
    25%. The projections draw the extra parameter with the coefficients; with it fixed at its
    estimate the coreset lost the residuals' level, and the Gaussian noise scale's posterior
    mean sat 400-600 sd below the full one, the coefficients' sds 10-20x too small."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((20_000, 2))
    y = y_of(rng, np.exp(X @ [0.5, -0.3] + 1.0)).astype(float)

    def draws(est):
        extra = getattr(est, f"{extra_name}_samples_").reshape(-1)
        coef = est.coef_samples_.reshape(-1, 2)
        return np.column_stack([coef, est.intercept_samples_.reshape(-1), np.log(extra)])

    full = draws(Est(n_samples=500, random_state=0).fit(X, y))
    model = Est.__skcoreset_model__
    coreset = OMPCoreset(n_points=100, model=model, random_state=0).fit(X, y)
    idx, w = coreset.sample_indices_, coreset.sample_weight_
    core = draws(Est(n_samples=500, random_state=0).fit(X[idx], y[idx], sample_weight=w))
    z = (core.mean(axis=0) - full.mean(axis=0)) / full.std(axis=0)
    assert np.all(np.abs(z) < 0.5), z
    np.testing.assert_allclose(core.std(axis=0), full.std(axis=0), rtol=0.25)


@pytest.mark.parametrize("Method", [QuasiNewtonCoreset, SparseVICoreset, CoresetMCMC])
@pytest.mark.parametrize(
    ("Est", "extra_name", "y_of"),
    [
        (
            BayesianLinearRegression,
            "noise_scale",
            lambda rng, mu: np.log(mu) + 0.7 * rng.standard_normal(mu.size),
        ),
        (
            BayesianNegativeBinomialRegression,
            "alpha",
            lambda rng, mu: rng.negative_binomial(1.0, 1.0 / (1.0 + mu)),
        ),
    ],
)
def test_kl_coreset_posterior_of_the_extra_parameter(Method, Est, extra_name, y_of):
    """The KL methods' chains sample the extra parameter too: with the pool holding every row
    (8000), their 100-point coresets give the full posterior of the coefficients and of the
    extra parameter (means within 0.5 posterior sd, sds within 25%). At a fixed extra
    parameter SparseVI's coreset put the noise scale's posterior 100 sd off (20 000 rows)."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((8000, 2))
    y = y_of(rng, np.exp(X @ [0.5, -0.3] + 1.0)).astype(float)

    def draws(est):
        extra = getattr(est, f"{extra_name}_samples_").reshape(-1)
        coef = est.coef_samples_.reshape(-1, 2)
        return np.column_stack([coef, est.intercept_samples_.reshape(-1), np.log(extra)])

    full = draws(Est(n_samples=500, random_state=0).fit(X, y))
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoresetQualityWarning)  # the pool is every row
        coreset = Method(n_points=100, model=Est.__skcoreset_model__, random_state=0).fit(X, y)
    idx, w = coreset.sample_indices_, coreset.sample_weight_
    core = draws(Est(n_samples=500, random_state=0).fit(X[idx], y[idx], sample_weight=w))
    z = (core.mean(axis=0) - full.mean(axis=0)) / full.std(axis=0)
    assert np.all(np.abs(z) < 0.5), z
    np.testing.assert_allclose(core.std(axis=0), full.std(axis=0), rtol=0.25)


@pytest.mark.parametrize("shape", [0.3, 1.0, 50.0])
def test_gamma_loglik_against_scipy_and_derivatives(shape):
    """log pdf to 1e-12 relative over targets from 1e-3 to 1e4 and |eta| up to 10; d/deta,
    the curvature and d/d log shape against central differences."""
    rng = np.random.default_rng(0)
    eta = rng.uniform(-8, 10, 400)
    y = np.exp(rng.uniform(np.log(1e-3), np.log(1e4), 400))
    family = get_model("gamma").family
    ll = GK.loglik_vector(family, eta, y, shape)
    ref = scipy.stats.gamma.logpdf(y, shape, scale=np.exp(eta) / shape)
    np.testing.assert_allclose(ll, ref, rtol=1e-12)
    np.testing.assert_allclose(get_model("gamma", extra=shape).log_density(y, eta), ref, rtol=1e-12)
    h = 1e-5
    d, c = GK.dloglik_curv_vector(family, eta, y, shape)
    up, down = (GK.loglik_vector(family, eta + e, y, shape) for e in (h, -h))
    scale = np.maximum(1.0, np.abs(d))
    np.testing.assert_allclose(d / scale, (up - down) / (2 * h) / scale, atol=1e-5)
    d_up, d_down = (GK.dloglik_vector(family, eta + e, y, shape) for e in (h, -h))
    scale = np.maximum(1.0, np.abs(c))
    np.testing.assert_allclose(c / scale, -(d_up - d_down) / (2 * h) / scale, atol=1e-5)
    for i in range(0, 400, 37):
        row = (eta[i : i + 1], y[i : i + 1])
        g = GK.weighted_dlog_extra(family, *row, np.ones(1), shape)
        lp, lm = (GK.loglik_vector(family, *row, shape * np.exp(e))[0] for e in (h, -h))
        assert g == pytest.approx((lp - lm) / (2 * h), rel=1e-5, abs=1e-5)


def test_gamma_refuses_non_positive_targets():
    X = np.ones((4, 1))
    for y, what in (([1.0, 0.0, 2.0, 3.0], "zeros"), ([1.0, -1.0, 2.0, 3.0], "negative")):
        with pytest.raises(ValueError, match=f"positive targets; y has {what}"):
            BayesianGammaRegression(n_samples=10, n_warmup=0).fit(X, y)
        with pytest.raises(ValueError, match="positive targets"):
            OMPCoreset(model="gamma").fit(X, y)


@pytest.mark.parametrize(("name", "Est", "extra_name", "extra"), CASES)
def test_inference_data_holds_the_extra_parameter(name, Est, extra_name, extra):
    """ArviZ export: the extra parameter beside the coefficients, a finite log posterior per
    draw (its prior included), and posterior predictive replicates of the model's kind."""
    arviz = pytest.importorskip("arviz")
    X, y = _data(name, 300, seed=4, extra=extra)
    reg = Est(n_samples=200, n_warmup=200, random_state=0).fit(X, y)
    idata = reg.to_inference_data(random_state=0)
    np.testing.assert_array_equal(
        idata.posterior[extra_name].values, getattr(reg, f"{extra_name}_samples_")
    )
    assert np.all(np.isfinite(idata.sample_stats["lp"].values))
    replicates = idata.posterior_predictive["y"].values
    assert replicates.shape == (4, 200, 300) and np.all(
        replicates > 0 if name == "gamma" else replicates >= 0
    )
    if name == "negative_binomial":
        assert np.all(replicates == np.round(replicates))
    assert np.isfinite(arviz.loo(idata).elpd_loo)


def test_bayesian_poisson_says_the_counts_are_overdispersed():
    from skcoreset import BayesianPoissonRegression
    from skcoreset.models import OverdispersionWarning

    X, y = _data("negative_binomial", 400, seed=5, extra=1.0)
    with pytest.warns(OverdispersionWarning, match="model='negative_binomial'"):
        BayesianPoissonRegression(n_samples=50, n_warmup=50).fit(X, y)
