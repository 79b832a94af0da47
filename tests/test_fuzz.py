"""Fuzzing every public estimator with odd shapes, dtypes, labels, weights, NaN/inf and
parameter values.

Each call either succeeds with finite results or raises ValueError / TypeError whose message
names one of the arguments that were made bad; a valid case must succeed. Nothing else (no
ZeroDivisionError, IndexError, LinAlgError with a bare "Singular matrix", or a silent NaN).
The examples are derandomised (the same ones every run); SKCORESET_FUZZ_EXAMPLES=1000 runs a
deeper search (about 3 minutes on 2 cores).
"""

import os
import re
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.preprocessing import StandardScaler

from skcoreset.compose import CoresetClassifier, CoresetRegressor
from skcoreset.coreset import (
    FrankWolfeCoreset,
    GIGACoreset,
    IHTCoreset,
    ImportanceCoreset,
    OMPCoreset,
    SensitivityCoreset,
    UniformCoreset,
)
from skcoreset.linear_model import (
    BayesianLinearRegression,
    BayesianLogisticRegression,
    BayesianPoissonRegression,
)
from skcoreset.pipeline import make_pipeline

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

CHAINS = dict(n_samples=20, n_warmup=10, n_chains=2, random_state=0)
HILBERT = dict(n_projections=10, random_state=0)

# name -> (factory(**params), what y must be, the parameters a case may spoil)
ESTIMATORS = {
    "UniformCoreset": (
        lambda **p: UniformCoreset(**{**HILBERT, **p}),
        "auto",
        ("n_points", "n_projections"),
    ),
    "ImportanceCoreset": (lambda **p: ImportanceCoreset(**HILBERT, **p), "auto", ("n_points",)),
    "FrankWolfeCoreset": (lambda **p: FrankWolfeCoreset(**HILBERT, **p), "auto", ("n_points",)),
    "GIGACoreset": (
        lambda **p: GIGACoreset(**{**HILBERT, **p}),
        "auto",
        ("n_points", "n_projections", "fit_intercept"),
    ),
    "IHTCoreset": (lambda **p: IHTCoreset(**HILBERT, **p), "auto", ("n_points",)),
    "OMPCoreset": (lambda **p: OMPCoreset(**HILBERT, **p), "auto", ("n_points", "prior_scale")),
    "SensitivityCoreset": (
        lambda **p: SensitivityCoreset(n_clusters=2, random_state=0, **p),
        "binary",
        ("n_points", "prior_scale"),
    ),
    "BayesianLogisticRegression": (
        lambda **p: BayesianLogisticRegression(**{**CHAINS, **p}),
        "binary",
        ("prior_scale", "step_size", "n_chains", "n_samples", "fit_intercept"),
    ),
    "BayesianPoissonRegression": (
        lambda **p: BayesianPoissonRegression(**{**CHAINS, **p}),
        "nonnegative",
        ("prior_scale", "step_size", "n_chains"),
    ),
    "BayesianLinearRegression": (
        lambda **p: BayesianLinearRegression(**{**CHAINS, **p}),
        "real",
        ("prior_scale", "noise_scale", "n_samples"),
    ),
    "CoresetClassifier": (
        lambda **p: CoresetClassifier(OMPCoreset(**HILBERT, **p), LogisticRegression()),
        "binary",
        ("n_points",),
    ),
    "CoresetRegressor": (
        lambda **p: CoresetRegressor(UniformCoreset(**HILBERT, **p), Ridge()),
        "real",
        ("n_points",),
    ),
    "Pipeline": (
        lambda **p: make_pipeline(
            StandardScaler(), OMPCoreset(**HILBERT, **p), BayesianLogisticRegression(**CHAINS)
        ),
        "binary",
        ("n_points",),
    ),
}

BAD_PARAMS = {
    "n_points": [0, -3, 2.5, "ten", None],
    "prior_scale": [0.0, -1.0, np.nan, np.inf, "wide"],
    "step_size": [0.0, -0.1, "fast", np.nan],
    "noise_scale": [0.0, -1.0, np.inf],
    "n_projections": [0, -2, 1.5],
    "n_chains": [0, -1, 1.5],
    "n_samples": [0, 3, "many"],
    "fit_intercept": ["yes", None],
}

# Words that name each argument in a message (scikit-learn's own messages included: they say
# "Found array with 0 sample(s)" for X, and "Found input variables with inconsistent numbers
# of samples" when y or the weights do not match X).
_LENGTH = r"inconsistent numbers of samples"
NAMES = {
    "X": r"\bX\b|feature|samples?\b|sample\(s\)|array|dimension|dtype|convert|too large|"
    r"overflow|scale of|sparse",
    "y": r"\by\b|label|class|target|continuous|count|" + _LENGTH,
    "sample_weight": r"sample_weight|weight|" + _LENGTH,
}


def _labels(n, rng):
    """n binary codes holding both classes (n >= 2)."""
    codes = np.arange(n) % 2
    rng.shuffle(codes)
    return codes


@st.composite
def cases(draw, name):
    """A call: (estimator parameters, X, y, sample_weight, {argument: why it is bad}).

    At most one argument is spoilt, so a valid case must succeed and a spoilt one must name
    its culprit; the others vary only in ways every estimator must accept (dtypes,
    containers, label types, valid weights).
    """
    _, target, spoilable = ESTIMATORS[name]
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    culprit = draw(st.sampled_from([None, None, "X", "y", "sample_weight", "param"]))
    bad = {}

    # -- X: sizes, dtypes and containers (sparse too); spoilt: empty, NaN/inf/huge, strings,
    # 1-D, 3-D
    n = draw(st.sampled_from([2, 8, 25]))
    d = draw(st.sampled_from([1, 3]))
    x_bad = draw(st.sampled_from(["rows", "columns", "nan", "inf", "huge", "str", "1d", "3d"]))
    x_bad = x_bad if culprit == "X" else None
    if x_bad == "rows":
        n = draw(st.sampled_from([0, 1]))
        bad["X"] = f"{n} rows, {d} columns"
    elif x_bad == "columns":
        d = 0
        bad["X"] = f"{n} rows, 0 columns"
    X = rng.standard_normal((n, d))
    x_kind = draw(st.sampled_from(["float64", "float64", "float32", "int", "bool", "object"]))
    X = {
        "float64": X,
        "float32": X.astype(np.float32),
        "int": np.round(3 * X).astype(np.int64),
        "bool": X > 0,
        "object": X.astype(object),
    }[x_kind]
    if x_bad in ("nan", "inf", "huge"):
        X = X.astype(np.float64)
        X.flat[draw(st.integers(0, X.size - 1))] = {"nan": np.nan, "inf": np.inf, "huge": 1e300}[
            x_bad
        ]
        bad["X"] = x_bad
    elif x_bad == "str":
        X = X.astype(str)
        X.flat[0] = "high"
        bad["X"] = "strings"
    elif x_bad == "1d":
        X = X.ravel()
        bad["X"] = "1-D"
    elif x_bad == "3d":
        X = X[..., None]
        bad["X"] = "3-D"
    container = draw(st.sampled_from(["array", "array", "list", "frame", "sparse"]))
    if X.ndim == 2 and container == "list":
        X = X.tolist()
    elif X.ndim == 2 and container == "frame":
        pd = pytest.importorskip("pandas")
        X = pd.DataFrame(X, columns=[f"c{k}" for k in range(X.shape[1])])
    elif X.ndim == 2 and container == "sparse" and x_kind != "object" and x_bad != "str":
        import scipy.sparse

        X = scipy.sparse.csr_matrix(X)
        if name == "Pipeline":
            bad.setdefault("X", "sparse")  # its StandardScaler cannot centre sparse X

    # -- y: label types the estimator must take; spoilt: NaN/inf, length, None, wrong kind
    codes = _labels(n, rng) if n >= 2 else np.zeros(n, dtype=int)
    good_y = {
        "binary": {
            "01": codes,
            "strings": np.array(["ham", "spam"])[codes],
            "pm1": 2 * codes - 1,
            "column": codes[:, None],
        },
        "nonnegative": {"counts": rng.poisson(2.0, n), "rates": rng.gamma(2.0, 1.0, n)},
        "real": {"real": rng.standard_normal(n), "counts": rng.poisson(2.0, n)},
        "auto": {"01": codes, "strings": np.array(["a", "b"])[codes], "real": rng.random(n)},
    }[target]
    y = good_y[draw(st.sampled_from(sorted(good_y)))]
    if culprit == "y" and n > 0:
        wrong = {
            "binary": ["three", "real", "constant"],
            "nonnegative": ["negative", "strings"],
            "real": ["strings"],
            "auto": ["three", "constant"],
        }[target]
        y_bad = draw(st.sampled_from(["nan", "inf", "short", "none", *wrong]))
        y = {
            "nan": np.where(np.arange(n) == 0, np.nan, rng.random(n)),
            "inf": np.where(np.arange(n) == 0, np.inf, rng.random(n)),
            "short": np.asarray(y)[: n - 1],
            "none": None,
            "three": np.arange(n) % 3,
            "real": rng.standard_normal(n),
            "constant": np.ones(n),
            "negative": -rng.poisson(2.0, n) - 1.0,
            "strings": np.array(["a", "b"])[codes],
        }[y_bad]
        if y_bad == "three" and n < 3:
            y_bad = "constant" if n < 2 else "two labels"  # np.arange(2) % 3 is [0, 1]
        if y_bad == "real" and n == 2:
            y_bad = "two real values"
        if y_bad != "two labels":
            bad["y"] = y_bad

    if n == 1 and target in ("binary", "auto") and "y" not in bad:
        bad["y"] = "one row: one class"  # the fault of X's size, but y is what shows it

    # -- sample_weight: None, positive, some zero (both classes stay); spoilt otherwise
    if culprit == "sample_weight":
        w_bad = draw(st.sampled_from(["zeros", "negative", "nan", "inf", "short"]))
        sample_weight = {
            "zeros": np.zeros(n),
            "negative": -np.ones(n),
            "nan": np.where(np.arange(n) == 0, np.nan, 1.0),
            "inf": np.where(np.arange(n) == 0, np.inf, 1.0),
            "short": np.ones(max(n - 1, 0)),
        }[w_bad]
        if n > 0 or w_bad == "zeros":
            bad["sample_weight"] = w_bad
    else:
        w_kind = draw(st.sampled_from([None, None, "ones", "random", "list", "some_zero"]))
        sample_weight = {
            None: None,
            "ones": np.ones(n),
            "random": rng.uniform(0.1, 3.0, n),
            "list": [1.5] * n,
            # zero on every fourth row: with n >= 8 both classes and several rows remain
            "some_zero": np.where(np.arange(n) % 4 == 0, 0.0, 1.5) if n >= 8 else np.ones(n),
        }[w_kind]

    # -- parameters: valid sizes; spoilt: one parameter out of its range or of the wrong type
    params = {}
    if "n_points" in spoilable:
        params["n_points"] = draw(st.sampled_from([2, 3, 10, 40]))
    if culprit == "param":
        spoil = draw(st.sampled_from(spoilable))
        params[spoil] = draw(st.sampled_from(BAD_PARAMS[spoil]))
        bad[spoil] = repr(params[spoil])
    return params, X, y, sample_weight, bad


# Spoilt inputs that some estimators handle correctly: one row (a coreset of it is itself),
# a huge but finite value (fine unless a computation overflows), and two real-valued labels
# (two classes to a coreset; 'continuous' to a scikit-learn classifier).
MAY_PASS = {"1 rows, 1 columns", "1 rows, 3 columns", "huge", "two real values"}


def _check_finite_result(est, X, y, kwargs):
    """A successful fit: finite weights, indices in range, finite predictions."""
    n_rows = X.shape[0] if hasattr(X, "shape") else len(X)
    if hasattr(est, "sample_weight_"):
        w = np.asarray(est.sample_weight_)
        assert np.all(np.isfinite(w)) and np.all(w > 0), w
    if hasattr(est, "sample_indices_"):
        idx = np.asarray(est.sample_indices_)
        assert np.all((idx >= 0) & (idx < n_rows)), idx
    if hasattr(est, "coef_samples_"):
        assert np.all(np.isfinite(est.coef_samples_))
    if hasattr(est, "predict"):
        pred = np.asarray(est.predict(X))
        assert pred.shape[0] == n_rows
        if pred.dtype.kind in "fc":
            assert np.all(np.isfinite(pred)), pred
    if hasattr(est, "fit_resample"):
        X_m, y_m, extra = est.fit_resample(X, y, **kwargs)
        n_kept = X_m.shape[0] if hasattr(X_m, "shape") else len(X_m)
        assert n_kept == len(y_m) == len(extra["sample_weight"])


def _run(name, case):
    params, X, y, sample_weight, bad = case
    factory = ESTIMATORS[name][0]
    kwargs = {} if sample_weight is None else {"sample_weight": sample_weight}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence, size, overflow warnings are fine
        try:
            est = factory(**params)
            est.fit(X, y, **kwargs)
        except (ValueError, TypeError) as exc:
            message = str(exc)
            if ESTIMATORS[name][1] == "binary" and re.search(r"one class.*n_points", message):
                return  # a coreset too small to hold both classes: says so, names n_points
            assert bad, f"{name} failed on a valid case: {type(exc).__name__}: {message}"
            words = "|".join(NAMES.get(arg, re.escape(arg)) for arg in bad)
            assert re.search(words, message), (
                f"{name}: the message does not name any of {sorted(bad)} ({bad}): {message}"
            )
            return
        # outside the try: a ValueError of a fitted estimator is a failure here
        _check_finite_result(est, X, y, kwargs)
    # success: only arguments whose badness depends on the estimator may remain
    must_fail = {arg: why for arg, why in bad.items() if why not in MAY_PASS}
    assert not must_fail, f"{name} accepted {must_fail}"


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_fuzz(name):
    @settings(
        max_examples=int(os.environ.get("SKCORESET_FUZZ_EXAMPLES", 20)),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(case=cases(name))
    def check(case):
        _run(name, case)

    check()
