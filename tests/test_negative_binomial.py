"""The negative binomial (NB2) model: its kernels against scipy.stats and finite differences,
its coresets and its errors (its posterior: test_extra_models.py)."""

import warnings

import mpmath
import numpy as np
import pytest
import scipy.special
import scipy.stats

from skcoreset import BayesianNegativeBinomialRegression, OMPCoreset, UniformCoreset
from skcoreset.metrics import coreset_laplace_kl
from skcoreset.models import OverdispersionWarning, get_model
from skcoreset.models import _glm_kernels as GK
from skcoreset.models._special_kernels import digamma


def _nb_data(n, seed, alpha=0.5, coef=(0.5, -0.3), intercept=1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, len(coef)))
    mu = np.exp(X @ np.asarray(coef) + intercept)
    r = 1.0 / alpha
    return X, rng.negative_binomial(r, r / (r + mu)).astype(float)


def test_digamma_against_scipy():
    x = np.concatenate([np.logspace(-8, 8, 2000), np.linspace(0.05, 30, 3000)])
    ours = np.array([digamma(t) for t in x])
    ref = scipy.special.digamma(x)
    assert np.max(np.abs(ours - ref) / np.maximum(np.abs(ref), 1.0)) < 4e-14
    assert np.isnan(digamma(0.0)) and np.isnan(digamma(-1.0))


@pytest.mark.parametrize("alpha", [1e-3, 0.1, 1.0, 20.0])
def test_loglik_against_scipy_and_derivatives(alpha):
    """log pmf to 1e-12 relative over counts 0..10^4 and |eta| up to 12; d/deta, the
    curvature and d/d log alpha against central differences."""
    rng = np.random.default_rng(0)
    mpmath.mp.dps = 40
    eta = rng.uniform(-6, 9, 400)
    y = np.concatenate([rng.integers(0, 5, 200), rng.integers(0, 10_000, 200)]).astype(float)
    family = get_model("negative_binomial").family
    r = 1.0 / alpha
    ll = GK.loglik_vector(family, eta, y, alpha)
    model = get_model("negative_binomial", noise_scale=alpha)
    # small counts: scipy.stats to 1e-12 (at alpha = 1e-3 scipy's own r log p cancels, 1e-11)
    small = y < 5
    if alpha >= 0.1:
        ref = scipy.stats.nbinom.logpmf(y[small], r, r / (r + np.exp(eta[small])))
        np.testing.assert_allclose(ll[small], ref, rtol=1e-12)
        np.testing.assert_allclose(model.log_density(y, eta)[small], ref, rtol=1e-12)
    # every count against the exact value (mpmath, 40 digits): for large counts the lgamma
    # terms (up to 1e5) cancel to a result of a few tens, so a float64 formula keeps ~12
    # digits (scipy's too); 4e-12
    small = np.zeros_like(small)
    R = mpmath.mpf(r)
    exact = np.array(
        [
            float(
                mpmath.loggamma(v + R)
                - mpmath.loggamma(R)
                - mpmath.loggamma(v + 1)
                + R * mpmath.log(R / (R + mpmath.exp(e)))
                + v * (e - mpmath.log(R + mpmath.exp(e)))
            )
            for v, e in zip(map(mpmath.mpf, y[~small]), map(mpmath.mpf, eta[~small]))
        ]
    )
    np.testing.assert_allclose(ll[~small], exact, rtol=4e-12)
    np.testing.assert_allclose(model.log_density(y, eta)[~small], exact, rtol=4e-12)
    d, c = GK.dloglik_curv_vector(family, eta, y, alpha)
    h = 1e-5
    up = GK.loglik_vector(family, eta + h, y, alpha)
    down = GK.loglik_vector(family, eta - h, y, alpha)
    scale = np.maximum(1.0, np.abs(d))
    np.testing.assert_allclose(d / scale, (up - down) / (2 * h) / scale, atol=2e-5)
    d_up = GK.dloglik_vector(family, eta + h, y, alpha)
    d_down = GK.dloglik_vector(family, eta - h, y, alpha)
    scale = np.maximum(1.0, np.abs(c))
    np.testing.assert_allclose(c / scale, -(d_up - d_down) / (2 * h) / scale, atol=2e-5)
    # d l / d log alpha, summed with weights one row at a time
    for i in range(0, 400, 37):
        one = (eta[i : i + 1], y[i : i + 1], np.ones(1))
        g = GK.weighted_dlog_extra(family, *one, alpha)
        lp = GK.loglik_vector(family, eta[i : i + 1], y[i : i + 1], alpha * np.exp(h))[0]
        lm = GK.loglik_vector(family, eta[i : i + 1], y[i : i + 1], alpha * np.exp(-h))[0]
        assert g == pytest.approx((lp - lm) / (2 * h), rel=1e-5, abs=1e-5)


def test_coreset_beats_uniform_and_poisson_warns():
    """On overdispersed counts an OMP coreset of the NB model is far closer (Laplace KL) to
    the full NB posterior than a uniform subsample of the same size, and the Poisson model
    on the same data says the counts are overdispersed."""
    X, y = _nb_data(20_000, seed=3, alpha=1.0)
    kl = {}
    for est in (UniformCoreset(n_points=100), OMPCoreset(n_points=100)):
        est.set_params(model="negative_binomial", random_state=0).fit(X, y)
        kl[type(est).__name__] = coreset_laplace_kl(
            X, y, est.sample_indices_, est.sample_weight_, model="negative_binomial"
        )
    assert kl["OMPCoreset"] * 10 < kl["UniformCoreset"], kl
    with pytest.warns(OverdispersionWarning):
        OMPCoreset(n_points=100, model="poisson", random_state=0).fit(X, y)


def test_bad_counts_are_refused():
    X = np.ones((4, 1))
    for y, what in (([0, 1, -2, 3], "negative"), ([0, 1.5, 2, 3], "integer counts")):
        with pytest.raises(ValueError, match=what):
            BayesianNegativeBinomialRegression(n_samples=10, n_warmup=0).fit(X, y)
        with pytest.raises(ValueError, match=what):
            OMPCoreset(model="negative_binomial").fit(X, y)


def test_poisson_data_gives_small_alpha():
    """On Poisson counts the dispersion's moment estimate is near 0 and the NB fit's
    coefficients are the Poisson fit's."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((5000, 2))
    y = rng.poisson(np.exp(X @ [0.4, 0.2] + 1.0)).astype(float)
    model = get_model("negative_binomial")
    with warnings.catch_warnings():
        warnings.simplefilter("error", OverdispersionWarning)
        alpha = model.estimate_noise(model.design(X), y, np.ones(len(y)))
    assert alpha < 0.02
