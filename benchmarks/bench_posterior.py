"""Posterior fidelity of every coreset algorithm on Phishing (logistic) and BikeTrips (Poisson).

For each data set, the full posterior comes from a long MALA run on all rows; for each
algorithm and coreset size, the coreset is built (construction seconds timed), MALA runs on
its weighted rows with the same prior, and the Gaussian moment fits of the two sets of draws
are compared: reverse KL(pi_w || pi) and forward KL(pi || pi_w)
(:func:`skcoreset.metrics.gaussian_kl` of :func:`skcoreset.metrics.moment_fit`). The features
are standardised; the prior is the coresets' 'auto' prior of the full data. Printed: the Monte Carlo
floor (a second MALA run on all rows, as long as a coreset's, measured the same way), a table
per data set, then, for each KL method and size, whether it beats GIGA's KL in both directions,
ties with it within twice the floor, or not, and its construction time relative to GIGA's.

Usage::

    python -m benchmarks.bench_posterior --out bench_posterior.json --plot bench_posterior.png
    python -m benchmarks.bench_posterior --quick
"""

import argparse
import json
import pathlib
import platform
import time
import warnings

import numpy as np

from skcoreset.coreset import (
    CoresetMCMC,
    FrankWolfeCoreset,
    GIGACoreset,
    IHTCoreset,
    ImportanceCoreset,
    OMPCoreset,
    QuasiNewtonCoreset,
    SensitivityCoreset,
    SparseVICoreset,
    UniformCoreset,
)
from skcoreset.metrics import gaussian_kl, moment_fit
from skcoreset.models import get_model, laplace_approximation
from skcoreset.sampler import sample_mala

ROOT = pathlib.Path(__file__).resolve().parents[1]

DATASETS = {
    "phishing": ("phishing_campbell_pca10.npz", "logistic"),
    "biketrips": ("biketrips_campbell.npz", "poisson"),
}

KL_METHODS = ("QNC", "SparseVI", "CoresetMCMC")


def algorithms(model):
    """name -> factory(M) of every coreset estimator of the library."""
    algos = {
        "uniform": lambda M: UniformCoreset(M, projection=None, model=model, random_state=0),
        "importance": lambda M: ImportanceCoreset(M, model=model, random_state=0),
        "frank_wolfe": lambda M: FrankWolfeCoreset(M, model=model, random_state=0),
        "GIGA": lambda M: GIGACoreset(M, model=model, random_state=0),
        "A-IHT": lambda M: IHTCoreset(M, model=model, random_state=0),
        "A-IHT II": lambda M: IHTCoreset(M, debias=True, model=model, random_state=0),
        "OMP": lambda M: OMPCoreset(M, model=model, random_state=0),
        "QNC": lambda M: QuasiNewtonCoreset(M, model=model, random_state=0),
        "SparseVI": lambda M: SparseVICoreset(M, model=model, random_state=0),
        "CoresetMCMC": lambda M: CoresetMCMC(M, model=model, n_samples=10, random_state=0),
    }
    if model == "logistic":
        algos["sensitivity"] = lambda M: SensitivityCoreset(M, random_state=0)
    return algos


def posterior_draws(model, X, y, w, n_samples, n_warmup, seed):
    """MALA draws (4 chains) of the weighted posterior, started and preconditioned at its
    Laplace fit."""
    Xd = model.design(X)
    lap = laplace_approximation(model, Xd, y, w, design=True)
    rng = np.random.RandomState(seed)
    init = lap.mean + 0.1 * rng.standard_normal((4, lap.mean.shape[0])) @ lap.chol.T
    res = sample_mala(
        lap.model,
        Xd,
        y,
        w,
        init,
        prior_scale=model.prior_scale,
        precond_chol=lap.chol,
        n_samples=n_samples,
        n_warmup=n_warmup,
        random_state=rng,
    )
    return res.draws.reshape(-1, res.draws.shape[-1])


def run_dataset(name, folder, sizes, n_full, n_core, only=None):
    file, model_name = DATASETS[name]
    data = np.load(pathlib.Path(folder) / file, allow_pickle=True)
    X = np.asarray(data["X"], dtype=np.float64)
    y = np.asarray(data["y"], dtype=np.float64)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    prior = UniformCoreset(10, projection=None, model=model_name).fit(X, y).prior_scale_
    model = get_model(model_name, prior_scale=prior)
    t = time.perf_counter()
    full = moment_fit(posterior_draws(model, X, y, np.ones(len(y)), n_full, n_full // 2, 0))
    print(f"{name}: N = {len(y)}, P = {X.shape[1] + 1}, full MALA {time.perf_counter() - t:.1f} s")
    # the Monte Carlo floor: a second MALA run on all rows, as long as a coreset's, measured
    # like a coreset (a KL near it is as close as this benchmark can tell)
    again = moment_fit(posterior_draws(model, X, y, np.ones(len(y)), n_core, n_core // 2, 2))
    floor = {"reverse_kl": gaussian_kl(*again, *full), "forward_kl": gaussian_kl(*full, *again)}
    rev, fwd = floor["reverse_kl"], floor["forward_kl"]
    print(f"  Monte Carlo floor: rev KL {rev:.4g}  fwd KL {fwd:.4g}")
    rows = [
        {"dataset": name, "method": "MC floor", "size": M, "n_points": len(y), "seconds": 0.0}
        | floor
        for M in sizes
    ]
    for algo, make in algorithms(model_name).items():
        if only and algo not in only:
            continue
        for M in sizes:
            est = make(M)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = time.perf_counter()
                est.fit(X, y)
                seconds = time.perf_counter() - t
            idx, w = est.sample_indices_, est.sample_weight_
            draws = posterior_draws(model, X[idx], y[idx], w, n_core, n_core // 2, 1)
            core = moment_fit(draws)
            try:
                rev, fwd = gaussian_kl(*core, *full), gaussian_kl(*full, *core)
            except ValueError:  # a degenerate fit (e.g. one point)
                rev = fwd = float("inf")
            rows.append(
                {
                    "dataset": name,
                    "method": algo,
                    "size": M,
                    "n_points": int(len(idx)),
                    "reverse_kl": rev,
                    "forward_kl": fwd,
                    "seconds": seconds,
                }
            )
            print(
                f"  {algo:12s} M={M:5d} ({len(idx):5d} pts)  rev KL {rev:10.4g}  "
                f"fwd KL {fwd:10.4g}  {seconds:7.2f} s",
                flush=True,
            )
    return rows


def goal_summary(rows):
    """For each data set and KL method, at each size: whether it beats GIGA in both KL
    directions ('KL<GIGA'), or both are within twice the Monte Carlo floor in both ('tie at
    floor', the benchmark cannot tell them apart), or not ('KL>=GIGA'); and its construction
    seconds relative to GIGA's."""
    lines = []
    for dataset in sorted({r["dataset"] for r in rows}):
        giga = {r["size"]: r for r in rows if r["dataset"] == dataset and r["method"] == "GIGA"}
        floor = next(r for r in rows if r["dataset"] == dataset and r["method"] == "MC floor")
        for method in KL_METHODS:
            mine = {r["size"]: r for r in rows if r["dataset"] == dataset and r["method"] == method}
            if not giga or not mine:
                continue
            marks = []
            for M in sorted(mine):
                r, g = mine[M], giga[M]
                keys = ("reverse_kl", "forward_kl")
                if all(r[k] < g[k] for k in keys):
                    verdict = "KL<GIGA"
                elif all(max(r[k], g[k]) <= 2 * floor[k] for k in keys):
                    verdict = "tie at floor"
                else:
                    verdict = "KL>=GIGA"
                cost = r["seconds"] / max(g["seconds"], 1e-9)
                marks.append(f"M={M}: {verdict}, {cost:.1f}x time")
            lines.append(f"{dataset:10s} {method:12s} " + "; ".join(marks))
    return lines


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = sorted({r["dataset"] for r in rows})
    fig, axes = plt.subplots(len(datasets), 3, figsize=(15, 4 * len(datasets)), squeeze=False)
    for i, dataset in enumerate(datasets):
        sub = [r for r in rows if r["dataset"] == dataset]
        for method in dict.fromkeys(r["method"] for r in sub):
            pts = sorted((r["size"], r) for r in sub if r["method"] == method)
            sizes = [s for s, _ in pts]
            style = "-o" if method in KL_METHODS else ":k" if method == "MC floor" else "--."
            for j, key in enumerate(("reverse_kl", "forward_kl", "seconds")):
                if method == "MC floor" and key == "seconds":
                    continue
                axes[i, j].plot(sizes, [r[key] for _, r in pts], style, label=method)
        for j, key in enumerate(("reverse KL(pi_w || pi)", "forward KL(pi || pi_w)", "seconds")):
            ax = axes[i, j]
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("coreset size M")
            ax.set_title(f"{dataset}: {key}")
        axes[i, 0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data", type=str, default=str(ROOT.parent / "shared" / "data"), help="data folder"
    )
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 50, 100, 200, 500, 1000])
    ap.add_argument("--methods", nargs="+", default=None, help="only these algorithms")
    ap.add_argument("--full-samples", type=int, default=10_000, help="MALA draws per chain")
    ap.add_argument("--core-samples", type=int, default=2_000, help="MALA draws per chain")
    ap.add_argument("--quick", action="store_true", help="sizes 10, 50, 200, 1000; short chains")
    ap.add_argument("--out", type=str, default=None, help="write the results as JSON here")
    ap.add_argument("--plot", type=str, default=None, help="save the figure here")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes = [10, 50, 200, 1000]
        args.full_samples, args.core_samples = 2_000, 1_000
    rows = []
    for name in args.datasets:
        rows += run_dataset(
            name, args.data, args.sizes, args.full_samples, args.core_samples, args.methods
        )
    print("\nKL methods against GIGA (KL lower in both directions; construction time ratio):")
    for line in goal_summary(rows):
        print(line)
    if args.out:
        meta = {
            "sizes": args.sizes,
            "full_samples": args.full_samples,
            "core_samples": args.core_samples,
            "python": platform.python_version(),
            "machine": platform.machine(),
        }
        pathlib.Path(args.out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    if args.plot:
        plot(rows, args.plot)
    return rows


if __name__ == "__main__":
    main()
