"""Every way to build a multilevel coreset, judged by the posterior a user samples from it:
``fit`` and ``partial_fit`` (a stream of blocks), a Hilbert coreset (OMP) and the KL ones
(QNC, SparseVI, Coreset MCMC), each followed by ``BayesianMultilevelRegression`` on the
coreset, against the same sampler on all rows.

Data (``--rows``, ``--groups``): logistic, 4 standard normal features, coefficients
``(0.8, -0.5, 0.3, 0)``, intercept -0.3, a random intercept per group ``N(0, 0.8^2)``, the
groups uneven (each row's group drawn with probabilities proportional to ``exp(0.6 z_g)``).

Methods, for each seed ``s`` (``--seeds``), every setting at its default:

* ``<algorithm> fit``: ``Coreset(model=Multilevel("logistic"), random_state=s).fit(X, y,
  groups=g)``;
* ``<algorithm> stream`` (``--streams``: OMP and QNC by default): the same estimator's
  ``partial_fit`` on blocks of ``--block`` rows, the rows shuffled (seed 11), then
  ``get_coreset()``;
* then ``BayesianMultilevelRegression(Multilevel("logistic"), prior_scale=cs.prior_scale_,
  random_state=s).fit(X_m, y_m, **params)`` on the coreset.

The reference: the sampler on all rows (``random_state=100``); the floor: a second such fit
(``random_state=101``) against it. Per method and seed: the coreset's seconds and points, the
sampler's seconds, and over every parameter (coefficients, intercept, log group sd, every
group's effect) the mean and max of ``|z| = |mean - mean_ref| / sd_ref`` and the smallest and
largest ratio ``sd / sd_ref``.

    python -m benchmarks.bench_multilevel_builds \\
        --out benchmarks/results/bench_multilevel_builds.json
"""

import argparse
import json
import pathlib
import subprocess
import time
import warnings

import numpy as np

ALGORITHMS = ("OMPCoreset", "QuasiNewtonCoreset", "SparseVICoreset", "CoresetMCMC")


def data(n_rows, n_groups):
    rng = np.random.default_rng(1)
    p = np.exp(0.6 * rng.standard_normal(n_groups))
    g = rng.choice(n_groups, n_rows, p=p / p.sum())
    X = rng.standard_normal((n_rows, 4))
    u = rng.normal(0, 0.8, n_groups)
    eta = X @ [0.8, -0.5, 0.3, 0.0] - 0.3 + u[g]
    y = (rng.random(n_rows) < 1 / (1 + np.exp(-eta))).astype(int)
    return X, y, g


def draws(est, n_groups):
    """(draws, parameters): coefficients, intercept, log group sd, every group's effect."""
    D = est.coef_samples_.shape[-1]
    return np.concatenate(
        [
            est.coef_samples_.reshape(-1, D),
            est.intercept_samples_.reshape(-1, 1),
            np.log(est.group_sd_samples_.reshape(-1, 1)),
            est.group_effects_samples_.reshape(-1, n_groups),
        ],
        axis=1,
    )


def compare(d, ref):
    z = np.abs(d.mean(0) - ref.mean(0)) / ref.std(0)
    r = d.std(0) / ref.std(0)
    return {"mean_z": z.mean(), "max_z": z.max(), "sd_min": r.min(), "sd_max": r.max()}


def main(argv=None):
    import skcoreset
    from skcoreset import BayesianMultilevelRegression
    from skcoreset.models import Multilevel

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--groups", type=int, default=100)
    parser.add_argument("--block", type=int, default=10_000)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS), choices=ALGORITHMS)
    parser.add_argument(
        "--streams",
        nargs="+",
        default=["OMPCoreset", "QuasiNewtonCoreset"],
        choices=ALGORITHMS,
        help="the algorithms also streamed (each call of partial_fit optimises the KL "
        "coresets' weights again: SparseVI's and Coreset MCMC's streams take minutes)",
    )
    parser.add_argument("--out", type=pathlib.Path)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", category=UserWarning)
    X, y, g = data(args.rows, args.groups)
    G = args.groups
    spec = Multilevel("logistic")
    started = time.perf_counter()
    full = BayesianMultilevelRegression(spec, random_state=100).fit(X, y, groups=g)
    full_seconds = time.perf_counter() - started
    ref = draws(full, G)
    floor = compare(
        draws(BayesianMultilevelRegression(spec, random_state=101).fit(X, y, groups=g), G), ref
    )
    rows = [{"method": "full (floor: a second fit)", "seconds": full_seconds, **floor}]
    order = np.random.default_rng(11).permutation(args.rows)
    for name in args.algorithms:
        cls = getattr(skcoreset, name)
        for how in ("fit", "stream") if name in args.streams else ("fit",):
            for seed in range(args.seeds):
                started = time.perf_counter()
                cs = cls(model=spec, random_state=seed)
                if how == "fit":
                    X_m, y_m, params = cs.fit_resample(X, y, groups=g)
                else:
                    for start in range(0, args.rows, args.block):
                        i = order[start : start + args.block]
                        cs.partial_fit(X[i], y[i], groups=g[i])
                    X_m, y_m, params = cs.get_coreset()
                coreset_seconds = time.perf_counter() - started
                started = time.perf_counter()
                est = BayesianMultilevelRegression(
                    spec, prior_scale=cs.prior_scale_, random_state=seed
                ).fit(X_m, y_m, **params)
                row = {
                    "method": f"{name} {how}",
                    "seed": seed,
                    "points": len(y_m),
                    "coreset_seconds": coreset_seconds,
                    "sampler_seconds": time.perf_counter() - started,
                    **compare(draws(est, G), ref),
                }
                rows.append(row)
                print(row, flush=True)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    header = (
        f"{'method':28s} {'seed':>4s} {'points':>7s} {'coreset s':>9s} {'sampler s':>9s} "
        f"{'mean|z|':>7s} {'max|z|':>7s} {'sd ratios':>11s}"
    )
    lines = [
        f"{args.rows} rows in {G} groups (logistic), blocks of {args.block}; "
        f"full on all rows: {full_seconds:.1f} s",
        header,
    ]
    for r in rows:
        lines.append(
            f"{r['method']:28s} {r.get('seed', ''):>4} {r.get('points', ''):>7} "
            f"{r.get('coreset_seconds', float('nan')):9.1f} "
            f"{r.get('sampler_seconds', float('nan')):9.1f} {r['mean_z']:7.3f} "
            f"{r['max_z']:7.3f} {r['sd_min']:5.2f}-{r['sd_max']:4.2f}"
        )
    lines.append(f"commit {commit}; every setting at its default")
    print("\n".join(lines))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"rows": rows, "commit": commit}, indent=1, default=float))
        args.out.with_suffix(".txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
