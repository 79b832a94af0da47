"""Hostile but realistic input on the newer surfaces (issue 46): every refusal names the real
problem and what to do, and what the library can compute it computes without leaking
warnings.

The messages of a user's model (gradient, family, encode_targets) are tested in
test_custom_model.py and test_families.py, the exports of rates in test_export.py, the
Student-t's outliers and weights in test_student_t.py.
"""

import warnings

import numpy as np
import pytest

from skcoreset import (
    BayesianGammaRegression,
    BayesianGLM,
    BayesianLinearRegression,
    BayesianLogisticRegression,
    BayesianPoissonRegression,
    BayesianStudentTRegression,
    OMPCoreset,
)

CHAINS = dict(n_samples=20, n_warmup=10, n_chains=2, random_state=0)


def _rows(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    return rng, X


@pytest.mark.parametrize("prior_scale", ["auto", 10.0])
@pytest.mark.parametrize(
    "make",
    [
        lambda p: BayesianLinearRegression(prior_scale=p, **CHAINS),
        lambda p: BayesianStudentTRegression(prior_scale=p, **CHAINS),
        lambda p: OMPCoreset(model="gaussian", prior_scale=p, n_points=20, random_state=0),
        lambda p: OMPCoreset(model="student_t", prior_scale=p, n_points=20, random_state=0),
    ],
    ids=["BayesianLinearRegression", "BayesianStudentTRegression", "OMP-gaussian", "OMP-t"],
)
def test_targets_whose_squares_overflow_are_named(make, prior_scale):
    """One target of 1e200: "prior_scale must be a positive finite number ..., got
    array([nan, nan, nan, nan])" though no prior was set, "noise_scale must be positive and
    finite, got inf" with one, and for the Student-t "the targets are an exact linear
    function of the features" (false). Now y, its size and the remedy."""
    rng, X = _rows()
    y = X @ [1.0, 2.0] + rng.standard_normal(300)
    y[7] = 1e200
    with pytest.raises(ValueError, match=r"y holds values as large as 1e\+200 .* Rescale y"):
        make(prior_scale).fit(X, y)


@pytest.mark.parametrize(
    "make",
    [lambda: BayesianPoissonRegression(**CHAINS), lambda: OMPCoreset(model="poisson")],
    ids=["BayesianPoissonRegression", "OMPCoreset"],
)
def test_counts_beyond_float64_integers_are_named(make):
    """One count of 1e200 was blamed on "X or sample_weight is far too large" (the coreset)
    or sampled to NaN draws (R-hat nan); counts past 2^53 are named, with rates as the
    remedy."""
    rng, X = _rows()
    y = rng.poisson(3.0, 300).astype(float)
    y[0] = 1e200
    with pytest.raises(ValueError, match=r"y holds values as large as 1e\+200 .* rates"):
        make().fit(X, y)


def test_gamma_targets_near_the_float64_limit_fit_without_warnings():
    """A gamma target of 1e300 is fine (the model works on log y), but overflowing squares
    in the 'auto' prior's moments and the shape's estimate leaked RuntimeWarnings."""
    rng, X = _rows()
    y = rng.gamma(2.0, 1.0, 300)
    y[0] = 1e300
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        core = OMPCoreset(model="gamma", n_points=20, random_state=0).fit(X, y)
        fit = BayesianGammaRegression(**CHAINS).fit(X, y)
    assert np.all(np.isfinite(core.sample_weight_)) and np.all(np.isfinite(fit.coef_samples_))


@pytest.mark.parametrize(
    "make",
    [
        lambda: OMPCoreset(n_points=20),
        lambda: OMPCoreset(n_points=20, model="multinomial"),
        lambda: OMPCoreset(n_points=20, model="gaussian"),
        lambda: BayesianLogisticRegression(**CHAINS),
        lambda: BayesianGLM(model="logistic", **CHAINS),
        lambda: BayesianLinearRegression(**CHAINS),
    ],
    ids=["auto", "multinomial", "gaussian", "BayesianLogisticRegression", "BayesianGLM", "linear"],
)
@pytest.mark.parametrize("kind", ["labels", "numbers"])
@pytest.mark.parametrize("missing", [None, np.nan], ids=["None", "NaN"])
def test_a_missing_target_is_named(make, kind, missing):
    """A None among the labels was a raw TypeError ("'<' not supported between instances of
    'NoneType' and 'str'"), or "Unknown label type: unknown", or "y contains NaN"; a NaN among
    string labels was a label "nan", or "labels of two types"."""
    rng, X = _rows(100)
    y = np.where(rng.random(100) < 0.5, "a", "b") if kind == "labels" else rng.random(100) < 0.5
    y = y.astype(object)
    y[3] = missing
    what = "None" if missing is None else "NaN"
    with pytest.raises(ValueError, match=rf"y holds {what} \(1 of 100 missing, the first at row 3"):
        make().fit(X, y)


@pytest.mark.parametrize(
    "make", [lambda: OMPCoreset(n_points=20), lambda: BayesianLogisticRegression(**CHAINS)]
)
def test_labels_of_two_types_are_named(make):
    """Strings beside numbers could not be ordered: a raw TypeError."""
    rng, X = _rows(100)
    y = np.array(["a" if v < 0.5 else 1 for v in rng.random(100)], dtype=object)
    with pytest.raises(ValueError, match=r"y mixes labels of types .* \(int, str\)"):
        make().fit(X, y)


def test_one_weighted_class_is_named_by_its_label():
    """One row of positive weight: "y has one class only ([1.0])", the code, not the
    label."""
    rng, X = _rows(100)
    y = np.where(rng.random(100) < 0.5, "yes", "no")
    w = np.zeros(100)
    w[np.flatnonzero(y == "yes")[0]] = 1.0
    with pytest.raises(
        ValueError, match=r"positive sample_weight: y has one class only \(\['yes'\]\)"
    ):
        BayesianLogisticRegression(**CHAINS).fit(X, y, sample_weight=w)


def test_a_label_of_another_type_in_a_stream_is_named():
    """A number among string labels in a later call of partial_fit: a raw TypeError from
    sorting the unknown labels; now the labels it does not know, by name."""
    rng, X = _rows(90)
    y = np.where(rng.random(90) < 0.5, "a", "b").astype(object)
    core = OMPCoreset(n_points=20, model="multinomial", random_state=0)
    core.partial_fit(X[:45], y[:45], classes=["a", "b", "c"])
    y[50] = 7.5
    with pytest.raises(ValueError, match=r"labels that are not among the classes .*: \[.*7\.5"):
        core.partial_fit(X[45:], y[45:])


@pytest.mark.parametrize("name", ["poisson", "gamma", "negative_binomial", "gaussian"])
def test_tiny_weights_start_where_unit_weights_do(name):
    """Weights of 1e-300: Newton's start averaged y with them, which np.average called
    weights summing to zero (a ZeroDivisionError), and the Gaussian noise's estimate divided
    0 by 0. The start reads the weights relative to the largest: unit weights' start."""
    from skcoreset.models import get_model

    rng, X = _rows()
    y = rng.poisson(3.0, 300).astype(float) + 1.0
    model = get_model(name)
    Xd = model.design(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        tiny = model.initial_params(Xd, y, np.full(300, 1e-300))
        if name == "gaussian":
            noise = model.estimate_noise(Xd[:2], y[:2], np.full(2, 1e-320))
            assert np.isfinite(noise) and noise > 0
    np.testing.assert_array_equal(tiny, model.initial_params(Xd, y, np.ones(300)))
