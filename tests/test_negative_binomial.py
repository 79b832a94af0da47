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
    model = get_model("negative_binomial", extra=alpha)
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


def _exact_nb(y, eta, alpha):
    """The NB2 log pmf and its derivative in log alpha (mpmath), with twice the digits the
    difference of lgamma(1 / alpha) or digamma(1 / alpha) terms cancels, and 40 more."""
    with mpmath.workdps(40 + 2 * int(abs(np.log10(alpha)))):
        v, e, r = mpmath.mpf(y), mpmath.mpf(eta), 1 / mpmath.mpf(alpha)
        mu = mpmath.exp(e)
        ll = (
            mpmath.loggamma(v + r)
            - mpmath.loggamma(r)
            - mpmath.loggamma(v + 1)
            + r * mpmath.log(r / (r + mu))
            + v * (e - mpmath.log(r + mu))
        )
        dl_dr = (
            mpmath.digamma(v + r) - mpmath.digamma(r) - mpmath.log(1 + mu / r) + (mu - v) / (r + mu)
        )
        return float(ll), float(-r * dl_dr)


@pytest.mark.parametrize("alpha", [1e-300, 1e-100, 1e-16, 1e-13, 1e-8, 1e-5, 0.01, 0.5])
def test_loglik_and_dispersion_score_toward_the_poisson_limit(alpha):
    """As alpha -> 0 the log pmf stays exact (it was lgamma(y + 1/alpha) - lgamma(1/alpha),
    each near r log r, their difference off by r log r ulp: -53 856 for a Poisson limit of
    -7 462 at alpha = 1e-16) in the kernels, the weighted sums and log_density, and so does
    the score in log alpha (a difference of digammas times r, garbage of 1e273 at alpha =
    1e-289, where it is alpha ((y - mu)^2 - y) / 2): against mpmath, 1e-12 relative."""
    rng = np.random.default_rng(1)
    eta = rng.uniform(-3, 6, 60)
    y = np.concatenate([rng.poisson(np.exp(eta[:50])), rng.integers(0, 3000, 10)]).astype(float)
    family = get_model("negative_binomial").family
    model = get_model("negative_binomial", extra=alpha)
    exact = np.array([_exact_nb(v, e, alpha) for v, e in zip(y, eta)])
    np.testing.assert_allclose(GK.loglik_vector(family, eta, y, alpha), exact[:, 0], rtol=1e-12)
    np.testing.assert_allclose(model.log_density(y, eta), exact[:, 0], rtol=1e-12)
    score = [
        GK.weighted_dlog_extra(family, eta[i : i + 1], y[i : i + 1], np.ones(1), alpha)
        for i in range(60)
    ]
    np.testing.assert_allclose(score, exact[:, 1], rtol=1e-10)
    # the weighted sum of a fit (the extra parameter's constant times the total weight, where
    # the cancellation happened), against the Poisson limit as alpha -> 0
    Xd = np.column_stack([eta, np.ones(60)])
    ll, _ = model.weighted_loglik(np.array([1.0, 0.0]), Xd, y, np.ones(60))
    assert ll == pytest.approx(exact[:, 0].sum(), rel=1e-12)
    if alpha <= 1e-13:
        poisson = scipy.stats.poisson.logpmf(y, np.exp(eta)).sum()
        assert ll == pytest.approx(poisson, rel=1e-10)


def test_no_chain_sticks_at_a_vanishing_dispersion():
    """One count of 1e9 among NB counts: at seed 0 a chain's warm-up reached alpha near
    1e-87, where the score in log alpha (the digamma difference times 1/alpha) was rounding
    error of 1e71, and stayed there with acceptance 0. With the score exact every chain moves
    and stays at the data's dispersion (near 20)."""
    X, y = _nb_data(500, seed=0, alpha=0.5)
    y[0] = 1e9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # R-hat 1.03: one wild count, 500 draws
        fit = BayesianNegativeBinomialRegression(n_samples=500, n_warmup=500, random_state=0)
        fit.fit(X, y)
    assert np.all(fit.acceptance_rate_ > 0.3), fit.acceptance_rate_
    assert np.all(np.median(fit.alpha_samples_, axis=1) > 5.0)


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
        alpha = model.estimate_extra(model.design(X), y, np.ones(len(y)))
    assert alpha < 0.02
