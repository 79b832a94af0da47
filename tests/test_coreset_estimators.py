"""The Hilbert coreset estimators on real data: conventions, errors, and quality."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone

from skcoreset.coreset import (
    CoresetCoverageWarning,
    CoresetSizeWarning,
    FrankWolfeCoreset,
    GIGACoreset,
    IHTCoreset,
    ImportanceCoreset,
    OMPCoreset,
    QuasiNewtonCoreset,
    UniformCoreset,
)
from skcoreset.models import get_model, laplace_approximation

ESTIMATORS = [
    UniformCoreset,
    ImportanceCoreset,
    FrankWolfeCoreset,
    GIGACoreset,
    IHTCoreset,
    OMPCoreset,
]


def gaussian_kl(m0, S0, m1, S1):
    """KL(N(m0, S0) || N(m1, S1)), written from the formula."""
    k = len(m0)
    S1inv = np.linalg.inv(S1)
    d = m1 - m0
    return 0.5 * (
        np.trace(S1inv @ S0)
        + d @ S1inv @ d
        - k
        + np.linalg.slogdet(S1)[1]
        - np.linalg.slogdet(S0)[1]
    )


@pytest.fixture(scope="module")
def phishing_fits(phishing):
    """Every estimator at 100 points on Phishing, and the full-data Laplace fit."""
    X, y = phishing
    fits = {}
    for cls in ESTIMATORS:
        fits[cls.__name__] = cls(n_points=100, model="logistic", random_state=0).fit(X, y)
    fits["A-IHT II"] = IHTCoreset(n_points=100, model="logistic", debias=True, random_state=0).fit(
        X, y
    )
    full = laplace_approximation(get_model("logistic"), X, y)
    return X, y, fits, full


def test_every_estimator_selects_a_weighted_subset(phishing_fits):
    X, y, fits, _ = phishing_fits
    for name, est in fits.items():
        idx, w = est.sample_indices_, est.sample_weight_
        assert idx.dtype.kind == "i" and len(idx) == len(w) == est.n_points_, name
        assert 1 <= est.n_points_ <= 100, name
        assert np.all(np.diff(idx) > 0), f"{name}: indices sorted and distinct"
        assert np.all(w > 0) and np.all(np.isfinite(w)), name
        assert est.n_features_in_ == X.shape[1]
        assert est.model_ == "logistic"
        assert est.hilbert_error_ >= 0, name
        if not any(k in name for k in ("Uniform", "Importance", "FrankWolfe")):
            # w = 0 has error 1: an optimiser of the error can only do better (Frank-Wolfe
            # is held to its polytope, where w = 0 is not)
            assert est.hilbert_error_ < 1, name


def test_greedy_methods_reach_the_requested_size(phishing_fits):
    _, _, fits, _ = phishing_fits
    for name in ["GIGACoreset", "FrankWolfeCoreset", "OMPCoreset", "IHTCoreset", "UniformCoreset"]:
        assert fits[name].n_points_ == 100, (name, fits[name].stop_reason_)


def test_optimised_coresets_beat_uniform(phishing_fits):
    """GIGA, IHT and OMP: smaller projection error and smaller Laplace KL than uniform."""
    X, y, fits, full = phishing_fits
    model = get_model("logistic")

    def kl(est):
        lap = laplace_approximation(
            model, X[est.sample_indices_], y[est.sample_indices_], est.sample_weight_
        )
        return gaussian_kl(full.mean, full.cov, lap.mean, lap.cov)

    # uniform's error is random: compare against its average over seeds
    uni = [
        UniformCoreset(n_points=100, model="logistic", random_state=s).fit(X, y) for s in range(5)
    ]
    uni_err = np.mean([u.hilbert_error_ for u in uni])
    uni_kl = np.mean([kl(u) for u in uni])
    for name in ["GIGACoreset", "IHTCoreset", "A-IHT II", "OMPCoreset"]:
        est = fits[name]
        assert est.hilbert_error_ < 0.5 * uni_err, (name, est.hilbert_error_, uni_err)
        assert kl(est) < uni_kl, (name, kl(est), uni_kl)


def test_fit_resample_returns_the_subset(phishing):
    X, y = phishing
    est = GIGACoreset(n_points=30, random_state=0)
    Xm, ym, params = est.fit_resample(X, y)
    np.testing.assert_array_equal(Xm, X[est.sample_indices_])
    np.testing.assert_array_equal(ym, y[est.sample_indices_])
    np.testing.assert_array_equal(params["sample_weight"], est.sample_weight_)


def test_fit_resample_keeps_pandas(phishing):
    pd = pytest.importorskip("pandas")
    X, y = phishing
    Xf = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    ys = pd.Series(y, name="label")
    est = UniformCoreset(n_points=20, random_state=0)
    Xm, ym, _ = est.fit_resample(Xf, ys)
    assert isinstance(Xm, pd.DataFrame) and isinstance(ym, pd.Series)
    assert list(est.feature_names_in_) == list(Xf.columns)
    np.testing.assert_array_equal(Xm.index, est.sample_indices_)


def test_reproducible_and_inputs_untouched(phishing):
    X, y = phishing
    X0, y0 = X.copy(), y.copy()
    sw = np.ones(len(y))
    for cls in ESTIMATORS:
        a = cls(n_points=20, n_projections=50, random_state=3).fit(X, y, sample_weight=sw)
        b = clone(a).fit(X, y, sample_weight=sw)
        np.testing.assert_array_equal(a.sample_indices_, b.sample_indices_)
        np.testing.assert_allclose(a.sample_weight_, b.sample_weight_)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(sw, 1.0)


def test_sample_weight(phishing):
    X, y = phishing
    X, y = X[:2000], y[:2000]
    # unit weights are no weights
    a = GIGACoreset(n_points=20, n_projections=100, random_state=0).fit(X, y)
    b = GIGACoreset(n_points=20, n_projections=100, random_state=0).fit(X, y, np.ones(len(y)))
    np.testing.assert_array_equal(a.sample_indices_, b.sample_indices_)
    np.testing.assert_allclose(a.sample_weight_, b.sample_weight_)
    # zero-weight rows carry no likelihood and are never chosen
    sw = np.ones(len(y))
    sw[::2] = 0.0
    for cls in [GIGACoreset, OMPCoreset, ImportanceCoreset, UniformCoreset]:
        est = cls(n_points=20, n_projections=100, random_state=0).fit(X, y, sw)
        assert np.all(est.sample_indices_ % 2 == 1), cls.__name__
    # the weights approximate the *weighted* total: sum of coreset weights ~ sum of sw
    est = UniformCoreset(n_points=200, random_state=0).fit(X, y, 3 * np.ones(len(y)))
    assert est.sample_weight_.sum() == pytest.approx(3 * len(y))


def test_float32_storage_gives_the_same_quality(phishing):
    X, y = phishing
    a = GIGACoreset(n_points=50, random_state=0).fit(X, y)
    b = GIGACoreset(n_points=50, dtype="float32", random_state=0).fit(X, y)
    assert b.hilbert_error_ == pytest.approx(a.hilbert_error_, rel=0.05)


@pytest.mark.parametrize("projection", ["loglik", "fisher"])
def test_poisson_and_gaussian_models(biketrips, projection):
    X, y = biketrips
    kw = dict(n_points=100, projection=projection, n_projections=100, random_state=0)
    with pytest.raises(ValueError, match="distinct integer values"):
        GIGACoreset(**kw).fit(X, y)  # counts or classes? 'auto' does not guess
    kw["model"] = "poisson"
    giga = GIGACoreset(**kw).fit(X, y)
    assert giga.model_ == "poisson"
    uni = UniformCoreset(**kw).fit(X, y)
    assert giga.hilbert_error_ < 0.5 * uni.hilbert_error_
    # the noise scale is drawn with the coefficients (test_extra_models.py checks its
    # posterior): GIGA's error at 50 points is 0.89 on these vectors, OMP's below 0.01
    lin = OMPCoreset(n_points=50, model="gaussian", random_state=0).fit(X, np.log(y))
    assert lin.model_ == "gaussian" and lin.laplace_.model.extra > 0
    assert lin.hilbert_error_ < 0.5


def test_uniform_without_projection(phishing):
    X, y = phishing
    est = UniformCoreset(n_points=100, projection=None, random_state=0).fit(X, y)
    assert est.n_points_ == 100 and not hasattr(est, "hilbert_error_")
    np.testing.assert_allclose(est.sample_weight_, len(y) / 100)


@pytest.mark.parametrize(
    "X, y, params, err, match",
    [
        ([[0.0], [np.nan], [1.0]], [0, 1, 1], {}, ValueError, "NaN"),
        ([[0.0], [np.inf], [1.0]], [0, 1, 1], {}, ValueError, "infinity"),
        (
            [[0.0], [1.0], [2.0]],
            [0, 1, 2],
            {"model": "logistic"},
            ValueError,
            "has 3.*model='multinomial'",
        ),
        ([[0.0], [1.0], [2.0]], [1, 1, 1], {"model": "logistic"}, ValueError, "one class only"),
        ([[0.0], [1.0], [2.0]], [0, 2, 5], {}, ValueError, "class labels.*model='poisson'"),
        ([[0.0], [1.0], [2.0]], [0, -1, 3], {"model": "poisson"}, ValueError, "non-negative"),
        ([[0.0], [1.0], [2.0]], [0, 1, 1], {"n_points": 0}, ValueError, "n_points"),
        ([[0.0], [1.0], [2.0]], [0, 1, 1], {"model": "probit"}, ValueError, "model"),
    ],
)
def test_bad_input(X, y, params, err, match):
    params = {"n_points": 2, "n_projections": 10, **params}
    with pytest.raises(err, match=match):
        GIGACoreset(**params).fit(np.array(X), np.array(y))


def test_negative_sample_weight_rejected():
    X = np.arange(6.0).reshape(-1, 1)
    with pytest.raises(ValueError, match="[Nn]egative"):
        GIGACoreset(n_points=2).fit(X, [0, 1, 0, 1, 0, 1], sample_weight=[1, -1, 1, 1, 1, 1])


@pytest.mark.parametrize("cls", [FrankWolfeCoreset, GIGACoreset, IHTCoreset, OMPCoreset])
def test_progress_bar_changes_nothing_but_stderr(phishing, cls, capsys):
    pytest.importorskip("tqdm")
    X, y = phishing
    kw = dict(n_points=20, n_projections=50, random_state=0)
    quiet = cls(**kw).fit(X, y)
    capsys.readouterr()
    loud = cls(progress=True, **kw).fit(X, y)
    err = capsys.readouterr().err
    assert "it" in err or "point" in err
    np.testing.assert_array_equal(quiet.sample_indices_, loud.sample_indices_)
    np.testing.assert_array_equal(quiet.sample_weight_, loud.sample_weight_)


def test_refit_drops_attributes_of_the_previous_fit(phishing):
    X, y = phishing
    est = UniformCoreset(n_points=20, n_projections=20, random_state=0).fit(X, y)
    assert hasattr(est, "hilbert_error_")
    est.set_params(projection=None).fit(X, y)
    assert not hasattr(est, "hilbert_error_")
    assert hasattr(est, "laplace_kl_")  # every coreset's figure, projection or not


def test_one_class_left_with_positive_weight(phishing):
    X, y = phishing
    with pytest.raises(ValueError, match="positive sample_weight.*one class only"):
        OMPCoreset(n_points=20).fit(X, y, sample_weight=y.astype(float))


def test_inferred_likelihood_is_named_in_target_errors():
    X = np.random.default_rng(0).standard_normal((60, 2))
    with pytest.raises(ValueError, match="inferred from y"):
        OMPCoreset(n_points=5).fit(X, np.zeros(60))
    assert OMPCoreset(n_points=5, n_projections=10).fit(X, np.array(list("abc") * 20)).model_ == (
        "multinomial"
    )
    est = OMPCoreset(n_points=5, n_projections=10).fit(X, np.array(["no", "yes"] * 30))
    assert est.model_ == "logistic"


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_more_points_than_rows_keeps_every_row(cls):
    """As SelectKBest with k above the features: the whole data (exact), and a warning."""
    X = np.random.default_rng(0).standard_normal((40, 2))
    y = np.arange(40) % 2
    s = np.linspace(0.0, 2.0, 40)  # one zero weight
    with pytest.warns(CoresetSizeWarning, match="every such row"):
        est = cls(n_points=100, n_projections=10, random_state=0).fit(X, y, sample_weight=s)
    np.testing.assert_array_equal(est.sample_indices_, np.arange(1, 40))
    np.testing.assert_array_equal(est.sample_weight_, s[1:])
    assert est.stop_reason_ == "all_rows" and est.hilbert_error_ == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # exactly the rows with weight: no warning
        est = cls(n_points=39, n_projections=10, random_state=0).fit(X, y, sample_weight=s)
    assert est.n_points_ == 39


def test_small_projection_is_flagged_and_zero_target_is_not_perfect():
    X = np.random.default_rng(0).standard_normal((200, 3))
    y = np.arange(200) % 2
    with pytest.warns(UserWarning, match="fewer than the model's 4 parameters"):
        est = OMPCoreset(n_points=10, n_projections=3, random_state=0).fit(X, y)
    # Fisher features of all-zero rows without an intercept are zero: nothing is measured.
    est = OMPCoreset(n_points=10, projection="fisher", n_projections=20, fit_intercept=False)
    with pytest.warns(UserWarning, match="measured nothing"):
        est.fit(np.zeros((200, 3)), y)
    assert np.isnan(est.hilbert_error_)


@pytest.mark.parametrize("cls", ESTIMATORS + [QuasiNewtonCoreset])
def test_fewer_points_than_parameters_warns(cls):
    # 4 features and the intercept: 4 points leave a direction to the prior, 5 do not
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 4))
    y = (rng.random(300) < 1 / (1 + np.exp(-X[:, 0]))).astype(float)
    kw = {"n_draws": 20, "max_iter": 1} if cls is QuasiNewtonCoreset else {"n_projections": 20}
    with pytest.warns(CoresetSizeWarning, match="fewer than the model's 5 parameters"):
        cls(n_points=4, random_state=0, **kw).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoresetSizeWarning)
        cls(n_points=5, random_state=0, **kw).fit(X, y)


def _rare_feature_data(n=2000, n_rare=5, seed=0):
    # two continuous features and a rare 0/1 one (5 of 2000 rows by default: a uniform
    # coreset of 60 points misses the rare rows about 86% of the time)
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.standard_normal((n, 2)), np.zeros(n)])
    X[rng.choice(n, n_rare, replace=False), 2] = 1.0
    y = (rng.random(n) < 1 / (1 + np.exp(-X[:, 0]))).astype(float)
    return X, y


def test_coverage_warning_exactly_when_a_varying_feature_is_constant_on_the_coreset():
    pd = pytest.importorskip("pandas")
    X, y = _rare_feature_data()
    frame = pd.DataFrame(X, columns=["a", "b", "rare"])
    outcomes = set()
    for seed in range(12):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cs = UniformCoreset(60, projection=None, random_state=seed).fit(frame, y)
        covered = bool(np.any(X[cs.sample_indices_, 2] != 0))
        coverage = [w for w in caught if w.category is CoresetCoverageWarning]
        assert len(coverage) == (0 if covered else 1)
        if coverage:
            message = str(coverage[0].message)
            assert "1 of the data's features constant (rare)" in message
        outcomes.add(covered)
    assert outcomes == {True, False}  # both cases met


def test_coverage_warning_follows_what_the_data_identify():
    X, y = _rare_feature_data()
    # without an intercept a constant nonzero column is identified, and a zero one is not
    X_const = np.column_stack([X[:, :2], np.ones(len(y))])
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoresetCoverageWarning)
        UniformCoreset(60, projection=None, fit_intercept=False, random_state=0).fit(X_const, y)
        # with an intercept a column constant in all the data is no loss either
        UniformCoreset(60, projection=None, random_state=0).fit(X_const, y)
        # a given prior: the data's moments are not measured, and nothing is checked
        UniformCoreset(60, projection=None, prior_scale=1.0, random_state=1).fit(X, y)
    cs = UniformCoreset(60, projection=None, fit_intercept=False, random_state=1)
    with pytest.warns(CoresetCoverageWarning, match="features zero"):
        cs.fit(X, y)
    assert not np.any(X[cs.sample_indices_, 2])


@pytest.mark.parametrize("model", ["gaussian", "negative_binomial"])
def test_integer_weights_give_the_posterior_of_duplicated_rows(model):
    """A coreset of rows with integer weights and one of the same rows repeated are two
    coresets of one posterior: each within the quality target of the data's Laplace fit, and
    the two data fits the same. (Their rows need not be the same: a repeated row is several
    candidates, and rounding in sums of another order can move a greedy choice.)"""
    from skcoreset.coreset._quality import quality_target

    rng = np.random.default_rng(3)
    X = rng.standard_normal((3000, 3))
    eta = 0.5 + X @ [0.6, -0.4, 0.2]
    if model == "gaussian":
        y = eta + 0.7 * rng.standard_normal(3000)
    else:
        y = rng.negative_binomial(2.0, 2.0 / (2.0 + np.exp(eta))).astype(float)
    w = rng.integers(0, 4, 3000)
    weighted = OMPCoreset(100, model=model, random_state=0).fit(X, y, sample_weight=w)
    repeated = OMPCoreset(100, model=model, random_state=0).fit(X.repeat(w, 0), y.repeat(w))
    target = quality_target(weighted.laplace_.mean.shape[0])
    assert weighted.laplace_kl_ < target and repeated.laplace_kl_ < target
    np.testing.assert_allclose(weighted.laplace_.mean, repeated.laplace_.mean, atol=1e-9)
    np.testing.assert_allclose(weighted.laplace_.cov, repeated.laplace_.cov, rtol=1e-7)
