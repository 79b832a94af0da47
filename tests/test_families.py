"""The model as the unit of extension: single-index families, a user's own model through every
public path, and the warnings a model raises about its data."""

import math
import pickle
import warnings
from dataclasses import dataclass

import numpy as np
import pytest
import scipy.optimize
import scipy.special
import scipy.stats
from numba import njit

from skcoreset import BayesianGLM, OMPCoreset, QuasiNewtonCoreset
from skcoreset.models import (
    GLM,
    BinaryLabels,
    OverdispersionWarning,
    SingleIndexFamily,
    get_model,
    laplace_approximation,
)
from skcoreset.models._fastmath_kernels import sigmoid, softplus_sigmoid
from skcoreset.sampler import sample_mala

from .oracles.user_models import Probit, probit_curvature, probit_terms

# -- a user's logistic model: the built-in's formulas, through the public mechanism ----------


@njit(cache=True, inline="always")
def _my_logistic_terms(eta, y, param):
    sp, p = softplus_sigmoid(eta)
    return y * eta - sp, y - p


@njit(cache=True, inline="always")
def _my_logistic_curvature(eta, y, param):
    p = sigmoid(eta)
    return p * (1.0 - p)


@dataclass(frozen=True, eq=False)
class MyLogistic(GLM):
    name = "my_logistic"
    family = SingleIndexFamily("my_logistic", _my_logistic_terms, _my_logistic_curvature)
    labels = BinaryLabels

    def encode_targets(self, y):
        return BinaryLabels.fit(y).encode(y)


def _logistic_data(n=3000, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (rng.random(n) < scipy.special.expit(X @ rng.standard_normal(d) * 0.7 + 0.3)).astype(float)
    return X, y


def test_user_family_reimplementing_logistic_gives_the_builtin_coreset():
    """A user's model through SingleIndexFamily is a first-class citizen: the same coreset as
    the built-in logistic model, bit for bit, and the same MALA draws."""
    X, y = _logistic_data()
    a = OMPCoreset(n_points=40, random_state=0).fit(X, y)
    b = OMPCoreset(n_points=40, random_state=0, model=MyLogistic()).fit(X, y)
    np.testing.assert_array_equal(a.sample_indices_, b.sample_indices_)
    np.testing.assert_array_equal(a.sample_weight_, b.sample_weight_)
    assert b.model_ == "my_logistic"
    Xd = get_model("logistic").design(X[:300])
    init = np.zeros((2, Xd.shape[1]))
    kw = {"n_samples": 100, "n_warmup": 50, "random_state": 3}
    ra = sample_mala("logistic", Xd, y[:300], np.ones(300), init, **kw)
    rb = sample_mala(MyLogistic(), Xd, y[:300], np.ones(300), init, **kw)
    np.testing.assert_array_equal(ra.draws, rb.draws)


def test_user_probit_model_laplace_and_coreset():
    """A probit model written by a user: its Laplace mode is the probit posterior's mode
    (SciPy's optimiser on the formulas), and the coreset estimators build on it."""
    X, y = _logistic_data(n=2000, seed=4)
    model = Probit(prior_scale=2.0)
    Xd = model.design(X)
    lap = laplace_approximation(model, Xd, y, design=True)

    def neg_log_post(theta):
        q = (2 * y - 1) * (Xd @ theta)
        return -scipy.stats.norm.logcdf(q).sum() + 0.5 * theta @ theta / 4.0

    ref = scipy.optimize.minimize(neg_log_post, np.zeros(Xd.shape[1]), method="BFGS", tol=1e-12)
    np.testing.assert_allclose(lap.mean, ref.x, rtol=1e-6, atol=1e-7)
    for est in (OMPCoreset(n_points=60, model=Probit()), QuasiNewtonCoreset(n_points=20)):
        est.set_params(model=Probit(), random_state=0).fit(X, y)
        assert est.model_ == "probit"
        w = est.sample_weight_
        assert np.all(w > 0) and abs(w.sum() / len(y) - 1) < 0.2


def test_family_key_follows_its_code():
    """Two families of one name but different functions never share compiled kernels (their
    numba types differ); the same functions give the same key, also after pickling."""
    other = SingleIndexFamily("my_logistic", probit_terms, probit_curvature)
    assert other.key != MyLogistic.family.key
    again = SingleIndexFamily("my_logistic", _my_logistic_terms, _my_logistic_curvature)
    assert again.key == MyLogistic.family.key
    copy = pickle.loads(pickle.dumps(MyLogistic.family))
    assert copy.key == MyLogistic.family.key


def test_family_methods_are_built_with_the_calling_kernels_options():
    """A family's method is compiled once for all kernels with the same floating-point options
    (numba would build it again for each kernel), and apart for kernels with other options:
    built by a kernel that contracts, it must not contract in one whose bits must not."""
    from numba.core import cpu
    from numba.core.compiler import Flags
    from numba.core.targetconfig import ConfigStack

    from skcoreset.models._family import _compiled

    family_type = get_model("logistic").family._numba_type_
    contracting, plain, numpy_errors = Flags(), Flags(), Flags()
    contracting.fastmath = cpu.FastMathOptions({"contract"})
    numpy_errors.error_model = "numpy"
    builds = {}
    for label, flags in (("contract", contracting), ("plain", plain), ("numpy", numpy_errors)):
        with ConfigStack().enter(flags):
            builds[label] = _compiled(family_type, "terms", 3)
            assert _compiled(family_type, "terms", 3) is builds[label]
    assert len({id(b) for b in builds.values()}) == 3
    assert builds["contract"].targetoptions["fastmath"] == {"contract"}
    assert not builds["plain"].targetoptions["fastmath"]
    assert builds["numpy"].targetoptions["error_model"] == "numpy"
    assert all(b.targetoptions["forceinline"] for b in builds.values())


def test_family_needs_numba_functions():
    with pytest.raises(TypeError, match="terms must be a numba.njit function"):
        SingleIndexFamily("bad", lambda eta, y, p: (0.0, 0.0), probit_curvature)


def test_sampling_an_extra_parameter_needs_one():
    X = np.ones((5, 1))
    with pytest.raises(ValueError, match="no extra parameter"):
        sample_mala("poisson", X, np.ones(5), np.ones(5), np.zeros((1, 2)), sample_extra=True)


@pytest.mark.parametrize("seed", range(4))
def test_overdispersion_warning(seed):
    """Negative binomial counts (variance 1 + 0.5 mean, times the mean) warn; Poisson counts of
    the same means, at any of the seeds, do not."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((3000, 3))
    mu = np.exp(X @ [0.3, -0.2, 0.1] + 1.5)
    model = get_model("poisson")
    y_nb = rng.negative_binomial(2.0, 2.0 / (2.0 + mu)).astype(float)
    with pytest.warns(OverdispersionWarning, match="overdispersed.*negative binomial"):
        laplace_approximation(model, X, y_nb)
    y_p = rng.poisson(mu).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("error", OverdispersionWarning)
        laplace_approximation(model, X, y_p)


@njit(cache=True, inline="always")
def _nan_terms(eta, y, param):
    return math.nan * eta, 0.0


@dataclass(frozen=True, eq=False)
class BrokenModel(GLM):
    name = "broken"
    family = SingleIndexFamily("broken", _nan_terms, _my_logistic_curvature)

    def encode_targets(self, y):
        return np.asarray(y, dtype=np.float64)


def test_a_model_returning_nan_is_named():
    """A user's family that returns NaN stops the fit with a ValueError naming the model,
    never a silent NaN posterior."""
    X, y = _logistic_data(n=500)
    for est in (OMPCoreset(n_points=20, model=BrokenModel()), BayesianGLM(model=BrokenModel())):
        with pytest.raises(ValueError, match="'broken' model found a non-finite .* at its start"):
            est.fit(X, y)


# -- a user's family checked when a fit starts (check_gradient) -------------------------------
@njit(cache=True)
def _negative_curvature(eta, y, param):
    return -_my_logistic_curvature(eta, y, param)


@njit(cache=True)
def _flipped_terms(eta, y, param):
    lv, dv = _my_logistic_terms(eta, y, param)
    return lv, -dv


@njit(cache=True)
def _half_curvature(eta, y, param):
    return 0.5 * _my_logistic_curvature(eta, y, param)


@njit(cache=True)
def _scalar_terms(eta, y, param):
    return _my_logistic_terms(eta, y, param)[0]


def _user_logistic(name, terms, curvature, **family):
    """MyLogistic with other functions (a family of its own name)."""
    fam = SingleIndexFamily(name, terms, curvature, **family)
    return dataclass(frozen=True, eq=False)(
        type(name, (MyLogistic,), {"name": name, "family": fam})
    )


@pytest.mark.parametrize(
    ("terms", "curvature", "err", "match"),
    [
        (
            _my_logistic_terms,
            _negative_curvature,
            ValueError,
            r"'neg' model: curvature is negative \(-0.2\d+ at eta = .*, y = .*\); it must be "
            r"-d2l/deta2",
        ),
        (
            _flipped_terms,
            _my_logistic_curvature,
            ValueError,
            r"terms' dl/deta does not match its l at eta = .*: the slope of l is .*, terms "
            r"returns .* \(its sign flipped\)",
        ),
        (
            _my_logistic_terms,
            _half_curvature,
            ValueError,
            r"curvature returns .*, where -d2l/deta2 is .* Fix curvature; .* log_concave = False",
        ),
        (
            _scalar_terms,
            _my_logistic_curvature,
            TypeError,
            r"terms of the family 'neg' must return a pair \(l - l0, dl/deta\) of numbers; .* "
            r"returned -0.\d+ \(float\)",
        ),
    ],
    ids=["negative curvature", "flipped dl/deta", "curvature off", "terms a scalar"],
)
@pytest.mark.parametrize("make", [lambda m: OMPCoreset(n_points=20, model=m), BayesianGLM])
def test_a_wrong_family_is_named_before_the_fit(terms, curvature, err, match, make):
    """A user's family with a wrong derivative, a negative curvature or a scalar terms: the
    fit stops at its start with the function, the point and the values named. Before, the
    first three failed in the Laplace fit as "The Hessian ... is numerically singular; check
    the scale of X and y" (or sampled), and a scalar terms was a raw numba TypingError."""
    X, y = _logistic_data(n=500)
    model = _user_logistic("neg", terms, curvature)()
    est = make(model)
    with pytest.raises(err, match=match):
        est.fit(X, y)


def test_the_family_check_can_be_switched_off_and_survives_pickling():
    """check_gradient=False skips the check (a negative curvature then reaches the Laplace
    fit); the family pickles with its switch and its extra parameter as they were."""
    X, y = _logistic_data(n=500)
    model = _user_logistic("off", _my_logistic_terms, _negative_curvature, check_gradient=False)()
    with pytest.raises(ValueError) as info:
        OMPCoreset(n_points=20, model=model).fit(X, y)
    assert "curvature is negative" not in str(info.value)
    for family in (model.family, Probit.family, get_model("negative_binomial").family):
        again = pickle.loads(pickle.dumps(family))
        assert again.check_gradient == family.check_gradient
        assert again.has_extra == family.has_extra
    assert Probit.family.check_gradient and not get_model("logistic").family.check_gradient
