"""Multilevel models: the posterior against a scipy oracle, the block-arrow algebra against
dense matrices, the Laplace fit and the estimator against the exact Gaussian posterior, HMC on
a known target, the coresets of grouped data, the compositions and bad input."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from skcoreset import (
    BayesianMultilevelRegression,
    OMPCoreset,
    QuasiNewtonCoreset,
    SensitivityCoreset,
    UniformCoreset,
)
from skcoreset.coreset._multilevel import group_budgets
from skcoreset.models import Multilevel, get_model
from skcoreset.models import _multilevel_laplace as multilevel_laplace
from skcoreset.models._multilevel import BlockArrow, check_groups
from skcoreset.models._multilevel_laplace import fit_laplace
from skcoreset.sampler import diagnostics
from skcoreset.sampler._block_hmc import sample
from tests.oracles.multilevel_oracle import gaussian_exact, laplace_moments, log_joint

BASES = ["logistic", "poisson", "negative_binomial", "gaussian", "gamma", "student_t"]


def grouped(base, n=600, n_groups=12, tau=0.6, seed=0, slope=True):
    """Rows of ``base`` with a random intercept (and slope on column 0) per group."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    g = rng.integers(0, n_groups, n)
    u = rng.normal(0, tau, (n_groups, 2))
    eta = X @ [0.4, -0.3] + 0.2 + u[g, 0] + (u[g, 1] * X[:, 0] if slope else 0)
    if base == "logistic":
        y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    elif base == "poisson":
        y = rng.poisson(np.exp(eta)).astype(float)
    elif base == "negative_binomial":
        mu = np.exp(eta)
        y = rng.negative_binomial(2.0, 2.0 / (2.0 + mu)).astype(float)
    elif base == "gaussian":
        y = eta + rng.normal(0, 0.5, n)
    elif base == "student_t":  # heavy tails: t with 4 df, scale 0.5
        y = eta + 0.5 * rng.standard_t(4.0, n)
    else:
        y = rng.gamma(3.0, np.exp(eta) / 3.0)
    return X, y, g


def posterior(base, centring=None, seed=0):
    X, y, g = grouped(base, seed=seed)
    spec = Multilevel(base, slopes=[0])
    w = np.random.default_rng(seed + 1).uniform(0.5, 2.0, y.size)
    codes, labels = check_groups(g, y.size)
    y = spec.base_model().encode_targets(y) if base != "logistic" else y
    post = spec.posterior(X, y, codes, len(labels), w)
    if centring is not None:
        post.centring = centring
    return post


def random_theta(post, rng):
    theta = rng.normal(0, 0.3, post.n_params)
    theta[post.D + post.E : post.K] = rng.normal(-0.5, 0.2, post.q)
    return theta


@pytest.mark.parametrize("base", BASES)
def test_log_posterior_is_the_oracle_up_to_a_constant(base):
    """The library's log density in the sampler's coordinates is the formula's density of
    (beta, log extra, log tau, u) times the Jacobian of u = tau^(1 - c) v."""
    rng = np.random.default_rng(3)
    post = posterior(base, centring=rng.random((12, 2)))
    diffs = []
    for _ in range(3):
        theta = random_theta(post, rng)
        beta, s, log_tau, _ = post.split(theta)
        _, u = post.effects(theta)
        oracle = log_joint(
            base,
            post.Xd,
            post.Z,
            post.y,
            post.w,
            post.g,
            beta,
            s,
            log_tau,
            u,
            post.prior_scale,
            post.extra_prior,
            post.tau_scale,
        )
        jacobian = np.sum((1 - post.centring) * log_tau)
        diffs.append(post.log_posterior(theta, gradient=False) - oracle - jacobian)
    np.testing.assert_allclose(diffs, diffs[0], rtol=0, atol=1e-8)


def _dense(A, C, D):
    K, (G, q) = A.shape[0], D.shape[:2]
    H = np.zeros((K + G * q, K + G * q))
    H[:K, :K] = A
    for g in range(G):
        s = slice(K + g * q, K + (g + 1) * q)
        H[:K, s], H[s, :K], H[s, s] = C[g], C[g].T, D[g]
    return H


@pytest.mark.parametrize("base", BASES)
def test_gradient_and_hessian_match_finite_differences(base):
    rng = np.random.default_rng(4)
    post = posterior(base, centring=rng.random((12, 2)))
    theta = random_theta(post, rng)
    _, grad = post.log_posterior(theta)
    H = _dense(*post.hessian(theta))
    h = 1e-5
    extras = list(range(post.D, post.D + post.E))  # each extra parameter's row
    for i in [0, 1, 2, *extras, post.D + post.E, post.K - 1, post.K, post.K + 5, -1]:
        e = np.zeros_like(theta)
        e[i] = h
        up, down = post.log_posterior(theta + e), post.log_posterior(theta - e)
        fd = (up[0] - down[0]) / (2 * h)
        assert abs(fd - grad[i]) <= 1e-5 * (1 + abs(grad[i]))
        fd_hess = -(up[1] - down[1]) / (2 * h)
        np.testing.assert_allclose(fd_hess, H[i], rtol=1e-4, atol=1e-4 * (1 + abs(H[i]).max()))


def test_block_arrow_operations_are_the_dense_ones():
    rng = np.random.default_rng(5)
    K, G, q = 4, 7, 2
    M = rng.standard_normal((K + G * q, K + G * q))
    H = M @ M.T + (K + G * q) * np.eye(K + G * q)
    for g in range(G):  # zero the couplings between groups: block-arrow
        for h in range(G):
            if g != h:
                H[K + g * q : K + (g + 1) * q, K + h * q : K + (h + 1) * q] = 0
    A = H[:K, :K]
    C = np.stack([H[:K, K + g * q : K + (g + 1) * q] for g in range(G)])
    D = np.stack([H[K + g * q : K + (g + 1) * q, K + g * q : K + (g + 1) * q] for g in range(G)])
    f = BlockArrow.factor(A, C, D)
    r = rng.standard_normal((3, K + G * q))
    np.testing.assert_allclose(f.solve(r), np.linalg.solve(H, r.T).T, atol=1e-12)
    assert f.logdet() == pytest.approx(np.linalg.slogdet(H)[1], abs=1e-10)
    # R R^T = H: the momentum's covariance; R^{-T} R^{-1} = H^{-1}: the draws'
    R = np.stack([f.r(e) for e in np.eye(K + G * q)], axis=1)
    np.testing.assert_allclose(R @ R.T, H, atol=1e-10)
    np.testing.assert_allclose(f.rt(f.inv_rt(r)), r, atol=1e-12)
    Rinv_t = np.stack([f.inv_rt(e) for e in np.eye(K + G * q)], axis=1)
    np.testing.assert_allclose(Rinv_t @ Rinv_t.T, np.linalg.inv(H), atol=1e-12)
    with pytest.raises(np.linalg.LinAlgError):
        BlockArrow.factor(-A, C, D)


def gaussian_case(n=400, n_groups=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    g = rng.integers(0, n_groups, n)
    y = X @ [0.5, -0.4] + 0.3 + rng.normal(0, 0.7, n_groups)[g] + rng.normal(0, 1.0, n)
    return X, y, g


def test_laplace_fit_of_a_gaussian_model_is_exact_at_its_group_sd():
    """With a known noise the conditional posterior of (beta, u) is Gaussian: the fit's mode
    is the dense solve's at the sd it chose, and that sd maximises the exact marginal."""
    X, y, g = gaussian_case()
    spec = Multilevel(get_model("gaussian", extra=1.0))
    codes, labels = check_groups(g, y.size)
    post = spec.posterior(X, y, codes, len(labels), np.ones(y.size))
    lap = fit_laplace(post)
    beta, _, log_tau, _ = post.split(lap.mean)
    _, u = post.effects(lap.mean)
    # the dense conditional mode at this tau
    Xd = post.Xd
    A = np.hstack([Xd, np.eye(len(labels))[post.g]])
    prec = np.concatenate([1 / post.prior_scale**2, np.full(len(labels), np.exp(-2 * log_tau[0]))])
    mode = np.linalg.solve(A.T @ A + np.diag(prec), A.T @ post.y)
    np.testing.assert_allclose(np.concatenate([beta, u[:, 0]]), mode, atol=1e-7)
    # the exact log marginal of log tau, around the chosen one
    grid = log_tau[0] + np.array([-0.05, 0.0, 0.05])
    logm = [_gaussian_log_marginal(post, lt) for lt in grid]
    assert logm[1] >= max(logm[0], logm[2]) - 1e-6


def _gaussian_log_marginal(post, log_tau):
    from scipy import stats

    n = post.y.size
    tau = np.exp(log_tau)
    cov = np.eye(n) + (post.Xd * post.prior_scale**2) @ post.Xd.T
    cov += tau**2 * (post.g[:, None] == post.g[None, :])
    prior = np.log(2) + stats.t.logpdf(tau, 3, 0, post.tau_scale) + log_tau
    return stats.multivariate_normal.logpdf(post.y, np.zeros(n), cov) + prior


def test_hmc_samples_a_known_gaussian():
    """HMC with a block-arrow mass matrix that is not the target's precision: the draws'
    means and variances within 4 Monte Carlo standard errors of the target's."""
    rng = np.random.default_rng(6)
    K, G = 3, 6
    A = np.diag([2.0, 1.0, 3.0]) + 0.3
    C = rng.normal(0, 0.3, (G, K, 1))
    D = rng.uniform(1.5, 3.0, (G, 1, 1))
    H = _dense(A, C, D)
    mean = rng.standard_normal(K + G)

    def log_posterior(theta):
        d = theta - mean
        return -0.5 * d @ H @ d, -H @ d

    mass = BlockArrow.factor(A * 1.3, C * 0.8, D * 0.7)
    result = sample(
        log_posterior,
        mass,
        np.zeros((4, K + G)),
        n_samples=1500,
        n_warmup=300,
        rng=np.random.default_rng(7),
    )
    draws = result.draws
    _, ess = diagnostics(draws)
    sd = np.sqrt(np.diag(np.linalg.inv(H)))
    err = np.abs(draws.mean(axis=(0, 1)) - mean) / (sd / np.sqrt(ess))
    assert err.max() < 4.5
    var = draws.reshape(-1, K + G).var(axis=0)
    # the variance's Monte Carlo error, sd^2 sqrt(2 / ESS) for Gaussian draws, with the ESS
    # of the squared deviations (HMC's draws can be antithetic in the mean, not in these)
    _, ess_sq = diagnostics((draws - mean) ** 2)
    assert np.all(np.abs(var / sd**2 - 1) < 4.5 * np.sqrt(2 / ess_sq))
    assert np.all(result.acceptance_rate > 0.6)


def test_estimator_matches_the_exact_gaussian_posterior():
    """BayesianMultilevelRegression (noise known) against the exact posterior by quadrature
    over the group sd: every mean within 5 Monte Carlo standard errors, sds within 15 %."""
    X, y, g = gaussian_case()
    spec = Multilevel(get_model("gaussian", extra=1.0))
    est = BayesianMultilevelRegression(spec, n_samples=1000, n_warmup=400, random_state=0)
    est.fit(X, y, groups=g)
    codes, labels = check_groups(g, y.size)
    post = est.laplace_.posterior
    grid = np.linspace(-3.0, 1.5, 400)
    b_mean, b_sd, u_mean, u_sd, t_mean, t_sd = gaussian_exact(
        post.Xd, post.Z, post.y, post.g, post.G, 1.0, post.prior_scale, post.tau_scale, grid
    )
    draws = np.concatenate(
        [
            est.coef_samples_,
            est.intercept_samples_[..., None],
            est.group_effects_samples_[..., 0],
            est.group_sd_samples_,
        ],
        axis=-1,
    )
    _, ess = diagnostics(draws)
    mean = np.concatenate([b_mean, u_mean, [t_mean]])
    sd = np.concatenate([b_sd, u_sd, [t_sd]])
    z = np.abs(draws.mean(axis=(0, 1)) - mean) / (sd / np.sqrt(ess))
    assert z.max() < 5
    np.testing.assert_allclose(draws.reshape(-1, mean.size).std(axis=0) / sd, 1, atol=0.15)
    assert est.rhat_.max() < 1.02


def test_group_budgets_share_the_total_by_mass_within_the_rows():
    n = np.array([5, 100, 1000, 40])
    mass = np.array([1.0, 1.0, 10.0, 0.0])
    b = group_budgets(n, mass, 300, 8)
    assert b.sum() == 300 and np.all(b <= n) and b[0] == 5  # the small group whole
    assert b[2] > b[1] >= 8 and b[3] == 8  # by mass, at the floor without mass
    assert group_budgets(n, mass, 10**6, 8).tolist() == n.tolist()


def test_coreset_keeps_every_group_and_small_groups_whole():
    rng = np.random.default_rng(8)
    sizes = np.r_[np.full(20, 1500), [3, 7]]
    g = np.repeat(np.arange(sizes.size), sizes)
    X = rng.standard_normal((g.size, 2))
    u = rng.normal(0, 0.7, sizes.size)
    y = (rng.random(g.size) < 1 / (1 + np.exp(-(X @ [0.5, -0.5] + u[g])))).astype(int)
    labels = np.array([f"school {k}" for k in range(sizes.size)])[g]
    w = rng.uniform(0.5, 1.5, g.size)
    X0, y0, l0, w0 = X.copy(), y.copy(), labels.copy(), w.copy()
    cs = OMPCoreset(model=Multilevel("logistic"), random_state=0)
    Xm, ym, params = cs.fit_resample(X, y, sample_weight=w, groups=labels)
    for a, b in [(X, X0), (y, y0), (labels, l0), (w, w0)]:
        np.testing.assert_array_equal(a, b)  # the caller's arrays untouched
    assert set(params) == {"sample_weight", "groups"}
    np.testing.assert_array_equal(params["groups"], labels[cs.sample_indices_])
    np.testing.assert_array_equal(cs.sample_groups_, params["groups"])
    assert set(params["groups"]) == set(labels)  # every group keeps rows
    for k in (20, 21):  # the two small groups whole, with their own weights
        rows = np.flatnonzero(g == k)
        kept = np.isin(cs.sample_indices_, rows)
        np.testing.assert_array_equal(cs.sample_indices_[kept], rows)
        np.testing.assert_allclose(cs.sample_weight_[kept], w[rows])
    assert cs.n_groups_kept_whole_ == 2
    assert len(ym) < 0.15 * g.size
    # the weights of each reduced group sum to about its weight total (the likelihood's scale)
    for k in range(3):
        kept = params["groups"] == f"school {k}"
        total = w[g == k].sum()
        assert abs(params["sample_weight"][kept].sum() / total - 1) < 0.1


def test_coreset_posterior_matches_the_full_data_posterior(monkeypatch):
    """The coreset's Laplace fit (same priors) against the full data's: every parameter's
    mode within 0.25 of its sd, sds within 15 % (a deterministic check of the whole path).
    Both fits search the group sd on every row (the default reads a subsample of each group,
    whose own error would blur the comparison)."""
    rng = np.random.default_rng(9)
    g = rng.integers(0, 15, 30000)
    X = rng.standard_normal((g.size, 3))
    u = rng.normal(0, 0.6, 15)
    y = rng.poisson(np.exp(X @ [0.3, -0.2, 0.1] + u[g])).astype(float)
    spec = Multilevel("poisson")
    cs = OMPCoreset(model=spec, random_state=0).fit(X, y, groups=g)
    assert cs.n_points_ < 0.1 * y.size
    full = cs.laplace_
    post = spec.posterior(
        X[cs.sample_indices_],
        y[cs.sample_indices_],
        g[cs.sample_indices_],
        15,
        cs.sample_weight_,
        data_scale=full.posterior.data_scale,
    )
    monkeypatch.setattr(multilevel_laplace, "SEARCH_ROWS_PER_GROUP", 10**9)
    small = fit_laplace(post, "centred")
    ref = fit_laplace(full.posterior, "centred")

    (m1, s1), (m0, s0) = laplace_moments(small), laplace_moments(ref)
    assert np.max(np.abs(m1 - m0) / s0) < 0.25
    np.testing.assert_allclose(s1 / s0, 1, atol=0.15)


def test_student_t_base_has_the_student_t_models_priors():
    """E = 2: log scale ~ N(log sd(y), 3^2) and log df ~ N(E[log nu], sd(log nu)^2) under
    brms's nu ~ gamma(2, rate 0.1) (the non-multilevel StudentTModel's), in that order."""
    from scipy.special import digamma, polygamma

    post = posterior("student_t")
    assert post.E == 2 and post.K == post.D + 2 + post.q
    (m_scale, sd_scale), (m_df, sd_df) = post.extra_prior
    y_sd = post.data_scale[2]
    w = np.random.default_rng(1).uniform(0.5, 2.0, post.y.size)  # as posterior() weights
    y = grouped("student_t")[1]
    # the weighted sd of the targets, up to the n / (n - 1) of its estimate
    assert y_sd == pytest.approx(np.sqrt(np.cov(y, aweights=w)), rel=1.0 / y.size)
    assert (m_scale, sd_scale) == (pytest.approx(np.log(y_sd), abs=1e-12), 3.0)
    assert m_df == pytest.approx(digamma(2.0) - np.log(0.1), abs=1e-12)
    assert sd_df == pytest.approx(np.sqrt(polygamma(1, 2.0)), abs=1e-12)
    # split: the two log extras as an array, to_theta its inverse
    theta = random_theta(post, np.random.default_rng(0))
    beta, s, log_tau, v = post.split(theta)
    assert s.shape == (2,)
    u = post.effects(theta)[1]
    np.testing.assert_allclose(post.to_theta(beta, s, log_tau, u), theta, rtol=1e-15, atol=1e-16)


def test_student_t_estimator_samples_scale_and_df():
    """Heavy-tailed rows (t with 4 df, scale 0.5): the scale's and df's draws as the
    non-multilevel BayesianStudentTRegression names them, the truth within 4 posterior sds
    of their means, and predict the posterior mean of the location."""
    X, y, g = grouped("student_t", n=1500, n_groups=10, slope=False, seed=1)
    est = BayesianMultilevelRegression(
        Multilevel("student_t"), n_samples=400, n_warmup=300, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a short run: checked below
        est.fit(X, y, groups=g)
    assert est.rhat_.max() < 1.05
    assert est.scale_samples_.shape == est.df_samples_.shape == (4, 400)
    assert est.scale_ == pytest.approx(est.scale_samples_.mean())
    for draws, truth in ((est.scale_samples_, 0.5), (est.df_samples_, 4.0)):
        log_draws = np.log(draws)
        assert abs(log_draws.mean() - np.log(truth)) < 4 * log_draws.std()
    assert est.rhat_.shape[0] == 2 + 1 + 2 + 1 + 10  # coef, intercept, extras, sd, effects
    location = X @ est.coef_ + est.intercept_ + est.group_effects_[g, 0]
    np.testing.assert_allclose(est.predict(X, groups=g), location, rtol=1e-10, atol=1e-12)
    az = pytest.importorskip("arviz")
    idata = est.to_inference_data()
    assert isinstance(idata, az.InferenceData)
    np.testing.assert_array_equal(idata.posterior["df"].values, est.df_samples_)
    np.testing.assert_array_equal(idata.posterior["scale"].values, est.scale_samples_)


def test_estimator_predicts_seen_and_unseen_groups():
    X, y, g = grouped("logistic", n=800, n_groups=10, slope=False)
    y = np.where(y > 0, "yes", "no")
    est = BayesianMultilevelRegression(
        Multilevel("logistic"), n_samples=300, n_warmup=200, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y, groups=g)
    assert list(est.classes_) == ["no", "yes"]
    assert est.group_effects_.shape == (10, 1) and est.group_sd_.shape == (1,)
    assert est.group_effects_samples_.shape == (4, 300, 10, 1)
    proba = est.predict_proba(X[:5], groups=g[:5])
    np.testing.assert_allclose(proba.sum(axis=1), 1)
    # an unseen group is the population: the same prediction as no group, whatever its label
    new = est.predict_proba(X[:5], groups=np.full(5, 99))
    np.testing.assert_allclose(new, est.predict_proba(X[:5]), atol=1e-12)
    assert not np.allclose(new, proba)
    assert set(est.predict(X[:5], groups=g[:5])) <= {"no", "yes"}
    assert 0.5 < est.score(X, y, groups=g) <= 1
    az = pytest.importorskip("arviz")
    idata = est.to_inference_data()
    assert isinstance(idata, az.InferenceData)
    assert list(idata.posterior["group_effects"].coords["group"].values) == list(range(10))
    assert idata.posterior["group_effects"].shape == (4, 300, 10, 1)
    clone(est)  # the parameters are scikit-learn's


def test_pipeline_and_metadata_routing_carry_the_groups():
    import sklearn
    from sklearn.model_selection import GridSearchCV, GroupKFold
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    from skcoreset import CoresetRegressor
    from skcoreset.pipeline import make_pipeline

    X, y, g = grouped("logistic", n=3000, n_groups=12, slope=False)
    spec = Multilevel("logistic")
    est = BayesianMultilevelRegression(spec, n_samples=100, n_warmup=100, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        pipe = make_pipeline(OMPCoreset(random_state=0), est).fit(X, y, groups=g)
        assert pipe.steps[0][1].multilevel_ == spec  # 'auto' took the estimator's model
        assert pipe.predict_proba(X[:3], groups=g[:3]).shape == (3, 2)
        with sklearn.config_context(enable_metadata_routing=True):
            reg = CoresetRegressor(OMPCoreset(model=spec), est, random_state=0)
            reg.set_fit_request(groups=True).set_score_request(groups=True)
            stock = Pipeline([("scale", StandardScaler()), ("model", reg)])
            search = GridSearchCV(
                stock, {"model__coreset__n_points": [200, 400]}, cv=GroupKFold(3)
            ).fit(X, y, groups=g)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert search.best_estimator_.named_steps["model"].coreset_.multilevel_ == spec


def test_bad_input_is_named():
    X, y, g = grouped("poisson", n=200, n_groups=5)
    spec = Multilevel("poisson")
    with pytest.raises(ValueError, match="needs groups="):
        OMPCoreset(model=spec).fit(X, y)
    with pytest.raises(ValueError, match="one label per row"):
        OMPCoreset(model=spec).fit(X, y, groups=g[:-1])
    with pytest.raises(ValueError, match="NaN"):
        OMPCoreset(model=spec).fit(X, y, groups=np.where(g == 1, np.nan, g))
    with pytest.raises(ValueError, match="missing label"):
        OMPCoreset(model=spec).fit(X, y, groups=np.where(g == 1, None, g).astype(object))
    with pytest.raises(ValueError, match="model=Multilevel"):
        OMPCoreset(model="poisson").fit(X, y, groups=g)
    with pytest.raises(ValueError, match="negative"):
        OMPCoreset(model=spec).fit(X, -y, groups=g)
    for cls in (QuasiNewtonCoreset, SensitivityCoreset):
        with pytest.raises((TypeError, ValueError)):
            cls().fit(X, (y > 0).astype(int), groups=g)
    with pytest.raises(TypeError, match="does not build coresets of multilevel"):
        SensitivityCoreset().fit(X, (y > 0).astype(int), groups=g)
    with pytest.raises(ValueError, match="model=Multilevel"):
        QuasiNewtonCoreset(model="poisson").partial_fit(X, y, groups=g)
    with pytest.raises(ValueError, match="model=Multilevel"):
        UniformCoreset(model="poisson").partial_fit(X, y, groups=g)
    fitted = UniformCoreset(model=spec).fit(X, y, groups=g)
    with pytest.raises(ValueError, match="begins with partial_fit"):
        fitted.partial_fit(X, y, groups=g)
    with pytest.raises(ValueError, match="beyond X's 2 columns"):
        OMPCoreset(model=Multilevel("poisson", slopes=[5])).fit(X, y, groups=g)
    with pytest.raises(ValueError, match="single-index"):
        Multilevel("multinomial")
    with pytest.raises(ValueError, match="tau_scale"):
        Multilevel("poisson", tau_scale=-1.0)
    with pytest.raises(ValueError, match="needs groups="):
        BayesianMultilevelRegression(spec).fit(X, y)
    # a Student-t base integrates no group out: a group weight other than 1 is refused
    X, y, g = grouped("student_t", n=200, n_groups=5)
    with pytest.raises(ValueError, match="'student_t' base model integrates no group out"):
        BayesianMultilevelRegression(Multilevel("student_t")).fit(
            X, y, groups=g, group_weight=np.where(g == 0, 2.0, 1.0)
        )


# -- groups integrated out, a coreset of groups ------------------------------------------
@pytest.mark.parametrize(
    "base", ["poisson", "logistic", "negative_binomial", "gaussian", "student_t"]
)
def test_group_marginals_are_the_integrals(base):
    """Adaptive Gauss-Hermite against scipy's quad, group by group; the gradient (Fisher's
    identity on the nodes, both of the Student-t's extra parameters included) against finite
    differences of the value."""
    from scipy import integrate

    from skcoreset.models._multilevel_likelihood import log_extras, n_extras
    from skcoreset.models._multilevel_marginal import GroupMarginals
    from tests.oracles.multilevel_oracle import row_loglik

    rng = np.random.default_rng(10)
    G, n = 12, 5
    g = np.repeat(np.arange(G), n)
    X, y, _ = grouped(base, n=G * n, n_groups=G, slope=False, seed=3)
    model = get_model(base)
    Xd = np.column_stack([X, np.ones(g.size)])
    y = model.encode_targets(y) if base != "logistic" else y
    w = rng.uniform(0.5, 2.0, g.size)
    E = n_extras(model)
    marg = GroupMarginals(model, E, Xd, np.ones((g.size, 1)), y, w, g, G, rng.uniform(0.5, 3, G))
    s = {0: None, 1: np.log(0.6), 2: np.log([0.6, 4.0])}[E]
    beta, log_tau = np.array([0.3, -0.2, 0.1]), np.log([0.7])
    m = marg.log_marginals(beta, s, log_tau)
    extra = None if s is None else np.exp(s)
    for k in range(G):
        rows = g == k
        eta0 = Xd[rows] @ beta

        def integrand(u, shift, rows=rows, eta0=eta0):
            ll = np.sum(w[rows] * row_loglik(base, y[rows], eta0 + u, extra))
            return np.exp(ll - 0.5 * (u / 0.7) ** 2 - shift) / (0.7 * np.sqrt(2 * np.pi))

        centre = marg.u_hat[k, 0]
        shift = np.log(integrand(centre, 0.0))
        value = integrate.quad(integrand, centre - 8, centre + 8, args=(shift,), limit=200)[0]
        assert m[k] == pytest.approx(np.log(value) + shift, abs=1e-6)
    theta = np.concatenate([beta, np.atleast_1d(s) if E else [], log_tau])
    _, grad = marg.value_and_grad(beta, s, log_tau)
    for j in range(theta.size):
        e = np.zeros_like(theta)
        e[j] = 1e-5
        up, down = theta + e, theta - e
        fd = (
            marg.value_and_grad(up[:3], log_extras(up, 3, E), up[-1:], False)[0]
            - marg.value_and_grad(down[:3], log_extras(down, 3, E), down[-1:], False)[0]
        ) / 2e-5
        assert fd == pytest.approx(grad[j], rel=1e-4, abs=1e-4)


def test_integer_group_weight_is_that_many_copies_of_the_group():
    """A group of weight 2 entering by its marginal is two independent copies of it, each
    with its own effect (not its rows weighted by 2): both posteriors agree within their
    Monte Carlo errors."""
    rng = np.random.default_rng(11)
    G, n = 80, 4
    g = np.repeat(np.arange(G), n)
    X = rng.standard_normal((g.size, 2))
    y = rng.poisson(np.exp(X @ [0.3, -0.2] + 0.2 + rng.normal(0, 0.7, G)[g]))
    spec = Multilevel("poisson")
    kw = {"n_samples": 500, "n_warmup": 250, "prior_scale": 3.0}
    weighted = BayesianMultilevelRegression(spec, random_state=0, **kw)
    weighted.fit(X, y, groups=g, group_weight=np.full(g.size, 2.0))
    copies = BayesianMultilevelRegression(spec, random_state=1, **kw)
    copies.fit(np.vstack([X, X]), np.r_[y, y], groups=np.r_[g, g + G])

    def shared(est):
        d = np.concatenate(
            [est.coef_samples_, est.intercept_samples_[..., None], np.log(est.group_sd_samples_)],
            axis=-1,
        )
        return d.mean(axis=(0, 1)), d.reshape(-1, d.shape[-1]).std(axis=0), diagnostics(d)[1]

    (m1, s1, ess1), (m2, s2, ess2) = shared(weighted), shared(copies)
    z = np.abs(m1 - m2) / np.sqrt(s1**2 / ess1 + s2**2 / ess2)
    assert z.max() < 4.5
    np.testing.assert_allclose(s1 / s2, 1, atol=0.12)
    # the rows weighted by 2 are another posterior: its group sd differs
    assert weighted.group_effects_.shape == (G, 1)


def test_recovered_effects_are_the_conditional_posteriors():
    """Effects of groups the fit did not see, drawn per draw: for a Gaussian model of known
    noise their mean is the draws' average of the closed-form conditional means."""
    X, y, g = gaussian_case(n=600, n_groups=12, seed=2)
    spec = Multilevel(get_model("gaussian", extra=1.0))
    seen = g < 8
    est = BayesianMultilevelRegression(spec, n_samples=600, n_warmup=300, random_state=0)
    est.fit(X[seen], y[seen], groups=g[seen])
    est.recover_groups(X[~seen], y[~seen], g[~seen])
    np.testing.assert_array_equal(est.groups_, np.arange(12))
    draws = est.group_effects_samples_[:, :, 8:, 0]  # (C, S, 4)
    beta = est.coef_samples_.reshape(-1, 2)
    b0 = est.intercept_samples_.reshape(-1)
    tau = est.group_sd_samples_.reshape(-1)
    for k in range(8, 12):
        rows = g == k
        resid = y[rows][None, :] - (X[rows] @ beta.T).T - b0[:, None]
        var = 1.0 / (rows.sum() + 1.0 / tau**2)
        exact = np.mean(var * resid.sum(axis=1))
        sd = np.sqrt(np.mean(var + (var * resid.sum(axis=1)) ** 2) - exact**2)
        ess = diagnostics(draws[:, :, k - 8])[1][0]
        assert abs(draws[:, :, k - 8].mean() - exact) < 4.5 * sd / np.sqrt(ess)


def test_coreset_of_small_groups_weights_their_marginals(monkeypatch):
    """Many groups of 4 rows: the coreset keeps a few whole groups with weights on their
    marginals; its Laplace fit of (beta, tau) is the full data's within 0.25 sd."""
    rng = np.random.default_rng(12)
    G = 3000
    g = np.repeat(np.arange(G), 4)
    X = rng.standard_normal((g.size, 2))
    y = rng.random(g.size) < 1 / (1 + np.exp(-(X @ [0.5, -0.5] + rng.normal(0, 0.8, G)[g])))
    spec = Multilevel("logistic")
    cs = OMPCoreset(model=spec, random_state=0)
    Xm, ym, params = cs.fit_resample(X, y.astype(int), groups=g)
    assert set(params) == {"sample_weight", "groups", "group_weight"}
    assert 0 < cs.n_groups_marginal_ <= 80 and cs.n_groups_kept_whole_ == 0
    kept = np.unique(params["groups"])
    assert kept.size == cs.n_groups_marginal_
    for k in kept[:5]:  # whole groups, one weight per group
        rows = params["groups"] == k
        assert rows.sum() == 4 and np.unique(params["group_weight"][rows]).size == 1
    left = np.setdiff1d(np.arange(g.size), cs.sample_indices_)
    np.testing.assert_array_equal(cs.left_out_indices_, left)
    # both with every group integrated out by the same quadrature (the full data's Laplace
    # fit of tau would otherwise integrate by Laplace's method, biased for groups of 4 rows)
    scale = cs.laplace_.posterior.data_scale
    monkeypatch.setattr(multilevel_laplace, "SEARCH_ROWS_PER_GROUP", 10**9)
    full = fit_laplace(
        spec.posterior(
            X,
            y.astype(float),
            g,
            G,
            np.ones(g.size),
            data_scale=scale,
            integrate=np.ones(G, dtype=bool),
        )
    )
    post = spec.posterior(
        Xm,
        ym.astype(float),
        params["groups"],
        G,
        params["sample_weight"],
        data_scale=scale,
        group_weight=params["group_weight"],
    )
    small = fit_laplace(post)
    K = post.K
    sd = np.sqrt([full.factor.solve(np.eye(full.mean.size)[k])[k] for k in range(K)])
    assert np.max(np.abs(small.mean[:K] - full.mean[:K]) / sd) < 0.25
