"""The Student-t model and BayesianStudentTRegression: the likelihood against SciPy, the
gradient against finite differences, the posterior against an independent NumPy oracle, the
robustness it is for, and its coresets."""

import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.optimize
import scipy.special
import scipy.stats

from skcoreset import (
    BayesianGLM,
    BayesianLinearRegression,
    BayesianStudentTRegression,
    OMPCoreset,
)
from skcoreset.models import get_model, laplace_approximation
from skcoreset.models._student_t import LOG_DF_PRIOR, LOG_SCALE_SD
from skcoreset.sampler import ess_bulk

from .oracles.mala_oracle import mala_oracle

DATA = Path(__file__).parent / "data"


def _data(n, rng, df=3.0, outliers=0):
    X = rng.standard_normal((n, 2))
    y = X @ [1.0, -2.0] + 3.0 + 2.0 * rng.standard_t(df, n)
    y[:outliers] += 200.0
    return X, y


def _theta(model, beta, sigma, nu):
    """The model's parameter vector of coefficients, scale and degrees of freedom."""
    return np.concatenate(
        [beta, [np.log(sigma) - model.log_scale_centre, np.log(nu) - model.df_centre]]
    )


def test_loglik_against_scipy_over_the_range_the_kernels_see():
    """1e-12 relative to scipy.stats.t, from near-Cauchy to near-normal tails, residuals up
    to 10^4 scales and scales from 1e-3 to 1e3."""
    rng = np.random.default_rng(0)
    model = get_model("student_t").with_data_scale(0.0, 5.0)
    Xd = model.design(rng.standard_normal((300, 2)))
    for sigma in (1e-3, 1.0, 1e3):
        for nu in (0.5, 3.0, 30.0, 1e5):
            beta = np.array([0.5, -1.0, 2.0])
            y = Xd @ beta + sigma * rng.standard_t(1.0, 300) * np.logspace(-3, 1, 300)
            ll = model.loglik(_theta(model, beta, sigma, nu), Xd, y)
            ref = scipy.stats.t.logpdf(y, nu, loc=Xd @ beta, scale=sigma)
            np.testing.assert_allclose(ll, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


def test_gradient_against_central_differences():
    rng = np.random.default_rng(1)
    model = get_model("student_t").with_data_scale(0.0, 2.0)
    X, y = _data(200, rng)
    Xd = model.design(X)
    for nu in (1.5, 8.0, 200.0):
        theta = _theta(model, np.array([0.8, -1.5, 2.5]), 1.7, nu)
        g = model.loglik_grad_per_datum(theta, Xd, y)
        h = 1e-6
        fd = np.stack(
            [
                (model.loglik(theta + h * e, Xd, y) - model.loglik(theta - h * e, Xd, y)) / (2 * h)
                for e in np.eye(theta.size)
            ],
            axis=1,
        )
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)
        # the weighted sums the sampler reads are the rows' sums
        w = rng.uniform(0, 2, 200)
        ll, grad = model.weighted_loglik_chains(np.stack([theta, theta + 0.1]), Xd, y, w)
        assert ll[0] == pytest.approx(model.loglik(theta, Xd, y) @ w, rel=1e-13)
        np.testing.assert_allclose(grad[0], w @ g, rtol=1e-12, atol=1e-12)


def _oracle_log_posterior(X, y, prior_scale, centre):
    """The weighted log posterior from the formula, SciPy for the density, by hand for the
    gradient (independent of the package's code)."""
    Xd = np.column_stack([X, np.ones(len(y))])
    prec = 1.0 / np.concatenate([prior_scale, [LOG_SCALE_SD, LOG_DF_PRIOR[1]]]) ** 2

    def f(theta):
        beta = theta[:-2]
        sigma = np.exp(theta[-2] + centre)
        nu = np.exp(theta[-1] + LOG_DF_PRIOR[0])
        r = y - Xd @ beta
        lp = scipy.stats.t.logpdf(r / sigma, nu).sum() - len(y) * np.log(sigma)
        lp -= 0.5 * prec @ theta**2
        z2 = (r / sigma) ** 2
        g_beta = Xd.T @ ((nu + 1) * r / (nu * sigma**2 + r * r))
        g_s = np.sum((nu + 1) * z2 / (nu + z2) - 1)
        dig = scipy.special.digamma
        g_nu = np.sum(
            0.5 * nu * (dig((nu + 1) / 2) - dig(nu / 2) - 1 / nu - np.log1p(z2 / nu))
            + 0.5 * (nu + 1) * z2 / (nu + z2)
        )
        return lp, np.concatenate([g_beta, [g_s, g_nu]]) - prec * theta

    return f


def test_posterior_against_a_numpy_oracle():
    """Means and sds of every parameter against a plain NumPy MALA (tests/oracles) on the same
    posterior: differences within 4.5 Monte Carlo standard errors of the two estimates
    combined (sd / sqrt(ESS) of each)."""
    rng = np.random.default_rng(2)
    X, y = _data(300, rng, df=4.0)
    est = BayesianStudentTRegression(n_samples=3000, n_warmup=1000, random_state=0).fit(X, y)
    draws = est._theta_samples.reshape(-1, 5)
    f = _oracle_log_posterior(X, y, est.prior_scale_, np.log(y.std()))
    lap_mean = est._theta_samples[0, 0]
    lap = laplace_approximation(est._model(), X, y)
    chains = [mala_oracle(f, lap.mean, 4000, 1000, A=lap.cov, seed=s)[0] for s in range(3)]
    ref = np.concatenate(chains)
    ess = ess_bulk(est._theta_samples)
    ess_ref = ess_bulk(np.stack(chains))
    sd = ref.std(axis=0)
    se = np.sqrt(sd**2 / ess + sd**2 / ess_ref)
    assert np.all(np.abs(draws.mean(axis=0) - ref.mean(axis=0)) < 4.5 * se), lap_mean
    # the sd of a sd estimate is about sd / sqrt(2 ESS)
    se_sd = np.sqrt(sd**2 / (2 * ess) + sd**2 / (2 * ess_ref))
    assert np.all(np.abs(draws.std(axis=0) - sd) < 4.5 * se_sd)


def test_robust_to_outliers_where_the_gaussian_is_not():
    """1% of the targets moved by +200 (100 scales): the Student-t coefficients stay within 4
    posterior sds of the truth, the Gaussian ones do not (its intercept moves by 2)."""
    rng = np.random.default_rng(3)
    X, y = _data(2000, rng, outliers=20)
    t = BayesianStudentTRegression(n_samples=500, random_state=0).fit(X, y)
    g = BayesianLinearRegression(n_samples=500, random_state=0).fit(X, y)
    truth = np.array([1.0, -2.0, 3.0])
    t_sd = np.column_stack([t.coef_samples_.reshape(-1, 2), t.intercept_samples_.ravel()]).std(0)
    t_err = np.abs(np.append(t.coef_, t.intercept_) - truth) / t_sd
    g_err = np.abs(np.append(g.coef_, g.intercept_) - truth) / t_sd
    assert np.all(t_err < 4.0) and g_err.max() > 10.0
    assert 1.5 < t.df_ < 6.0 and 1.5 < t.scale_ < 2.5
    # the mode the Laplace fit finds is the optimiser's
    model = t._model()
    lap = laplace_approximation(model, X, y)
    Xd = model.design(X)
    w = np.ones(len(y))

    def neg(theta):
        lp, grad = model.log_posterior(theta, Xd, y, w)
        return -lp, -grad

    ref = scipy.optimize.minimize(neg, lap.mean + 0.1, jac=True, method="BFGS", tol=1e-12).x
    np.testing.assert_allclose(lap.mean, ref, atol=1e-5)


def test_predictions_and_inference_data():
    rng = np.random.default_rng(4)
    X, y = _data(300, rng)
    est = BayesianStudentTRegression(n_samples=300, random_state=0).fit(X, y)
    np.testing.assert_allclose(est.predict(X[:5]), X[:5] @ est.coef_ + est.intercept_)
    reps = est.sample_posterior_predictive(X[:50], n_draws=400, random_state=0)
    assert reps.shape == (400, 50)
    # replicates centre on the location (median: the t's mean is unstable at small df)
    np.testing.assert_allclose(np.median(reps, axis=0), est.predict(X[:50]), atol=0.5)
    idata = pytest.importorskip("arviz") and est.to_inference_data()
    assert set(idata.posterior.data_vars) == {"coef", "intercept", "scale", "df"}
    assert idata.log_likelihood["y"].shape == (4, 300, 300)
    lpd = est.log_predictive_density(X, y)
    assert lpd == pytest.approx(
        float(idata.log_likelihood["y"].mean(("chain", "draw")).mean()), abs=0.1
    )


def test_bad_input_is_named():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((30, 2))
    with pytest.raises(ValueError, match="exact linear function"):
        BayesianStudentTRegression(n_samples=50).fit(X, X @ [1.0, 2.0] + 3.0)
    with pytest.raises(ValueError, match="at least 2 samples"):
        BayesianStudentTRegression(n_samples=50).fit(X[:1], [1.0])
    with pytest.raises(ValueError, match="NaN"):
        BayesianStudentTRegression(n_samples=50).fit(X, np.r_[np.nan, np.ones(29)])


def _laplace_kl(model, X, y, idx, w, full):
    """KL(coreset's Laplace fit || the full data's), Gaussians in closed form."""
    core = laplace_approximation(model, X[idx], y[idx], w)
    inv = np.linalg.inv(full.cov)
    d = full.mean - core.mean
    logdets = np.linalg.slogdet(full.cov)[1] - np.linalg.slogdet(core.cov)[1]
    return 0.5 * (np.trace(inv @ core.cov) + d @ inv @ d - d.size + logdets)


def test_omp_coreset_of_real_incomes_beats_a_uniform_subsample():
    """Log weekly incomes (census 2000, 29 501 rows, heavy left tail): with the defaults the
    OMP coreset's posterior is at least 100x closer (Laplace KL) than a uniform subsample of
    the same size, at every one of three seeds."""
    data = np.load(DATA / "census2000.npz")
    X, y = data["X"], np.log(data["y"])
    X = (X - X.mean(0)) / X.std(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # coverage notes of the default size
        fits = [OMPCoreset(model="student_t", random_state=s).fit(X, y) for s in range(3)]
    model = fits[0].laplace_.model
    full = laplace_approximation(model, X, y)
    rng = np.random.default_rng(0)
    for est in fits:
        M = est.n_points_
        omp = _laplace_kl(model, X, y, est.sample_indices_, est.sample_weight_, full)
        uni = _laplace_kl(
            model, X, y, rng.choice(len(y), M, replace=False), np.full(M, len(y) / M), full
        )
        assert omp * 100 < uni, (omp, uni)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kernels_against_the_numpy_formulas(dtype):
    """The fused kernels (projection features, the sampler's weighted sums) give the NumPy
    log-likelihoods and gradients of loglik_draws / grad_draws to rounding, from near-Cauchy
    to near-normal draws and residuals up to 10^3 scales."""
    rng = np.random.default_rng(6)
    model = get_model("student_t").with_data_scale(0.0, 2.0)
    X = rng.standard_normal((700, 3))
    y = X @ [1.0, -2.0, 0.5] + 2.0 * rng.standard_t(1.0, 700)
    Xd, w = model.design(X), rng.uniform(0, 2, 700)
    J = 40
    thetas = np.column_stack(
        [rng.normal(0, 1, (J, 4)), rng.normal(0, 2, J), rng.uniform(-4, 5, J)]
    )  # scales e^-6 .. e^6 times sd(y), df 0.3 .. 2000
    ll, grad = model.weighted_loglik_chains(thetas, Xd, y, w)
    ll_ref = model.loglik_draws(thetas, Xd, y) @ w
    grad_ref = np.einsum("snp,n->sp", model.grad_draws(thetas, Xd, y), w)
    np.testing.assert_allclose(ll, ll_ref, rtol=1e-12)
    np.testing.assert_allclose(grad, grad_ref, rtol=1e-10, atol=1e-10 * np.abs(grad_ref).max())
    out = np.empty((700, J), dtype=dtype)
    model.projection_features("loglik", Xd, y, thetas.T.copy(), None, 0.5, out)
    L = model.loglik_draws(thetas, Xd, y).T
    ref = 0.5 * (L - L.mean(axis=1, keepdims=True))
    tol = 1e-12 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(out, ref, rtol=tol, atol=tol * np.abs(ref).max())
    coords = rng.integers(0, 6, J)
    model.projection_features("fisher", Xd, y, thetas.T.copy(), coords, 2.0, out)
    ref = 2.0 * model.grad_draws(thetas, Xd, y)[np.arange(J), :, coords].T
    np.testing.assert_allclose(out, ref, rtol=tol, atol=tol * np.abs(ref).max())


def test_bayesian_glm_takes_the_student_t_model_by_name():
    """BayesianGLM(model='student_t') samples the posterior BayesianStudentTRegression does
    (same draws for the same seed) and predicts its location; its score, weighted or not, is
    the mean log predictive density, computed in blocks of rows."""
    rng = np.random.default_rng(8)
    X, y = _data(400, rng)
    glm = BayesianGLM(model="student_t", n_samples=300, random_state=0).fit(X, y)
    reg = BayesianStudentTRegression(n_samples=300, random_state=0).fit(X, y)
    np.testing.assert_array_equal(glm._theta_samples, reg._theta_samples)
    np.testing.assert_allclose(glm.predict(X[:7]), reg.predict(X[:7]), rtol=1e-12)
    lpd = reg.log_predictive_density(X, y)
    assert glm.score(X, y) == pytest.approx(lpd, rel=1e-12)
    assert glm.score(X, y, sample_weight=np.ones(400)) == pytest.approx(lpd, rel=1e-12)
    thetas = reg._pooled_thetas()
    ll = reg._model().loglik_draws(thetas, reg._model().design(X), y)
    direct = np.mean(scipy.special.logsumexp(ll, axis=0) - np.log(len(thetas)))
    assert lpd == pytest.approx(direct, rel=1e-12)


def test_constants_exact_however_many_degrees_of_freedom():
    """The log density's constant lgamma((nu + 1)/2) - lgamma(nu/2) - log(pi nu)/2 and the
    row-free part of its derivative in log nu, against mpmath from nu = 0.1 to 1e300: the
    lgamma and digamma differences cancelled nu log nu and log nu (1e-5 of error at nu =
    1e10), and the kernels, loglik_draws and grad_draws all read them."""
    import mpmath

    from skcoreset.models import _student_t_kernels as K

    nus = np.concatenate([np.logspace(-1, 8, 60), [49.99, 50.0, 1e10, 1e16, 1e100, 1e300]])
    consts = K.draw_constants(np.ones(nus.shape[0]), nus)
    for nu, const, dnu in zip(nus, consts[3], consts[4]):
        with mpmath.workdps(60 + 2 * int(max(np.log10(nu), 0))):
            v = mpmath.mpf(nu)
            c = (
                mpmath.loggamma((v + 1) / 2)
                - mpmath.loggamma(v / 2)
                - mpmath.log(mpmath.pi * v) / 2
            )
            d = v / 2 * (mpmath.digamma((v + 1) / 2) - mpmath.digamma(v / 2) - 1 / v)
        assert const == pytest.approx(float(c), rel=1e-13, abs=1e-15), nu
        assert dnu == pytest.approx(float(d), rel=1e-11), nu
    model = get_model("student_t")
    X, y = np.ones((3, 1)), np.array([0.5, -1.0, 2.0])
    theta = np.array([[0.0, 0.0, np.log(1e10) - model.df_centre]])
    normal = scipy.stats.norm.logpdf(y)  # nu = 1e10: the normal's to 1e-10
    np.testing.assert_allclose(model.loglik_draws(theta, X, y)[0], normal, rtol=1e-9)


def test_weights_of_1e12_on_normal_data():
    """All weights 1e12 on data with normal noise: the posterior of nu sits near 4 500, where
    the constant's rounding error (1e-8) times the total weight (3e14) made the sampler's
    target noisy by 1e6 in log nu: the chains stuck (R-hat 5e15, step size 7e-12). Now they
    mix as at unit weights."""
    rng = np.random.RandomState(0)
    X = rng.standard_normal((300, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.standard_normal(300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 200 draws: R-hat near 1.01
        fit = BayesianStudentTRegression(n_samples=200, n_warmup=200, random_state=0)
        fit.fit(X, y, sample_weight=np.full(300, 1e12))
    assert fit.rhat_.max() < 1.05, fit.rhat_
    assert fit.step_size_ > 0.1 and np.all(fit.acceptance_rate_ > 0.3)
    assert 1000 < fit.df_ < 20_000


@pytest.mark.parametrize("outlier", [1e10, 1e30, 1e100])
def test_one_wild_outlier_is_what_the_model_is_for(outlier):
    """One target of 1e10 to 1e100 among 300 well-behaved rows: the model's start was least
    squares, all pull of the outlier (sigma near 1e9 at 1e10), in the basin of a fit of the
    outlier, and the Laplace fit failed as "numerically singular; check the scale of X and
    y". From a robust start (least absolute deviations, then the t fit's reweighting) the
    posterior is the bulk's: the coefficients within 0.1 of the truth, as without it."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 2))
    y = X @ [1.0, 2.0] + rng.standard_t(3, 300)
    y[0] = outlier
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 200 draws
        fit = BayesianStudentTRegression(n_samples=200, n_warmup=200, random_state=0).fit(X, y)
    np.testing.assert_allclose(fit.coef_, [1.0, 2.0], atol=0.1)
    assert fit.scale_ < 2.0 and fit.rhat_.max() < 1.05
    core = OMPCoreset(model="student_t", n_points=40, random_state=0).fit(X, y)
    np.testing.assert_allclose(core.laplace_.mean[:2], [1.0, 2.0], atol=0.1)


def test_weights_of_1e300():
    """All weights 1e300: the robust start (weights relative to the largest) and the least
    squares one, the better kept; the robust start overflowed (w / |r| past float64), and
    from it Newton failed as "numerically singular"."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((240, 3))
    y = X @ [0.5, -0.3, 0.2] + 0.5 + rng.standard_t(3, 240)
    w = np.full(240, 1e300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 20 draws
        fit = BayesianStudentTRegression(n_samples=20, n_warmup=10, random_state=0)
        fit.fit(X, y, sample_weight=w)
    np.testing.assert_allclose(fit.coef_, [0.5, -0.3, 0.2], atol=0.15)
    # the coreset's projected log-likelihoods overflow: it says so, naming the weights
    with pytest.raises(ValueError, match="sample_weight is far too large"):
        OMPCoreset(model="student_t", n_points=20, random_state=0).fit(X, y, sample_weight=w)


def test_the_laplace_fit_keeps_the_highest_of_the_modes_its_starts_reach():
    """Two clusters of targets give the Student-t posterior of a location two narrow modes
    (and a wide one between them, where the model's own start leads); Newton reaches each
    from its side. The fit from several starts (a pipeline's: the model's own and the full
    data's mode) keeps the highest mode they reach, so a coreset's estimator is not left in
    a lower one when the data's mode leads higher."""
    from skcoreset.models._laplace import best_fit, laplace_from_blocks, log_posterior_at

    rng = np.random.default_rng(0)
    y = np.concatenate([0.1 * rng.standard_normal(60), 10.0 + 0.1 * rng.standard_normal(40)])
    model = get_model("student_t", fit_intercept=True, prior_scale=100.0)
    Xd, w = np.ones((100, 1)), np.ones(100)
    fits = [
        laplace_from_blocks(model, lambda: [(Xd, y, w)], theta0=_theta(model, [loc], 0.1, 1.0))
        for loc in (0.0, 10.0)
    ]
    own = best_fit(model, Xd, y, w)  # the model's own start: a third, wide mode between
    lps = [log_posterior_at(f, Xd, y, w) for f in (*fits, own)]
    assert abs(fits[0].mean[0]) < 0.1 and abs(fits[1].mean[0] - 10.0) < 0.1
    assert lps[0] > lps[2] + 10 > lps[1] + 20  # the larger cluster's mode is the highest
    for fit, lp in zip(fits, lps):
        best = best_fit(model, Xd, y, w, starts=(fit.mean,))
        assert log_posterior_at(best, Xd, y, w) == pytest.approx(max(lp, lps[2]), abs=1e-9)
