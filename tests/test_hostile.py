"""Hostile but realistic input on the newer surfaces (issue 46): every refusal names the real
problem and what to do, and what the library can compute it computes without leaking
warnings.

The messages of a user's model (gradient, family, encode_targets) are tested in
test_custom_model.py and test_families.py, the exports of rates in test_export.py, the
Student-t's outliers and weights in test_student_t.py.
"""

import re
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


def test_a_stream_of_single_rows_leaks_no_solver_warning():
    """A stream of one row a call (5 parameters of the Gaussian model, with its noise): the
    data's fit of one row has a singular Hessian, which the stream's fit takes for what it
    is (the first block's fit stands); scipy's LinAlgWarning of an ill-conditioned solve
    leaked from Newton's step."""
    rng, X = _rows(3)
    X = np.column_stack([X, rng.standard_normal(3)])
    y = X @ [0.5, -0.3, 0.2] + 0.5 + rng.standard_normal(3)
    core = OMPCoreset(model="gaussian", n_points=20, n_projections=50, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # LinAlgWarning is one
        for k in range(3):
            core.partial_fit(X[k : k + 1], y[k : k + 1])
    assert core.sample_indices_.shape[0] == 3 and core.laplace_kl_ == 0.0


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
            noise = model.estimate_extra(Xd[:2], y[:2], np.full(2, 1e-320))
            assert np.isfinite(noise) and noise > 0
    np.testing.assert_array_equal(tiny, model.initial_params(Xd, y, np.ones(300)))


# -- generated inputs (hypothesis): the models, the exports, the streams --------------------
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

#: Derandomised (the same examples every run), a few seconds each;
#: SKCORESET_HOSTILE_EXAMPLES multiplies them for a deeper search.
_DEPTH = int(__import__("os").environ.get("SKCORESET_HOSTILE_EXAMPLES", 1))


def _generated(n):
    return settings(
        max_examples=n * _DEPTH,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


_SINGLE_INDEX = ["logistic", "poisson", "gaussian", "negative_binomial", "gamma"]


def _targets_of(name):
    """A strategy of one target of the model's kind (counts up to 1e6, reals, positives)."""
    if name == "logistic":
        return st.sampled_from([0.0, 1.0])
    if name in ("poisson", "negative_binomial"):
        return st.integers(0, 10**6).map(float)
    if name == "gamma":
        return st.floats(1e-6, 1e6)
    return st.floats(-1e6, 1e6)


@st.composite
def _model_points(draw):
    name = draw(st.sampled_from(_SINGLE_INDEX))
    n = draw(st.integers(1, 6))
    y = np.array([draw(_targets_of(name)) for _ in range(n)])
    eta = np.array([draw(st.floats(-30.0, 30.0)) for _ in range(n)])
    extra = 10.0 ** draw(st.floats(-8.0, 8.0))
    return name, y, eta, extra


@_generated(60)
@given(case=_model_points())
def test_generated_log_densities_agree_with_the_kernels(case):
    """The NumPy log_density (predictions, the exports' reference) and the kernels' (fits,
    sampling) give one log-likelihood, over counts to 1e6, |eta| to 30 and extra parameters
    from 1e-8 to 1e8 (the negative binomial's lost 1e4 at alpha 1e-16 before issue 46)."""
    from skcoreset.models import _glm_kernels as GK
    from skcoreset.models import get_model

    name, y, eta, extra = case
    model = get_model(name)
    with np.errstate(over="ignore"):
        ours = model.log_density(y, eta, extra)
    kernel = GK.loglik_vector_extras(model.family, eta, y, np.full(y.shape, extra))
    finite = np.isfinite(kernel)
    np.testing.assert_array_equal(np.isfinite(ours), finite)
    scale = np.maximum(np.abs(kernel[finite]), 1.0)
    assert np.all(np.abs(ours[finite] - kernel[finite]) <= 1e-9 * scale * (1 + np.abs(y[finite])))


@_generated(60)
@given(case=_model_points())
def test_generated_points_pass_the_derivative_check(case):
    """The built-in families' derivatives (dl/deta, the curvature, dl/d log extra) pass the
    check a user's family gets (skcoreset.models._checks) at generated points: the check has
    no false alarm on sound functions, over the built-ins' whole range."""
    from skcoreset.models import get_model
    from skcoreset.models._checks import check_family

    name, y, eta, extra = case
    model = get_model(name)
    with np.errstate(all="ignore"):
        check_family(model.family, y, eta, extra, model.log_concave, name)


@st.composite
def _linear_custom(draw):
    """A sound NumPy Gaussian-linear model, its rows on a generated scale, and a factor for
    its gradient (1: sound)."""
    n, P = draw(st.integers(1, 8)), draw(st.integers(1, 4))
    scale = 10.0 ** draw(st.floats(-3.0, 3.0))
    seed = draw(st.integers(0, 2**16))
    factor = draw(st.sampled_from([1.0, 1.0, 1.0, -1.0, 0.0, 0.5, 1.5]))
    return n, P, scale, seed, factor


@_generated(60)
@given(case=_linear_custom())
def test_generated_gradients_are_judged_right(case):
    """The gradient check passes a sound gradient whatever the rows' scale (1e-3 to 1e3) and
    size, and names a wrong one (a flipped sign, zeros, a half or 1.5 times the gradient)."""
    from skcoreset.models import CustomModel
    from skcoreset.models._checks import check_custom_gradient

    n, P, scale, seed, factor = case
    rng = np.random.default_rng(seed)
    X = scale * rng.standard_normal((n, P))
    y = X @ rng.standard_normal(P) + rng.standard_normal(n)

    def loglik(t, X, y):
        return -0.5 * (y - t @ X.T) ** 2

    def grad(t, X, y):
        return factor * ((y - t @ X.T)[:, :, None] * X[None])

    model = CustomModel(loglik, grad, P)
    slopes = np.abs(X).max() * (np.abs(y).max() + np.abs(X).max())
    if factor == 1.0 or slopes < 1e-6:  # sound, or no slope to judge
        check_custom_gradient(model, X, y)
    else:
        with pytest.raises(ValueError, match="grad does not match its loglik"):
            check_custom_gradient(model, X, y)


_EXPORTED = ["logistic", "poisson", "gaussian", "negative_binomial", "gamma", "student_t"]


@st.composite
def _export_cases(draw):
    name = draw(st.sampled_from(_EXPORTED + ["multinomial"]))
    n = draw(st.integers(12, 60))
    return name, n, draw(st.integers(0, 2**16)), draw(st.booleans()), draw(st.booleans())


@_generated(20)
@given(case=_export_cases())
def test_generated_exports_give_the_library_log_density(case):
    """NumPyro's log density of a fitted coreset's export equals the library's (its own
    log_density or loglik_draws and the priors), for generated data sizes, seeds, intercepts
    and rates: the export gives the library's density or refuses."""
    numpyro = pytest.importorskip("numpyro")
    from numpyro.infer.util import potential_energy

    from skcoreset import UniformCoreset

    from .hostile_cases import _data, _export_points, _reference_log_posterior

    numpyro.enable_x64()
    name, n, seed, intercept, rates = case
    X, y = _data(name, n=n, seed=seed)
    if rates and name == "poisson":
        y = y / 3.0
    core = UniformCoreset(n_points=10, projection=None, model=name, fit_intercept=intercept)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            core.set_params(random_state=seed).fit(X, y)
        except ValueError as exc:  # data a model cannot take (one class, an exact fit)
            assert re.search(r"class|linear|mode|row|point|y ", str(exc)), str(exc)
            return
    model = core.to_numpyro()
    for point in _export_points(core, n=2, seed=seed):
        got = -float(potential_energy(model, (), {}, point))
        want = _reference_log_posterior(core, point)
        rtol = 1e-6 if name == "negative_binomial" else 1e-9
        assert got == pytest.approx(want, rel=rtol), (name, got, want)


@st.composite
def _streams(draw):
    name = draw(st.sampled_from(["logistic", "poisson", "gaussian", "multinomial", "gamma"]))
    n = draw(st.integers(30, 150))
    cuts = sorted(set(draw(st.lists(st.integers(1, n - 1), min_size=0, max_size=4))))
    bad_call = draw(st.one_of(st.none(), st.integers(1, len(cuts) + 1)))
    return name, n, cuts, bad_call, draw(st.integers(0, 2**16))


@_generated(25)
@given(case=_streams())
def test_generated_streams_are_whole_and_atomic(case):
    """A stream of partial_fit calls cut anywhere: the coreset is of all the rows (indices
    within them, positive finite weights, n_samples_seen_ the rows given, get_coreset's
    targets the caller's at sample_indices_); a call with a bad row (NaN) raises naming its
    block and leaves the coreset as it was."""
    from .hostile_cases import _data

    name, n, cuts, bad_call, seed = case
    X, y = _data(name, n=n, seed=seed)
    bounds = [0, *cuts, n]
    core = OMPCoreset(n_points=15, n_projections=30, model=name, random_state=seed)
    classes = {"classes": np.unique(y)} if name in ("logistic", "multinomial") else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call, (a, b) in enumerate(zip(bounds, bounds[1:])):
            if call == bad_call and call > 0:
                before = (core.sample_indices_.copy(), core.sample_weight_.copy())
                Xb = X[a:b].copy()
                Xb[-1, 0] = np.nan
                with pytest.raises(ValueError, match=rf"In call {call} of partial_fit.*NaN"):
                    core.partial_fit(Xb, y[a:b])
                np.testing.assert_array_equal(core.sample_indices_, before[0])
                np.testing.assert_array_equal(core.sample_weight_, before[1])
            core.partial_fit(X[a:b], y[a:b], **(classes if call == 0 else {}))
    assert core.n_samples_seen_ == n
    idx = core.sample_indices_
    assert np.all((idx >= 0) & (idx < n)) and np.unique(idx).shape == idx.shape
    assert np.all(np.isfinite(core.sample_weight_)) and np.all(core.sample_weight_ > 0)
    np.testing.assert_array_equal(core.get_coreset()[1], y[idx])


@pytest.mark.parametrize("name", ["poisson", "negative_binomial", "gamma"])
def test_rows_without_weight_start_at_the_prior(name):
    """Newton's start on rows of zero weight (or none): the prior's centre, no warning."""
    from skcoreset.models import get_model, laplace_from_blocks

    rng, X = _rows(5)
    y = rng.poisson(3.0, 5).astype(float) + 1.0
    model = get_model(name)
    Xd = model.design(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        lap = laplace_from_blocks(model, lambda: [(Xd, y, np.zeros(5))])
    assert np.all(np.isfinite(lap.mean))


@pytest.mark.xfail(
    reason="sampler/ (not this issue's to edit): MALA's acceptance reads the difference of two "
    "log posteriors near 1e18 (weights of 1e15 on 1 000 rows), whose ulp is 128: the chains "
    "accept only steps of 1e-7 (R-hat 3.6, both the kernel's sampler and the NumPy twin); the "
    "difference would need summing row by row, sum_n w_n (l_n(proposal) - l_n(current)), or "
    "the log posteriors kept relative to the current point's",
    strict=False,
)
def test_weights_of_1e15_sample():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1000, 3))
    y = X @ [1.0, 0.3, -0.05] + rng.standard_normal(1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = BayesianLinearRegression(n_samples=200, n_warmup=200, random_state=0)
        fit.fit(X, y, sample_weight=np.full(1000, 1e15))
    assert fit.rhat_.max() < 1.05 and fit.step_size_ > 0.1
