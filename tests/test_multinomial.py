"""The multinomial (softmax, first class the reference) model: its likelihood, gradient and
Hessian against scipy.stats, finite differences and the NumPy oracle; the K-class
BayesianLogisticRegression against scikit-learn and an independent NumPy MALA; the coreset
estimators on K > 2 classes."""

import warnings

import mpmath
import numpy as np
import pytest
import scipy.special
import scipy.stats
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

import skcoreset
from skcoreset import BayesianLogisticRegression, CoresetClassifier
from skcoreset.metrics import gaussian_kl
from skcoreset.models import (
    CustomModel,
    MultinomialModel,
    _general,
    get_model,
    laplace_approximation,
)
from skcoreset.sampler import ess_bulk

from .oracles import multinomial_oracle as oracle
from .oracles.mala_oracle import mala_oracle

EPS = np.finfo(float).eps
LABELS = np.array(["ash", "birch", "cedar", "doum"])
# coefficients of classes 1..3 against class 0 (two features, then the intercept)
TRUE_B = np.array([[1.0, -0.5, 0.3], [-0.7, 0.8, -0.2], [0.4, 0.9, 0.5]])


def _data(n, K, seed):
    """Two standard normal features, class codes drawn from the model at TRUE_B, the labels
    (strings from LABELS: sorted, so ``LABELS[code]`` is the code's class)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    codes = oracle.simulate(TRUE_B[: K - 1].ravel(), np.column_stack([X, np.ones(n)]), K, rng)
    return X, LABELS[codes.astype(int)], codes


def _wide_design(K, seed, n=300, eta_max=30.0):
    """A design (3 columns and the intercept), targets uniform over the K classes and S = 3
    parameter vectors, each scaled so that its largest predictor |x . beta_k| is eta_max."""
    rng = np.random.default_rng(seed)
    Xd = np.column_stack([rng.uniform(-1, 1, (n, 3)), np.ones(n)])
    y = rng.integers(0, K, n).astype(float)
    thetas = rng.standard_normal((3, (K - 1) * 4))
    for theta in thetas:
        theta *= eta_max / np.abs(Xd @ oracle.coefficients(theta, K, 4).T).max()
    return Xd, y, thetas


def _exact_loglik(theta, Xd, y, K):
    """log p(y_n | x_n, theta) to 40 digits (mpmath), from the predictors in float64."""
    mpmath.mp.dps = 40
    E = Xd @ oracle.coefficients(theta, K, Xd.shape[1]).T  # (n, K), column 0 the zeros
    out = np.empty(Xd.shape[0])
    for n in range(Xd.shape[0]):
        full = [mpmath.mpf(float(e)) for e in E[n]]
        out[n] = float(full[int(y[n])] - mpmath.log(mpmath.fsum(mpmath.exp(e) for e in full)))
    return out, E


# -- the likelihood ------------------------------------------------------------------------
@pytest.mark.parametrize("K", [2, 3, 5])
def test_loglik_against_scipy(K):
    """log p(y | x, theta) to 1e-12 relative over predictors |eta| <= 30: against
    scipy.stats.multinomial.logpmf of the one-hot y (n = 1) on every row where scipy's own
    value keeps 12 digits (|log p| >= 0.01: scipy takes the log of the probability, which
    holds ~1e-16 / |log p| relative digits when p is near 1), and every row against the
    exact value (mpmath, 40 digits), the near-certain ones included."""
    Xd, y, thetas = _wide_design(K, seed=K)
    model = MultinomialModel(n_classes=K)
    draws = model.loglik_draws(thetas, Xd, y)
    assert draws.shape == (3, Xd.shape[0])
    n_scipy = 0
    for s, theta in enumerate(thetas):
        np.testing.assert_allclose(model.loglik(theta, Xd, y), draws[s], rtol=1e-14)
        exact, eta = _exact_loglik(theta, Xd, y, K)
        assert np.abs(eta).max() == pytest.approx(30.0, rel=1e-12)
        # scipy: one-hot counts, the probabilities of the K classes; scipy sets the last
        # probability to 1 - sum(others), so the most probable class is put last
        p = np.exp(eta - eta.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        order = np.argsort(p, axis=1, kind="stable")
        ref = scipy.stats.multinomial.logpmf(
            np.take_along_axis(oracle.one_hot(y, K), order, 1), 1, np.take_along_axis(p, order, 1)
        )
        good = np.abs(exact) >= 0.01
        n_scipy += good.sum()
        np.testing.assert_allclose(ref[good], exact[good], rtol=1e-12)  # the reference itself
        np.testing.assert_allclose(draws[s][good], ref[good], rtol=1e-12)
        np.testing.assert_allclose(draws[s], exact, rtol=1e-12)
        # the oracle's formula (eta_y - logsumexp) keeps a few ulp of eta, not 1e-12 of log p
        bound = 4 * EPS * np.maximum(1.0, np.abs(eta).max(axis=1))
        assert np.all(np.abs(oracle.loglik(theta, Xd, y, K) - exact) <= bound)
    assert n_scipy > 0.5 * draws.size
    assert np.abs(draws).min() < 1e-6  # near-certain rows are among them


def test_loglik_of_near_certain_classes():
    """Rows whose class has probability near 1 (K = 3, y = 2 at predictors (0, 0, eta),
    eta = 5 ... 30: log p = -log(1 + 2 exp(-eta)) from -1.3e-2 to -1.9e-13) to 1e-12
    relative against the exact value: eta_y - logsumexp(eta) would cancel to ~2 digits at
    eta = 30 (the committed NumPy version of d59222d did; the logistic model still does)."""
    eta = np.linspace(5.0, 30.0, 26)
    theta = np.array([0.0, 1.0])  # beta_1 = 0, beta_2 = 1, no intercept
    Xd, y = eta[:, None], np.full(eta.shape, 2.0)
    model = MultinomialModel(n_classes=3, fit_intercept=False)
    exact, _ = _exact_loglik(theta, Xd, y, 3)
    assert np.abs(exact).max() < 2e-2 and np.abs(exact).min() < 1e-12
    np.testing.assert_allclose(model.loglik(theta, Xd, y), exact, rtol=1e-12)


@pytest.mark.parametrize("K", [2, 3, 5])
def test_gradient_against_finite_differences_and_oracle(K):
    """Each row's gradient against central differences of its log-likelihood (h = 1e-6: the
    truncation error h^2 |x|^3 / 6 is below 1e-12 and the rounding error 4 eps |l| / (2h)
    below 1e-8 for |l| <= 12 (|eta| <= 10), so atol 1e-7) and against the oracle's formula
    (1e-12)."""
    Xd, y, thetas = _wide_design(K, seed=10 + K, n=60, eta_max=10.0)
    model = MultinomialModel(n_classes=K)
    G = model.grad_draws(thetas, Xd, y)
    assert G.shape == (3, 60, (K - 1) * 4)
    h = 1e-6
    for s, theta in enumerate(thetas):
        np.testing.assert_allclose(
            G[s], oracle.grad_per_datum(theta, Xd, y, K), rtol=1e-12, atol=1e-14
        )
        np.testing.assert_allclose(
            model.loglik_grad_per_datum(theta, Xd, y), G[s], rtol=1e-14, atol=1e-15
        )
        fd = np.empty_like(G[s])
        for j in range(theta.shape[0]):
            e = np.zeros_like(theta)
            e[j] = h
            fd[:, j] = (model.loglik(theta + e, Xd, y) - model.loglik(theta - e, Xd, y)) / (2 * h)
        np.testing.assert_allclose(G[s], fd, atol=1e-7)


def _as_custom(K, Q, prior_scale=1.0):
    """The oracle's likelihood as a user's model (a loop over the draws): what GeneralModel
    derives from loglik_draws and grad_draws alone (Hessian by differences, blocks of rows)."""

    def loglik(thetas, X, y):
        return np.array([oracle.loglik(t, X, y, K) for t in thetas])

    def grad(thetas, X, y):
        return np.array([oracle.grad_per_datum(t, X, y, K) for t in thetas])

    return CustomModel(loglik, grad, (K - 1) * Q, prior_scale=prior_scale, name="oracle")


@pytest.mark.parametrize("K", [2, 3, 5])
def test_hessian_against_oracle_and_differences(K):
    """``weighted_loglik_hessian`` (the Hessian of -sum_n w_n l_n) against the oracle's
    Kronecker formula (1e-10 relative) and against central differences of the weighted
    gradient (h = 1e-5 |theta|: error ~ h^2 sum|w x^3| + eps |grad| / h, below 1e-6 of the
    largest entry); the generic central-difference Hessian of GeneralModel (a user's model of
    the same likelihood) against the oracle to the same 1e-6."""
    rng = np.random.default_rng(20 + K)
    n = 200
    Xd = np.column_stack([rng.standard_normal((n, 2)), np.ones(n)])
    y = rng.integers(0, K, n).astype(float)
    w = rng.uniform(0.0, 3.0, n)
    theta = 0.5 * rng.standard_normal((K - 1) * 3)
    model = MultinomialModel(n_classes=K)
    H = model.weighted_loglik_hessian(theta, Xd, y, w)
    ref = oracle.neg_hessian(theta, Xd, y, w, K)
    scale = np.abs(ref).max()
    np.testing.assert_allclose(H, ref, rtol=1e-10, atol=1e-12 * scale)
    assert np.all(np.linalg.eigvalsh(H) > 0)
    h = 1e-5 * np.maximum(1.0, np.abs(theta))
    fd = np.empty_like(H)
    for j in range(theta.shape[0]):
        e = np.zeros_like(theta)
        e[j] = h[j]
        up = model.weighted_loglik(theta + e, Xd, y, w)[1]
        down = model.weighted_loglik(theta - e, Xd, y, w)[1]
        fd[:, j] = -(up - down) / (2 * h[j])
    np.testing.assert_allclose(H, fd, atol=1e-6 * scale)
    generic = _as_custom(K, 3).weighted_loglik_hessian(theta, Xd, y, w)
    np.testing.assert_allclose(generic, ref, atol=1e-6 * scale)
    np.testing.assert_allclose(generic, generic.T, atol=0)


@pytest.mark.parametrize("K", [2, 3, 5])
def test_weighted_loglik_chains_against_oracle(K, monkeypatch):
    """The weighted log-likelihood and its gradient at five parameter vectors at once, the
    (rows x draws) log-likelihood matrix, and the same through GeneralModel's blocks of rows
    (forced to 7 rows a block), against the oracle's sums."""
    rng = np.random.default_rng(30 + K)
    n = 150
    Xd = np.column_stack([rng.standard_normal((n, 2)), np.ones(n)])
    y = rng.integers(0, K, n).astype(float)
    w = rng.uniform(0.0, 3.0, n)
    thetas = rng.standard_normal((5, (K - 1) * 3))
    model = MultinomialModel(n_classes=K)
    ll, grad = model.weighted_loglik_chains(thetas, Xd, y, w)
    ll0, grad0 = oracle.weighted_loglik_chains(thetas, Xd, y, w, K)
    np.testing.assert_allclose(ll, ll0, rtol=1e-12)
    np.testing.assert_allclose(grad, grad0, rtol=1e-10, atol=1e-10 * np.abs(grad0).max())
    for s in range(5):
        v, g = model.weighted_loglik(thetas[s], Xd, y, w)
        assert v == pytest.approx(ll0[s], rel=1e-12)
        np.testing.assert_allclose(g, grad0[s], rtol=1e-10, atol=1e-10 * np.abs(grad0).max())
    L = model.loglik_matrix(Xd, y, thetas)
    assert L.shape == (n, 5)
    ref = np.column_stack([oracle.loglik(t, Xd, y, K) for t in thetas])
    np.testing.assert_allclose(L, ref, rtol=1e-12, atol=1e-13)
    # blocks of 7 rows: (7 * S * P) entries a block
    monkeypatch.setattr(_general, "_BLOCK_ENTRIES", 7 * 5 * thetas.shape[1])
    assert len(_general.row_blocks(n, 5 * thetas.shape[1])) == -(-n // 7)
    ll_b, grad_b = _as_custom(K, 3).weighted_loglik_chains(thetas, Xd, y, w)
    np.testing.assert_allclose(ll_b, ll0, rtol=1e-12)
    np.testing.assert_allclose(grad_b, grad0, rtol=1e-10, atol=1e-10 * np.abs(grad0).max())


def test_two_classes_is_the_logistic_model():
    """With K = 2 the multinomial model is the logistic one (class 1 against class 0): the
    same log-likelihoods, gradients, weighted sums and Hessian, and the same Laplace fit."""
    rng = np.random.default_rng(40)
    n = 300
    X = rng.standard_normal((n, 3)) * 3
    y = rng.integers(0, 2, n).astype(float)
    w = rng.uniform(0.0, 2.0, n)
    multi = get_model("multinomial", prior_scale=2.0).with_classes([0, 1])
    logit = get_model("logistic", prior_scale=2.0)
    Xd = multi.design(X)
    np.testing.assert_array_equal(Xd, logit.design(X))
    for theta in rng.standard_normal((4, 4)) * 2:
        # a few ulp of the predictor: logsumexp and softplus round differently
        bound = 8 * EPS * np.maximum(1.0, np.abs(Xd @ theta))
        a, b = multi.loglik(theta, Xd, y), logit.loglik(theta, Xd, y)
        assert np.all(np.abs(a - b) <= bound)
        # (y - p) x: p = exp(eta_y - logsumexp) rounds with an absolute error of a few ulp
        # of eta, the logistic sigmoid with a few eps
        ga = multi.loglik_grad_per_datum(theta, Xd, y)
        gb = logit.loglik_grad_per_datum(theta, Xd, y)
        assert np.all(np.abs(ga - gb) <= 4 * bound[:, None] * np.abs(Xd) + 1e-12 * np.abs(gb))
        (va, ga), (vb, gb) = (
            multi.weighted_loglik(theta, Xd, y, w),
            logit.weighted_loglik(theta, Xd, y, w),
        )
        assert va == pytest.approx(vb, rel=1e-12)
        np.testing.assert_allclose(ga, gb, rtol=1e-10, atol=1e-12 * np.abs(gb).max())
        np.testing.assert_allclose(
            multi.weighted_loglik_hessian(theta, Xd, y, w),
            logit.weighted_loglik_hessian(theta, Xd, y, w),
            rtol=1e-10,
        )
    la = laplace_approximation(multi, Xd, y, w, design=True)
    lb = laplace_approximation(logit, Xd, y, w, design=True)
    np.testing.assert_allclose(la.mean, lb.mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(la.cov, lb.cov, rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize("K", [3, 4])
def test_laplace_fit_against_oracle(K):
    """laplace_approximation of the weighted multinomial posterior against the oracle's
    plain Newton iteration: the mode to 1e-6 of its standard deviations, the covariance to
    1e-6 relative (both stop on tolerances near 1e-12 in the decrement)."""
    X, _, codes = _data(300, K, seed=45 + K)
    Xd = np.column_stack([X, np.ones(len(X))])
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(codes))
    model = get_model("multinomial", prior_scale=2.0).with_classes(LABELS[:K])
    lap = laplace_approximation(model, Xd, codes, w, design=True)
    mode, cov = oracle.laplace(Xd, codes, w, K, 2.0)
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(lap.mean - mode) < 1e-6 * sd)
    np.testing.assert_allclose(lap.cov, cov, rtol=1e-6, atol=1e-6 * sd.min() ** 2)


# -- BayesianLogisticRegression with K > 2 classes -----------------------------------------
def _theta_draws(clf):
    """The sampled parameters (classes 1..K-1, each coefficients then intercept), pooled:
    (draws, (K - 1) (D + 1)), from the estimator's K-row attributes."""
    coef, icpt = clf.coef_samples_, clf.intercept_samples_
    per_class = np.concatenate([coef[:, :, 1:, :], icpt[:, :, 1:, None]], axis=3)
    C, S = coef.shape[:2]
    return per_class.reshape(C, S, -1)


def test_classifier_api_with_four_string_classes():
    """classes_ (sorted labels), predict_proba (n, K) summing to 1, decision_function its log,
    predict its argmax, coef_ (K, D) with the reference class's row 0, intercept_ (K,),
    log_predictive_density the mean log predict_proba of the true labels, posterior
    predictive draws as labels with frequencies within 4.5 binomial standard errors of
    predict_proba, and the K-row posterior and pointwise log-likelihood in
    to_inference_data. (Short chains: nothing here needs them converged.)"""
    n = 200
    X, y, codes = _data(n, 4, seed=50)
    assert len(set(y[:4])) > 1 and y[0] != "ash"  # labels in no particular order
    clf = BayesianLogisticRegression(n_samples=200, n_warmup=200, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    np.testing.assert_array_equal(clf.classes_, np.unique(y))
    K = 4
    proba = clf.predict_proba(X)
    assert proba.shape == (n, K)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all(proba > 0)
    np.testing.assert_allclose(clf.decision_function(X), np.log(proba), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(proba, axis=1)])
    assert clf.coef_samples_.shape == (4, 200, K, 2)
    assert clf.intercept_samples_.shape == (4, 200, K)
    assert clf.coef_.shape == (K, 2) and clf.intercept_.shape == (K,)
    assert np.all(clf.coef_[0] == 0) and clf.intercept_[0] == 0 and np.all(clf.coef_[1:] != 0)
    np.testing.assert_allclose(clf.coef_, clf.coef_samples_.mean(axis=(0, 1)))
    # the predictive probabilities are the mean over the draws of the oracle's softmax
    thetas = _theta_draws(clf).reshape(-1, (K - 1) * 3)
    Xd = np.column_stack([X, np.ones(len(X))])
    np.testing.assert_allclose(proba, oracle.proba_draws(thetas, Xd, K).mean(axis=0), rtol=1e-10)
    lpd = clf.log_predictive_density(X, y)
    coded = np.searchsorted(clf.classes_, y)
    assert lpd == pytest.approx(np.mean(np.log(proba[np.arange(n), coded])), rel=1e-10)
    draws = clf.sample_posterior_predictive(X[:5], n_draws=2000, random_state=1)
    assert draws.shape == (2000, 5) and set(np.unique(draws)) <= set(clf.classes_)
    freq = (draws[:, :, None] == clf.classes_[None, None, :]).mean(axis=0)
    se = np.sqrt(proba[:5] * (1 - proba[:5]) / 2000)
    assert np.all(np.abs(freq - proba[:5]) < 4.5 * se + 1 / 2000)  # + one draw's step
    pytest.importorskip("arviz")
    idata = clf.to_inference_data(random_state=0)
    assert idata.posterior["coef"].dims == ("chain", "draw", "class", "feature")
    assert list(idata.posterior["coef"].coords["class"].values) == list(clf.classes_)
    assert np.all(np.isfinite(idata.sample_stats["lp"].values))
    pointwise = idata.log_likelihood["y"].values.reshape(-1, n)  # log p(y_n | theta_j)
    lpd_draws = scipy.special.logsumexp(pointwise, axis=0) - np.log(pointwise.shape[0])
    assert np.mean(lpd_draws) == pytest.approx(lpd, rel=1e-10)
    assert set(np.unique(idata.posterior_predictive["y"].values)) <= {0, 1, 2, 3}


def test_classifier_against_sklearn_at_a_weak_prior():
    """At prior_scale=100 (prior precision 1e-4 against ~100 per unit of data information)
    the posterior predictive probabilities match scikit-learn's maximum-likelihood fit
    (C=1e8) within half their posterior standard deviation sd_p (from the draws) plus 4 Monte
    Carlo standard errors sd_p / sqrt(ESS). Reason: E[p(theta)] - p(theta_hat) =
    grad p . (E[theta] - theta_hat) + tr(hess p Cov) / 2 + ..., both second order in the
    posterior spread, whereas sd_p = |grad p| sd is first order: their ratio is O(sd) (sd ~
    0.15 here; measured 0.15 at most). The predictions agree wherever scikit-learn's two most
    probable classes are further apart than the two tolerances."""
    X, y, _ = _data(400, 3, seed=60)
    clf = BayesianLogisticRegression(prior_scale=100.0, n_samples=500, random_state=0).fit(X, y)
    sk = LogisticRegression(C=1e8, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_array_equal(clf.classes_, sk.classes_)
    proba, ref = clf.predict_proba(X), sk.predict_proba(X)
    thetas = _theta_draws(clf).reshape(-1, 6)
    Xd = np.column_stack([X, np.ones(len(X))])
    sd_p = oracle.proba_draws(thetas, Xd, 3).std(axis=0)
    tol = 0.5 * sd_p + 4 * sd_p / np.sqrt(clf.ess_.min()) + 1e-9
    assert np.all(np.abs(proba - ref) <= tol), np.max(np.abs(proba - ref) / tol)
    top2 = np.argsort(ref, axis=1)[:, -2:]
    rows = np.arange(len(X))
    margin = ref[rows, top2[:, 1]] - ref[rows, top2[:, 0]]
    clear = margin > tol[rows, top2[:, 1]] + tol[rows, top2[:, 0]]
    assert clear.mean() > 0.75  # the comparison of predictions is not vacuous (measured 0.92)
    np.testing.assert_array_equal(clf.predict(X)[clear], sk.predict(X)[clear])
    assert np.mean(clf.predict(X) == sk.predict(X)) > 0.98


def test_posterior_against_numpy_mala():
    """The K = 3 posterior (6 parameters, 400 rows, prior N(0, 2^2)) against an independent
    NumPy MALA (tests/oracles/mala_oracle.py) on the oracle's log posterior, preconditioned
    by the oracle's Laplace fit: every mean within 4.5 Monte Carlo standard errors
    sqrt(sd_o^2 / ESS_o + sd_n^2 / ESS_n) (bulk ESS of each sampler), every standard
    deviation within 4.5 standard errors of the difference of the two estimates, the sd's
    standard error from the MC error of the variance, sd((theta - mean)^2) / sqrt(ESS of the
    squares), divided by 2 sd (the delta method). The Laplace mode lies within 0.3 sd of
    both means (the posterior is nearly Gaussian)."""
    K, s = 3, 2.0
    X, y, codes = _data(400, K, seed=70)
    clf = BayesianLogisticRegression(prior_scale=s, random_state=0).fit(X, y)
    ours = _theta_draws(clf)  # (chains, draws, 6)
    assert np.all(clf.rhat_ < 1.01)
    Xd = np.column_stack([X, np.ones(len(X))])
    w = np.ones(len(y))
    mode, cov = oracle.laplace(Xd, codes, w, K, s)
    f = oracle.log_posterior(Xd, codes, w, K, s)
    ref, acc, _ = mala_oracle(f, mode, 3000, 300, A=cov, seed=1)
    assert 0.3 < acc < 0.9
    pooled = ours.reshape(-1, 6)

    def moments(draws, chains):
        mean, sd = draws.mean(axis=0), draws.std(axis=0)
        sq = (draws - mean) ** 2
        ess_m = ess_bulk(chains)
        ess_v = ess_bulk(sq.reshape(chains.shape))
        return mean, sd, sd / np.sqrt(ess_m), sq.std(axis=0) / np.sqrt(ess_v) / (2 * sd)

    m_n, sd_n, se_m_n, se_s_n = moments(pooled, ours)
    m_o, sd_o, se_m_o, se_s_o = moments(ref, ref[None])
    assert np.all(np.abs(m_n - m_o) < 4.5 * np.hypot(se_m_n, se_m_o)), (m_n - m_o) / np.hypot(
        se_m_n, se_m_o
    )
    assert np.all(np.abs(sd_n - sd_o) < 4.5 * np.hypot(se_s_n, se_s_o)), (sd_n - sd_o) / np.hypot(
        se_s_n, se_s_o
    )
    assert np.all(np.abs(mode - m_o) < 0.3 * sd_o)
    np.testing.assert_allclose(np.sqrt(np.diag(cov)), sd_o, rtol=0.1)


# -- the coresets ---------------------------------------------------------------------------
_PROJECTION_FREE = {
    "QuasiNewtonCoreset": {"n_draws": 200, "max_iter": 10},
    "SparseVICoreset": {"n_draws": 100, "n_rounds": 10, "n_polish": 10},
    "CoresetMCMC": {"n_train": 100, "n_samples": 100},
}
ESTIMATORS = [
    "OMPCoreset",
    "GIGACoreset",
    "IHTCoreset",
    "FrankWolfeCoreset",
    "UniformCoreset",
    "ImportanceCoreset",
    *_PROJECTION_FREE,
]


def _estimator(name, **params):
    cls = getattr(skcoreset, name)
    extra = _PROJECTION_FREE.get(name, {"n_projections": 100})
    return cls(**extra, **params)


def _laplace_kl(model, X, codes, idx, w):
    """KL(full Laplace fit || coreset Laplace fit), both by laplace_approximation."""
    Xd = model.design(X)
    full = laplace_approximation(model, Xd, codes, np.ones(len(codes)), design=True)
    core = laplace_approximation(model, Xd[idx], codes[idx], w, design=True)
    return gaussian_kl(full.mean, full.cov, core.mean, core.cov)


@pytest.fixture(scope="module")
def three_classes():
    return _data(1000, 3, seed=80)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_coreset_estimators_fit_the_multinomial_model(name, three_classes):
    """With string labels of three classes 'auto' picks the multinomial model, and gives the
    coreset model='multinomial' gives (same seed); the coreset is valid (distinct rows, finite
    positive weights, every class among its labels), and, for every algorithm that is not a
    random subsample, its Laplace KL to the full posterior is below (P / 2)(N / M) = 100,
    the expected KL of a uniform subsample of the same size M (its weighted log-likelihood
    moves the mode by ~sqrt(N / M) posterior sd in each of the P directions)."""
    X, y, codes = three_classes
    M, N, P = 30, len(y), 6
    auto = _estimator(name, n_points=M, prior_scale=5.0, random_state=0).fit(X, y)
    named = _estimator(name, n_points=M, prior_scale=5.0, model="multinomial", random_state=0)
    named.fit(X, y)
    assert auto.model_ == named.model_ == "multinomial"
    np.testing.assert_array_equal(auto.sample_indices_, named.sample_indices_)
    np.testing.assert_array_equal(auto.sample_weight_, named.sample_weight_)
    idx, w = auto.sample_indices_, auto.sample_weight_
    assert 0 < idx.shape[0] <= M and np.unique(idx).shape[0] == idx.shape[0]
    assert idx.min() >= 0 and idx.max() < N
    assert np.all(np.isfinite(w) & (w > 0))
    _, y_core, kw = auto.get_coreset()
    np.testing.assert_array_equal(y_core, y[idx])
    np.testing.assert_array_equal(kw["sample_weight"], w)
    assert set(y_core) == set(LABELS[:3])
    if name == "UniformCoreset":
        np.testing.assert_allclose(w, N / M)
    model = get_model("multinomial", prior_scale=5.0).with_classes(LABELS[:3])
    kl = _laplace_kl(model, X, codes, idx, w)
    assert np.isfinite(kl)
    if name not in ("UniformCoreset", "ImportanceCoreset"):
        assert kl < (P / 2) * (N / M), kl


def test_omp_coreset_is_100x_closer_than_uniform():
    """An OMP coreset of 40 points of 3000 rows (K = 3, P = 6): its Laplace KL to the full
    posterior at least 100x below that of a uniform subsample of the same size, at the worst
    of three seeds."""
    X, y, codes = _data(3000, 3, seed=90)
    model = get_model("multinomial", prior_scale=5.0).with_classes(LABELS[:3])
    ratios = []
    for seed in range(3):
        kl = {}
        for name in ("OMPCoreset", "UniformCoreset"):
            est = _estimator(name, n_points=40, prior_scale=5.0, random_state=seed).fit(X, y)
            kl[name] = _laplace_kl(model, X, codes, est.sample_indices_, est.sample_weight_)
        ratios.append(kl["UniformCoreset"] / kl["OMPCoreset"])
    assert min(ratios) > 100, ratios


def test_partial_fit_with_classes():
    """partial_fit over three blocks whose first lacks a class: with classes= (in any order)
    the coreset is valid (rows across the blocks, labels of all three classes, finite
    positive weights summing to N within 10%) and its Laplace KL is 10x below a uniform
    partial_fit's; with blocks in random order it is as close as the one-shot OMP
    coreset's order of magnitude (below 1e-4). Without classes= the new label of the second
    call is an error naming the call."""
    X, y, codes = _data(3000, 3, seed=100)
    # the first 1000 rows hold no 'cedar', the others in random order
    first = np.flatnonzero(codes != 2)[:1000]
    rest = np.setdiff1d(np.arange(3000), first)
    order = np.concatenate([first, np.random.default_rng(1).permutation(rest)])
    X, y, codes = X[order], y[order], codes[order]
    assert "cedar" not in y[:1000] and "cedar" in y[1000:2000]
    model = get_model("multinomial", prior_scale=5.0).with_classes(LABELS[:3])
    classes = ["cedar", "ash", "birch"]
    kl = {}
    for name in ("OMPCoreset", "UniformCoreset"):
        est = _estimator(name, n_points=40, prior_scale=5.0, random_state=0)
        for start in range(0, 3000, 1000):
            est.partial_fit(X[start : start + 1000], y[start : start + 1000], classes=classes)
        idx, w = est.sample_indices_, est.sample_weight_
        assert est.model_ == "multinomial"
        assert np.unique(idx).shape[0] == idx.shape[0] <= 40 and idx.max() < 3000
        assert np.all(np.isfinite(w) & (w > 0))
        assert abs(w.sum() / 3000 - 1) < 0.1
        _, y_core, _ = est.get_coreset()
        np.testing.assert_array_equal(y_core, y[idx])
        assert set(y_core) == set(classes)
        kl[name] = _laplace_kl(model, X, codes, idx, w)
    assert kl["OMPCoreset"] * 10 < kl["UniformCoreset"], kl
    perm = np.random.default_rng(0).permutation(3000)
    est = _estimator("OMPCoreset", n_points=40, prior_scale=5.0, random_state=0)
    for start in range(0, 3000, 1000):
        rows = perm[start : start + 1000]
        est.partial_fit(X[rows], y[rows], classes=classes)
    assert _laplace_kl(model, X[perm], codes[perm], est.sample_indices_, est.sample_weight_) < 1e-4
    est = _estimator("OMPCoreset", n_points=40, random_state=0)
    est.partial_fit(X[:1000], y[:1000])
    with pytest.raises(ValueError, match="call 1 of partial_fit.*'cedar'"):
        est.partial_fit(X[1000:2000], y[1000:2000])


@pytest.mark.parametrize("name", ESTIMATORS)
def test_integer_classes_are_ambiguous_under_auto(name):
    """Integer targets with three values could be classes, counts or measurements: 'auto'
    refuses them with a message naming model='multinomial'; model='multinomial' takes them,
    and so does a classifier (CoresetClassifier reads y as classes)."""
    X, _, codes = _data(300, 3, seed=110)
    y = codes.astype(int)
    with pytest.raises(ValueError, match="model='multinomial'"):
        _estimator(name, n_points=10, random_state=0).fit(X, y)
    if name == "OMPCoreset":
        est = _estimator(name, n_points=10, model="multinomial", random_state=0).fit(X, y)
        assert est.model_ == "multinomial"
        clf = CoresetClassifier(
            coreset=_estimator(name, n_points=20),
            estimator=LogisticRegression(),
            random_state=0,
        ).fit(X, y)
        assert clf.coreset_.model_ == "multinomial"
        assert clf.predict_proba(X).shape == (300, 3)


def test_bayesian_glm_samples_the_classifier_posterior():
    """BayesianGLM(model='multinomial') on string labels: it could not be fitted (the model
    did not know its classes; labels were converted to floats). It now codes the labels as
    the classifier does and draws the classifier's chains bit for bit, with its predictions,
    probabilities and labelled replicates; MultinomialModel(n_classes=3) fits and predicts
    too (it raised NotImplementedError), and the logistic model by name takes labels."""
    X, labels, codes = _data(600, 3, seed=11)
    kw = dict(n_samples=200, n_warmup=100, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        glm = skcoreset.BayesianGLM(model="multinomial", **kw).fit(X, labels.astype(object))
        clf = BayesianLogisticRegression(**kw).fit(X, labels)
        by_object = skcoreset.BayesianGLM(model=MultinomialModel(n_classes=3), **kw)
        by_object.fit(X, codes)
    np.testing.assert_array_equal(glm.classes_, LABELS[:3])
    np.testing.assert_array_equal(glm.coef_samples_, clf.coef_samples_)
    np.testing.assert_array_equal(glm.intercept_samples_, clf.intercept_samples_)
    np.testing.assert_array_equal(glm.predict(X), clf.predict(X))
    np.testing.assert_allclose(glm.predict_proba(X), clf.predict_proba(X), rtol=1e-14)
    assert glm.score(X, labels) == pytest.approx(clf.log_predictive_density(X, labels))
    assert set(glm.sample_posterior_predictive(X[:5], n_draws=3, random_state=0).ravel()) <= set(
        LABELS[:3]
    )
    np.testing.assert_array_equal(by_object.predict(X), LABELS[:3].searchsorted(clf.predict(X)))
    binary = np.where(labels == "birch", "y", "n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        two = skcoreset.BayesianGLM(model="logistic", **kw).fit(X, binary)
        ref = BayesianLogisticRegression(**kw).fit(X, binary)
    np.testing.assert_array_equal(two.predict(X), ref.predict(X))
    assert set(two.predict(X)) == {"n", "y"}
    np.testing.assert_allclose(two.predict_proba(X), ref.predict_proba(X), rtol=1e-12)
    assert not hasattr(skcoreset.BayesianGLM(model="poisson"), "predict_proba")
