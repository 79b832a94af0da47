"""skcoreset.metrics: fidelity measures against plain-NumPy oracles, scorers, the plot."""

import pickle

import numpy as np
import pytest
import scipy.special
import scipy.stats
from sklearn.linear_model import LogisticRegression, PoissonRegressor
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler

from skcoreset.compose import CoresetClassifier, CoresetRegressor
from skcoreset.coreset import GIGACoreset, UniformCoreset
from skcoreset.metrics import (
    coreset_laplace,
    coreset_laplace_kl,
    fisher_distance,
    gaussian_kl,
    make_fidelity_scorer,
    moment_fit,
    plot_coreset_size,
    polynomial_mmd,
    posterior_fidelity_score,
    relative_hilbert_error,
    smallest_within,
)
from skcoreset.pipeline import make_pipeline


def random_gaussian(rng, P):
    A = rng.standard_normal((P, P))
    return rng.standard_normal(P), A @ A.T / P + 0.5 * np.eye(P)


def test_gaussian_kl_matches_monte_carlo():
    rng = np.random.RandomState(0)
    m0, S0 = random_gaussian(rng, 4)
    m1, S1 = random_gaussian(rng, 4)
    kl = gaussian_kl(m0, S0, m1, S1)
    x = rng.multivariate_normal(m0, S0, size=200_000)
    log_ratio = scipy.stats.multivariate_normal(m0, S0).logpdf(x) - scipy.stats.multivariate_normal(
        m1, S1
    ).logpdf(x)
    se = log_ratio.std() / np.sqrt(len(x))
    assert abs(kl - log_ratio.mean()) < 4 * se
    assert gaussian_kl(m0, S0, m0, S0) == pytest.approx(0.0, abs=1e-12)
    assert gaussian_kl(m1, S1, m0, S0) != pytest.approx(kl, rel=1e-3)  # not symmetric
    # 1-D closed form.
    assert gaussian_kl([0.0], [[1.0]], [1.0], [[4.0]]) == pytest.approx(
        np.log(2.0) + (1.0 + 1.0) / 8.0 - 0.5
    )
    with pytest.raises(ValueError, match="positive definite"):
        gaussian_kl(m0, -S0, m1, S1)
    with pytest.raises(ValueError, match="different dimensions"):
        gaussian_kl(m0, S0, m1[:2], S1[:2, :2])


def test_moment_fit():
    rng = np.random.RandomState(1)
    draws = rng.standard_normal((3, 50, 2))
    mean, cov = moment_fit(draws)
    flat = draws.reshape(-1, 2)
    np.testing.assert_allclose(mean, flat.mean(axis=0))
    np.testing.assert_allclose(cov, np.cov(flat.T))


def naive_mmd(A, B, unbiased):
    k = lambda a, b: (0.2 + a @ b) ** 3  # noqa: E731
    n, m = len(A), len(B)
    saa = sum(k(A[i], A[j]) for i in range(n) for j in range(n) if not unbiased or i != j)
    sbb = sum(k(B[i], B[j]) for i in range(m) for j in range(m) if not unbiased or i != j)
    sab = sum(k(A[i], B[j]) for i in range(n) for j in range(m))
    if unbiased:
        return saa / (n * (n - 1)) + sbb / (m * (m - 1)) - 2 * sab / (n * m)
    return saa / n**2 + sbb / m**2 - 2 * sab / (n * m)


def test_polynomial_mmd_matches_double_loop():
    rng = np.random.RandomState(2)
    A = rng.standard_normal((25, 3))
    B = rng.standard_normal((30, 3)) + 0.3
    for unbiased in (True, False):
        assert polynomial_mmd(A, B, unbiased=unbiased) == pytest.approx(
            naive_mmd(A, B, unbiased), rel=1e-10
        )
    assert polynomial_mmd(A, A, unbiased=False) == pytest.approx(0.0, abs=1e-9)
    # Same distribution: the unbiased estimate is centred on 0; a shift makes it large.
    same = polynomial_mmd(rng.standard_normal((800, 3)), rng.standard_normal((800, 3)))
    shifted = polynomial_mmd(rng.standard_normal((800, 3)), rng.standard_normal((800, 3)) + 0.5)
    assert abs(same) < 0.1 * shifted
    with pytest.raises(ValueError, match="different dimensions"):
        polynomial_mmd(A, B[:, :2])


def test_relative_hilbert_error():
    rng = np.random.RandomState(3)
    V = rng.standard_normal((50, 8))
    w = np.zeros(50)
    w[[3, 7, 9]] = [2.0, 1.0, 5.0]
    y = V.sum(axis=0)
    expected = np.linalg.norm(V.T @ w - y) / np.linalg.norm(y)
    assert relative_hilbert_error(V, w) == pytest.approx(expected)
    assert relative_hilbert_error(V, [2.0, 1.0, 5.0], [3, 7, 9]) == pytest.approx(expected)
    assert relative_hilbert_error(V, np.ones(50)) == pytest.approx(0.0, abs=1e-12)
    assert relative_hilbert_error(V, np.zeros(50)) == pytest.approx(1.0)


def test_coreset_laplace_kl_on_phishing(phish):
    X, y = phish
    n = len(y)
    assert coreset_laplace_kl(X, y, np.arange(n), np.ones(n)) == pytest.approx(0.0, abs=1e-8)
    kls = []
    for m in (10, 300):
        cs = GIGACoreset(m, n_projections=50, random_state=0).fit(X, y)
        kls.append(coreset_laplace_kl(X, y, cs.sample_indices_, cs.sample_weight_))
        rev = coreset_laplace_kl(X, y, cs.sample_indices_, cs.sample_weight_, direction="reverse")
        sym = coreset_laplace_kl(X, y, cs.sample_indices_, cs.sample_weight_, direction="symmetric")
        assert sym == pytest.approx(0.5 * (kls[-1] + rev))
    assert kls[1] < kls[0]
    full, core = coreset_laplace(X, y, cs.sample_indices_, cs.sample_weight_)
    np.testing.assert_allclose(full.mean, cs.laplace_.mean, atol=1e-6)


def test_fisher_distance_matches_oracle(phish):
    X, y = phish
    X, y = X[:300], y[:300]
    rng = np.random.RandomState(4)
    theta = rng.standard_normal((6, X.shape[1] + 1)) * 0.3
    idx = np.array([1, 5, 40, 77])
    w = np.array([30.0, 100.0, 70.0, 100.0])
    Xd = np.column_stack([X, np.ones(len(X))])
    expected = []
    for th in theta:
        g = (y - scipy.special.expit(Xd @ th))[:, None] * Xd  # d log p(y | x, theta) / d theta
        expected.append(np.sum((w @ g[idx] - g.sum(axis=0)) ** 2))
    d = fisher_distance(X, y, idx, w, theta, model="logistic")
    assert d == pytest.approx(np.mean(expected), rel=1e-10)
    assert fisher_distance(X, y, np.arange(300), np.ones(300), theta) == pytest.approx(
        0.0, abs=1e-16
    )
    assert fisher_distance(X, y, idx, np.zeros(4), theta, normalize=True) == pytest.approx(1.0)


def test_fidelity_scorer_matches_direct_computation(phish):
    X, y = phish
    clf = CoresetClassifier(
        GIGACoreset(40, n_projections=20), LogisticRegression(), random_state=0
    ).fit(X, y)
    direct = coreset_laplace_kl(X, y, clf.sample_indices_, clf.sample_weight_)
    assert posterior_fidelity_score(clf, X, y) == pytest.approx(-direct, rel=1e-5)
    rev = make_fidelity_scorer(direction="reverse")(clf, X, y)
    assert rev == pytest.approx(
        -coreset_laplace_kl(X, y, clf.sample_indices_, clf.sample_weight_, direction="reverse"),
        rel=1e-5,
    )
    assert make_fidelity_scorer("hilbert_error")(clf, X, y) == -clf.coreset_.hilbert_error_
    # String labels and a flat pipeline (coreset space = scaled features).
    labels = np.where(y > 0, "b", "a")
    clf_s = CoresetClassifier(
        GIGACoreset(40, n_projections=20), LogisticRegression(), random_state=0
    ).fit(X, labels)
    assert posterior_fidelity_score(clf_s, X, labels) == pytest.approx(-direct, rel=1e-5)
    pipe = make_pipeline(
        StandardScaler(), GIGACoreset(40, n_projections=20, random_state=0), LogisticRegression()
    ).fit(X, y)
    Xs = pipe[0].transform(X)
    cs = pipe[1]
    assert posterior_fidelity_score(pipe, X, y) == pytest.approx(
        -coreset_laplace_kl(Xs, y, cs.sample_indices_, cs.sample_weight_), rel=1e-5
    )
    with pytest.raises(ValueError, match="measure"):
        make_fidelity_scorer("foo")
    # every coreset keeps the data's Laplace fit (laplace_), a projection or not
    uni = CoresetClassifier(UniformCoreset(40, projection=None), LogisticRegression()).fit(X, y)
    assert posterior_fidelity_score(uni, X, y) == pytest.approx(
        -coreset_laplace_kl(X, y, uni.sample_indices_, uni.sample_weight_), rel=1e-5
    )


def test_grid_search_with_fidelity_and_plot(phish, biketrips, tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    X, y = phish
    scoring = {"accuracy": "accuracy", "fidelity": make_fidelity_scorer()}
    gs = GridSearchCV(
        # unit prior, J = 20: the small setting this test was written for (5-point coresets
        # with both classes)
        CoresetClassifier(
            GIGACoreset(n_projections=20, prior_scale=1.0), LogisticRegression(), random_state=0
        ),
        {"coreset__n_points": [5, 20, 80]},
        cv=3,
        scoring=scoring,
        refit="accuracy",
    ).fit(X, y)
    fid = gs.cv_results_["mean_test_fidelity"]
    assert np.all(fid <= 0) and fid[2] > fid[0]
    ax = plot_coreset_size(gs)
    assert ax.get_xlabel() == "coreset size (coreset__n_points)"
    assert len(ax.get_lines()) == 1 and len(ax.figure.axes) == 2
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), [5, 20, 80])
    ax.figure.savefig(tmp_path / "size.png")
    # A Poisson regressor in a flat pipeline, single metric.
    Xb, yb = biketrips
    Xb, yb = Xb[:1500], yb[:1500]
    pipe = make_pipeline(
        StandardScaler(), GIGACoreset(n_projections=20, random_state=0), PoissonRegressor()
    )
    gs2 = GridSearchCV(
        pipe, {"gigacoreset__n_points": [10, 100]}, cv=2, scoring=posterior_fidelity_score
    ).fit(Xb, yb)
    assert gs2.best_params_ == {"gigacoreset__n_points": 100}
    ax2 = plot_coreset_size(gs2, logx=False)
    assert len(ax2.figure.axes) == 1
    with pytest.raises(ValueError, match="coreset size"):
        plot_coreset_size(GridSearchCV(LogisticRegression(), {"C": [1, 2]}, cv=2).fit(X, y))


def test_regressor_scorer(biketrips):
    X, y = biketrips
    X, y = StandardScaler().fit_transform(X[:1500]), y[:1500]
    reg = CoresetRegressor(
        GIGACoreset(100, n_projections=20), PoissonRegressor(), random_state=0
    ).fit(X, y)
    direct = coreset_laplace_kl(X, y, reg.sample_indices_, reg.sample_weight_, model="poisson")
    assert posterior_fidelity_score(reg, X, y) == pytest.approx(-direct, rel=1e-4)


def test_laplace_measures_check_their_inputs():
    from skcoreset.metrics import coreset_laplace_kl, fisher_distance

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 2))
    y = (rng.random(40) < 0.5).astype(float)
    idx, w = np.arange(5), np.full(5, 8.0)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        coreset_laplace_kl(X, y[:-1], idx, w)
    with pytest.raises(ValueError, match=r"in \[0, 40\)"):
        coreset_laplace_kl(X, y, np.array([0, 40]), np.ones(2))
    with pytest.raises(ValueError, match="non-negative"):
        coreset_laplace_kl(X, y, idx, -w)
    with pytest.raises(ValueError, match="NaN"):
        coreset_laplace_kl(np.where(X > 1, np.nan, X), y, idx, w)
    # one parameter vector is one draw
    d1 = fisher_distance(X, y, idx, w, np.zeros(3))
    d2 = fisher_distance(X, y, idx, w, np.zeros((1, 3)))
    assert d1 == d2


def test_fidelity_scorer_pickles_and_runs_in_parallel(phish):
    X, y = phish
    scorer = make_fidelity_scorer("kl", direction="symmetric")
    again = pickle.loads(pickle.dumps(scorer))
    assert repr(again) == repr(scorer)
    clf = CoresetClassifier(
        GIGACoreset(30, n_projections=20), LogisticRegression(), random_state=0
    ).fit(X, y)
    assert again(clf, X, y) == scorer(clf, X, y)
    search = dict(
        estimator=CoresetClassifier(
            GIGACoreset(n_projections=20), LogisticRegression(), random_state=0
        ),
        param_grid={"coreset__n_points": [10, 60]},
        cv=2,
        scoring={"fidelity": scorer, "accuracy": "accuracy"},
        refit=smallest_within(0.01, metric="accuracy"),
    )
    serial = GridSearchCV(**search).fit(X, y)
    parallel = GridSearchCV(**search, n_jobs=2).fit(X, y)  # scorer and rule sent to workers
    np.testing.assert_allclose(
        parallel.cv_results_["mean_test_fidelity"], serial.cv_results_["mean_test_fidelity"]
    )
    assert parallel.best_index_ == serial.best_index_
    restored = pickle.loads(pickle.dumps(parallel))
    np.testing.assert_allclose(restored.predict_proba(X[:5]), parallel.predict_proba(X[:5]))


def test_smallest_within_rule():
    params = [{"c__n_points": m, "c__model": k} for m in (10, 50, 200) for k in ("a", "b")]
    acc = np.array([0.70, 0.71, 0.905, 0.90, 0.91, 0.908])
    kl = -np.array([9.0, 8.0, 2.0, 2.5, 0.5, 0.4])
    results = {"params": params, "mean_test_acc": acc, "mean_test_kl": kl}
    rule = smallest_within(0.006, metric="acc")
    # best 0.91; within 0.006: 0.905 (50, a), 0.908 (200, b) and 0.91 itself -> size 50
    assert rule(results) == 2
    assert smallest_within(0.0, metric="acc")(results) == 4  # only the best
    assert smallest_within(1.0, metric="acc")(results) == 1  # everything: size 10, best of them
    assert smallest_within(2.0, metric="kl")(results) == 2  # -2.0 is within 2 of -0.4
    # a candidate whose fits failed (NaN) never wins
    acc_nan = acc.copy()
    acc_nan[0] = np.nan
    assert smallest_within(1.0, metric="acc")({**results, "mean_test_acc": acc_nan}) == 1
    single = {"params": [{"n_points": m} for m in (5, 20)], "mean_test_score": [0.5, 0.501]}
    assert smallest_within(0.01)(single) == 0
    with pytest.raises(ValueError, match="several scorers; pass metric"):
        smallest_within(0.01)(results)
    with pytest.raises(ValueError, match="no 'mean_test_f1'"):
        smallest_within(0.01, metric="f1")(results)
    with pytest.raises(ValueError, match="Cannot tell which parameter"):
        smallest_within(0.01)({"params": [{"C": 1}], "mean_test_score": [1.0]})
    with pytest.raises(ValueError, match="finite mean score"):
        smallest_within(0.01)({**single, "mean_test_score": [np.nan, np.nan]})
    for bad in (-0.1, np.nan, np.inf, "0.1", True):
        with pytest.raises(ValueError, match="tolerance"):
            smallest_within(bad)
    assert pickle.loads(pickle.dumps(rule))(results) == 2


def test_smallest_within_in_a_grid_search(phish):
    X, y = phish
    sizes = [5, 20, 80, 200]
    pipe = make_pipeline(
        StandardScaler(), GIGACoreset(n_projections=20, random_state=0), LogisticRegression()
    )
    gs = GridSearchCV(
        pipe,
        {"gigacoreset__n_points": sizes},
        cv=3,
        refit=smallest_within(0.1),
    ).fit(X, y)
    scores = gs.cv_results_["mean_test_score"]
    expected = min(i for i in range(len(sizes)) if scores[i] >= scores.max() - 0.1)
    assert gs.best_index_ == expected
    assert len(gs.best_estimator_["gigacoreset"].sample_indices_) == sizes[expected]
    # on these data accuracy saturates (20 points score within 0.1 of the best): the rule
    # refits a smaller coreset than the best scoring one, which refit=True would take
    assert gs.best_index_ < np.argmax(scores)


def test_laplace_kl_of_models_that_read_the_data():
    """The multinomial model counts its classes and the Student-t model centres its scale's
    prior on the data, when named by a string: the KL of the coreset an estimator built is
    that of its own Laplace fits (the same model, prior and data), near 0 for OMP."""
    from skcoreset import OMPCoreset
    from skcoreset.metrics import coreset_laplace_kl

    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 3))
    labels = np.array(["a", "b", "c"])[
        np.argmax(X @ rng.normal(size=(3, 3)) + rng.gumbel(size=(3000, 3)), axis=1)
    ]
    heavy = X @ [1.0, 2.0, 3.0] + rng.standard_t(3, 3000)
    for y, model in ((labels, "multinomial"), (labels, "auto"), (heavy, "student_t")):
        est = OMPCoreset(n_points=60, model=model, random_state=0).fit(X, y)
        kl = coreset_laplace_kl(X, y, est.sample_indices_, est.sample_weight_, model=model)
        uniform = coreset_laplace_kl(X, y, np.arange(60), np.full(60, 50.0), model=model)
        assert 0 <= kl < 1e-3 * uniform, (model, kl, uniform)
