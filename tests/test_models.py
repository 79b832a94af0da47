"""The models' kernels, target rules and the Laplace approximation against the NumPy oracle."""

import warnings

import numpy as np
import pytest
from scipy.optimize import approx_fprime, minimize

from skcoreset.models import (
    GLM,
    BinaryLabels,
    SeparationWarning,
    get_model,
    laplace_approximation,
    laplace_from_blocks,
    model_from_targets,
)
from skcoreset.models._laplace import laplace_or_start, solve_spd

from .oracles import extra_oracle
from .oracles import models_oracle as oracle

MODELS = ["logistic", "poisson", "gaussian"]


def _data(name, n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    eta = X @ rng.standard_normal(d) * 0.5
    if name == "logistic":
        y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    elif name == "poisson":
        y = rng.poisson(np.exp(eta)).astype(float)
    else:
        y = eta + 0.3 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_kernels_match_oracle(name, fit_intercept):
    X, y = _data(name)
    model = get_model(name, prior_scale=1.7, fit_intercept=fit_intercept, extra=0.3)
    Xd = model.design(X)
    rng = np.random.default_rng(1)
    theta = 0.3 * rng.standard_normal(Xd.shape[1])
    w = rng.uniform(0, 2, len(y))
    np.testing.assert_allclose(
        model.loglik(theta, Xd, y), oracle.loglik(name, Xd @ theta, y, 0.3), rtol=1e-12, atol=1e-12
    )
    lp, grad = model.log_posterior(theta, Xd, y, w)
    lp0, grad0 = oracle.log_posterior(name, theta, Xd, y, w, 1.7, 0.3)
    np.testing.assert_allclose(lp, lp0, rtol=1e-11)
    np.testing.assert_allclose(grad, grad0, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(
        model.neg_log_posterior_hessian(theta, Xd, y, w),
        oracle.neg_hessian(name, theta, Xd, y, w, 1.7, 0.3),
        rtol=1e-10,
    )
    G = model.loglik_grad_per_datum(theta, Xd, y)
    np.testing.assert_allclose(
        G, oracle.dloglik(name, Xd @ theta, y, 0.3)[:, None] * Xd, rtol=1e-12
    )
    # the gradient is the derivative of the log posterior (finite differences)
    fd = approx_fprime(theta, lambda t: model.log_posterior(t, Xd, y, w)[0], 1e-6)
    np.testing.assert_allclose(grad, fd, rtol=1e-4, atol=1e-4 * np.abs(fd).max())


@pytest.mark.parametrize("name", MODELS)
def test_weighted_sum_at_large_margins(name):
    """The fused pass (one exp for logistic) on both signs of eta, |eta| up to ~30."""
    rng = np.random.default_rng(12)
    X = 3 * rng.standard_normal((200, 3))
    y = (
        rng.integers(0, 2, 200).astype(float)
        if name == "logistic"
        else rng.poisson(2.0, 200).astype(float)
    )
    if name == "poisson":
        X /= 3  # keep exp(eta) moderate
    w = rng.uniform(0, 2, 200)
    model = get_model(name, fit_intercept=False, prior_scale=1e6, extra=0.9)
    theta = np.array([1.0, -0.7, 0.4])
    lp, grad = model.log_posterior(theta, X, y, w)
    lp0, grad0 = oracle.log_posterior(name, theta, X, y, w, 1e6, 0.9)
    assert lp == pytest.approx(lp0, rel=1e-12)
    np.testing.assert_allclose(grad, grad0, rtol=1e-11, atol=1e-10)


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_loglik_matrix_matches_oracle(name, dtype):
    X, y = _data(name, n=500)
    model = get_model(name, extra=0.5)
    Xd = model.design(X)
    thetas = 0.2 * np.random.default_rng(2).standard_normal((37, Xd.shape[1]))
    out = model.loglik_matrix(Xd, y, thetas, out=np.empty((len(y), 37), dtype=dtype))
    expected = oracle.loglik(name, Xd @ thetas.T, y[:, None], 0.5)
    rtol = 1e-12 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(out, expected, rtol=rtol, atol=rtol)


def test_logistic_is_stable_for_huge_linear_predictors():
    model = get_model("logistic", fit_intercept=False)
    Xd = np.array([[1.0], [1.0], [-1.0], [-1.0]])
    y = np.array([1.0, 0.0, 1.0, 0.0])
    theta = np.array([5000.0])
    ll = model.loglik(theta, Xd, y)
    np.testing.assert_allclose(ll, [0.0, -5000.0, -5000.0, 0.0])
    lp, grad = model.log_posterior(theta, Xd, y, np.ones(4))
    assert np.isfinite(lp) and np.all(np.isfinite(grad))
    H = model.neg_log_posterior_hessian(theta, Xd, y, np.ones(4))
    assert np.all(np.isfinite(H))
    M = model.loglik_matrix(Xd, y, np.array([[5000.0], [-3000.0]]))
    assert np.all(np.isfinite(M))


@pytest.mark.parametrize("name", MODELS)
def test_laplace_mode_and_covariance(name):
    X, y = _data(name, n=400)
    model = get_model(name, prior_scale=2.0)
    w = np.random.default_rng(3).uniform(0.5, 1.5, len(y))
    lap = laplace_approximation(model, X, y, w)
    Xd = model.design(X)
    if model.n_extra:
        # the noise scale is a parameter of the fit: the joint mode and curvature of the
        # coefficients and its log, under its prior (the model's extra_prior)
        assert lap.n_extra == 1 and lap.mean.shape == (Xd.shape[1] + 1,)
        f = extra_oracle.log_posterior(name, Xd, y, 2.0, model.extra_prior, w, design=True)
        start = np.append(np.zeros(Xd.shape[1]), 0.0)
        res = minimize(lambda t: -f(t)[0], start, jac=lambda t: -f(t)[1], method="BFGS",
                       options={"gtol": 1e-9})  # fmt: skip
        H = extra_oracle.neg_hessian(f, lap.mean)
        rtol = 1e-6  # central differences of the oracle's gradient
    else:
        res = minimize(
            lambda t: -oracle.log_posterior(name, t, Xd, y, w, 2.0)[0],
            np.zeros(Xd.shape[1]),
            jac=lambda t: -oracle.log_posterior(name, t, Xd, y, w, 2.0)[1],
            method="BFGS",
            options={"gtol": 1e-9},
        )
        H = oracle.neg_hessian(name, lap.mean, Xd, y, w, 2.0)
        rtol = 1e-8
    np.testing.assert_allclose(lap.mean, res.x, atol=1e-5)
    np.testing.assert_allclose(lap.cov, np.linalg.inv(H), rtol=rtol)
    np.testing.assert_allclose(lap.chol @ lap.chol.T, lap.cov, rtol=1e-10, atol=1e-14)
    # lbfgs finds the same mode
    lap2 = laplace_approximation(model, X, y, w, method="lbfgs", tol=1e-9, max_iter=1000)
    np.testing.assert_allclose(lap2.mean, lap.mean, atol=1e-4)


@pytest.mark.parametrize("name", ["logistic", "poisson"])
def test_laplace_from_blocks_saves_the_confirming_pass(name):
    # Newton over blocks takes its last, short step without the pass that would confirm it:
    # the fit still equals the one-block fit (every step confirmed) to within 1e-6 sd
    X, y = _data(name, n=4000)
    model = get_model(name, prior_scale=2.0)
    Xd = model.design(X)
    w = np.ones(len(y))
    one = laplace_approximation(model, Xd, y, w, design=True)
    halves = [(Xd[:2000], y[:2000], w[:2000]), (Xd[2000:], y[2000:], w[2000:])]
    passes = []

    def blocks():
        passes.append(1)
        return halves

    sd = np.sqrt(np.diag(one.cov))
    start = one.mean + 1e-4 * sd  # one step from the mode, shorter than 1e-3 sd
    two = laplace_from_blocks(model, blocks, theta0=start)
    assert np.max(np.abs(two.mean - one.mean) / sd) < 1e-6
    # its Hessian is the one where the step began: 1e-4 sd away, a relative change of about
    # 1e-4 / sqrt(n) in each (co)variance
    assert np.max(np.abs(two.cov - one.cov) / np.outer(sd, sd)) < 1e-5
    # the fit confirming every step makes one pass more (check_fit's pass aside)
    confirmed = []

    def counted():
        confirmed.append(1)
        return halves

    from skcoreset.models._laplace import _fit

    _fit(model, counted, start, "newton", 1e-14, 100, fused=True)
    assert len(passes) == len(confirmed) - 1


@pytest.mark.parametrize("name", ["logistic", "poisson"])
def test_laplace_from_blocks_trusts_a_step_newton_contracted_to(name, monkeypatch):
    # a last step is also taken unconfirmed when at most sqrt(CONTRACTION) of the full step
    # before it (Newton's quadratic regime): it lands within about (s' / s)^2 s' of the mode,
    # and the Hessian moves over it by about 2 (s' / s)^2, relative
    from skcoreset.models import _laplace

    X, y = _data(name, n=20_000, d=3)
    model = get_model(name, prior_scale=2.0)
    Xd = model.design(X)
    w = np.ones(len(y))
    halves = [(Xd[:10_000], y[:10_000], w[:10_000]), (Xd[10_000:], y[10_000:], w[10_000:])]
    one = laplace_approximation(model, Xd, y, w, design=True)
    sd = np.sqrt(np.diag(one.cov))
    start = one.mean + 3.0 * sd * np.array([1.0, -1.0, 1.0, 1.0])  # as a subsample's fit
    passes = []

    def blocks():
        passes.append(1)
        return halves

    def fit(last_step):
        passes.clear()
        laplace = _laplace._fit(model, blocks, start, "newton", 1e-14, 100, True, last_step)
        return laplace, len(passes)

    # a last_step too short for the fixed rule to fire: the contraction rule saves the pass
    trusted, n_trusted = fit(1e-12)
    confirmed, n_confirmed = fit(0.0)
    assert n_trusted == n_confirmed - 1
    assert np.max(np.abs(trusted.mean - confirmed.mean) / sd) < 1e-8
    assert np.max(np.abs(trusted.cov - confirmed.cov) / np.outer(sd, sd)) < 1e-5
    # and only it
    monkeypatch.setattr(_laplace, "CONTRACTION", 0.0)
    assert fit(1e-12)[1] == n_confirmed


@pytest.mark.parametrize("name", MODELS)
def test_laplace_of_features_on_very_different_scales(name):
    """A feature in units 10^9 times larger (amounts beside codes) is the same posterior in
    other units: the fit scales its coefficient by 10^-9, exactly enough, and without scipy's
    ill-conditioning warning (the Hessian's condition number is near 10^18; the solve warned
    from 10^8 on before it was equilibrated)."""
    X, y = _data(name, n=400)
    scale = np.array([1.0, 1e9, 1.0, 1.0])
    prior = np.r_[2.0 / scale, 2.0]  # the same prior, in the new units
    noise = 0.3 if name == "gaussian" else None  # (its estimate is not part of this test)
    ref = laplace_approximation(get_model(name, prior_scale=2.0, extra=noise), X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = get_model(name, prior_scale=prior, extra=noise)
        lap = laplace_approximation(model, X * scale, y)
    unit = np.r_[1.0 / scale, 1.0]
    np.testing.assert_allclose(lap.mean / unit, ref.mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(lap.cov / np.outer(unit, unit), ref.cov, rtol=1e-8, atol=1e-14)


def test_solve_spd_refuses_what_is_not_positive_definite():
    H = np.array([[4.0, 1.0], [1.0, 0.0]])
    with pytest.raises(np.linalg.LinAlgError):
        solve_spd(H, np.ones(2))
    H[1, 1] = 1e-20  # positive diagonal, indefinite
    with pytest.raises(np.linalg.LinAlgError):
        solve_spd(H, np.ones(2))
    H = np.array([[1e12, 3e5], [3e5, 1.0]])
    np.testing.assert_allclose(H @ solve_spd(H, np.array([1.0, 2.0])), [1.0, 2.0], rtol=1e-9)


def test_gaussian_noise_is_estimated():
    X, y = _data("gaussian", n=3000)
    lap = laplace_approximation(get_model("gaussian"), X, y)
    assert lap.model.extra == pytest.approx(0.3, rel=0.05)


def test_laplace_on_separable_data_is_finite():
    X = np.r_[np.full((30, 2), 2.0), np.full((30, 2), -2.0)]
    y = np.r_[np.ones(30), np.zeros(30)]
    with pytest.warns(SeparationWarning, match="linearly separable"):
        lap = laplace_approximation(get_model("logistic", prior_scale=1.0), X, y)
    assert np.all(np.isfinite(lap.mean)) and np.all(np.isfinite(lap.cov))
    # the prior bounds the MAP: ||theta||^2 / 2 <= the data term at theta = 0
    assert lap.mean @ lap.mean / 2 <= 60 * np.log(2)


def test_laplace_subsample_scales_to_full_data():
    # Well-specified Poisson data: a subsample's MAP is off the full MAP by about
    # sqrt(N / n - 1) posterior sds; its covariance, with weights scaled up, is the full one's.
    X, y = _data("poisson", n=20000, d=5, seed=4)
    model = get_model("poisson")
    full = laplace_approximation(model, X, y)
    sub = laplace_approximation(model, X, y, subsample=5000, random_state=0)
    sd = np.sqrt(np.diag(full.cov))
    np.testing.assert_allclose(np.sqrt(np.diag(sub.cov)), sd, rtol=0.1)
    z = np.abs(sub.mean - full.mean) / sd
    assert np.max(z) < 4 * np.sqrt(20000 / 5000 - 1)
    # without scaling the weights the sd would be sqrt(4) = 2x larger: make sure it is not
    assert np.all(np.sqrt(np.diag(sub.cov)) < 1.5 * sd)


def test_inputs_not_mutated():
    X, y = _data("poisson")
    X0, y0 = X.copy(), y.copy()
    w = np.ones(len(y))
    laplace_approximation(get_model("poisson"), X, y, w, subsample=100, random_state=0)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(w, 1.0)


@pytest.mark.parametrize(
    "name, y, match",
    [
        ("logistic", [0, 1, 2, 1], "has 3.*model='multinomial'"),
        ("logistic", [1, 1, 1, 1], "one class only"),
        ("logistic", [0, 1, np.nan, 1], "NaN"),
        ("logistic", [0.1, 0.25, 0.7, 1.3], "real values"),
        ("poisson", [0, 1, -2, 1], "non-negative"),
        ("poisson", [0, 1, np.inf, 1], "infinity"),
        ("gaussian", [0, 1.5, np.inf, 1], "infinity"),
        ("gaussian", [0, 1.5, np.nan, 1], "NaN"),
    ],
)
def test_bad_targets(name, y, match):
    with pytest.raises(ValueError, match=match):
        get_model(name).encode_targets(np.array(y, dtype=float))


def test_poisson_accepts_non_negative_rates():
    # the exposure recipe fits y / exposure with sample_weight=exposure
    y = np.array([0.0, 0.5, 2.25])
    np.testing.assert_array_equal(get_model("poisson").encode_targets(y), y)


@pytest.mark.parametrize(
    "labels, codes",
    [
        ([-1, 1, 1, -1], [0, 1, 1, 0]),
        ([0, 1, 1, 0], [0, 1, 1, 0]),
        ([2, 5, 5, 2], [0, 1, 1, 0]),
        (["no", "yes", "yes", "no"], [0, 1, 1, 0]),
        ([True, False, False, True], [1, 0, 0, 1]),
    ],
)
def test_one_label_coding_larger_label_is_class_one(labels, codes):
    coding = BinaryLabels.fit(labels)
    np.testing.assert_array_equal(coding.encode(labels), codes)
    np.testing.assert_array_equal(get_model("logistic").encode_targets(labels), codes)
    np.testing.assert_array_equal(coding.decode(codes), labels)


def test_unknown_labels_are_named():
    with pytest.raises(ValueError, match="not among the classes.*'maybe'"):
        BinaryLabels(np.array(["no", "yes"])).encode(["yes", "maybe"])
    with pytest.raises(ValueError, match=r"not among the classes.*\b2\b"):  # numbers' path
        BinaryLabels(np.array([0, 1])).encode(np.array([0, 2, 1], dtype=np.int8))


@pytest.mark.parametrize(
    "classes, y",
    [
        ([0, 1], np.array([1, 0, 0, 1], dtype=np.int8)),
        ([-1, 1], [-1.0, 1.0, 1.0]),
        ([0.0, 2.5], np.array([2.5, 0.0, -0.0])),
        ([False, True], [True, False, True]),
        ([0, 1], np.array([True, False])),
    ],
)
def test_two_numeric_classes_are_coded_by_their_sorted_index(classes, y):
    # the comparisons' path against the definition: the index of the label among the classes
    codes = BinaryLabels(np.array(classes)).encode(y)
    expected = np.searchsorted(np.array(classes), np.asarray(y)).astype(np.float64)
    assert codes.dtype == np.float64
    np.testing.assert_array_equal(codes, expected)


def test_model_arguments_are_checked():
    with pytest.raises(ValueError, match="Unknown model"):
        get_model("probit")
    with pytest.raises(ValueError, match="prior_scale"):
        get_model("logistic", prior_scale=-1.0)


@pytest.mark.parametrize(
    "y, name",
    [
        ([0, 1, 1], "logistic"),
        ([-1, 1, 1], "logistic"),
        (["a", "b", "a"], "logistic"),
        ([0.5, 1.2, 3.0], "gaussian"),
        ([-3.5, 1, 2], "gaussian"),
    ],
)
def test_model_from_targets(y, name):
    assert model_from_targets(np.array(y)) == name


@pytest.mark.parametrize(
    "y, match",
    [
        ([0, 3, 7], "class labels.*model='poisson'.*model='gaussian'"),
        (np.arange(10) % 3, "3 distinct integer values"),
        ([-3, 1, 2], "model='gaussian'"),
        ([0.0, 1.0, np.nan], "NaN"),
    ],
)
def test_ambiguous_or_bad_targets_are_refused(y, match):
    """Integers with more than two values may be classes or counts: 'auto' must not guess."""
    with pytest.raises(ValueError, match=match):
        model_from_targets(np.array(y))


def test_length_mismatch_is_an_error_not_garbage():
    # The numba kernels do not bounds-check: every public entry point checks lengths first.
    from skcoreset.projection import project

    X, y = _data("logistic", n=50)
    model = get_model("logistic")
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        laplace_approximation(model, X, y[:49])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        laplace_approximation(model, X, y, np.ones(49))
    lap = laplace_approximation(model, X, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        project(model, model.design(X), y[:10], lap, n_projections=5)


def test_overflowing_data_gives_a_clear_error():
    X, y = _data("poisson", n=50)
    with pytest.raises(ValueError, match="overflowed|diverged"):
        laplace_approximation(get_model("poisson"), X * 1e200, y)


def test_gaussian_noise_with_no_more_rows_than_parameters():
    # Interpolation leaves zero residuals and the noise scale's posterior degenerates: the
    # joint Laplace fit says so, and MCMC starts from the coefficients' fit at the spread of
    # y (the noise falls back to it), not from a singular Hessian.
    rng = np.random.default_rng(5)
    X, y = rng.standard_normal((3, 4)), np.array([1.0, 2.0, 4.0])
    model = get_model("gaussian")
    with pytest.raises(ValueError, match="as many rows as parameters"):
        laplace_approximation(model, X, y)
    start = laplace_or_start(model, model.design(X), y, np.ones(3))
    assert start.model.extra == pytest.approx(np.std(y))
    assert start.n_extra == 1 and np.all(np.isfinite(start.cov))
    const = laplace_or_start(model, model.design(X), np.full(3, 2.0), np.ones(3))
    assert const.model.extra == 1.0


def test_typical_starts_keep_gaussian_draws_and_pull_in_the_far_ones():
    """MCMC's starts: draws of a posterior's own Laplace fit stay where they are when the
    posterior is Gaussian (a linear model, the noise fixed: 200 draws, each moved with
    probability 1e-4); draws of a fit ten times too wide move toward the mode until the
    posterior there is within what the fit expects."""
    from dataclasses import replace

    from scipy.stats import chi2

    from skcoreset.models._laplace import log_posterior_at, typical_starts

    rng = np.random.default_rng(0)
    X = rng.standard_normal((500, 3))
    y = X @ [1.0, -1.0, 0.5] + rng.standard_normal(500)
    model = get_model("gaussian", prior_scale=10.0, extra=1.0)
    Xd, w = model.design(X), np.ones(500)
    lap = laplace_approximation(model, Xd, y, w, design=True)
    draws = lap.sample(200, random_state=1)
    np.testing.assert_array_equal(typical_starts(lap, Xd, y, w, draws), draws)
    wide = replace(lap, cov=100.0 * lap.cov, chol=10.0 * lap.chol)
    far = wide.sample(20, random_state=1)
    moved = typical_starts(wide, Xd, y, w, far)
    floor = log_posterior_at(lap, Xd, y, w) - 0.5 * chi2.isf(1e-4, 4)
    lps = np.array([log_posterior_at(lap, Xd, y, w, t) for t in moved])
    assert np.all(lps >= floor)
    assert np.all(np.any(moved != far, axis=1))  # every one was too far


def test_the_extra_parameter_s_old_name_works_until_0_2_with_a_future_warning():
    """``noise_scale``, the name of the models' extra parameter before 0.1 (it held the gamma
    shape and the negative binomial dispersion too), still builds and reads a model, with a
    FutureWarning naming ``extra``; so do ``get_model``'s, ``with_noise`` and
    ``fisher_distance``'s. Both names at once is an error."""
    from skcoreset import models
    from skcoreset.metrics import fisher_distance
    from skcoreset.models import GaussianModel

    with pytest.warns(FutureWarning, match="noise_scale= was renamed extra="):
        model = GaussianModel(noise_scale=2.0)
    assert model.extra == 2.0
    with pytest.warns(FutureWarning, match="noise_scale was renamed extra"):
        assert model.noise_scale == 2.0
    with pytest.warns(FutureWarning, match="noise_scale= was renamed extra="):
        assert get_model("gamma", noise_scale=3.0).extra == 3.0
    with pytest.warns(FutureWarning, match="with_noise was renamed with_extra"):
        assert models.with_noise(get_model("gaussian"), 1.5).extra == 1.5
    with pytest.raises(TypeError, match="Pass extra= only"):
        GaussianModel(extra=1.0, noise_scale=2.0)
    X, y = _data("gaussian")
    theta = np.zeros((2, X.shape[1] + 1))
    args = (X, y, np.arange(10), np.full(10, 30.0), theta)
    with pytest.warns(FutureWarning, match="noise_scale= was renamed extra="):
        old = fisher_distance(*args, model="gaussian", noise_scale=0.7)
    assert old == fisher_distance(*args, model="gaussian", extra=0.7)


def test_the_extra_prior_s_and_the_hooks_old_names_work_until_0_2_with_a_future_warning():
    """The prior of the extra parameter's log is ``extra_prior`` wherever it is a value (the
    field, ``DataPrior.extra_prior()``, ``sample_mala(extra_prior=)``, ``EXTRA_PRIOR``) and
    ``extra_prior_at`` the model's rule at a data scale; the names before 0.1 work until 0.2
    with a FutureWarning, and so does a model class that defines its hooks by their old names
    (``has_noise``, ``estimate_noise_blocks``, ``extra_log_prior``)."""
    from dataclasses import dataclass

    from skcoreset import sampler
    from skcoreset.models import DataPrior, GaussianModel
    from skcoreset.sampler import sample_mala

    model = get_model("gaussian")
    with pytest.warns(FutureWarning, match="EXTRA_LOG_PRIOR was renamed EXTRA_PRIOR"):
        assert sampler.EXTRA_LOG_PRIOR == sampler.EXTRA_PRIOR
    prior = DataPrior(model, 3.0, 2.0)
    with pytest.warns(FutureWarning, match=r"extra_log_prior\(\) was renamed extra_prior\(\)"):
        assert prior.extra_log_prior() == prior.extra_prior() == model.extra_prior_at(3.0, 2.0)
    X, y = _data("gaussian", n=50)
    Xd = model.design(X)
    kw = dict(sample_extra=True, n_samples=20, n_warmup=20, random_state=0)
    init = np.zeros((2, Xd.shape[1] + 1))
    new = sample_mala(model, Xd, y, np.ones(50), init, extra_prior=(0.5, 2.0), **kw)
    with pytest.warns(FutureWarning, match="extra_log_prior= was renamed extra_prior="):
        old = sample_mala(model, Xd, y, np.ones(50), init, extra_log_prior=(0.5, 2.0), **kw)
    np.testing.assert_array_equal(old.draws, new.draws)

    with pytest.warns(FutureWarning, match="OldGaussian.extra_log_prior was renamed"):

        @dataclass(frozen=True, eq=False)
        class OldGaussian(GaussianModel):
            def extra_log_prior(self, y_mean, y_sd):
                return 1.0, 0.5

    assert OldGaussian().extra_prior == (1.0, 0.5)
    with pytest.warns(FutureWarning, match="has_noise was renamed has_extra"):

        @dataclass(frozen=True, eq=False)
        class OldFamily(GLM):
            has_noise = True

    assert OldFamily.has_extra
