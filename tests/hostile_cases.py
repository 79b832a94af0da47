"""Hostile but realistic cases on the newer surfaces, each run in a worker process with a time
limit, and their outcomes counted (issue 46): ``python -m tests.hostile_cases``.

The surfaces: the seven models through a coreset (OMP, uniform), a stream of ``partial_fit``
and ``BayesianGLM``, with bad targets, weights and rows; the exports of fitted coresets
(their log density against the library's, or a refusal); a user's ``CustomModel`` and
``SingleIndexFamily``; ``skcoreset build --model`` on bad files. Each case says what a right
answer is: a fit with finite results (``ok``), an error whose message names the problem
(``error``, with the words it must hold), or either. An outcome is then

* ``ok`` / ``refused``: as expected, a clear ValueError, TypeError or NotImplementedError;
* ``crash``: another exception (an IndexError, a numba TypingError, a bare TypeError of the
  internals...), or an error where a fit was expected;
* ``hang``: past the time limit;
* ``wrong``: a result that is not finite, or disagrees with the library (an export's log
  density, get_coreset's targets), or a fit where a refusal was expected;
* ``misleading``: an error whose message does not name the problem, or a RuntimeWarning
  leaking from a fit whose answer is right.

Run with ``--out results.json`` to keep each case's outcome; ``--only`` selects cases whose
id holds a substring. Not collected by pytest (no ``test_`` name); importing it runs
nothing.
"""

import argparse
import json
import multiprocessing as mp
import re
import sys
import time
import traceback
import warnings
from collections import Counter

import numpy as np

MODELS = [
    "logistic",
    "poisson",
    "gaussian",
    "negative_binomial",
    "gamma",
    "multinomial",
    "student_t",
]
CLASS_MODELS = ("logistic", "multinomial")
TIME_LIMIT = 120.0

# -- data -----------------------------------------------------------------------------------


def _data(model, n=240, seed=0):
    """Small data of each model, class labels as strings."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    eta = X @ [0.5, -0.3, 0.2] + 0.5
    if model == "logistic":
        return X, np.where(rng.random(n) < 1 / (1 + np.exp(-eta)), "yes", "no")
    if model == "multinomial":
        E = np.column_stack([np.zeros(n), eta, -eta])
        p = np.exp(E) / np.exp(E).sum(1, keepdims=True)
        return X, np.array(["a", "b", "c"])[(rng.random(n)[:, None] > p.cumsum(1)).sum(1)]
    if model == "poisson":
        return X, rng.poisson(np.exp(eta)).astype(float)
    if model == "negative_binomial":
        return X, rng.negative_binomial(2.0, 2.0 / (2.0 + np.exp(eta))).astype(float)
    if model == "gamma":
        return X, rng.gamma(3.0, np.exp(eta) / 3.0)
    if model == "student_t":
        return X, eta + rng.standard_t(3, n)
    return X, eta + rng.standard_normal(n)


def _set(a, i, v):
    """A copy of ``a`` with ``a[i] = v`` (labels become objects: a NaN stays a float)."""
    a = np.asarray(a)
    as_object = v is None or isinstance(v, str) or a.dtype.kind in "US"
    a = np.array(a, dtype=object if as_object else a.dtype)
    a[i] = v
    return a


#: variant -> (what it does to (X, y, w), expectation per kind of model). An expectation is
#: (kind, words): kind 'ok', 'error' or 'either', words a regex the message must hold.
Y_WORDS = r"\by\b|target|label|class|count"
W_WORDS = r"weight"
X_WORDS = r"\bX\b|feature|standardi|scale of"


def _variants():
    num = {m: m not in CLASS_MODELS for m in MODELS}
    V = {}

    def add(name, fn, expect):
        V[name] = (fn, expect)

    add("valid", lambda X, y, w: (X, y, w), lambda m: ("ok", ""))
    add(
        "y_1e20",
        lambda X, y, w: (X, _set(y, 0, 1e20), w),
        lambda m: (
            ("error", r"y holds values|2\^53")
            if m in ("poisson", "negative_binomial")
            else ("ok", "")
            if num[m]
            else ("either", Y_WORDS)
        ),
    )
    add(
        "y_1e200",
        lambda X, y, w: (X, _set(y, 0, 1e200), w),
        lambda m: (
            ("ok", "")
            if m == "gamma"
            else ("error", r"y holds values")
            if num[m]
            else ("either", Y_WORDS)
        ),
    )
    add("y_nan", lambda X, y, w: (X, _set(y, 1, np.nan), w), lambda m: ("error", r"NaN"))
    add("y_inf", lambda X, y, w: (X, _set(y, 1, np.inf), w), lambda m: ("error", r"infinity|inf"))
    add("y_none", lambda X, y, w: (X, _set(y, 2, None), w), lambda m: ("error", r"None"))
    add(
        "y_strings",
        lambda X, y, w: (X, np.where(np.arange(len(y)) % 2, "up", "down"), w),
        lambda m: ("error", r"numeric|label type|number") if num[m] else ("ok", ""),
    )
    add(
        "y_constant",
        lambda X, y, w: (X, np.full(len(y), y[0]), w),
        lambda m: ("error", r"one class") if not num[m] else ("either", Y_WORDS + "|linear"),
    )
    add(
        "y_negative",
        lambda X, y, w: (X, _set(y, 0, -1.0), w) if num_y(y) else (X, y, w),
        lambda m: (
            ("error", r"negative|positive")
            if m in ("poisson", "negative_binomial", "gamma")
            else ("ok", "")
        ),
    )
    add(
        "y_half",
        lambda X, y, w: (X, _set(y, 0, 2.5), w) if num_y(y) else (X, y, w),
        lambda m: ("error", r"integer") if m == "negative_binomial" else ("ok", ""),
    )
    add(
        "y_2d",
        lambda X, y, w: (X, np.column_stack([y, y]), w),
        lambda m: ("error", r"1-?[dD]|shape|column"),
    )
    add(
        "y_short",
        lambda X, y, w: (X, y[:-3], w),
        lambda m: ("error", r"inconsistent|length|samples|targets"),
    )
    for n in (1, 2, 3):
        add(
            f"rows_{n}",
            lambda X, y, w, n=n: (X[:n], y[:n], None if w is None else w[:n]),
            lambda m: ("either", r"row|sample|class|point|weight|parameter|linear"),
        )
    add(
        "w_zero",
        lambda X, y, w: (X, y, np.zeros(len(y))),
        lambda m: ("error", W_WORDS),
    )
    add(
        "w_one",
        lambda X, y, w: (X, y, np.eye(1, len(y))[0]),
        lambda m: ("either", W_WORDS + "|class|row|sample"),
    )
    add("w_1e12", lambda X, y, w: (X, y, np.full(len(y), 1e12)), lambda m: ("either", W_WORDS))
    add("w_1e300", lambda X, y, w: (X, y, np.full(len(y), 1e300)), lambda m: ("either", W_WORDS))
    add(
        "w_1e-300",
        lambda X, y, w: (X, y, np.full(len(y), 1e-300)),
        lambda m: ("either", W_WORDS),
    )
    add(
        "w_negative",
        lambda X, y, w: (X, y, _set(np.ones(len(y)), 0, -1.0)),
        lambda m: ("error", r"negative|non-negative"),
    )
    add(
        "w_nan",
        lambda X, y, w: (X, y, _set(np.ones(len(y)), 0, np.nan)),
        lambda m: ("error", r"NaN|finite|infinity"),
    )
    add("X_1e200", lambda X, y, w: (_set(X, (0, 0), 1e200), y, w), lambda m: ("either", X_WORDS))
    add("X_1e-300", lambda X, y, w: (X * 1e-300, y, w), lambda m: ("either", X_WORDS))
    add("X_1e8", lambda X, y, w: (X * 1e8, y, w), lambda m: ("either", X_WORDS))
    add(
        "X_const_column",
        lambda X, y, w: (np.column_stack([X, np.full(len(y), 3.0)]), y, w),
        lambda m: ("ok", ""),
    )
    add("X_nan", lambda X, y, w: (_set(X, (1, 1), np.nan), y, w), lambda m: ("error", r"NaN"))
    add("X_inf", lambda X, y, w: (_set(X, (1, 1), np.inf), y, w), lambda m: ("error", r"inf"))
    add(
        "X_no_columns",
        lambda X, y, w: (X[:, :0], y, w),
        lambda m: ("error", r"feature|0 column"),
    )
    add(
        "X_same_rows",
        lambda X, y, w: (np.tile(X[:1], (len(y), 1)), y, w),
        lambda m: ("either", X_WORDS + "|" + Y_WORDS),
    )
    return V


def num_y(y):
    return np.asarray(y).dtype.kind in "biuf"


# -- the surfaces ---------------------------------------------------------------------------


def _coreset(kind, model):
    from skcoreset import OMPCoreset, UniformCoreset

    if kind == "uniform":
        return UniformCoreset(model=model, n_points=20, random_state=0)
    return OMPCoreset(model=model, n_points=20, n_projections=50, random_state=0)


def _check_coreset(est, X, y, labels):
    """The fitted attributes are finite, get_coreset's targets are y's at its rows."""
    assert np.all(np.isfinite(est.sample_weight_)) and np.all(est.sample_weight_ > 0), "weights"
    Xm, ym, _ = est.get_coreset()
    idx = est.sample_indices_
    if not np.array_equal(np.asarray(ym), np.asarray(y)[idx]):
        raise AssertionError("get_coreset's targets are not y's at sample_indices_")


def run_model_case(surface, model, variant):
    X, y = _data(model)
    w = None
    fn, _ = VARIANTS[variant]
    X, y, w = fn(X, y, w)
    if surface in ("omp", "uniform"):
        est = _coreset(surface, model).fit(X, y, sample_weight=w)
        _check_coreset(est, X, y, None)
    elif surface == "stream":
        est = _coreset("omp", model)
        n = X.shape[0]
        cuts = [0, n // 3, 2 * n // 3, n] if n >= 3 else [0, n]
        kw = {}
        if model in CLASS_MODELS and num_y(y) is False:
            kw["classes"] = np.unique(np.asarray(y).astype(str))
        for a, b in zip(cuts, cuts[1:]):
            part_w = None if w is None else w[a:b]
            est.partial_fit(X[a:b], y[a:b], sample_weight=part_w, **kw)
        _check_coreset(est, X, y, None)
    else:  # the Bayesian estimator
        from skcoreset import BayesianGLM

        est = BayesianGLM(model=model, n_samples=20, n_warmup=10, n_chains=2, random_state=0)
        est.fit(X, y, sample_weight=w)
        assert np.all(np.isfinite(est.coef_samples_)), "draws"
        pred = est.predict(X[:5])
        if model not in CLASS_MODELS:
            assert np.all(np.isfinite(pred)), "predictions"
        assert np.isfinite(est.score(X[:20], np.asarray(y)[:20])), "score"


def _reference_log_posterior(core, point):
    """The coreset posterior's log density at ``point`` (values by name, the extra
    parameters' logs), from the library's own densities: ``log_density`` of a single-index
    model, ``loglik_draws`` of a model of draws, and the priors written out."""
    from scipy.stats import norm

    spec = core._export_spec(None, None, "reference")
    model = core._data_prior.model
    node, w = core._coreset_node, core.sample_weight_
    coef, intercept = point["coef"], point.get("intercept")
    lp = norm.logpdf(coef, 0.0, spec.coef_sd).sum()
    if intercept is not None:
        lp += norm.logpdf(intercept, 0.0, spec.intercept_sd).sum()
    logs = {e.name: point[e.name] for e in spec.extras}
    lp += sum(norm.logpdf(logs[e.name], e.log_mean, e.log_sd) for e in spec.extras)
    Xd = model.design(node.X)
    if spec.n_classes is not None:
        parts = coef if intercept is None else np.column_stack([coef, intercept])
        ll = model.loglik_draws(parts.reshape(1, -1), Xd, node.y)[0]
    elif model.family is None:  # the Student-t: log scale and log df centred on their priors
        theta = np.concatenate([coef, [] if intercept is None else [intercept]])
        extras = [logs[e.name] - e.log_mean for e in spec.extras]
        ll = model.loglik_draws(np.append(theta, extras)[None], Xd, node.y)[0]
    else:
        eta = node.X @ coef + (0.0 if intercept is None else intercept)
        extra = np.exp(logs[spec.extras[0].name]) if spec.extras else None
        ll = model.log_density(node.y, eta, extra)
    return float(w @ ll + lp)


def _export_points(core, n=3, seed=1):
    """Random values of the exported parameters (the extras' logs near their prior means)."""
    spec = core._export_spec(None, None, "points")
    rng = np.random.default_rng(seed)
    points = []
    for _ in range(n):
        p = {"coef": 0.3 * rng.standard_normal(spec.coef_sd.shape)}
        if spec.intercept_sd is not None:
            p["intercept"] = 0.3 * rng.standard_normal(np.shape(spec.intercept_sd))
        for e in spec.extras:
            p[e.name] = e.log_mean + 0.3 * rng.standard_normal()
        points.append(p)
    return points


def run_export_case(language, model, variant):
    from skcoreset import UniformCoreset
    from skcoreset.models import get_model

    X, y = _data(model, n=200)
    params = {"model": model}
    if variant == "fixed_extra" and get_model(model).has_extra:
        params["model"] = get_model(model, extra=0.7)
    elif variant == "rates":
        y = y / 3.0 if num_y(y) else y
    elif variant == "no_intercept":
        params["fit_intercept"] = False
    core = UniformCoreset(n_points=25, projection=None, random_state=0, **params)
    if variant == "stream":
        core.partial_fit(X[:100], y[:100], classes=np.unique(y) if not num_y(y) else None)
        core.partial_fit(X[100:], y[100:])
    else:
        core.fit(X, y)
    if language == "stan":
        program, data = core.to_stan()
        assert data["N"] == core.n_points_ and "target += w[n] *" in program
        return
    points = _export_points(core)
    want = [_reference_log_posterior(core, p) for p in points]
    if language == "pymc":
        m = core.to_pymc()
        logp = m.compile_logp(jacobian=True)
        values = {rv.name: m.rvs_to_values[rv].name for rv in m.free_RVs}
        got = [logp({values[k]: np.asarray(v) for k, v in p.items()}) for p in points]
    else:
        import numpyro
        from numpyro.infer.util import potential_energy

        numpyro.enable_x64()
        f = core.to_numpyro()
        got = [-float(potential_energy(f, (), {}, p)) for p in points]
    rtol = 1e-6 if model == "negative_binomial" else 1e-9
    if not np.allclose(got, want, rtol=rtol):
        raise AssertionError(f"log density {got[0]:.6g}, the library's {want[0]:.6g}")


def _user_models():
    """Broken and sound user models: name -> (model factory, expectation)."""
    from scipy.special import expit, log_expit

    def ll(t, X, y):
        e = t @ X.T
        return y * log_expit(e) + (1 - y) * log_expit(-e)

    def g(t, X, y):
        e = t @ X.T
        return (y - expit(e))[:, :, None] * X[None]

    cases = {
        "sound": (lambda: (ll, g), ("ok", "")),
        "grad_flipped": (lambda: (ll, lambda t, X, y: -g(t, X, y)), ("error", r"\bgrad\b")),
        "grad_swapped": (
            lambda: (ll, lambda t, X, y: g(t, X, y)[:, :, [1, 0, 2]]),
            ("error", r"\bgrad\b"),
        ),
        "grad_zero": (lambda: (ll, lambda t, X, y: 0 * g(t, X, y)), ("error", r"\bgrad\b")),
        "grad_half": (lambda: (ll, lambda t, X, y: 0.5 * g(t, X, y)), ("error", r"\bgrad\b")),
        "grad_shape": (lambda: (ll, lambda t, X, y: g(t, X, y)[:, :, 0]), ("error", r"grad")),
        "loglik_shape": (lambda: (lambda t, X, y: ll(t, X, y).T, g), ("error", r"loglik")),
        "loglik_nan": (lambda: (lambda t, X, y: ll(t, X, y) * np.nan, g), ("error", r"loglik")),
        "grad_nan": (lambda: (ll, lambda t, X, y: g(t, X, y) * np.nan), ("error", r"grad")),
    }
    return cases


def run_custom_case(surface, name, targets):
    from scipy.special import expit

    from skcoreset import BayesianGLM, OMPCoreset, QuasiNewtonCoreset
    from skcoreset.models import CustomModel

    rng = np.random.default_rng(1)
    X = np.column_stack([rng.standard_normal((300, 2)), np.ones(300)])
    y = (rng.random(300) < expit(X @ [1.0, -0.5, 0.3])).astype(float)
    factory, _ = USER_MODELS[name]
    loglik, grad = factory()
    kw = {}
    if targets == "labels":
        y = np.where(y == 1, "yes", "no")
        kw["encode_targets"] = lambda t: (np.asarray(t) == "yes").astype(float)
    elif targets == "coding_nan":
        y = np.where(y == 1, "yes", "no")
        kw["encode_targets"] = lambda t: np.where(np.asarray(t) == "yes", 1.0, np.nan)
    model = CustomModel(loglik, grad, 3, prior_scale=2.0, **kw)
    if surface == "bayes":
        est = BayesianGLM(model=model, n_samples=20, n_warmup=10, n_chains=2, random_state=0)
        est.fit(X, y)
        assert np.all(np.isfinite(est.coef_samples_))
        return
    if surface == "qnc":
        est = QuasiNewtonCoreset(model=model, n_points=20, random_state=0).fit(X, y)
    elif surface == "stream":
        est = OMPCoreset(model=model, n_points=20, n_projections=50, random_state=0)
        for a in range(0, 300, 100):
            est.partial_fit(X[a : a + 100], y[a : a + 100])
    else:
        est = OMPCoreset(model=model, n_points=20, n_projections=50, random_state=0).fit(X, y)
    _check_coreset(est, X, y, None)


def run_family_case(surface, name):
    from dataclasses import dataclass

    from skcoreset import BayesianGLM, OMPCoreset
    from skcoreset.models import GLM, BinaryLabels, SingleIndexFamily

    from . import hostile_families as F

    terms, curvature = F.FAMILIES[name]
    family = SingleIndexFamily(f"hostile_{name}", terms, curvature)

    @dataclass(frozen=True, eq=False)
    class User(GLM):
        labels = BinaryLabels

        def encode_targets(self, y):
            return BinaryLabels.fit(y).encode(y)

    User.name = f"hostile_{name}"
    User.family = family
    X, y = _data("logistic", n=300)
    if surface == "bayes":
        est = BayesianGLM(model=User(), n_samples=20, n_warmup=10, n_chains=2, random_state=0)
        est.fit(X, y)
        assert np.all(np.isfinite(est.coef_samples_))
    else:
        est = OMPCoreset(model=User(), n_points=20, n_projections=50, random_state=0).fit(X, y)
        assert np.all(np.isfinite(est.sample_weight_))


def run_cli_case(model, variant):
    import os
    import tempfile

    import pandas as pd

    from skcoreset.cli._main import main

    X, y = _data(model, n=200)
    df = pd.DataFrame(X, columns=["f1", "f2", "f3"])
    df["label"] = y
    if variant == "header_only":
        df = df.iloc[:0]
    elif variant == "label_missing":
        df.loc[5, "label"] = None
    elif variant == "feature_text":
        df["f2"] = df["f2"].astype(str)
        df.loc[3, "f2"] = "abc"
    elif variant == "feature_nan":
        df.loc[7, "f1"] = np.nan
    elif variant == "label_huge" and num_y(y):
        df.loc[0, "label"] = 1e200
    elif variant == "label_negative" and num_y(y):
        df.loc[0, "label"] = -5.0
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "d.csv"), os.path.join(tmp, "o.npz")
        df.to_csv(src, index=False)
        argv = ["build", src, "--label", "label", "--model", model, "--algorithm", "omp"]
        argv += ["--n-points", "20", "-o", out]
        import contextlib
        import io

        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                status = main(argv)
            except SystemExit as exc:
                status = exc.code
        if status:
            if os.path.exists(out):
                raise AssertionError("a failed build left its output")
            raise ValueError(err.getvalue().strip())


# -- the cases ------------------------------------------------------------------------------

VARIANTS = _variants()
USER_MODELS = _user_models()
FAMILY_CASES = {
    "sound": ("ok", ""),
    "negative_curvature": ("error", r"curvature"),
    "flipped_derivative": ("error", r"dl/deta|terms"),
    "terms_scalar": ("error", r"terms"),
    "curvature_half": ("error", r"curvature"),
}
CLI_VARIANTS = {
    "valid": lambda m: ("ok", ""),
    "header_only": lambda m: ("error", r"no data rows"),
    "label_missing": lambda m: ("error", r"label .*missing"),
    "feature_text": lambda m: ("error", r"non-numeric feature column 'f2'"),
    "feature_nan": lambda m: ("error", r"'f1' is missing"),
    "label_huge": lambda m: (
        ("ok", "")
        if m == "gamma"
        else ("error", r"y holds values|label")
        if m not in CLASS_MODELS
        else ("ok", "")
    ),
    "label_negative": lambda m: (
        ("error", r"negative|positive")
        if m in ("poisson", "negative_binomial", "gamma")
        else ("ok", "")
    ),
}


def cases():
    """Every case: (id, runner name, args, (kind, words))."""
    out = []
    for model in MODELS:
        for surface in ("omp", "uniform", "stream", "bayes"):
            for variant, (_, expect) in VARIANTS.items():
                if surface == "stream" and variant in ("y_2d", "y_short", "rows_1", "rows_2"):
                    continue  # the same checks as fit's
                out.append(
                    (f"{surface}/{model}/{variant}", "model", (surface, model, variant),
                     expect(model))
                )  # fmt: skip
        for language in ("pymc", "numpyro", "stan"):
            for variant in ("valid", "fixed_extra", "no_intercept", "stream", "rates"):
                if variant == "rates" and model != "poisson":
                    continue
                if language == "pymc" and variant not in ("valid", "rates"):
                    continue  # PyMC compiles each model: the costliest cases
                out.append(
                    (f"export/{language}/{model}/{variant}", "export", (language, model, variant),
                     ("ok", ""))
                )  # fmt: skip
        for variant, expect in CLI_VARIANTS.items():
            out.append((f"cli/{model}/{variant}", "cli", (model, variant), expect(model)))
    for name, (_, expect) in USER_MODELS.items():
        for surface in ("omp", "qnc", "stream", "bayes"):
            for targets in ("numbers", "labels", "coding_nan"):
                kind, words = expect
                if targets == "coding_nan":
                    kind, words = "error", r"encode_targets"
                out.append(
                    (f"custom/{surface}/{name}/{targets}", "custom", (surface, name, targets),
                     (kind, words))
                )  # fmt: skip
    for name, expect in FAMILY_CASES.items():
        for surface in ("omp", "bayes"):
            out.append((f"family/{surface}/{name}", "family", (surface, name), expect))
    return out


RUNNERS = {
    "model": run_model_case,
    "export": run_export_case,
    "custom": run_custom_case,
    "family": run_family_case,
    "cli": run_cli_case,
}
CLEAR = (ValueError, TypeError, NotImplementedError)


def _judge(expect, exc, leaked):
    """The outcome of a case from what it expected, the exception it raised (or None) and the
    RuntimeWarnings it leaked."""
    kind, words = expect
    if exc is None:
        if kind == "error":
            return "wrong", "a fit where a refusal was expected"
        if leaked:
            return "misleading", f"leaked RuntimeWarning: {leaked[0]}"
        return "ok", ""
    name = type(exc).__name__
    message = str(exc)
    if isinstance(exc, AssertionError):
        return "wrong", message
    if not isinstance(exc, CLEAR) or "numba" in type(exc).__module__:
        return "crash", f"{name}: {message[:300]}"
    if kind == "ok":
        return "crash", f"{name} on a valid case: {message[:300]}"
    if words and not re.search(words, message, re.IGNORECASE):
        return "misleading", f"{name}: {message[:300]}"
    return "refused", f"{name}: {message[:160]}"


def _worker(conn):
    warnings.simplefilter("ignore")
    while True:
        case = conn.recv()
        if case is None:
            return
        _, runner, args, expect = case
        exc = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                RUNNERS[runner](*args)
            except BaseException as e:  # noqa: BLE001 - every outcome is judged
                exc = e
        leaked = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        try:
            status, detail = _judge(expect, exc, leaked)
        except Exception:  # noqa: BLE001
            status, detail = "crash", traceback.format_exc(limit=2)
        conn.send((status, detail))


class _Worker:
    def __init__(self, ctx):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()

    def kill(self):
        self.proc.kill()
        self.proc.join()


def run(selected, n_workers, time_limit):
    """Run the cases on ``n_workers`` processes; a case past ``time_limit`` s is a hang (its
    worker killed and replaced)."""
    ctx = mp.get_context("fork")
    workers = [_Worker(ctx) for _ in range(n_workers)]
    busy = {}  # worker index -> (case, start)
    pending = list(selected)
    results = {}
    while pending or busy:
        for k, worker in enumerate(workers):
            if k not in busy and pending:
                case = pending.pop(0)
                worker.conn.send(case)
                busy[k] = (case, time.monotonic())
        time.sleep(0.02)
        for k in list(busy):
            case, start = busy[k]
            worker = workers[k]
            if worker.conn.poll():
                try:
                    results[case[0]] = worker.conn.recv()
                except EOFError:
                    results[case[0]] = ("crash", "the worker died")
                    worker.kill()
                    workers[k] = _Worker(ctx)
                del busy[k]
            elif not worker.proc.is_alive():
                results[case[0]] = ("crash", "the worker died")
                workers[k] = _Worker(ctx)
                del busy[k]
            elif time.monotonic() - start > time_limit:
                results[case[0]] = ("hang", f"past {time_limit:.0f} s")
                worker.kill()
                workers[k] = _Worker(ctx)
                del busy[k]
        if len(results) % 50 == 0 and results:
            print(f"{len(results)} cases done", file=sys.stderr, flush=True)
    for worker in workers:
        worker.conn.send(None)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run the cases whose id holds this")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--time-limit", type=float, default=TIME_LIMIT)
    parser.add_argument("--out", default=None, help="write each case's outcome (JSON)")
    args = parser.parse_args(argv)
    selected = [c for c in cases() if args.only in c[0]]
    start = time.monotonic()
    results = run(selected, args.workers, args.time_limit)
    counts = Counter(status for status, _ in results.values())
    print(
        f"{len(results)} cases in {time.monotonic() - start:.0f} s: {dict(sorted(counts.items()))}"
    )
    for cid, (status, detail) in sorted(results.items()):
        if status not in ("ok", "refused"):
            print(f"  {status:10s} {cid}: {detail[:240]}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({k: list(v) for k, v in results.items()}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
