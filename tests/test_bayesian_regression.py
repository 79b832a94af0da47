"""BayesianLogisticRegression, BayesianPoissonRegression, BayesianLinearRegression."""

import sys
import warnings

import numpy as np
import pytest
import scipy.special
from sklearn.exceptions import ConvergenceWarning

from skcoreset.linear_model import (
    BayesianGammaRegression,
    BayesianLinearRegression,
    BayesianLogisticRegression,
    BayesianNegativeBinomialRegression,
    BayesianPoissonRegression,
)
from skcoreset.models import default_prior_scale, get_model, laplace_approximation

# Short chains keep the API tests fast; their R-hat / ESS warnings are expected there.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

SMALL = dict(n_samples=200, n_warmup=150, random_state=0)


def _draws(est):
    """Pooled (coef..., intercept) draws, (J, D + 1)."""
    d = np.concatenate([est.coef_samples_, est.intercept_samples_[..., None]], axis=-1)
    return d, d.reshape(-1, d.shape[-1])


def _linear_data(seed=0, N=60, D=2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D))
    y = X @ np.array([1.0, -0.5])[:D] + 0.4 + 0.8 * rng.standard_normal(N)
    return X, y


def _exact_linear_posterior(X, y, w, sigma, tau):
    Xd = np.column_stack([X, np.ones(len(X))])
    prec = np.eye(Xd.shape[1]) / tau**2 + Xd.T @ (w[:, None] * Xd) / sigma**2
    cov = np.linalg.inv(prec)
    return cov @ Xd.T @ (w * y) / sigma**2, cov


# -- exactness -----------------------------------------------------------------------------


@pytest.mark.parametrize("weighted", [False, True])
def test_conjugate_linear_posterior(weighted):
    X, y = _linear_data()
    w = np.random.default_rng(1).uniform(0.2, 3.0, len(y)) if weighted else np.ones(len(y))
    est = BayesianLinearRegression(noise_scale=0.8, prior_scale=2.0, n_samples=1000, random_state=0)
    est.fit(X, y, sample_weight=w if weighted else None)
    mean, cov = _exact_linear_posterior(X, y, w, 0.8, 2.0)
    _, flat = _draws(est)
    ess = est.ess_
    sd = flat.std(axis=0)
    z_mean = (flat.mean(axis=0) - mean) / (sd / np.sqrt(ess))
    var = np.diag(cov)
    z_var = (flat.var(axis=0) - var) / (var * np.sqrt(2 / ess))
    assert np.all(np.abs(z_mean) < 4), z_mean
    assert np.all(np.abs(z_var) < 4), z_var
    # Correlations too: the sample covariance in the exact posterior's whitened frame is ~ I.
    Lc = np.linalg.cholesky(cov)
    white = np.linalg.solve(Lc, (flat - mean).T)
    assert np.allclose(np.cov(white), np.eye(3), atol=4 * np.sqrt(2 / ess.min()))
    assert np.all(est.noise_scale_samples_ == 0.8) and est.noise_scale_ == 0.8
    np.testing.assert_allclose(est.coef_, flat[:, :2].mean(0))
    np.testing.assert_allclose(est.predict(X), X @ est.coef_ + est.intercept_)


def test_integer_weights_equal_duplicated_rows():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((80, 2))
    y = (rng.random(80) < scipy.special.expit(X @ [1.5, -1.0])).astype(int)
    w = rng.integers(1, 4, 80)
    kw = dict(n_samples=600, n_warmup=200)
    a = BayesianLogisticRegression(random_state=3, **kw).fit(X, y, sample_weight=w)
    b = BayesianLogisticRegression(random_state=4, **kw).fit(np.repeat(X, w, 0), np.repeat(y, w))
    (_, fa), (_, fb) = _draws(a), _draws(b)
    se = np.sqrt(fa.var(0) / a.ess_ + fb.var(0) / b.ess_)
    assert np.all(np.abs(fa.mean(0) - fb.mean(0)) / se < 4)
    assert np.all(np.abs(fa.std(0) / fb.std(0) - 1) < 4 * np.sqrt(1 / a.ess_ + 1 / b.ess_))


@pytest.mark.parametrize(
    "cls, extra",
    [(BayesianNegativeBinomialRegression, "alpha"), (BayesianGammaRegression, "shape")],
)
def test_integer_weights_equal_duplicated_rows_with_a_sampled_extra(cls, extra):
    """The sampled dispersion (shape) too: integer weights give the duplicated rows'
    posterior (the rows' constants summed in another order: equal in law, not bit for bit)."""
    rng = np.random.default_rng(6)
    X = rng.standard_normal((120, 2))
    mu = np.exp(X @ [0.4, -0.3] + 1.0)
    if extra == "alpha":
        y = rng.negative_binomial(2.0, 2.0 / (2.0 + mu))
    else:
        y = rng.gamma(3.0, mu / 3.0)
    w = rng.integers(1, 4, 120)
    kw = dict(n_samples=800, n_warmup=300)
    a = cls(random_state=3, **kw).fit(X, y, sample_weight=w)
    b = cls(random_state=4, **kw)
    b.fit(np.repeat(X, w, 0), np.repeat(y, w))
    fa, fb = (
        np.column_stack(
            [
                e.coef_samples_.reshape(-1, 2),
                e.intercept_samples_.reshape(-1),
                np.log(getattr(e, f"{extra}_samples_").reshape(-1)),
            ]
        )
        for e in (a, b)
    )
    se = np.sqrt(fa.var(0) / a.ess_ + fb.var(0) / b.ess_)
    assert np.all(np.abs(fa.mean(0) - fb.mean(0)) / se < 4)
    assert np.all(np.abs(fa.std(0) / fb.std(0) - 1) < 4 * np.sqrt(1 / a.ess_ + 1 / b.ess_))


def test_zero_weights_are_dropped_exactly():
    X, y = _linear_data(N=30)
    w = np.ones(30)
    w[::3] = 0.0
    a = BayesianLinearRegression(**SMALL).fit(X, y, sample_weight=w)
    b = BayesianLinearRegression(**SMALL).fit(X[w > 0], y[w > 0])
    np.testing.assert_array_equal(a.coef_samples_, b.coef_samples_)
    np.testing.assert_array_equal(a.noise_scale_samples_, b.noise_scale_samples_)


def test_sampled_noise_scale():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((400, 2))
    y = X @ [1.0, 2.0] + 1.0 + 1.5 * rng.standard_normal(400)
    est = BayesianLinearRegression(n_samples=500, random_state=0).fit(X, y)
    assert est.rhat_.shape == (4,)  # two coefficients, intercept, noise scale
    s = est.noise_scale_samples_.ravel()
    resid_sd = np.std(y - X @ est.coef_ - est.intercept_)
    # Flat-ish prior, N = 400: the posterior of sigma is centred on the residual sd with
    # sd ~ sigma / sqrt(2N); allow 4 MC-and-bias sd's.
    assert abs(s.mean() - resid_sd) < 4 * resid_sd / np.sqrt(2 * 400)
    assert abs(s.std() / (resid_sd / np.sqrt(2 * 400)) - 1) < 0.3


@pytest.mark.parametrize(
    "dataset, Est",
    [("phishing", BayesianLogisticRegression), ("biketrips", BayesianPoissonRegression)],
)
def test_real_data_close_to_laplace(dataset, Est, request):
    X, y = request.getfixturevalue(dataset)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = Est(random_state=0).fit(X, y)  # default settings
    assert np.all(est.rhat_ < 1.01)
    assert np.all(np.abs(est.acceptance_rate_ - 0.574) < 0.1)
    lap = laplace_approximation(
        get_model(Est.__skcoreset_model__, prior_scale=est.prior_scale_), X, y
    )
    _, flat = _draws(est)
    # At N ~ 1e4 the posterior is nearly Gaussian: mean - MAP is O(1/N) in parameter units,
    # i.e. O(1/sqrt(N)) ~ 0.01 posterior sd; the Monte Carlo error of the mean is
    # 1/sqrt(ESS) ~ 0.03 sd at ESS ~ 1000. 0.2 sd is ~6 MC standard errors.
    z = (flat.mean(0) - lap.mean) / flat.std(0)
    assert np.all(np.abs(z) < 0.2), z
    sd_ratio = flat.std(0) / np.sqrt(np.diag(lap.cov))
    assert np.all(np.abs(sd_ratio - 1) < 0.1), sd_ratio


# -- API ---------------------------------------------------------------------------------


def _logistic_data(seed=0, N=60):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, 2))
    y = (rng.random(N) < scipy.special.expit(2 * X[:, 0])).astype(int)
    return X, y


def test_classifier_labels_and_predictions():
    X, y01 = _logistic_data()
    labels = np.array(["no", "yes"])[y01]
    clf = BayesianLogisticRegression(**SMALL).fit(X, labels)
    ref = BayesianLogisticRegression(**SMALL).fit(X, y01)
    np.testing.assert_array_equal(clf.classes_, ["no", "yes"])
    np.testing.assert_array_equal(clf.coef_samples_, ref.coef_samples_)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_array_equal(clf.predict(X), np.where(proba[:, 1] > 0.5, "yes", "no"))
    assert clf.score(X, labels) == np.mean(clf.predict(X) == labels)
    # The predictive density of a label is its predict_proba: the two routes must agree.
    lpd = clf.log_predictive_density(X, labels)
    assert lpd == pytest.approx(np.mean(np.log(proba[np.arange(60), y01])), rel=1e-10)
    with pytest.raises(ValueError, match="not among the classes"):
        clf.log_predictive_density(X, np.array(["no"] * 59 + ["maybe"]))
    # -1 / 1 labels too.
    pm = BayesianLogisticRegression(**SMALL).fit(X, 2 * y01 - 1)
    np.testing.assert_array_equal(pm.classes_, [-1, 1])
    np.testing.assert_array_equal(pm.coef_samples_, ref.coef_samples_)


def test_classifier_bad_labels():
    X, _ = _logistic_data()
    with pytest.raises(ValueError, match="one class"):
        BayesianLogisticRegression(**SMALL).fit(X, np.ones(60))
    with pytest.raises(ValueError, match="Unknown label type"):
        BayesianLogisticRegression(**SMALL).fit(X, np.linspace(0, 1, 60))
    y = np.arange(60) % 2
    with pytest.raises(ValueError, match="one class"):
        BayesianLogisticRegression(**SMALL).fit(X, y, sample_weight=(y == 1).astype(float))


@pytest.mark.parametrize("w, match", [(-np.ones(60), "(?i)negative"), (np.zeros(60), "non-zero")])
def test_bad_weights(w, match):
    X, y = _logistic_data()
    with pytest.raises(ValueError, match=match):
        BayesianLogisticRegression(**SMALL).fit(X, y, sample_weight=w)


def test_poisson_targets_and_predictions():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((80, 2))
    y = rng.poisson(np.exp(0.5 * X[:, 0] + 1.0))
    with pytest.raises(ValueError, match="negative"):
        BayesianPoissonRegression(**SMALL).fit(X, y - 5.0)
    est = BayesianPoissonRegression(**SMALL).fit(X, y)
    _, flat = _draws(est)
    rates = np.exp(X @ flat[:, :2].T + flat[:, 2])
    np.testing.assert_allclose(est.predict(X), rates.mean(1))
    ll = y[:, None] * np.log(rates) - rates - scipy.special.gammaln(y + 1)[:, None]
    expected = np.mean(scipy.special.logsumexp(ll, axis=1) - np.log(ll.shape[1]))
    assert est.log_predictive_density(X, y) == pytest.approx(expected, rel=1e-10)
    # Poisson is excluded from several common checks (continuous targets): run two here.
    est2 = BayesianPoissonRegression(**SMALL).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), est2.predict(X))
    assert est.n_features_in_ == 2
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :1])


def test_linear_log_predictive_density():
    X, y = _linear_data(N=40)
    est = BayesianLinearRegression(**SMALL).fit(X, y)
    _, flat = _draws(est)
    s = est.noise_scale_samples_.ravel()
    mu = X @ flat[:, :2].T + flat[:, 2]
    ll = -0.5 * ((y[:, None] - mu) / s) ** 2 - np.log(s) - 0.5 * np.log(2 * np.pi)
    expected = np.mean(scipy.special.logsumexp(ll, axis=1) - np.log(ll.shape[1]))
    assert est.log_predictive_density(X, y) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize(
    "Est", [BayesianLogisticRegression, BayesianPoissonRegression, BayesianLinearRegression]
)
def test_sample_posterior_predictive(Est):
    rng = np.random.default_rng(7)
    X = rng.standard_normal((30, 2))
    y = {
        BayesianLogisticRegression: (X[:, 0] > 0).astype(int),
        BayesianPoissonRegression: rng.poisson(np.exp(X[:, 0] + 1)),
        BayesianLinearRegression: X[:, 0] + 0.5 * rng.standard_normal(30),
    }[Est]
    est = Est(**SMALL).fit(X, y)
    draws = est.sample_posterior_predictive(X[:5], n_draws=2000, random_state=0)
    assert draws.shape == (2000, 5)
    again = est.sample_posterior_predictive(X[:5], n_draws=2000, random_state=0)
    np.testing.assert_array_equal(draws, again)
    if Est is BayesianLogisticRegression:
        assert set(np.unique(draws)) <= set(est.classes_)
        target = est.predict_proba(X[:5])[:, 1]
        sd = np.sqrt(target * (1 - target) / 2000)
    else:
        target = est.predict(X[:5])
        sd = draws.std(0) / np.sqrt(2000)
    # The predictive draws average to the posterior predictive mean (draws are i.i.d. given
    # the 2000 distinct posterior draws; 5 sd leaves room for their own MC error).
    assert np.all(np.abs(draws.mean(0) - target) < 5 * sd + 1e-12)
    with pytest.raises(ValueError, match="n_draws"):
        est.sample_posterior_predictive(X, n_draws=0)


def test_reproducible_pandas_and_fit_attributes():
    pd = pytest.importorskip("pandas")
    X, y = _logistic_data()
    df = pd.DataFrame(X, columns=["a", "b"])
    a = BayesianLogisticRegression(n_chains=3, **SMALL).fit(df, y)
    b = BayesianLogisticRegression(n_chains=3, **SMALL).fit(X, y)
    np.testing.assert_array_equal(a.coef_samples_, b.coef_samples_)
    np.testing.assert_array_equal(a.feature_names_in_, ["a", "b"])
    assert a.coef_samples_.shape == (3, 200, 2) and a.intercept_samples_.shape == (3, 200)
    assert a.acceptance_rate_.shape == (3,) and a.rhat_.shape == a.ess_.shape == (3,)
    assert a.step_size_ > 0 and not hasattr(b, "feature_names_in_")
    c = BayesianLogisticRegression(n_chains=3, fit_intercept=False, **SMALL).fit(X, y)
    assert c.intercept_ == 0.0 and np.all(c.intercept_samples_ == 0) and c.rhat_.shape == (2,)


@pytest.mark.parametrize("precond", ["diag", None])
def test_other_preconditioners(precond):
    X, y = _linear_data()
    est = BayesianLinearRegression(
        noise_scale=0.8, prior_scale=2.0, preconditioner=precond, n_samples=600, random_state=0
    ).fit(X, y)
    mean, _ = _exact_linear_posterior(X, y, np.ones(len(y)), 0.8, 2.0)
    _, flat = _draws(est)
    assert np.all(np.abs(flat.mean(0) - mean) / (flat.std(0) / np.sqrt(est.ess_)) < 4)


def test_convergence_warning():
    X, y = _logistic_data()
    with pytest.warns(ConvergenceWarning, match="R-hat|ESS"):
        BayesianLogisticRegression(n_samples=10, n_warmup=5, random_state=0).fit(X, y)


def test_progress_bar(capsys):
    pytest.importorskip("tqdm")
    X, y = _logistic_data()
    a = BayesianLogisticRegression(progress=True, **SMALL).fit(X, y)
    b = BayesianLogisticRegression(**SMALL).fit(X, y)
    np.testing.assert_array_equal(a.coef_samples_, b.coef_samples_)
    assert "MALA" in capsys.readouterr().err


def test_to_inference_data(monkeypatch):
    X, y = _linear_data(N=30)
    est = BayesianLinearRegression(**SMALL).fit(X, y)
    monkeypatch.setitem(sys.modules, "arviz", None)
    with pytest.raises(ImportError, match="arviz"):
        est.to_inference_data()
    monkeypatch.undo()
    az = pytest.importorskip("arviz")
    idata = est.to_inference_data()
    assert idata.posterior["coef"].shape == (4, 200, 2)
    assert idata.posterior["intercept"].shape == (4, 200)
    np.testing.assert_allclose(idata.posterior["noise_scale"].values, est.noise_scale_samples_)
    np.testing.assert_allclose(az.rhat(idata)["coef"].values, est.rhat_[:2], rtol=1e-10)
    np.testing.assert_allclose(
        az.ess(idata, method="bulk")["intercept"].values, est.ess_[2], rtol=1e-10
    )


# -- scikit-learn's habits: shapes, decision_function, return_std, D^2 --------------------


def test_classifier_has_logistic_regression_shapes_and_decision_function():
    X, y = _logistic_data(N=120)
    clf = BayesianLogisticRegression(**SMALL).fit(X, y)
    _, flat = _draws(clf)
    assert clf.coef_.shape == (1, 2) and clf.intercept_.shape == (1,)
    np.testing.assert_allclose(clf.coef_[0], flat[:, :2].mean(0))
    np.testing.assert_allclose(clf.intercept_[0], flat[:, 2].mean())
    d = clf.decision_function(X)
    assert d.shape == (120,)
    # As LogisticRegression: predict_proba = expit(decision), predict = decision > 0.
    np.testing.assert_allclose(scipy.special.expit(d), clf.predict_proba(X)[:, 1], rtol=1e-12)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[(d > 0).astype(int)])
    # The posterior predictive log-odds, from the draws directly.
    p = scipy.special.expit(X @ flat[:, :2].T + flat[:, 2]).mean(1)
    np.testing.assert_allclose(d, np.log(p) - np.log1p(-p), rtol=1e-9, atol=1e-12)
    # Close to the linear predictor at the posterior mean, which it is not exactly.
    lin = X @ clf.coef_.T[:, 0] + clf.intercept_[0]
    assert np.corrcoef(d, lin)[0, 1] > 0.99
    # Far from the boundary the log probabilities stay finite (log of a rounded 1 - p is not).
    far = clf.predict_log_proba(50 * X)
    assert np.all(np.isfinite(far)) and far.min() < -40


def test_linear_predict_return_std():
    X, y = _linear_data(N=50)
    sigma, tau = 0.8, 2.0
    est = BayesianLinearRegression(noise_scale=sigma, prior_scale=tau, n_samples=1000).fit(X, y)
    X_new = np.array([[0.0, 0.0], [2.0, -1.0], [-3.0, 3.0]])
    mean, sd = est.predict(X_new, return_std=True)
    np.testing.assert_array_equal(mean, est.predict(X_new))
    # Oracle from the draws: Var over draws of the linear predictor plus the noise variance.
    _, flat = _draws(est)
    eta = X_new @ flat[:, :2].T + flat[:, 2]
    np.testing.assert_allclose(sd, np.sqrt(eta.var(1) + sigma**2), rtol=1e-12)
    # Against the exact (conjugate) predictive sd, sqrt(x' S x + sigma^2): the draws'
    # variance has a relative Monte Carlo error of about sqrt(2 / ESS).
    _, cov = _exact_linear_posterior(X, y, np.ones(len(y)), sigma, tau)
    Xd = np.column_stack([X_new, np.ones(3)])
    exact_var = np.einsum("ij,jk,ik->i", Xd, cov, Xd)
    tol = 5 * np.sqrt(2 / est.ess_.min()) * exact_var
    assert np.all(np.abs(sd**2 - sigma**2 - exact_var) < tol)
    # With a sampled noise scale: E[sigma^2] enters, checked against simulated replicates.
    free = BayesianLinearRegression(**SMALL).fit(X, y)
    mean, sd = free.predict(X_new, return_std=True)
    reps = free.sample_posterior_predictive(X_new, n_draws=20000, random_state=0)
    # sd of 20000 replicates: relative error ~ 1/sqrt(2 * 20000) = 0.5 %
    np.testing.assert_allclose(reps.std(0), sd, rtol=0.03)


def test_poisson_predict_return_std_and_d2_score():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((150, 2))
    y = rng.poisson(np.exp(0.4 * X[:, 0] - 0.3 * X[:, 1] + 1.0))
    est = BayesianPoissonRegression(**SMALL).fit(X, y)
    mean, sd = est.predict(X[:4], return_std=True)
    _, flat = _draws(est)
    rate = np.exp(X[:4] @ flat[:, :2].T + flat[:, 2])
    # Law of total variance: Var[y*] = E[rate] + Var[rate].
    np.testing.assert_allclose(sd, np.sqrt(rate.mean(1) + rate.var(1)), rtol=1e-12)
    reps = est.sample_posterior_predictive(X[:4], n_draws=20000, random_state=0)
    np.testing.assert_allclose(reps.std(0), sd, rtol=0.03)
    # score is D^2 (Poisson deviance explained), PoissonRegressor's score, not R^2.
    w = rng.uniform(0.5, 2.0, 150)

    def deviance(mu):
        with np.errstate(divide="ignore", invalid="ignore"):
            term = np.where(y > 0, y * np.log(y / mu), 0.0)
        return 2 * np.sum(w * (term - (y - mu)))

    expected = 1 - deviance(est.predict(X)) / deviance(np.average(y, weights=w))
    assert est.score(X, y, sample_weight=w) == pytest.approx(expected, rel=1e-10)
    r2 = 1 - np.sum((y - est.predict(X)) ** 2) / np.sum((y - y.mean()) ** 2)
    assert abs(est.score(X, y) - r2) > 1e-3


def test_poisson_exposure_recipe_recovers_the_rate():
    """fit(X, y / exposure, sample_weight=exposure) is Poisson counts with log(exposure) as
    offset: the weighted likelihood differs from the offset one by a constant."""
    from sklearn.linear_model import PoissonRegressor

    rng = np.random.default_rng(9)
    N = 3000
    X = rng.standard_normal((N, 2))
    beta, b0 = np.array([0.5, -0.3]), -1.0
    exposure = rng.uniform(0.5, 5.0, N)
    counts = rng.poisson(exposure * np.exp(X @ beta + b0))
    est = BayesianPoissonRegression(n_samples=500, n_warmup=300, random_state=0)
    est.fit(X, counts / exposure, sample_weight=exposure)
    _, flat = _draws(est)
    mean, sd = flat.mean(0), flat.std(0)
    truth = np.append(beta, b0)
    assert np.all(np.abs(mean - truth) < 4 * sd), (mean - truth) / sd
    # Same recipe with scikit-learn's maximum likelihood: the posterior mean agrees to a
    # fraction of a posterior sd (prior and skewness effects are O(1/N)).
    mle = PoissonRegressor(alpha=0.0, tol=1e-10, max_iter=1000)
    mle.fit(X, counts / exposure, sample_weight=exposure)
    z = (mean - np.append(mle.coef_, mle.intercept_)) / sd
    assert np.all(np.abs(z) < 0.3), z
    # The predicted rate is per unit of exposure.
    np.testing.assert_allclose(est.predict(X[:3]), np.exp(X[:3] @ beta + b0), rtol=0.1)


def test_return_std_through_the_compositions(bikes):
    from sklearn.preprocessing import StandardScaler

    from skcoreset.compose import CoresetRegressor
    from skcoreset.coreset import UniformCoreset
    from skcoreset.pipeline import make_pipeline

    X, y = bikes
    X = StandardScaler().fit_transform(X)
    reg = CoresetRegressor(
        UniformCoreset(100, projection=None), BayesianPoissonRegression(**SMALL), random_state=0
    ).fit(X, y)
    mean, sd = reg.predict(X[:5], return_std=True)
    np.testing.assert_array_equal(sd, reg.estimator_.predict(X[:5], return_std=True)[1])
    pipe = make_pipeline(
        UniformCoreset(100, projection=None, random_state=0), BayesianPoissonRegression(**SMALL)
    ).fit(X, y)
    np.testing.assert_array_equal(
        pipe.predict(X[:5], return_std=True)[1], pipe[-1].predict(X[:5], return_std=True)[1]
    )


# -- logging and warnings ------------------------------------------------------------------


def test_verbose_reports_the_phases(capsys, caplog):
    X, y = _logistic_data()
    BayesianLogisticRegression(**SMALL).fit(X, y)
    assert capsys.readouterr().out == ""
    with caplog.at_level("INFO", logger="skcoreset"):
        BayesianLogisticRegression(verbose=1, **SMALL).fit(X, y)
    out = capsys.readouterr().out
    for phase in ("Laplace fit", "MALA", "warm-up", "done in", "step size", "R-hat"):
        assert phase in out, phase
    assert all(line.startswith("[BayesianLogisticRegression]") for line in out.splitlines())
    # the same reports go to the logger
    assert any("Laplace fit" in r.getMessage() for r in caplog.records)


def test_convergence_warning_points_at_the_callers_line():
    from sklearn.model_selection import cross_val_score

    from skcoreset.compose import CoresetClassifier
    from skcoreset.coreset import UniformCoreset
    from skcoreset.pipeline import make_pipeline

    X, y = _logistic_data(N=100)
    short = dict(n_samples=10, n_warmup=5, random_state=0)
    calls = {
        "fit": lambda: BayesianLogisticRegression(**short).fit(X, y),
        "pipeline": lambda: make_pipeline(
            UniformCoreset(40, projection=None, random_state=0), BayesianLogisticRegression(**short)
        ).fit(X, y),
        "meta-estimator": lambda: CoresetClassifier(
            UniformCoreset(40, projection=None, random_state=0), BayesianLogisticRegression(**short)
        ).fit(X, y),
        "cross_val_score": lambda: cross_val_score(BayesianLogisticRegression(**short), X, y, cv=2),
    }
    for name, call in calls.items():
        with warnings.catch_warnings(record=True) as records:
            warnings.simplefilter("always")
            call()
        found = [r for r in records if issubclass(r.category, ConvergenceWarning)]
        assert found, name
        assert all(r.filename == __file__ for r in found), (name, [r.filename for r in found])


# -- the default prior -------------------------------------------------------------------


def test_auto_prior_is_the_coresets_rule():
    X, y = _logistic_data(N=200)
    w = np.random.default_rng(3).uniform(0.5, 2.0, len(y))
    est = BayesianLogisticRegression(**SMALL).fit(X, y, sample_weight=w)
    expected = default_prior_scale(get_model("logistic"), X, y, w)
    np.testing.assert_array_equal(est.prior_scale_, expected)
    fixed = BayesianLogisticRegression(prior_scale=2.0, **SMALL).fit(X, y)
    np.testing.assert_array_equal(fixed.prior_scale_, [2.0, 2.0, 2.0])


@pytest.mark.parametrize("x_unit, y_unit", [(1000.0, 1.0), (1.0, 1000.0), (0.01, 1e4)])
def test_auto_prior_follows_the_units(x_unit, y_unit):
    """Data in other units give the same posterior in those units (the default prior scales
    with the data, the noise prior included); a fixed prior would shrink y * 1000 to nothing."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 2)) + [3.0, -1.0]
    y = X @ [1.0, -0.5] + 2.0 + 0.8 * rng.standard_normal(300)
    ref = BayesianLinearRegression(**SMALL).fit(X, y)
    est = BayesianLinearRegression(**SMALL).fit(X * x_unit, y * y_unit)
    np.testing.assert_allclose(est.prior_scale_[:2], ref.prior_scale_[:2] * y_unit / x_unit)

    # The chains share their seed but not their rounding (the design's columns differ in
    # scale by up to 1e6 here), so compare the posteriors: 4 x 200 draws, ESS >= ~200 per
    # parameter, so the means of two runs differ by ~0.1 posterior sd; allow 0.4.
    def draws(e, x_u, y_u):
        return np.column_stack(
            [
                e.coef_samples_.reshape(-1, 2) * x_u / y_u,
                e.intercept_samples_.ravel() / y_u,
                e.noise_scale_samples_.ravel() / y_u,
            ]
        )

    a, b = draws(ref, 1.0, 1.0), draws(est, x_unit, y_unit)
    assert np.all(np.abs(a.mean(0) - b.mean(0)) < 0.4 * a.std(0)), (a.mean(0), b.mean(0))
    assert np.all(np.abs(b.std(0) / a.std(0) - 1) < 0.25), b.std(0) / a.std(0)
