"""imbalanced-learn and coresets: samplers before a coreset, coresets inside imblearn pipelines."""

import types

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from skcoreset.compose import CoresetClassifier
from skcoreset.coreset import UniformCoreset
from skcoreset.pipeline import make_pipeline

imblearn = pytest.importorskip("imblearn")
from imblearn.over_sampling import SMOTE  # noqa: E402
from imblearn.pipeline import make_pipeline as imb_make_pipeline  # noqa: E402
from imblearn.under_sampling import RandomUnderSampler  # noqa: E402


def _imbalanced(n=600, seed=0):
    """About 15 % positives."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, 3))
    y = (X[:, 0] + 0.5 * rng.standard_normal(n) > 1.2).astype(int)
    return X, y


def _uniform(n_points):
    return UniformCoreset(n_points, projection=None, random_state=0)


def _call_from_module(module_name, resampler, X, y):
    """Call ``resampler.fit_resample`` from a function whose module is ``module_name``."""
    source = "def call(resampler, X, y):\n    return resampler.fit_resample(X, y)\n"
    namespace = {"__name__": module_name}
    exec(compile(source, f"<{module_name}>", "exec"), namespace)
    call = types.FunctionType(namespace["call"].__code__, namespace)
    return call(resampler, X, y)


def test_check_resample_caller_refuses_imblearn_only():
    X, y = _imbalanced(200)
    for module in ("imblearn.pipeline", "imblearn.base", "imblearn"):
        with pytest.raises(
            TypeError, match=r"imbalanced-learn.*skcoreset\.pipeline\.make_pipeline"
        ):
            _call_from_module(module, _uniform(20), X, y)
    # other callers (user code, a package merely named like it) get the weighted rows
    for module in ("__main__", "mypackage.pipeline", "imblearnish"):
        X_m, y_m, params = _call_from_module(module, _uniform(20), X, y)
        assert X_m.shape == (20, 3) and params["sample_weight"].shape == (20,)


def test_check_resample_caller_in_a_real_imblearn_pipeline():
    X, y = _imbalanced()
    pipe = imb_make_pipeline(StandardScaler(), _uniform(50), LogisticRegression())
    with pytest.raises(TypeError, match=r"UniformCoreset\.fit_resample.*CoresetClassifier"):
        pipe.fit(X, y)
    # the same coreset as the last step's coreset, inside CoresetClassifier, is fine: the
    # imblearn pipeline calls CoresetClassifier.fit, not fit_resample
    ok = imb_make_pipeline(
        StandardScaler(),
        CoresetClassifier(_uniform(50), LogisticRegression()),
    ).fit(X, y)
    assert ok[-1].sample_indices_.shape == (50,)


def test_coreset_classifier_after_smote_in_an_imblearn_pipeline():
    X, y = _imbalanced()
    pipe = imb_make_pipeline(
        StandardScaler(),
        SMOTE(random_state=0),
        CoresetClassifier(_uniform(60), LogisticRegression()),
    ).fit(X, y)
    clf = pipe[-1]
    # The coreset summarises SMOTE's balanced output: uniform weights N_res / M.
    X_res, y_res = SMOTE(random_state=0).fit_resample(StandardScaler().fit_transform(X), y)
    assert np.bincount(y_res)[0] == np.bincount(y_res)[1] == np.bincount(y)[0]
    np.testing.assert_allclose(clf.sample_weight_, len(y_res) / 60)
    np.testing.assert_allclose(clf.X_coreset_, X_res[clf.sample_indices_])
    ref = LogisticRegression().fit(
        X_res[clf.sample_indices_], y_res[clf.sample_indices_], sample_weight=clf.sample_weight_
    )
    np.testing.assert_allclose(pipe.predict_proba(X), ref.predict_proba(pipe[0].transform(X)))
    assert pipe.predict(X).shape == (len(y),)  # the sampler is skipped when predicting


def test_smote_before_a_coreset_in_skcoreset_pipeline():
    X, y = _imbalanced()
    pipe = make_pipeline(
        StandardScaler(), SMOTE(random_state=0), _uniform(60), LogisticRegression()
    )
    pipe.fit(X, y)
    # SMOTE makes new rows: the coreset rows are not rows of X, so there are no indices
    assert not hasattr(pipe, "sample_indices_")
    X_res, y_res = SMOTE(random_state=0).fit_resample(StandardScaler().fit_transform(X), y)
    cs = pipe["uniformcoreset"]
    np.testing.assert_allclose(pipe.X_coreset_, X_res[cs.sample_indices_])
    np.testing.assert_allclose(pipe.sample_weight_, len(y_res) / 60)
    ref = LogisticRegression().fit(
        pipe.X_coreset_, pipe.y_coreset_, sample_weight=pipe.sample_weight_
    )
    np.testing.assert_allclose(pipe.predict_proba(X), ref.predict_proba(pipe[0].transform(X)))
    # SMOTE makes new rows and takes no weights: the data's weights cannot follow them
    with pytest.raises(TypeError, match="SMOTE.fit_resample takes no sample_weight.*new rows"):
        pipe.fit(X, y, sample_weight=np.ones(len(y)))


def test_random_under_sampler_indices_compose():
    X, y = _imbalanced()
    pipe = make_pipeline(
        StandardScaler(), RandomUnderSampler(random_state=0), _uniform(40), LogisticRegression()
    ).fit(X, y)
    rus, cs = pipe["randomundersampler"], pipe["uniformcoreset"]
    assert len(rus.sample_indices_) == 2 * np.bincount(y)[1]
    np.testing.assert_array_equal(pipe.sample_indices_, rus.sample_indices_[cs.sample_indices_])
    # the composed indices are rows of the caller's X
    np.testing.assert_allclose(pipe.X_coreset_, pipe[0].transform(X[pipe.sample_indices_]))
    np.testing.assert_array_equal(pipe.y_coreset_, y[pipe.sample_indices_])


def test_random_under_sampler_passes_the_data_weights_on():
    X, y = _imbalanced()
    w = np.random.RandomState(1).uniform(0.5, 2.0, len(y))
    pipe = make_pipeline(RandomUnderSampler(random_state=0), _uniform(40), LogisticRegression())
    pipe.fit(X, y, sample_weight=w)
    n_kept = len(pipe["randomundersampler"].sample_indices_)
    # each row the sampler keeps keeps its weight; the coreset scales them (uniform: n / M)
    np.testing.assert_allclose(pipe.sample_weight_, w[pipe.sample_indices_] * n_kept / 40)
