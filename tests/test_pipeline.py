"""skcoreset.pipeline: the flat scaler -> coreset -> estimator shape."""

import pickle
import threading
import warnings

import numpy as np
import pytest
import sklearn
from packaging.version import Version
from sklearn import config_context, get_config
from sklearn.base import BaseEstimator, clone
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression, PoissonRegressor, Ridge
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline as SkPipeline
from sklearn.pipeline import make_pipeline as sk_make_pipeline
from sklearn.preprocessing import StandardScaler

from skcoreset.coreset import GIGACoreset, UniformCoreset
from skcoreset.pipeline import Pipeline, make_pipeline


def giga(n=40, **kw):
    return GIGACoreset(n, n_projections=20, random_state=0, **kw)


def test_flat_pipeline_fits_later_steps_on_weighted_coreset(phish):
    X, y = phish
    pipe = make_pipeline(StandardScaler(), giga(40), LogisticRegression())
    assert [n for n, _ in pipe.steps] == ["standardscaler", "gigacoreset", "logisticregression"]
    pipe.fit(X, y)
    scaler, coreset, clf = pipe.named_steps.values()
    # The scaler saw all rows; the coreset the scaled rows.
    np.testing.assert_allclose(scaler.mean_, X.mean(axis=0))
    assert coreset.model_ == "logistic"
    idx, w = coreset.sample_indices_, coreset.sample_weight_
    np.testing.assert_array_equal(pipe.sample_indices_, idx)
    np.testing.assert_array_equal(pipe.sample_weight_, w)
    # The final estimator equals a manual fit on the weighted coreset.
    ref = LogisticRegression().fit(scaler.transform(X)[idx], y[idx], sample_weight=w)
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-6)
    # Prediction uses every row and skips the coreset.
    assert pipe.predict(X).shape == (X.shape[0],)
    np.testing.assert_allclose(pipe.predict_proba(X), ref.predict_proba(scaler.transform(X)))
    np.testing.assert_allclose(
        pipe.decision_function(X), ref.decision_function(scaler.transform(X))
    )
    assert pipe.score(X, y) == pytest.approx(ref.score(scaler.transform(X), y))
    assert pipe.score(X, y) > 0.85
    np.testing.assert_array_equal(pipe.classes_, [0.0, 1.0])
    np.testing.assert_array_equal(pipe.fit_predict(X, y), pipe.predict(X))


def test_pipeline_class_params_indexing_clone_pickle(phish):
    X, y = phish
    pipe = Pipeline([("scale", StandardScaler()), ("cs", giga(30)), ("clf", LogisticRegression())])
    assert pipe.get_params()["cs__n_points"] == 30
    pipe.set_params(cs__n_points=20)
    assert pipe["cs"].n_points == 20 and pipe[1] is pipe.named_steps.cs
    assert isinstance(pipe[:2], Pipeline) and len(pipe[:2]) == 2
    c = clone(pipe)
    assert c.get_params()["cs__n_points"] == 20 and c["cs"] is not pipe["cs"]
    pipe.fit(X, y)
    assert len(pipe["cs"].sample_indices_) == 20
    # The coreset's model parameter is left as given; model_ records the choice.
    assert pipe["cs"].model == "auto"
    p2 = pickle.loads(pickle.dumps(pipe))
    np.testing.assert_array_equal(p2.predict_proba(X), pipe.predict_proba(X))
    assert "GIGACoreset" in pipe._repr_html_()


def test_model_auto_follows_final_estimator(bikes):
    X, y = bikes
    # Counts: Poisson for PoissonRegressor, Gaussian-linear for Ridge (y alone would say Poisson).
    pois = make_pipeline(StandardScaler(), giga(60), PoissonRegressor()).fit(X, y)
    assert pois["gigacoreset"].model_ == "poisson"
    assert pois.score(X, y) > 0.1
    lin = make_pipeline(StandardScaler(), giga(60), Ridge()).fit(X, y)
    assert lin["gigacoreset"].model_ == "gaussian"
    explicit = make_pipeline(StandardScaler(), giga(60, model="gaussian"), PoissonRegressor()).fit(
        X, y
    )
    assert explicit["gigacoreset"].model_ == "gaussian"


def test_string_labels_reach_the_estimator(phish):
    X, y = phish
    labels = np.where(y > 0, "phish", "legit")
    pipe = make_pipeline(giga(40), LogisticRegression()).fit(X, labels)
    np.testing.assert_array_equal(pipe.classes_, ["legit", "phish"])
    assert set(pipe.predict(X[:50])) <= {"legit", "phish"}
    numeric = make_pipeline(giga(40), LogisticRegression()).fit(X, y)
    np.testing.assert_array_equal(
        pipe["gigacoreset"].sample_indices_, numeric["gigacoreset"].sample_indices_
    )


def test_sample_weight_reaches_coreset_and_combines(phish):
    X, y = phish
    w = np.random.RandomState(3).uniform(0.5, 2.0, X.shape[0])
    pipe = make_pipeline(
        StandardScaler(), UniformCoreset(100, projection=None, random_state=0), LogisticRegression()
    )
    pipe.fit(X, y, sample_weight=w)
    cs = pipe["uniformcoreset"]
    # The scaler before the coreset gets the data weights...
    np.testing.assert_allclose(pipe["standardscaler"].mean_, np.average(X, axis=0, weights=w))
    # ... and the coreset weights include them (uniform: w_n * N / M).
    np.testing.assert_allclose(cs.sample_weight_, w[cs.sample_indices_] * X.shape[0] / 100)
    np.testing.assert_allclose(pipe.sample_weight_, cs.sample_weight_)
    # The same through the stepname__ syntax.
    p2 = clone(pipe).fit(X, y, uniformcoreset__sample_weight=w)
    np.testing.assert_allclose(p2.sample_weight_, cs.sample_weight_)
    with pytest.raises(ValueError, match="supplies the weights"):
        clone(pipe).fit(X, y, logisticregression__sample_weight=w)
    with pytest.raises(ValueError, match="does not accept the foo"):
        clone(pipe).fit(X, y, foo=1)


def test_steps_after_coreset_are_weighted(phish):
    X, y = phish
    pipe = make_pipeline(giga(40), StandardScaler(), LogisticRegression()).fit(X, y)
    cs = pipe["gigacoreset"]
    np.testing.assert_allclose(
        pipe["standardscaler"].mean_,
        np.average(X[cs.sample_indices_], axis=0, weights=cs.sample_weight_),
    )
    with pytest.warns(UserWarning, match="does not accept sample_weight"):
        make_pipeline(giga(40), PCA(3), LogisticRegression()).fit(X, y)
    with pytest.raises(TypeError, match="must accept sample_weight"):
        make_pipeline(giga(40), KNeighborsClassifier()).fit(X, y)


def test_grid_search_over_coreset_size(phish):
    X, y = phish
    pipe = make_pipeline(StandardScaler(), giga(), LogisticRegression())
    grid = {"gigacoreset__n_points": [5, 60]}
    gs = GridSearchCV(pipe, grid, cv=3).fit(X, y)
    assert gs.best_params_ == {"gigacoreset__n_points": 60}
    s = gs.cv_results_["mean_test_score"]
    assert s[1] > s[0]
    gs2 = GridSearchCV(pipe, grid, cv=3, n_jobs=2).fit(X, y)
    np.testing.assert_allclose(gs2.cv_results_["mean_test_score"], s)
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.shape == (3,) and scores.min() > 0.8


def test_pandas_and_set_output(phish):
    pd = pytest.importorskip("pandas")
    X, y = phish
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    ys = pd.Series(y, name="target")
    pipe = make_pipeline(StandardScaler(), giga(40), LogisticRegression()).set_output(
        transform="pandas"
    )
    pipe.fit(df, ys)
    np.testing.assert_array_equal(pipe.feature_names_in_, df.columns)
    np.testing.assert_array_equal(pipe["gigacoreset"].feature_names_in_, df.columns)
    np.testing.assert_array_equal(pipe["logisticregression"].feature_names_in_, df.columns)
    assert isinstance(pipe.X_coreset_, pd.DataFrame) and isinstance(pipe.y_coreset_, pd.Series)
    assert pipe.predict(df).shape == (len(df),)
    tr = make_pipeline(StandardScaler(), giga(40), StandardScaler()).set_output(transform="pandas")
    out = tr.fit_transform(df, ys)
    assert isinstance(out, pd.DataFrame) and out.shape == df.shape
    np.testing.assert_array_equal(tr.get_feature_names_out(), df.columns)


def test_memory_caches_the_steps_before_the_coreset(phish, tmp_path):
    X, y = phish
    pipe = make_pipeline(StandardScaler(), giga(20), LogisticRegression(), memory=str(tmp_path))
    pipe.fit(X, y)
    assert hasattr(pipe["standardscaler"], "mean_")  # fitted clone put back in place
    plain = make_pipeline(StandardScaler(), giga(20), LogisticRegression()).fit(X, y)
    np.testing.assert_allclose(pipe.predict_proba(X), plain.predict_proba(X))
    again = clone(pipe).fit(X, y)  # loads the scaler from the cache
    np.testing.assert_allclose(again.predict_proba(X), plain.predict_proba(X))


def test_metadata_routing(phish):
    X, y = phish
    w = np.random.RandomState(4).uniform(0.5, 2.0, X.shape[0])
    with config_context(enable_metadata_routing=True):
        pipe = make_pipeline(
            StandardScaler().set_fit_request(sample_weight=True),
            UniformCoreset(50, projection=None, random_state=0).set_fit_request(sample_weight=True),
            LogisticRegression(),  # no request needed: it gets the coreset weights
        )
        pipe.fit(X, y, sample_weight=w)
        cs = pipe["uniformcoreset"]
        np.testing.assert_allclose(cs.sample_weight_, w[cs.sample_indices_] * X.shape[0] / 50)
        np.testing.assert_allclose(pipe["standardscaler"].mean_, np.average(X, axis=0, weights=w))
        assert pipe.score(X, y) > 0.8


def _returns_in_time(fit, seconds=120):
    """Run ``fit()`` in a thread (with the caller's scikit-learn configuration, which is
    thread-local); fail instead of hanging the suite if it does not return."""
    out = {}
    config = get_config()

    def run():
        try:
            with config_context(**config):
                out["value"] = fit()
        except BaseException as exc:  # re-raised in the test's thread
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"fit did not return within {seconds} s"
    if "error" in out:
        raise out["error"]
    return out["value"]


def _routing_pipe():
    return make_pipeline(
        StandardScaler().set_fit_request(sample_weight=True),
        UniformCoreset(50, projection=None, random_state=0).set_fit_request(sample_weight=True),
        # no fit request needed (it gets the coreset weights); the score weights the folds
        LogisticRegression().set_score_request(sample_weight=True),
    )


def test_metadata_routing_fit_without_metadata(phish):
    X, y = phish
    plain = make_pipeline(
        StandardScaler(), UniformCoreset(50, projection=None, random_state=0), LogisticRegression()
    ).fit(X, y)
    with config_context(enable_metadata_routing=True):
        # Routing on, steps requesting sample_weight, none passed: this looped forever once.
        pipe = _returns_in_time(lambda: _routing_pipe().fit(X, y))
        np.testing.assert_array_equal(pipe.sample_indices_, plain.sample_indices_)
        np.testing.assert_allclose(pipe.sample_weight_, plain.sample_weight_)
        np.testing.assert_allclose(pipe.predict_proba(X), plain.predict_proba(X))
        # With metadata the requesting steps get it: the same fit as without routing.
        w = np.random.RandomState(4).uniform(0.5, 2.0, X.shape[0])
        routed = _returns_in_time(lambda: _routing_pipe().fit(X, y, sample_weight=w))
    weighted = clone(plain).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(routed.sample_weight_, weighted.sample_weight_)
    np.testing.assert_allclose(routed["standardscaler"].mean_, weighted["standardscaler"].mean_)
    np.testing.assert_allclose(routed.predict_proba(X), weighted.predict_proba(X))


def test_metadata_routing_grid_search(phish):
    X, y = phish
    w = np.random.RandomState(5).uniform(0.5, 2.0, X.shape[0])
    grid = {"uniformcoreset__n_points": [5, 100]}
    with config_context(enable_metadata_routing=True):
        bare = _returns_in_time(lambda: GridSearchCV(_routing_pipe(), grid, cv=3).fit(X, y))
        pipe = _routing_pipe()
        if Version(sklearn.__version__) < Version("1.8"):
            # Before 1.8 a search's default scorer asks the pipeline's own score request, not
            # its steps' (scikit-learn issue 30937), as for scikit-learn's Pipeline.
            pipe.set_score_request(sample_weight=True)
        routed = _returns_in_time(lambda: GridSearchCV(pipe, grid, cv=3).fit(X, y, sample_weight=w))
    assert bare.best_params_ == routed.best_params_ == {"uniformcoreset__n_points": 100}
    # The weights reached the coreset of the refit: uniform weights are w_n * N / M.
    cs = routed.best_estimator_["uniformcoreset"]
    np.testing.assert_allclose(cs.sample_weight_, w[cs.sample_indices_] * X.shape[0] / 100)
    cs_bare = bare.best_estimator_["uniformcoreset"]
    np.testing.assert_allclose(cs_bare.sample_weight_, X.shape[0] / 100)


def test_stock_pipeline_rejects_a_coreset_step(phish):
    X, y = phish
    stock = sk_make_pipeline(StandardScaler(), giga(20), LogisticRegression())
    with pytest.raises(TypeError, match="intermediate steps should be transformers"):
        stock.fit(X, y)
    # As the final step the coreset fits (a coreset of the scaled rows), but cannot predict.
    last = SkPipeline([("s", StandardScaler()), ("c", giga(20))]).fit(X, y)
    assert len(last["c"].sample_indices_) == 20
    assert not hasattr(last, "predict")


def test_bad_steps():
    with pytest.raises(TypeError, match="neither"):
        Pipeline([("a", LogisticRegression()), ("b", LogisticRegression())]).fit([[0.0]], [0])
    with pytest.raises(ValueError, match="not unique"):
        Pipeline([("a", giga()), ("a", LogisticRegression())]).fit([[0.0]], [0])


def test_bayesian_final_estimator(phish):
    blr = pytest.importorskip("skcoreset.linear_model").BayesianLogisticRegression
    X, y = phish
    pipe = make_pipeline(
        StandardScaler(), giga(60), blr(n_samples=200, n_warmup=200, n_chains=2, random_state=0)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y)
    est = pipe[-1]
    assert est.coef_samples_.shape == (2, 200, X.shape[1])
    assert pipe.score(X, y) > 0.85
    lpd = pipe.log_predictive_density(X, y)
    assert -0.5 < lpd < 0
    assert pipe.sample_posterior_predictive(X[:7], n_draws=5, random_state=0).shape == (5, 7)


def test_transform_availability_follows_the_steps(phishing):
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from skcoreset.coreset import OMPCoreset
    from skcoreset.pipeline import make_pipeline

    X, y = phishing
    # a final classifier cannot transform: fit_transform must not even be offered
    assert not hasattr(
        make_pipeline(StandardScaler(), OMPCoreset(20), LogisticRegression()), "fit_transform"
    )
    # a coreset as the last step is skipped when transforming: every row comes out
    pipe = make_pipeline(StandardScaler(), OMPCoreset(20, n_projections=20)).fit(X, y)
    assert pipe.transform(X).shape == X.shape
    np.testing.assert_allclose(pipe.transform(X), StandardScaler().fit_transform(X))


def _bayes_pipe(final=None):
    from skcoreset.coreset import OMPCoreset
    from skcoreset.linear_model import BayesianLogisticRegression

    final = final or BayesianLogisticRegression(n_samples=50, n_warmup=50, random_state=0)
    return make_pipeline(StandardScaler(), OMPCoreset(20, n_projections=20, random_state=0), final)


def _bad_inputs():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((200, 3))
    y = (X[:, 0] > 0).astype(float)
    one_bad = np.arange(200) == 7
    huge = X.copy()
    huge[:, 0] = np.where(X[:, 0] > 0, 1.5e308, -1.5e308)  # finite, but overflows the scaler
    return {
        "nan in y": (X, np.where(one_bad, np.nan, y), r"y contains NaN"),
        "inf in y": (X, np.where(one_bad, np.inf, y), r"y contains infinity"),
        "huge X": (huge, y, r"'standardscaler'.*too large.*overflow"),
        "huge X, 1e307": (X * 3e307, y, r"'standardscaler'.*too large.*overflow"),
        "continuous y": (X, X[:, 1], r"real values|continuous"),
    }


@pytest.mark.parametrize("case", list(_bad_inputs()))
@pytest.mark.parametrize("final", ["bayesian", "logistic"])
def test_messages_name_the_actual_problem(case, final):
    """NaN/inf in y, overflow in a step before the coreset and real-valued targets for a
    classifier are each named, not reported as "3 classes" or "X contains NaN"."""
    X, y, match = _bad_inputs()[case]
    pipe = _bayes_pipe(LogisticRegression() if final == "logistic" else None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the scaler's own overflow warning
        with pytest.raises(ValueError, match=match) as info:
            pipe.fit(X, y)
    message = str(info.value)
    assert "classes" not in message
    assert "X contains NaN" not in message


def test_nonfinite_output_after_the_coreset_is_named():
    from sklearn.preprocessing import FunctionTransformer

    rng = np.random.RandomState(0)
    X = rng.standard_normal((200, 3))
    y = (X[:, 0] > 0).astype(int)
    log = FunctionTransformer(np.log)  # NaN for negative input
    pipe = make_pipeline(
        UniformCoreset(40, projection=None, random_state=0), log, LogisticRegression()
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.filterwarnings("ignore", "Step 'functiontransformer'.*sample_weight")
        with pytest.raises(ValueError, match=r"'functiontransformer'.*NaN or infinity"):
            pipe.fit(X, y)
    # input already holding NaN is reported by the steps themselves, as missing values
    X_nan = X.copy()
    X_nan[3, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        make_pipeline(StandardScaler(), giga(20), LogisticRegression()).fit(X_nan, y)


class _EmptyResampler(BaseEstimator):
    """A resampler that keeps no rows (as a coreset of negligible weights may)."""

    def fit(self, X, y, sample_weight=None):
        return self

    def fit_resample(self, X, y, sample_weight=None):
        self.sample_indices_ = np.arange(0)
        return X[:0], y[:0], {"sample_weight": np.ones(0)}


def test_an_empty_coreset_and_overflowing_weights_are_named():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((60, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="'_emptyresampler' kept no rows"):
        make_pipeline(_EmptyResampler(), LogisticRegression()).fit(X, y)
    # weights whose weighted sums overflow the scaler: the weights are named, not X
    w = np.full(60, 1e300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(
            ValueError, match="'standardscaler'.*sample_weight has values too large"
        ):
            make_pipeline(StandardScaler(), giga(20), LogisticRegression()).fit(
                X, y, sample_weight=w
            )


def test_a_coreset_of_one_class_is_named(phish):
    X, y = phish
    pipe = make_pipeline(UniformCoreset(1, projection=None, random_state=0), LogisticRegression())
    # not "y has one class": y has two; the coreset step kept one
    with pytest.raises(ValueError, match="'uniformcoreset' kept rows of one class only.*n_points"):
        pipe.fit(X, y)
