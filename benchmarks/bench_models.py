"""Every model: its cost per row against the logistic model's, and its coresets on real data.

Two tables, from one run:

* **speed**: seconds per row of the two kernels a coreset fit and a Bayesian fit spend their
  time in, for every registered model and a user's single-index family (a probit written as a
  user would, through :class:`skcoreset.models.SingleIndexFamily`), as a ratio to the logistic
  model's in the same run: the (N, J) log-likelihood projection (N = 10^5 rows, D = 10,
  J = 500; with the extra parameter drawn per column where the model has one, as a coreset fit
  does) and the MALA gradient of 4 chains (M = 1000 rows, D = 10; the extra parameter
  sampled where the model has one). Compiled before timing; best of ``--repeat``.
* **models of draws** (``GeneralModel``: no single linear predictor), against the logistic
  model in the same run and on the same rows: the multinomial model at K = 3 and 7 (its numba
  kernels; per row and per row and class, its K - 1 predictors being inherent), a user's
  logistic regression in plain NumPy through :class:`skcoreset.models.CustomModel` (intercept
  as an explicit column), and any other registered model of draws. The projection pass (the
  work of ``Projection.transform``, into the same preallocated output), the MALA gradient of
  4 chains (``weighted_loglik_chains``) and the whole MALA step (``sample_mala`` at a fixed
  step size: for a model of draws the NumPy driver around that gradient).
* **fidelity**: on real data of each new model, the Laplace KL (forward, both fits sharing the
  model and its extra parameter) of an OMP coreset and of a uniform subsample of the same size
  to the full data's posterior, with the defaults (standardised features), over ``--seeds``;
  the median and the worst seed, and the ratio uniform / OMP of the medians.

Usage::

    python -m benchmarks.bench_models --out benchmarks/results/bench_models.json
"""

import argparse
import json
import math
import pathlib
import time
import warnings
from dataclasses import replace
from functools import partial

import numpy as np
import scipy.special

from skcoreset import OMPCoreset, UniformCoreset
from skcoreset.metrics import coreset_laplace_kl
from skcoreset.models import (
    MODEL_NAMES,
    CustomModel,
    MultinomialModel,
    default_prior_scale,
    get_model,
)
from skcoreset.models import _glm_kernels as GK
from skcoreset.models._general import row_blocks
from skcoreset.projection import Projection
from skcoreset.sampler import sample_mala
from tests.oracles.user_models import Probit

ROOT = pathlib.Path(__file__).resolve().parents[1]
_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _targets(name, eta, rng):
    mu = np.exp(np.clip(eta, -20, 5) + 1.0)
    if name in ("logistic", "probit"):
        return (rng.random(eta.size) < 1 / (1 + np.exp(-eta))).astype(float)
    if name == "poisson":
        return rng.poisson(mu).astype(float)
    if name == "negative_binomial":
        return rng.negative_binomial(2.0, 2.0 / (2.0 + mu)).astype(float)
    if name == "gamma":
        return rng.gamma(2.0, mu / 2.0)
    if name == "student_t":
        return eta + rng.standard_t(3.0, eta.size)
    return eta + rng.standard_normal(eta.size)


def _steps(args, n):
    """``n`` evaluations of the MALA gradient of the chains."""
    for _ in range(n):
        GK.weighted_loglik_grad_chains(*args)


def _best(fn, repeat):
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def speed(repeat, n_rows=100_000, n_mala=1000, D=10, J=500, n_chains=4):
    """Seconds per row of the projection and of a MALA gradient, per model."""
    rng = np.random.default_rng(0)
    X = np.ascontiguousarray(
        np.column_stack([rng.standard_normal((n_rows, D - 1)), np.ones(n_rows)])
    )
    beta = rng.standard_normal(D) / np.sqrt(D)
    rows = []
    models = [get_model(name) for name in MODEL_NAMES] + [Probit()]  # a user's family
    for model in models:
        if model.family is None:  # a model of draws: see draws_speed
            continue
        y = _targets(model.name, X @ beta, rng)
        if model.family.has_extra:  # the extra parameter at a plausible value
            model = model.__class__(extra=1.0)
        thetas_t = np.ascontiguousarray((beta + 0.05 * rng.standard_normal((J, D))).T)
        # the extra parameter per draw as a coreset fit's projection draws it (16 levels)
        levels = model.extra_value * np.exp(0.05 * rng.standard_normal(16))
        extras = levels[rng.integers(0, 16, J)] if model.has_extra else None
        out = np.empty((n_rows, J))
        proj_args = (model.family, X, thetas_t, y, model.extra_value, extras, 1.0, True, out)
        Xm, ym = X[:n_mala], y[:n_mala]
        Xt, ya, wa = GK.chain_layout(Xm, ym, np.ones(n_mala))
        sample = (0.0, 1.0) if model.has_extra else None  # the log's prior: sampled
        offset = 0.0 if sample else GK.weighted_offset(model.family, ym, wa, model.extra_value)
        grad_args = (
            model.family,
            sample,
            np.ascontiguousarray(np.tile(np.append(beta, 0.0), (n_chains, 1))),
            Xt,
            ya,
            wa,
            float(n_mala),
            offset,
            np.full(n_chains, model.extra_value),
            np.empty(n_chains),
            np.empty((n_chains, D + 1)),
            GK.aligned_empty((n_chains, 2, GK.CHAIN_BLOCK)),
        )
        project = partial(GK.loglik_matrix, *proj_args)
        gradient = partial(_steps, grad_args, 100)
        # the same with the extra parameter fixed (given, not estimated)
        fixed_offset = GK.weighted_offset(model.family, ym, wa, model.extra_value)
        project_fixed = partial(GK.loglik_matrix, *proj_args[:5], None, *proj_args[6:])
        gradient_fixed = partial(
            _steps, (grad_args[0], None, *grad_args[2:7], fixed_offset, *grad_args[8:]), 100
        )
        row = {"model": model.name}
        for key, fn, per in (
            ("projection", project, n_rows),
            ("mala", gradient, 100 * n_mala),
            ("projection_fixed", project_fixed, n_rows),
            ("mala_fixed", gradient_fixed, 100 * n_mala),
        ):
            fn()  # compile
            row[f"{key}_ns_per_row"] = 1e9 * _best(fn, repeat) / per
        rows.append(row)
    base = rows[0]
    for row in rows:
        for key in ("projection", "mala", "projection_fixed", "mala_fixed"):
            row[f"{key}_ratio"] = row[f"{key}_ns_per_row"] / base[f"{key}_ns_per_row"]
    return rows


def numpy_logistic(n_params):
    """A user's logistic regression in plain NumPy, as :class:`CustomModel` takes it (the
    intercept a column of the rows)."""

    def loglik(theta, X, y):
        eta = theta @ X.T
        return y * eta - np.logaddexp(0.0, eta)

    def grad(theta, X, y):
        r = y - scipy.special.expit(theta @ X.T)
        return r[:, :, None] * X[None, :, :]

    return CustomModel(loglik, grad, n_params=n_params, name="numpy_logistic")


def _project_draws(proj, X, y, out):
    """``Projection.transform``'s work for a model of draws (its branch for such models), into
    a preallocated ``out`` as the logistic row's kernel: the model's fused kernels where it has
    them, the generic blocks of its NumPy functions otherwise."""
    model = proj.model
    if hasattr(model, "projection_features"):
        scale = 1.0 / np.sqrt(proj.n_projections)
        model.projection_features(proj.kind, X, y, proj.thetas_t, proj.coords, scale, out)
    else:
        for sl in row_blocks(X.shape[0], proj.n_projections):
            out[sl] = proj._general_features(X[sl], y[sl])


def _gradients(model, args, n):
    """``n`` evaluations of a model of draws' MALA gradient of the chains."""
    for _ in range(n):
        model.weighted_loglik_chains(*args)


def _mala_steps(model, X, y, w, init, n):
    """``n`` fixed-size steps of ``sample_mala`` (no warm-up)."""
    sample_mala(model, X, y, w, init, n_samples=n, n_warmup=0, step_size=0.005, random_state=0)


def _draws_models(D, rng):
    """The models of draws timed: (label, model, number of classes or None, targets of
    linear predictors, centre of the draws)."""
    beta = rng.standard_normal(D) / np.sqrt(D)

    def classes(K):
        B = rng.standard_normal((K - 1, D)) / np.sqrt(D)

        def targets(X):
            E = np.column_stack([np.zeros(X.shape[0]), X @ B.T])
            p = np.exp(E - scipy.special.logsumexp(E, axis=1, keepdims=True))
            return (p.cumsum(axis=1) < rng.random((X.shape[0], 1))).sum(axis=1).astype(float)

        return targets, B.ravel()

    def bernoulli(X):
        return (rng.random(X.shape[0]) < scipy.special.expit(X @ beta)).astype(float)

    out = [("logistic", get_model("logistic"), None, bernoulli, beta)]
    for K in (3, 7):
        targets, centre = classes(K)
        out.append((f"multinomial K={K}", MultinomialModel(n_classes=K), K, targets, centre))
    out.append(("numpy_logistic (Custom)", numpy_logistic(D), None, bernoulli, beta))
    for name in MODEL_NAMES:  # any other registered model of draws, as it comes
        model = get_model(name)
        if model.family is None and model.labels is None:
            P = model.n_params(D)
            centre = np.concatenate([beta, np.zeros(P - D)])
            targets = partial(lambda X, name: _targets(name, X @ beta, rng), name=name)
            out.append((name, model, None, targets, centre))
    return out


def draws_speed(repeat, n_rows=100_000, n_mala=1000, D=10, J=500, n_chains=4, n_steps=200):
    """Seconds per row of the models of draws against the logistic model's, on the same rows:
    the projection, the MALA gradient and the whole MALA step, timed in turns (best of
    ``repeat`` rounds)."""
    rng = np.random.default_rng(1)
    X = np.ascontiguousarray(
        np.column_stack([rng.standard_normal((n_rows, D - 1)), np.ones(n_rows)])
    )
    Xm = np.ascontiguousarray(X[:n_mala])
    wm = np.ones(n_mala)
    out = np.empty((n_rows, J))
    rows = []
    for label, model, K, targets, centre in _draws_models(D, rng):
        y = targets(X)
        ym = np.ascontiguousarray(y[:n_mala])
        thetas = centre + 0.05 * rng.standard_normal((J, centre.shape[0]))
        thetas_t = np.ascontiguousarray(thetas.T)
        init = np.ascontiguousarray(thetas[:n_chains])
        if model.family is None:
            proj = Projection(model, "loglik", thetas_t, None, np.float64)
            project = partial(_project_draws, proj, X, y, out)
            gradient = partial(_gradients, model, (init, Xm, ym, wm), 100)
        else:  # the logistic model: its fused kernels, as the speed table times them
            args = (model.family, X, thetas_t, y, model.extra_value, None, 1.0, True, out)
            project = partial(GK.loglik_matrix, *args)
            Xt, ya, wa = GK.chain_layout(Xm, ym, wm)
            grad_args = (
                model.family, None, np.ascontiguousarray(np.pad(init, ((0, 0), (0, 1)))), Xt,
                ya, wa, float(n_mala), GK.weighted_offset(model.family, ym, wa, model.extra_value),
                np.full(n_chains, model.extra_value), np.empty(n_chains),
                np.empty((n_chains, D + 1)), GK.aligned_empty((n_chains, 2, GK.CHAIN_BLOCK)),
            )  # fmt: skip
            gradient = partial(_steps, grad_args, 100)
        step = partial(_mala_steps, model, Xm, ym, wm, init, n_steps)
        row = {"model": label, "classes": K, "P": int(centre.shape[0])}
        timed = [
            ("projection", project, n_rows),
            ("mala", gradient, 100 * n_mala),
            ("mala_step", step, n_steps * n_mala),
        ]
        for key, fn, _ in timed:
            fn()  # compile
            row[f"{key}_ns_per_row"] = np.inf
        rows.append((row, timed))
    # round-robin, the best of each: a burst of load on this shared machine slows one round
    # of every model, not all rounds of one
    for _ in range(repeat):
        for row, timed in rows:
            for key, fn, per in timed:
                best = row[f"{key}_ns_per_row"]
                row[f"{key}_ns_per_row"] = min(best, 1e9 * _best(fn, 1) / per)
    rows = [row for row, _ in rows]
    base = rows[0]
    for row in rows:
        for key in ("projection", "mala", "mala_step"):
            row[f"{key}_ratio"] = row[f"{key}_ns_per_row"] / base[f"{key}_ns_per_row"]
            if row["classes"]:  # per row and class: K - 1 predictors against one
                row[f"{key}_ratio_per_class"] = row[f"{key}_ratio"] / (row["classes"] - 1)
    return rows


REAL = [  # (shared file, copy in tests/data, model, transform of y)
    ("nmes1988_visits.npz", "nmes1988.npz", "negative_binomial", None),
    ("census2000_weekinc.npz", "census2000.npz", "gamma", None),
    ("census2000_weekinc.npz", "census2000.npz", "student_t", np.log),  # log incomes' tails
    ("mplsstops_race.npz", None, "multinomial", None),  # 7 classes; no copy in tests/data
]


def _metric_model(name, X, y):
    """The model the estimators fit with their defaults, for the KL of both fits: its classes
    from the labels (the metric's model='multinomial' does not count them) and the 'auto'
    prior of the full data (what the metric does for a model's name)."""
    lik = get_model(name)
    if lik.labels is not None:
        lik = lik.with_classes(np.unique(y))
    coded = lik.encode_targets(y)
    lik = lik.with_data_scale(float(np.mean(coded)), float(np.std(coded)))
    return replace(lik, prior_scale=default_prior_scale(lik, X, coded, None))


def fidelity(data_dir, seeds, n_points):
    rows = []
    for shared, bundled, model, transform in REAL:
        path = data_dir / shared
        if not path.exists() and bundled is not None:
            path = ROOT / "tests" / "data" / bundled
        if not path.exists():
            print(f"skipped: {shared} is not in {data_dir}")
            continue
        data = np.load(path, allow_pickle=False)
        X = (data["X"] - data["X"].mean(axis=0)) / np.where(
            data["X"].std(axis=0) > 0, data["X"].std(axis=0), 1
        )
        y = data["y"].astype(float)
        if transform is not None:
            y = transform(y)
        lik = _metric_model(model, X, y)
        kl = {"OMP": [], "uniform": []}
        for seed in range(seeds):
            for label, est in (("OMP", OMPCoreset), ("uniform", UniformCoreset)):
                c = est(model=model, n_points=n_points, random_state=seed).fit(X, y)
                kl[label].append(
                    coreset_laplace_kl(X, y, c.sample_indices_, c.sample_weight_, model=lik)
                )
        omp, uni = np.array(kl["OMP"]), np.array(kl["uniform"])
        rows.append(
            {
                "data": path.name,
                "model": model + (" (log y)" if transform is not None else ""),
                "N": int(X.shape[0]),
                "P": int(lik.n_params(X.shape[1] + 1)),
                "M": n_points if n_points != "auto" else int(c.n_points_),
                "omp_median": float(np.median(omp)),
                "omp_worst": float(omp.max()),
                "uniform_median": float(np.median(uni)),
                "uniform_worst": float(uni.max()),
                "ratio_of_medians": float(np.median(uni) / np.median(omp)),
                "ratio_worst_seed": float(np.min(uni / omp)),
            }
        )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=pathlib.Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--n-points", default="auto")
    parser.add_argument("--out", type=pathlib.Path)
    args = parser.parse_args(argv)
    n_points = args.n_points if args.n_points == "auto" else int(args.n_points)
    warnings.simplefilter("ignore")  # overdispersion and convergence notes are not the point
    lines = [
        "speed per row (ns), ratio to the logistic model in this run; the extra parameter drawn"
        " per projection column and sampled by MALA, then fixed"
    ]
    lines.append(
        f"{'model':<24}{'projection':>11}{'ratio':>7}{'MALA grad':>11}{'ratio':>7}"
        f"{'proj fixed':>12}{'ratio':>7}{'MALA fixed':>12}{'ratio':>7}"
    )
    sp = speed(args.repeat)
    for r in sp:
        lines.append(
            f"{r['model']:<24}"
            + "".join(
                f"{r[k + '_ns_per_row']:>{w}.1f}{r[k + '_ratio']:>7.2f}"
                for k, w in (
                    ("projection", 11),
                    ("mala", 11),
                    ("projection_fixed", 12),
                    ("mala_fixed", 12),
                )
            )
        )
    dr = draws_speed(args.repeat)
    lines.append("")
    lines.append(
        "models of draws: speed per row (ns), ratio to the logistic model on the same rows "
        "in this run (multinomial: / (K - 1), per class, in brackets)"
    )
    lines.append(
        f"{'model':<24}{'P':>4}{'projection':>11}{'ratio':>14}{'MALA grad':>11}{'ratio':>14}"
        f"{'MALA step':>11}{'ratio':>14}"
    )
    for r in dr:
        cells = ""
        for key in ("projection", "mala", "mala_step"):
            ratio = f"{r[key + '_ratio']:.2f}"
            if r["classes"]:
                ratio += f" ({r[key + '_ratio_per_class']:.2f})"
            cells += f"{r[key + '_ns_per_row']:>11.1f}{ratio:>14}"
        lines.append(f"{r['model']:<24}{r['P']:>4}" + cells)
    fi = fidelity(args.data_dir, args.seeds, n_points)
    lines.append("")
    lines.append(
        f"Laplace KL to the full posterior, {args.seeds} seeds (median / worst); ratio: uniform /"
        " OMP of the medians, and the smallest of the seeds' ratios"
    )
    lines.append(
        f"{'data':<24}{'model':<19}{'N':>7}{'P':>4}{'M':>5}{'OMP':>20}{'uniform':>20}"
        f"{'ratio':>9}{'worst':>9}"
    )
    for r in fi:
        lines.append(
            f"{r['data']:<24}{r['model']:<19}{r['N']:>7}{r['P']:>4}{r['M']:>5}"
            f"{r['omp_median']:>10.3g} /{r['omp_worst']:>8.3g}"
            f"{r['uniform_median']:>10.3g} /{r['uniform_worst']:>8.3g}{r['ratio_of_medians']:>9.3g}"
            f"{r['ratio_worst_seed']:>9.3g}"
        )
    table = "\n".join(lines)
    print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"speed": sp, "draws_speed": dr, "fidelity": fi}, indent=1))
        args.out.with_suffix(".txt").write_text(table + "\n")


if __name__ == "__main__":
    main()
