"""Coresets of data that does not fit: bounded memory, time linear in N, fidelity kept.

Synthetic logistic regression with D = 20 features (intercept added by the model), generated
chunk by chunk from per-chunk seeds, so that the full data never has to be held to regenerate
a block. Every configuration runs in a fresh process (peak resident memory is that process's
high-water mark; for dask, the largest of the workers'):

* ``inmem``: ``OMPCoreset`` with the default settings on float32 X held in memory;
* ``single``: the single-shot construction of before (``n_candidates=None``, one block: the
  whole N x J projection in memory; the old default, for reference);
* ``uniform``: ``UniformCoreset(projection=None)`` of the same size;
* ``dask``: the default ``OMPCoreset`` on a dask array whose chunks are generated on the
  workers of a ``LocalCluster`` with 2 worker processes, again by every pass over them (as a
  source on disk is read again);
* ``dask-held``: the same on chunks generated once and held by the workers (what
  ``X.persist()`` gives when the data fit in the cluster's memory; their generation is not
  timed);
* ``qnc-mem``, ``qnc-dask``, ``qnc-dask-held`` (``--dask-qnc``): the same three with
  ``QuasiNewtonCoreset`` at its default settings (size ``'auto'``), at the largest N;
* ``qnc``, ``mcmc``, ``svi`` (``--kl``): ``QuasiNewtonCoreset``, ``CoresetMCMC`` and
  ``SparseVICoreset`` with their default settings, at the smallest N;
* ``e2e`` (``--e2e``): ``make_pipeline(OMPCoreset(), BayesianLogisticRegression())`` against
  ``BayesianLogisticRegression`` on all rows: seconds and the errors of the posterior mean and
  covariance in units of the full chain's Monte Carlo error.

Every fit is timed warm: a fit of 20 000 rows first loads the compiled kernels (in the
process; through dask, on every worker). Fidelity is the Laplace KL divergence
KL(pi || pi_w) between the full-data posterior (fitted by Newton passes over the regenerated
blocks) and the coreset posterior, both with the coreset's prior (``prior_scale_``).

Usage (from the repository root)::

    python -m benchmarks.bench_scale --out benchmarks/results/bench_scale.json
    python -m benchmarks.bench_scale --sizes 1000000 --quick
    python -m benchmarks.bench_scale --sizes 1000000 --quick --kl \
        --out benchmarks/results/bench_scale_kl.json
    python -m benchmarks.bench_scale --sizes 10000000 --quick --dask-qnc \
        --out benchmarks/results/bench_scale_dask.json
"""

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from dataclasses import replace

import numpy as np
from sklearn.base import clone

D = 20
CHUNK = 500_000  # rows generated at a time


def make_chunk(index, n, seed=0):
    """Chunk ``index`` of the synthetic data: ``(X float32, y)`` of ``n`` rows."""
    coef = np.random.default_rng(seed).standard_normal(D) / np.sqrt(D)
    rng = np.random.default_rng([seed, index])
    X = rng.standard_normal((n, D), dtype=np.float32)
    eta = X.astype(np.float64) @ coef + 0.3
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-eta))).astype(np.int8)
    return X, y


def chunk_sizes(N, chunk=CHUNK):
    return [min(chunk, N - a) for a in range(0, N, chunk)]


def make_data(N):
    """The whole data in memory (float32 X)."""
    X = np.empty((N, D), dtype=np.float32)
    y = np.empty(N, dtype=np.int8)
    a = 0
    for i, n in enumerate(chunk_sizes(N)):
        X[a : a + n], y[a : a + n] = make_chunk(i, n)
        a += n
    return X, y


def full_laplace(N, model):
    """The full-data Laplace fit: Newton passes over the regenerated chunks."""
    from skcoreset.models import laplace_from_blocks

    def blocks():
        for i, n in enumerate(chunk_sizes(N)):
            X, y = make_chunk(i, n)
            yield model.design(X), y.astype(np.float64), np.ones(n)

    return laplace_from_blocks(model, blocks)


def fidelity(N, est, X_m, y_m):
    """Laplace KL(full || coreset), both with the coreset's model and prior."""
    from skcoreset.metrics import gaussian_kl
    from skcoreset.models import get_model, laplace_approximation

    model = replace(get_model("logistic"), prior_scale=est.prior_scale_)
    full = full_laplace(N, model)
    core = laplace_approximation(
        model, np.asarray(X_m, np.float64), np.asarray(y_m, np.float64), est.sample_weight_
    )
    return gaussian_kl(full.mean, full.cov, core.mean, core.cov)


# --kl: the KL-optimised estimators at the smallest N, at their defaults.
KL_KINDS = {"qnc": "QuasiNewtonCoreset", "mcmc": "CoresetMCMC", "svi": "SparseVICoreset"}
# --dask-qnc: QuasiNewtonCoreset at the largest N, in memory and through dask (warm).
DASK_QNC_KINDS = ("qnc-mem", "qnc-dask", "qnc-dask-held")
WARM_ROWS = 20_000


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_inmem(N, kind, n_points):
    """One configuration on data in memory (run in its own process)."""
    from skcoreset import coreset

    X, y = make_data(N)
    base = peak_mb()
    x_mb = X.nbytes / 2**20
    if kind == "uniform":
        est = coreset.UniformCoreset(n_points, projection=None, random_state=0)
    elif kind == "single":
        est = coreset.OMPCoreset(n_points, n_candidates=None, block_size=N, random_state=0)
    elif kind in KL_KINDS:
        est = getattr(coreset, KL_KINDS[kind])(n_points, random_state=0)
    elif kind == "qnc-mem":
        est = coreset.QuasiNewtonCoreset(n_points, random_state=0)
    else:
        est = coreset.OMPCoreset(n_points, random_state=0)
    clone(est).set_params(n_points=10).fit(*make_chunk(0, WARM_ROWS))  # the kernels loaded
    t0 = time.perf_counter()
    est.fit(X, y)
    seconds = time.perf_counter() - t0
    peak = peak_mb()
    X_m, y_m = X[est.sample_indices_], y[est.sample_indices_]
    if kind == "uniform":
        from skcoreset.models import default_prior_scale, get_model

        est.prior_scale_ = default_prior_scale(get_model("logistic"), X[:200_000], y[:200_000])
    return {
        "N": N,
        "kind": kind,
        "n_points": n_points,
        "size": int(est.n_points_),
        "seconds": seconds,
        "rows_per_s": N / seconds,
        "peak_mb": peak,
        "x_mb": x_mb,
        "peak_beyond_x_mb": peak - base,
        "hilbert_error": float(getattr(est, "hilbert_error_", np.nan)),
        "kl": fidelity(N, est, X_m, y_m),
    }


def dask_data(N, chunk=CHUNK):
    """The synthetic data as dask arrays whose chunks are generated where a task needs them."""
    import dask.array as da
    from dask import delayed

    sizes = chunk_sizes(N, chunk)
    parts = [delayed(make_chunk)(i, n) for i, n in enumerate(sizes)]
    X = da.concatenate([da.from_delayed(p[0], (n, D), np.float32) for p, n in zip(parts, sizes)])
    y = da.concatenate([da.from_delayed(p[1], (n,), np.int8) for p, n in zip(parts, sizes)])
    return X, y


def run_dask(N, n_points, kind="dask", workers=2):
    """A coreset of a dask array generated on the workers of a LocalCluster, warm:
    OMPCoreset (``dask*``) or QuasiNewtonCoreset (``qnc-dask*``), on chunks generated by every
    pass or held by the workers (``*-held``)."""
    from distributed import Client, LocalCluster, wait

    from skcoreset.coreset import OMPCoreset, QuasiNewtonCoreset

    with (
        LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None) as lc,
        Client(lc) as client,
    ):
        X, y = dask_data(N)
        Coreset = QuasiNewtonCoreset if kind.startswith("qnc") else OMPCoreset
        est = Coreset(n_points, random_state=0)
        # the kernels loaded on every worker: a fit of a chunk each
        clone(est).set_params(n_points=10).fit(*dask_data(workers * WARM_ROWS, WARM_ROWS))
        if kind.endswith("-held"):
            X, y = client.persist([X, y])
            wait([X, y])
        t0 = time.perf_counter()
        est.fit(X, y)
        seconds = time.perf_counter() - t0
        worker_peak = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        X_m, y_m, _ = est.get_coreset()
    return {
        "N": N,
        "kind": kind,
        "n_points": n_points,
        "workers": workers,
        "size": int(est.n_points_),
        "seconds": seconds,
        "rows_per_s": N / seconds,
        "peak_mb": peak_mb(),
        "worker_peak_mb": max(v / 1024 for v in worker_peak.values()),
        "x_mb": N * D * 4 / 2**20,
        "hilbert_error": float(getattr(est, "hilbert_error_", np.nan)),
        "kl": fidelity(N, est, X_m, y_m),
    }


def _moments_errors(draws_c, draws_f):
    """Errors of the coreset posterior's mean (max over parameters, in full-posterior sd)
    and covariance (whitened Frobenius norm per dimension)."""
    a, b = draws_c.reshape(-1, draws_c.shape[-1]), draws_f.reshape(-1, draws_f.shape[-1])
    sd = b.std(axis=0)
    mean_err = float(np.max(np.abs(a.mean(0) - b.mean(0)) / sd))
    Sf = np.cov(b, rowvar=False)
    L = np.linalg.cholesky(Sf)
    Li = np.linalg.inv(L)
    W = Li @ (np.cov(a, rowvar=False) - Sf) @ Li.T
    return mean_err, float(np.linalg.norm(W) / np.sqrt(a.shape[1]))


def run_e2e(N):
    """Default coreset + MALA against MALA on all rows (run in its own process)."""
    from skcoreset import BayesianLogisticRegression, OMPCoreset
    from skcoreset.pipeline import make_pipeline

    X, y = make_data(N)
    t0 = time.perf_counter()
    full = BayesianLogisticRegression(random_state=1).fit(X, y)
    t_full = time.perf_counter() - t0
    t0 = time.perf_counter()
    pipe = make_pipeline(OMPCoreset(random_state=0), BayesianLogisticRegression(random_state=2))
    pipe.fit(X, y)
    t_core = time.perf_counter() - t0

    def draws(est):
        return np.concatenate(
            [
                est.coef_samples_.reshape(*est.coef_samples_.shape[:2], -1),
                est.intercept_samples_[..., None],
            ],
            axis=-1,
        )

    df, dc = draws(full), draws(pipe[-1])
    mean_err, cov_err = _moments_errors(dc, df)
    half = df.shape[1] // 2  # Monte Carlo: two halves of the full run, scaled to one run
    mc_mean, mc_cov = _moments_errors(df[:, :half], df[:, half:])
    return {
        "N": N,
        "kind": "e2e",
        "size": int(pipe[0].n_points_),
        "seconds_full": t_full,
        "seconds_coreset_pipeline": t_core,
        "speed_up": t_full / t_core,
        "mean_error_sd": mean_err,
        "cov_error": cov_err,
        "mc_mean_error_sd": mc_mean / 2,
        "mc_cov_error": mc_cov / 2,
        "mean_error_x_mc": mean_err / (mc_mean / 2),
        "cov_error_x_mc": cov_err / (mc_cov / 2),
    }


def child(args):
    """Run one configuration and print its JSON (the parent collects it)."""
    if "dask" in args.child:
        out = run_dask(args.N, args.n_points, args.child)
    elif args.child == "e2e":
        out = run_e2e(args.N)
    else:
        out = run_inmem(args.N, args.child, args.n_points)
    print("RESULT " + json.dumps(out))


def spawn(kind, N, n_points):
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.bench_scale",
        "--child",
        kind,
        "--N",
        str(N),
        "--n-points",
        str(n_points),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    raise RuntimeError(f"{kind} N={N} failed:\n{out.stderr[-3000:]}")


def _size(value):
    return value if value == "auto" else int(value)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 3_000_000, 10_000_000])
    p.add_argument(
        "--n-points",
        type=_size,
        default=100,
        help="coreset size of the in-memory, uniform and single-shot fits (default 100, the "
        "size of the issue's measurements; the estimators' own default is n_points='auto')",
    )
    p.add_argument(
        "--memory-points",
        type=int,
        default=500,
        help="coreset size of the memory goal at the largest N (default 500)",
    )
    p.add_argument("--e2e", action="store_true", help="also the end-to-end pipeline at 1e6")
    p.add_argument(
        "--kl", action="store_true", help="also QNC, Coreset MCMC and SparseVI at the smallest N"
    )
    p.add_argument(
        "--dask-qnc",
        action="store_true",
        help="also QuasiNewtonCoreset (size 'auto') at the largest N, in memory and through "
        "dask, its chunks generated by each pass or held by the workers",
    )
    p.add_argument("--quick", action="store_true", help="skip the single-shot reference")
    p.add_argument("--out", help="write the results as JSON here (and a .txt table beside)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--N", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args)
    rows = []
    smallest, largest = min(args.sizes), max(args.sizes)
    plan = []
    for N in args.sizes:
        plan.append(("inmem", N, args.n_points))
        if N == largest:
            plan.append(("inmem", N, args.memory_points))
            plan.append(("dask", N, args.memory_points))
            plan.append(("dask-held", N, args.memory_points))
    plan.append(("uniform", smallest, args.n_points))
    if not args.quick:
        plan.append(("single", smallest, args.n_points))
    if args.kl:
        plan += [(kind, smallest, args.n_points) for kind in KL_KINDS]
    if args.dask_qnc:
        plan += [(kind, largest, "auto") for kind in DASK_QNC_KINDS]
    if args.e2e:
        plan.append(("e2e", smallest, args.n_points))
    for kind, N, n_points in plan:
        print(f"running {kind} N={N} n_points={n_points} ...", flush=True)
        rows.append(spawn(kind, N, n_points))
        print("  " + json.dumps(rows[-1]), flush=True)
    text = table(rows)
    print(text)
    if args.out:
        meta = {
            "machine": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average_at_end": os.getloadavg(),
        }
        with open(args.out, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
        with open(args.out.removesuffix(".json") + ".txt", "w") as f:
            f.write(text + "\n")


def table(rows):
    lines = [
        f"{'config':<13} {'N':>10} {'M':>4} {'size':>5} {'seconds':>8} {'rows/s':>10} "
        f"{'peak MB':>8} {'X MB':>7} {'worker MB':>9} {'KL':>10}"
    ]
    for r in rows:
        if r["kind"] == "e2e":
            continue
        lines.append(
            f"{r['kind']:<13} {r['N']:>10} {r['n_points']:>4} {r['size']:>5} "
            f"{r['seconds']:>8.1f} {r['rows_per_s']:>10.0f} {r['peak_mb']:>8.0f} "
            f"{r['x_mb']:>7.0f} {r.get('worker_peak_mb', float('nan')):>9.0f} {r['kl']:>10.4g}"
        )
    by = {(r["kind"], r["N"], r.get("n_points")): r for r in rows}
    inmem = sorted((r for r in rows if r["kind"] == "inmem"), key=lambda r: r["N"])
    if len(inmem) > 1:
        first, last = inmem[0], [r for r in inmem if r["n_points"] == inmem[0]["n_points"]][-1]
        lines.append(
            f"time per row at N={last['N']} / at N={first['N']}: "
            f"{(last['seconds'] / last['N']) / (first['seconds'] / first['N']):.2f}"
        )
    for r in inmem:
        single = by.get(("single", r["N"], r["n_points"]))
        uniform = by.get(("uniform", r["N"], r["n_points"]))
        if single:
            lines.append(
                f"N={r['N']}: default fit {single['seconds'] / r['seconds']:.1f}x faster than the "
                f"single-shot construction; KL {r['kl'] / single['kl']:.2f}x its KL"
            )
        if uniform:
            lines.append(f"N={r['N']}: KL {uniform['kl'] / r['kl']:.0f}x below uniform")
    for r in rows:  # each dask fit against the same fit in memory
        mem = by.get(("qnc-mem" if r["kind"].startswith("qnc") else "inmem", r["N"], r["n_points"]))
        if mem and "dask" in r["kind"]:
            lines.append(
                f"N={r['N']}: {r['kind']} {r['seconds'] / mem['seconds']:.2f}x the time in memory"
            )
    for r in rows:
        if r["kind"] == "e2e":
            lines.append(
                f"end to end at N={r['N']}: coreset ({r['size']} points) + MALA "
                f"{r['speed_up']:.1f}x faster than MALA on all rows; mean error "
                f"{r['mean_error_x_mc']:.2f}x and covariance error {r['cov_error_x_mc']:.2f}x the "
                "full chain's Monte Carlo error"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
