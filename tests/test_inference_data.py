"""to_inference_data: the ArviZ export of the Bayesian GLMs, alone and after a coreset."""

import numpy as np
import pytest
import scipy.stats

from skcoreset.linear_model import (
    BayesianLinearRegression,
    BayesianLogisticRegression,
    BayesianPoissonRegression,
    _base,
)

az = pytest.importorskip("arviz")
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

SMALL = dict(n_samples=200, n_warmup=150, n_chains=3, random_state=0)
ESTIMATORS = [BayesianLogisticRegression, BayesianPoissonRegression, BayesianLinearRegression]


def _data(Est, n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    eta = 0.8 * X[:, 0] - 0.5 * X[:, 1]
    if Est is BayesianLogisticRegression:
        y = np.where(rng.random(n) < 1 / (1 + np.exp(-eta)), "yes", "no")
    elif Est is BayesianPoissonRegression:
        y = rng.poisson(np.exp(eta + 0.5)).astype(float)
    else:
        y = eta + 0.3 + 0.7 * rng.standard_normal(n)
    return X, y


def _oracle_pointwise(est, X, y, w):
    """w_n log p(y_n | x_n, theta_j) from scipy.stats, (chain, draw, n)."""
    eta = np.einsum("csd,nd->csn", est.coef_samples_, X) + est.intercept_samples_[..., None]
    if isinstance(est, BayesianLogisticRegression):
        codes = (y == est.classes_[1]).astype(int)
        ll = scipy.stats.bernoulli.logpmf(codes, 1 / (1 + np.exp(-eta)))
    elif isinstance(est, BayesianPoissonRegression):
        ll = scipy.stats.poisson.logpmf(y, np.exp(eta))
    else:
        ll = scipy.stats.norm.logpdf(y, eta, est.noise_scale_samples_[..., None])
    return w * ll


def _oracle_log_prior(est, y, w):
    theta = np.concatenate([est.coef_samples_, est.intercept_samples_[..., None]], axis=-1)
    lp = scipy.stats.norm.logpdf(theta, 0.0, est.prior_scale_).sum(-1)
    if isinstance(est, BayesianLinearRegression):
        # prior_scale='auto': log(noise_scale) ~ N(log sd(y), 3^2), sd weighted by w
        centre = 0.5 * np.log(np.cov(y, aweights=w, bias=True))
        lp += scipy.stats.norm.logpdf(np.log(est.noise_scale_samples_), centre, 3.0)
    return lp


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_groups_shapes_and_values(Est):
    pd = pytest.importorskip("pandas")
    X, y = _data(Est)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    w[[3, 10]] = 0.0  # zero-weight rows are not observations of the posterior
    df = pd.DataFrame(X, columns=["age", "dose"])
    est = Est(**SMALL).fit(df, y, sample_weight=w)
    idata = est.to_inference_data(random_state=0)
    kept = np.flatnonzero(w > 0)
    for group in (
        "posterior",
        "sample_stats",
        "log_likelihood",
        "observed_data",
        "constant_data",
        "posterior_predictive",
    ):
        assert group in idata.groups(), group
    assert idata.posterior["coef"].shape == (3, 200, 2)
    assert list(idata.posterior["feature"].values) == ["age", "dose"]
    np.testing.assert_array_equal(idata.observed_data["obs_id"].values, kept)
    np.testing.assert_array_equal(idata.constant_data["X"].values, X[kept])
    np.testing.assert_array_equal(idata.constant_data["sample_weight"].values, w[kept])
    # pointwise log-likelihood: the weighted terms w_n l_n, from scipy.stats
    ll = idata.log_likelihood["y"].values
    assert ll.shape == (3, 200, len(kept))
    np.testing.assert_allclose(ll, _oracle_pointwise(est, X[kept], y[kept], w[kept]), rtol=1e-10)
    # lp: normalised prior plus the weighted log-likelihood
    expected_lp = _oracle_log_prior(est, y[kept], w[kept]) + ll.sum(-1)
    np.testing.assert_allclose(idata.sample_stats["lp"].values, expected_lp, rtol=1e-10)
    # per-chain sampler statistics, repeated over the draws
    acc = idata.sample_stats["acceptance_rate"].values
    np.testing.assert_array_equal(acc, np.repeat(est.acceptance_rate_[:, None], 200, axis=1))
    np.testing.assert_array_equal(idata.sample_stats["step_size"].values, est.step_size_)
    # observed data in the model's coding; replicates of the same rows
    observed = idata.observed_data["y"].values
    if Est is BayesianLogisticRegression:
        np.testing.assert_array_equal(observed, (y[kept] == "yes").astype(float))
    else:
        np.testing.assert_array_equal(observed, y[kept])
    pp = idata.posterior_predictive["y"].values
    assert pp.shape == (3, 200, len(kept))
    mean = est.predict_proba(df.iloc[kept])[:, 1] if Est is BayesianLogisticRegression else None
    mean = est.predict(df.iloc[kept]) if mean is None else mean
    # 600 replicates per row: their mean is the predictive mean up to ~5 standard errors
    se = pp.reshape(600, -1).std(0) / np.sqrt(600)
    assert np.all(np.abs(pp.reshape(600, -1).mean(0) - mean) < 5 * se + 1e-9)


def test_lp_is_the_samplers_target_up_to_a_constant():
    """lp differs from the model's unnormalised log posterior (the MALA target) by a constant."""
    from skcoreset.models import get_model

    X, y = _data(BayesianPoissonRegression)
    est = BayesianPoissonRegression(prior_scale=2.0, **SMALL).fit(X, y)
    lp = est.to_inference_data().sample_stats["lp"].values.ravel()
    model = get_model("poisson", prior_scale=2.0)
    Xd = model.design(X)
    theta = np.concatenate([est.coef_samples_, est.intercept_samples_[..., None]], -1)
    target = [model.log_posterior(t, Xd, y, np.ones(len(y)))[0] for t in theta.reshape(-1, 3)]
    diff = lp - np.array(target)
    np.testing.assert_allclose(diff, diff[0], rtol=0, atol=1e-8)


def test_loo_and_waic_on_a_full_data_fit():
    """Unweighted, well-specified: p_loo is near the number of parameters (3), and the LOO
    estimate sits below the in-sample log predictive density by about p_loo."""
    X, y = _data(BayesianLogisticRegression, n=300)
    est = BayesianLogisticRegression(n_samples=500, n_warmup=300, random_state=0).fit(X, y)
    idata = est.to_inference_data()
    loo, waic = az.loo(idata), az.waic(idata)
    assert 1.5 < loo.p_loo < 5 and 1.5 < waic.p_waic < 5
    lpd = est.log_predictive_density(X, y) * len(y)
    assert loo.elpd_loo == pytest.approx(lpd - loo.p_loo, abs=0.05)
    assert np.all(loo.pareto_k.values < 0.7)


def test_after_a_coreset():
    from skcoreset.compose import CoresetClassifier
    from skcoreset.coreset import UniformCoreset
    from skcoreset.pipeline import make_pipeline

    X, y = _data(BayesianLogisticRegression, n=400)
    kw = dict(n_samples=200, n_warmup=150, random_state=0)
    clf = CoresetClassifier(UniformCoreset(50, projection=None), BayesianLogisticRegression(**kw))
    clf.set_params(random_state=0).fit(X, y)
    idata = clf.to_inference_data(random_state=0)
    # observations: the coreset rows (their rows in X) with the coreset weights
    np.testing.assert_array_equal(idata.observed_data["obs_id"].values, clf.sample_indices_)
    np.testing.assert_array_equal(idata.log_likelihood["obs_id"].values, clf.sample_indices_)
    np.testing.assert_allclose(idata.constant_data["sample_weight"].values, clf.sample_weight_)
    ll = idata.log_likelihood["y"].values
    w = clf.sample_weight_
    raw = _oracle_pointwise(clf.estimator_, X[clf.sample_indices_], y[clf.sample_indices_], 1.0)
    np.testing.assert_allclose(ll, w * raw, rtol=1e-10)
    # the skcoreset pipeline delegates to its final step (rows kept by that step)
    pipe = make_pipeline(
        UniformCoreset(50, projection=None, random_state=0), BayesianLogisticRegression(**kw)
    ).fit(X, y)
    pidata = pipe.to_inference_data()
    np.testing.assert_allclose(pidata.constant_data["sample_weight"].values, pipe.sample_weight_)


def test_large_fits_need_the_data_again(monkeypatch):
    X, y = _data(BayesianLinearRegression, n=80)
    small = BayesianLinearRegression(**SMALL).fit(X, y)
    monkeypatch.setattr(_base, "MAX_STORED_ROWS", 50)
    est = BayesianLinearRegression(**SMALL).fit(X, y)
    assert est._training_rows is None  # nothing copied
    with pytest.raises(ValueError, match=r"80 rows.*pass the training data"):
        est.to_inference_data()
    idata = est.to_inference_data(X, y)
    np.testing.assert_allclose(
        idata.log_likelihood["y"].values,
        small.to_inference_data().log_likelihood["y"].values,
        rtol=1e-12,
    )
    with pytest.raises(ValueError, match="not the data this estimator was fitted on"):
        est.to_inference_data(X[:70], y[:70])
    with pytest.raises(ValueError, match="not the data"):
        est.to_inference_data(X, y, sample_weight=np.full(80, 2.0))
    with pytest.raises(ValueError, match="both X and y"):
        est.to_inference_data(X)


def test_the_stored_rows_are_copies():
    X, y = _data(BayesianLinearRegression)
    est = BayesianLinearRegression(**SMALL).fit(X, y)
    before = est.to_inference_data().log_likelihood["y"].values
    X[:] = 0.0  # the caller reuses its array
    after = est.to_inference_data().log_likelihood["y"].values
    np.testing.assert_array_equal(before, after)
