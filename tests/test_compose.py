"""skcoreset.compose: CoresetClassifier / CoresetRegressor meta-estimators."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import (
    LogisticRegression,
    PoissonRegressor,
    Ridge,
    TweedieRegressor,
)
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from skcoreset.compose import CoresetClassifier, CoresetRegressor, infer_model
from skcoreset.coreset import GIGACoreset, UniformCoreset


def giga(n=40, **kw):
    # A small, fixed setting (unit prior, J = 20) whose coresets these tests were written
    # for: they check the composition's mechanics, not the coreset's quality.
    return GIGACoreset(n, n_projections=20, prior_scale=1.0, **kw)


def test_classifier_fits_on_weighted_coreset(phish):
    X, y = phish
    clf = CoresetClassifier(giga(40, random_state=0), LogisticRegression()).fit(X, y)
    idx, w = clf.sample_indices_, clf.sample_weight_
    np.testing.assert_array_equal(idx, clf.coreset_.sample_indices_)
    np.testing.assert_array_equal(w, clf.coreset_.sample_weight_)
    ref = LogisticRegression().fit(X[idx], y[idx], sample_weight=w)
    np.testing.assert_allclose(clf.estimator_.coef_, ref.coef_, rtol=1e-6)
    np.testing.assert_allclose(clf.predict_proba(X), ref.predict_proba(X))
    np.testing.assert_allclose(clf.predict_log_proba(X), ref.predict_log_proba(X))
    np.testing.assert_allclose(clf.decision_function(X), ref.decision_function(X))
    assert clf.predict(X).shape == (X.shape[0],)
    assert clf.score(X, y) == pytest.approx(ref.score(X, y)) and clf.score(X, y) > 0.85
    np.testing.assert_array_equal(clf.classes_, [0.0, 1.0])
    assert clf.n_features_in_ == X.shape[1]
    assert clf.coreset_.model_ == "logistic"
    np.testing.assert_array_equal(clf.X_coreset_, X[idx])
    # The unfitted templates are untouched.
    assert not hasattr(clf.coreset, "sample_indices_") and clf.coreset.model == "auto"


def test_methods_follow_the_estimator():
    assert hasattr(CoresetClassifier(estimator=LogisticRegression()), "predict_proba")
    assert not hasattr(CoresetClassifier(estimator=SVC()), "predict_proba")
    assert hasattr(CoresetClassifier(estimator=SVC()), "decision_function")
    assert not hasattr(CoresetClassifier(estimator=LogisticRegression()), "log_predictive_density")
    assert not hasattr(CoresetRegressor(estimator=Ridge()), "predict_proba")


def test_string_labels_and_errors(phish):
    X, y = phish
    labels = np.where(y > 0, "phish", "legit")
    clf = CoresetClassifier(giga(40, random_state=0), LogisticRegression()).fit(X, labels)
    np.testing.assert_array_equal(clf.classes_, ["legit", "phish"])
    np.testing.assert_array_equal(clf.estimator_.classes_, clf.classes_)
    assert set(clf.predict(X[:20])) <= {"legit", "phish"}
    three = CoresetClassifier(giga(40, random_state=0), LogisticRegression()).fit(
        X, np.arange(len(y)) % 3
    )  # a classifier reads y as classes: three of them, the multinomial model
    assert three.coreset_.model_ == "multinomial"
    np.testing.assert_array_equal(three.classes_, [0, 1, 2])
    with pytest.raises(TypeError, match="does not accept sample_weight"):
        CoresetClassifier(giga(40), KNeighborsClassifier()).fit(X, y)
    with pytest.raises(ValueError, match="requires y"):
        CoresetClassifier(giga(40), LogisticRegression()).fit(X, None)


def test_infer_model():
    blm = pytest.importorskip("skcoreset.linear_model")
    assert infer_model(blm.BayesianLogisticRegression()) == "logistic"
    assert infer_model(blm.BayesianPoissonRegression()) == "poisson"
    assert infer_model(blm.BayesianLinearRegression()) == "gaussian"
    assert infer_model(LogisticRegression()) == "logistic"
    assert infer_model(SVC()) == "logistic"
    assert infer_model(PoissonRegressor()) == "poisson"
    assert infer_model(TweedieRegressor(power=1)) == "poisson"
    assert infer_model(TweedieRegressor(power=2)) == "gaussian"
    assert infer_model(HistGradientBoostingRegressor(loss="poisson")) == "poisson"
    assert infer_model(Ridge()) == "gaussian"
    assert infer_model(make_pipeline(StandardScaler(), PoissonRegressor())) == "poisson"

    class Custom(Ridge):
        __skcoreset_model__ = "poisson"

    assert infer_model(Custom()) == "poisson"


def test_regressor_model_auto_and_poisson(bikes):
    X, y = bikes
    Xs = StandardScaler().fit_transform(X)
    pois = CoresetRegressor(giga(60, random_state=0), PoissonRegressor()).fit(Xs, y)
    assert pois.coreset_.model_ == "poisson"
    assert pois.score(Xs, y) > 0.1
    lin = CoresetRegressor(giga(60, random_state=0), Ridge()).fit(Xs, y)
    assert lin.coreset_.model_ == "gaussian"
    fixed = CoresetRegressor(giga(60, model="gaussian", random_state=0), PoissonRegressor()).fit(
        Xs, y
    )
    assert fixed.coreset_.model_ == "gaussian"


def test_random_state_is_passed_down(phish):
    X, y = phish
    clf = CoresetClassifier(giga(30), LogisticRegression(), random_state=0)
    a = clf.fit(X, y).sample_indices_.copy()
    seed_c, seed_e = clf.coreset_.random_state, clf.estimator_.random_state
    assert isinstance(seed_c, int) and isinstance(seed_e, int)
    np.testing.assert_array_equal(clone(clf).fit(X, y).sample_indices_, a)
    other = clone(clf).set_params(random_state=1).fit(X, y)
    assert other.coreset_.random_state != seed_c
    # None leaves the inner settings alone.
    keep = CoresetClassifier(giga(30, random_state=7), LogisticRegression()).fit(X, y)
    assert keep.coreset_.random_state == 7 and keep.estimator_.random_state is None


def test_sample_weight_combines(phish):
    X, y = phish
    w = np.random.RandomState(2).uniform(0.5, 2.0, X.shape[0])
    clf = CoresetClassifier(
        UniformCoreset(100, projection=None, random_state=0), LogisticRegression()
    ).fit(X, y, sample_weight=w)
    idx = clf.sample_indices_
    np.testing.assert_allclose(clf.sample_weight_, w[idx] * X.shape[0] / 100)
    ref = LogisticRegression().fit(X[idx], y[idx], sample_weight=clf.sample_weight_)
    np.testing.assert_allclose(clf.estimator_.coef_, ref.coef_, rtol=1e-6)


def test_in_stock_pipeline_grid_search_and_pandas(phish):
    pd = pytest.importorskip("pandas")
    X, y = phish
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    pipe = make_pipeline(
        StandardScaler(), CoresetClassifier(giga(), LogisticRegression(), random_state=0)
    )
    pipe.set_output(transform="pandas")
    grid = {"coresetclassifier__coreset__n_points": [5, 60]}
    gs = GridSearchCV(pipe, grid, cv=3).fit(df, y)
    assert gs.best_params_ == {"coresetclassifier__coreset__n_points": 60}
    meta = gs.best_estimator_[-1]
    np.testing.assert_array_equal(meta.feature_names_in_, df.columns)
    np.testing.assert_array_equal(meta.estimator_.feature_names_in_, df.columns)
    assert isinstance(meta.X_coreset_, pd.DataFrame)
    gs2 = GridSearchCV(
        CoresetClassifier(giga(), LogisticRegression(), random_state=0),
        {"coreset__n_points": [5, 60]},
        cv=3,
        n_jobs=2,
    ).fit(X, y)
    s = gs2.cv_results_["mean_test_score"]
    assert s[1] > s[0]
    assert cross_val_score(meta, df, y, cv=3).min() > 0.8
    p2 = pickle.loads(pickle.dumps(gs.best_estimator_))
    np.testing.assert_allclose(p2.predict_proba(df), gs.best_estimator_.predict_proba(df))


def test_bayesian_inner_estimators(phish, bikes):
    blm = pytest.importorskip("skcoreset.linear_model")
    X, y = phish
    kw = dict(n_samples=200, n_warmup=200, n_chains=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = CoresetClassifier(giga(60), blm.BayesianLogisticRegression(**kw), random_state=0)
        clf.fit(X, y)
        Xb, yb = bikes
        Xb = StandardScaler().fit_transform(Xb)
        reg = CoresetRegressor(giga(80), blm.BayesianPoissonRegression(**kw), random_state=0)
        reg.fit(Xb, yb)
    assert clf.score(X, y) > 0.85
    assert -0.5 < clf.log_predictive_density(X, y) < 0
    assert clf.sample_posterior_predictive(X[:4], n_draws=3, random_state=0).shape == (3, 4)
    assert reg.coreset_.model_ == "poisson"
    assert np.isfinite(reg.log_predictive_density(Xb, yb))


def test_a_pipeline_as_the_inner_estimator(phish):
    """The coreset weights go to the pipeline's last step (``<name>__sample_weight``)."""
    X, y = phish
    inner = make_pipeline(StandardScaler(), LogisticRegression())
    clf = CoresetClassifier(giga(), inner, random_state=0).fit(X, y)
    direct = make_pipeline(StandardScaler(), LogisticRegression()).fit(
        X[clf.sample_indices_],
        y[clf.sample_indices_],
        logisticregression__sample_weight=clf.sample_weight_,
    )
    np.testing.assert_allclose(clf.predict_proba(X), direct.predict_proba(X))
    with pytest.raises(TypeError, match="does not accept sample_weight"):
        CoresetClassifier(giga(), make_pipeline(StandardScaler(), KNeighborsClassifier())).fit(X, y)


class ArrayOnly:
    """An input with the array protocol and nothing else (no len, no row indexing)."""

    def __init__(self, array):
        self._array = np.asarray(array)

    def __array__(self, dtype=None, copy=None):
        return self._array if dtype is None else self._array.astype(dtype)


def test_array_protocol_input_end_to_end(phish):
    from skcoreset.pipeline import make_pipeline as sk_make_pipeline

    X, y = phish

    def clf():
        return CoresetClassifier(
            UniformCoreset(60, projection=None), LogisticRegression(), random_state=0
        )

    ref = clf().fit(X, y)
    got = clf().fit(ArrayOnly(X), ArrayOnly(y))
    np.testing.assert_array_equal(got.sample_indices_, ref.sample_indices_)
    np.testing.assert_allclose(got.predict_proba(ArrayOnly(X)), ref.predict_proba(X))
    assert got.score(ArrayOnly(X), ArrayOnly(y)) == pytest.approx(ref.score(X, y))

    def pipe():
        return sk_make_pipeline(
            StandardScaler(),
            UniformCoreset(60, projection=None, random_state=0),
            LogisticRegression(),
        )

    ref = pipe().fit(X, y)
    got = pipe().fit(ArrayOnly(X), ArrayOnly(y))
    np.testing.assert_array_equal(got.sample_indices_, ref.sample_indices_)
    np.testing.assert_allclose(got.X_coreset_, ref.X_coreset_)
    np.testing.assert_allclose(got.predict_proba(ArrayOnly(X)), ref.predict_proba(X))


def test_wrong_kind_of_estimator_is_refused(phish, bikes):
    blm = pytest.importorskip("skcoreset.linear_model")
    X, y = phish
    for regressor in (Ridge(), blm.BayesianLinearRegression(), PoissonRegressor()):
        with pytest.raises(
            TypeError, match="CoresetClassifier needs a classifier.*CoresetRegressor"
        ):
            CoresetClassifier(giga(20), regressor).fit(X, y)
    Xb, yb = bikes
    for classifier in (LogisticRegression(), blm.BayesianLogisticRegression(), SVC()):
        with pytest.raises(
            TypeError, match="CoresetRegressor needs a regressor.*CoresetClassifier"
        ):
            CoresetRegressor(giga(20), classifier).fit(Xb, yb)
    # a pipeline counts by its last step
    with pytest.raises(TypeError, match="needs a classifier"):
        CoresetClassifier(giga(20), make_pipeline(StandardScaler(), Ridge())).fit(X, y)


def test_verbose_reports_the_two_phases(phish, capsys):
    X, y = phish
    CoresetClassifier(UniformCoreset(40, projection=None), LogisticRegression()).fit(X, y)
    assert capsys.readouterr().out == ""
    clf = CoresetClassifier(UniformCoreset(40, projection=None), LogisticRegression(), verbose=1)
    clf.fit(X, y)
    out = capsys.readouterr().out
    assert "[CoresetClassifier] coreset: UniformCoreset (n_points=40, model=logistic)" in out
    assert "fit of LogisticRegression on 40 weighted rows" in out
    assert out.count("done in") == 2


def test_an_empty_coreset_is_named():
    from sklearn.base import BaseEstimator

    class Empty(BaseEstimator):
        def fit(self, X, y, sample_weight=None):
            return self

        def fit_resample(self, X, y, sample_weight=None):
            self.sample_indices_, self.n_features_in_ = np.arange(0), X.shape[1]
            return X[:0], y[:0], {"sample_weight": np.ones(0)}

    X = np.random.RandomState(0).standard_normal((40, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="Empty kept no rows"):
        CoresetClassifier(Empty(), LogisticRegression()).fit(X, y)
    with pytest.raises(ValueError, match="Empty kept no rows"):
        CoresetRegressor(Empty(), Ridge()).fit(X, X[:, 1])


def test_empty_input_is_reported_as_such():
    # not "y has one class only (no labels)": there are no rows at all
    with pytest.raises(ValueError, match=r"0 sample\(s\)"):
        CoresetClassifier(giga(5), LogisticRegression()).fit(np.empty((0, 3)), np.empty(0))


@pytest.mark.parametrize("compose", ["pipeline", "meta"])
def test_the_bayesian_estimator_starts_from_the_full_datas_mode_too(compose, monkeypatch):
    """Fitted on a coreset, a Bayesian estimator's Laplace fit also starts from the full
    data's mode (the coreset's laplace_), where a posterior that is not log-concave may
    have its highest mode; its own start alone may lead to a lower one."""
    from skcoreset.linear_model import BayesianStudentTRegression, _base
    from skcoreset.pipeline import make_pipeline as make_resampling_pipeline

    seen = []
    real = _base.laplace_or_start

    def spy(model, Xd, y, w, starts=()):
        seen.append(starts)
        return real(model, Xd, y, w, starts)

    monkeypatch.setattr(_base, "laplace_or_start", spy)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 2))
    y = X @ [1.0, -0.5] + rng.standard_t(3, 2000)
    coreset = GIGACoreset(60, model="student_t", random_state=0)
    est = BayesianStudentTRegression(n_samples=50, n_warmup=50, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains, a small coreset: not the subject
        if compose == "pipeline":
            fitted = make_resampling_pipeline(coreset, est).fit(X, y)[0]
        else:
            fitted = CoresetRegressor(coreset, est).fit(X, y).coreset_
    (starts,) = seen
    assert len(starts) == 1
    np.testing.assert_array_equal(starts[0], fitted.laplace_.mean)
