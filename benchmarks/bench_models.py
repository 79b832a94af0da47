"""Every model: its cost per row against the logistic model's, and its coresets on real data.

Two tables, from one run:

* **speed**: seconds per row of the two kernels a coreset fit and a Bayesian fit spend their
  time in, for every registered model and a user's single-index family (a probit written as a
  user would, through :class:`skcoreset.models.SingleIndexFamily`), as a ratio to the logistic
  model's in the same run: the (N, J) log-likelihood projection (N = 10^5 rows, D = 10,
  J = 500; with the extra parameter drawn per column where the model has one, as a coreset fit
  does) and the MALA gradient of 4 chains (M = 1000 rows, D = 10; the extra parameter
  sampled where the model has one). Compiled before timing; best of ``--repeat``.
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
from functools import partial

import numpy as np

from skcoreset import OMPCoreset, UniformCoreset
from skcoreset.metrics import coreset_laplace_kl
from skcoreset.models import (
    MODEL_NAMES,
    get_model,
)
from skcoreset.models import _glm_kernels as GK
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
        y = _targets(model.name, X @ beta, rng)
        if model.family.has_extra:  # the extra parameter at a plausible value
            model = model.__class__(noise_scale=1.0)
        thetas_t = np.ascontiguousarray((beta + 0.05 * rng.standard_normal((J, D))).T)
        # the extra parameter per draw as a coreset fit's projection draws it (16 levels)
        levels = model.extra * np.exp(0.05 * rng.standard_normal(16))
        extras = levels[rng.integers(0, 16, J)] if model.has_noise else GK.NO_EXTRAS
        out = np.empty((n_rows, J))
        proj_args = (model.family, X, thetas_t, y, model.extra, extras, 1.0, True, out)
        Xm, ym = X[:n_mala], y[:n_mala]
        Xt, ya, wa = GK.chain_layout(Xm, ym, np.ones(n_mala))
        sample = model.has_noise
        offset = 0.0 if sample else GK.weighted_offset(model.family, ym, wa, model.extra)
        grad_args = (
            model.family,
            sample,
            np.ascontiguousarray(np.tile(np.append(beta, 0.0), (n_chains, 1))),
            Xt,
            ya,
            wa,
            float(n_mala),
            offset,
            np.full(n_chains, model.extra),
            np.empty(n_chains),
            np.empty((n_chains, D + 1)),
            GK.aligned_empty((2, n_chains, GK.CHAIN_BLOCK)),
        )
        project = partial(GK.loglik_matrix, *proj_args)
        gradient = partial(_steps, grad_args, 100)
        # the same with the extra parameter fixed (given, not estimated)
        fixed_offset = GK.weighted_offset(model.family, ym, wa, model.extra)
        project_fixed = partial(GK.loglik_matrix, *proj_args[:5], GK.NO_EXTRAS, *proj_args[6:])
        gradient_fixed = partial(
            _steps, (grad_args[0], False, *grad_args[2:7], fixed_offset, *grad_args[8:]), 100
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


REAL = [
    ("nmes1988_visits.npz", "nmes1988.npz", "negative_binomial"),
    ("census2000_weekinc.npz", "census2000.npz", "gamma"),
]


def fidelity(data_dir, seeds, n_points):
    rows = []
    for shared, bundled, model in REAL:
        path = data_dir / shared
        if not path.exists():
            path = ROOT / "tests" / "data" / bundled
        data = np.load(path, allow_pickle=False)
        X = (data["X"] - data["X"].mean(axis=0)) / np.where(
            data["X"].std(axis=0) > 0, data["X"].std(axis=0), 1
        )
        y = data["y"].astype(float)
        kl = {"OMP": [], "uniform": []}
        for seed in range(seeds):
            for label, est in (("OMP", OMPCoreset), ("uniform", UniformCoreset)):
                c = est(model=model, n_points=n_points, random_state=seed).fit(X, y)
                kl[label].append(
                    coreset_laplace_kl(X, y, c.sample_indices_, c.sample_weight_, model=model)
                )
        omp, uni = np.array(kl["OMP"]), np.array(kl["uniform"])
        rows.append(
            {
                "data": path.name,
                "model": model,
                "N": int(X.shape[0]),
                "P": int(X.shape[1] + 1),
                "M": n_points if n_points != "auto" else int(c.n_points_),
                "omp_median": float(np.median(omp)),
                "omp_worst": float(omp.max()),
                "uniform_median": float(np.median(uni)),
                "uniform_worst": float(uni.max()),
                "ratio_of_medians": float(np.median(uni) / np.median(omp)),
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
    fi = fidelity(args.data_dir, args.seeds, n_points)
    lines.append("")
    lines.append(f"Laplace KL to the full posterior, {args.seeds} seeds (median / worst)")
    lines.append(f"{'data':<24}{'model':<19}{'N':>7}{'M':>5}{'OMP':>20}{'uniform':>20}{'ratio':>9}")
    for r in fi:
        lines.append(
            f"{r['data']:<24}{r['model']:<19}{r['N']:>7}{r['M']:>5}"
            f"{r['omp_median']:>10.3g} /{r['omp_worst']:>8.3g}"
            f"{r['uniform_median']:>10.3g} /{r['uniform_worst']:>8.3g}{r['ratio_of_medians']:>9.3g}"
        )
    table = "\n".join(lines)
    print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"speed": sp, "fidelity": fi}, indent=1))
        args.out.with_suffix(".txt").write_text(table + "\n")


if __name__ == "__main__":
    main()
