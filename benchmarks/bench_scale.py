"""Scale: the default pipelines from 10^6 to 10^8 rows, in memory, from Parquet on a
``dask.distributed`` cluster, and through the command line.

Synthetic logistic regression, D = 20 features (the intercept added by the model), float32 X,
generated chunk by chunk from per-chunk seeds (:func:`make_chunk`; the data never has to be
held whole to be written or regenerated), its coefficients known (:func:`truth`). Every
configuration runs in a fresh process, warm: a small fit first loads the compiled kernels (on
every worker, for dask). Modes (any of them; the default is ``--inmem``):

* ``--inmem``: ``make_pipeline(OMPCoreset(), BayesianLogisticRegression())`` and the same with
  ``QuasiNewtonCoreset``, all defaults, on X in memory: seconds (the best of two fits after a
  first at the same size, all three recorded), and as a multiple of one
  NumPy pass over the same X (``X @ beta``, float32, the best of five in the same process);
  the coreset's passes over X and the seconds of its stages (``fit_stats_``); peak resident
  memory beyond X;
* ``--models``: the default OMP pipeline of the other built-in models at the largest in-memory
  size (Poisson, negative binomial, Student-t, multinomial of 3 classes, each from data of its
  own), seconds against the logistic model's;
* ``--distributed``: the data written to Parquet part files of 10^6 rows (once, chunk by
  chunk; removed at the end unless ``--keep-data``), read with ``dd.read_parquet`` and fitted
  by the same pipelines on a ``LocalCluster`` of 2 worker processes, one thread each,
  ``memory_limit='2GB'``: seconds, time per row, the coreset's passes, peak resident memory
  of the client and of each worker (the processes' high-water marks; for the total, the
  largest sum of the three sampled every 0.25 s), whether a worker was restarted (its
  process changed) or spilled to disk;
* ``--parquet``: ``skcoreset build FOLDER --label y --n-points auto --progress`` in a child
  process on the same folders: seconds, time per row, peak resident memory (the child's
  high-water mark), the progress bar's last line;
* ``--groups``: the multilevel pipeline on grouped data, in memory and on the cluster (10^6
  rows in 1000 groups by default, ``--groups-sizes``): where its design stands.

Accuracy: every pipeline's posterior (4 chains x 1000 draws) against the truth (the mean over
the 21 parameters of |z| = |posterior mean - true value| / posterior sd, whose expectation is
0.8 when the posterior is calibrated: the truth is a draw of it), and, up to
``--reference-max`` rows (default 10^7), against MALA on all rows (the library's
``BayesianLogisticRegression``, cached in ``--data-dir``): the mean |z| of the posterior means
in reference sds and the sd ratios, with the reference's own Monte Carlo floor (two halves of
its chains) and whether the pipeline *reaches* it (mean |z| within twice the floor, every sd
ratio within 0.85-1.15; as ``bench_alternatives``).

Usage (from the repository root; ``pip install -e ".[test,cli]"``)::

    python -m benchmarks.bench_scale --out benchmarks/results/bench_scale.json
    python -m benchmarks.bench_scale --inmem --models --sizes 1000000 10000000 \\
        --out benchmarks/results/bench_scale.json
    python -m benchmarks.bench_scale --distributed --parquet \\
        --sizes 1000000 10000000 30000000 100000000 --out benchmarks/results/bench_scale_dask.json
"""

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np

D = 20
CHUNK = 500_000  # rows generated at a time in memory
PART_ROWS = 1_000_000  # rows of a Parquet part file
WARM_ROWS = 300_000
SEED = 0


# -- the data -----------------------------------------------------------------------------
def truth(seed=SEED):
    """The true coefficients and intercept of the synthetic data (21 values)."""
    coef = np.random.default_rng(seed).standard_normal(D) / np.sqrt(D)
    return np.append(coef, 0.3)


def make_chunk(index, n, seed=SEED):
    """Chunk ``index`` of the synthetic data: ``(X float32, y int8)`` of ``n`` rows."""
    beta = truth(seed)
    rng = np.random.default_rng([seed, index])
    X = rng.standard_normal((n, D), dtype=np.float32)
    eta = X.astype(np.float64) @ beta[:-1] + beta[-1]
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-eta))).astype(np.int8)
    return X, y


def chunk_sizes(N, chunk=CHUNK):
    return [min(chunk, N - a) for a in range(0, N, chunk)]


def make_data(N, chunk=CHUNK):
    """The whole data in memory (float32 X)."""
    X = np.empty((N, D), dtype=np.float32)
    y = np.empty(N, dtype=np.int8)
    a = 0
    for i, n in enumerate(chunk_sizes(N, chunk)):
        X[a : a + n], y[a : a + n] = make_chunk(i, n)
        a += n
    return X, y


def parquet_folder(data_dir, N):
    """The Parquet part files of N rows (written once, a part at a time)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(data_dir) / f"bench_scale_parquet_{N}"
    done = folder / "_complete"
    if done.exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for i, n in enumerate(chunk_sizes(N, PART_ROWS)):
        X, y = make_chunk(i, n)
        columns = {f"x{k}": X[:, k] for k in range(D)}
        columns["y"] = y
        pq.write_table(pa.table(columns), folder / f"part-{i:05d}.parquet", row_group_size=250_000)
    done.touch()
    return folder


def data_in_memory(N):
    """The rows of the Parquet folder of N rows, in memory (the same chunks, the same rows):
    the in-memory fits, the references and the dask fits see the same data."""
    return make_data(N, PART_ROWS)


# -- measuring ----------------------------------------------------------------------------
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def numpy_pass_seconds(X):
    """One NumPy pass over X: ``X @ beta`` in float32 (BLAS), the best of five."""
    beta = np.ones(X.shape[1], dtype=X.dtype)
    best = np.inf
    for _ in range(5):
        start = time.perf_counter()
        X @ beta
        best = min(best, time.perf_counter() - start)
    return best


def draws_of(est):
    """The posterior draws (chains, draws, 21) of a fitted Bayesian logistic regression."""
    coef = est.coef_samples_.reshape(*est.coef_samples_.shape[:2], -1)
    return np.concatenate([coef, est.intercept_samples_[..., None]], axis=-1)


def against_truth(draws):
    """The mean |z| of the true parameters under the draws' posterior (0.8 if calibrated)."""
    flat = draws.reshape(-1, draws.shape[-1])
    return float(np.mean(np.abs(flat.mean(0) - truth()) / flat.std(0, ddof=1)))


def against_reference(draws, reference):
    """The accuracy against the full data's MALA (``bench_alternatives``' measures)."""
    from benchmarks.bench_alternatives import accuracy, reaches

    acc = accuracy(draws, reference["draws"])
    return {
        "mean_abs_z": acc["mean_abs_z"],
        "sd_ratio_min": min(acc["sd_ratio"]),
        "sd_ratio_max": max(acc["sd_ratio"]),
        "floor": reference["floor"],
        "reaches": bool(reaches(acc, reference["floor"])),
    }


def load_reference(data_dir, N):
    path = Path(data_dir) / f"bench_scale_reference_{N}.npz"
    if not path.exists():
        return None
    stored = np.load(path)
    return {
        "draws": stored["draws"],
        "floor": float(stored["floor"]),
        "seconds": float(stored["seconds"]),
    }


def pipeline(algorithm, model="logistic"):
    from skcoreset import (
        BayesianLogisticRegression,
        BayesianNegativeBinomialRegression,
        BayesianPoissonRegression,
        BayesianStudentTRegression,
        OMPCoreset,
        QuasiNewtonCoreset,
    )
    from skcoreset.pipeline import make_pipeline

    coreset = {"omp": OMPCoreset, "qnc": QuasiNewtonCoreset}[algorithm]
    estimator = {
        "logistic": BayesianLogisticRegression,
        "multinomial": BayesianLogisticRegression,
        "poisson": BayesianPoissonRegression,
        "negative_binomial": BayesianNegativeBinomialRegression,
        "student_t": BayesianStudentTRegression,
    }[model]
    return make_pipeline(coreset(random_state=0), estimator(random_state=0))


def coreset_stats(coreset):
    stats = coreset.fit_stats_
    return {
        "size": int(coreset.n_points_),
        "laplace_kl": float(coreset.laplace_kl_),
        "passes": stats["passes"],
        "stage_seconds": stats["seconds"],
        "coreset_seconds": stats["total_seconds"],
        "data_fit": stats.get("data_fit"),
    }


# -- the configurations (each in its own process) ----------------------------------------
def warm_fit(make, X, y, repeats=3):
    """``(pipeline, seconds, all)``: ``repeats`` fits of ``make()`` on all rows, the best of
    the later ones (warm: the first at this size, after the small fit, still took 0.3-1.0 s
    more at 10^7 rows, loading kernels and touching fresh memory); all are kept."""
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        pipe = make().fit(X, y)
        seconds.append(time.perf_counter() - start)
    return pipe, min(seconds[1:]), seconds


def run_inmem(N, algorithm, data_dir):
    X, y = data_in_memory(N)
    x_mb = X.nbytes / 2**20
    pipeline(algorithm).fit(X[:WARM_ROWS], y[:WARM_ROWS])  # the kernels loaded
    base = peak_mb()
    pipe, seconds, fits = warm_fit(lambda: pipeline(algorithm), X, y)
    peak = peak_mb()
    one_pass = numpy_pass_seconds(X)
    out = {
        "mode": "inmem",
        "N": N,
        "algorithm": algorithm,
        "seconds": seconds,
        "fit_seconds": fits,
        "numpy_pass_seconds": one_pass,
        "numpy_passes": seconds / one_pass,
        "peak_beyond_x_mb": peak - base,
        "x_mb": x_mb,
        **coreset_stats(pipe[0]),
        "truth_mean_abs_z": against_truth(draws_of(pipe[-1])),
    }
    reference = load_reference(data_dir, N)
    if reference is not None:
        out["reference"] = against_reference(draws_of(pipe[-1]), reference)
        out["reference_seconds"] = reference["seconds"]
    return out


def run_reference(N, data_dir):
    """MALA on all rows (the library's), its draws and Monte Carlo floor cached."""
    from benchmarks.bench_alternatives import mc_floor
    from skcoreset import BayesianLogisticRegression

    X, y = data_in_memory(N)
    start = time.perf_counter()
    full = BayesianLogisticRegression(random_state=1).fit(X, y)
    seconds = time.perf_counter() - start
    draws = draws_of(full)
    floor, _ = mc_floor(draws)
    path = Path(data_dir) / f"bench_scale_reference_{N}.npz"
    np.savez(path, draws=draws, floor=floor, seconds=seconds)
    return {
        "mode": "reference",
        "N": N,
        "seconds": seconds,
        "floor": floor,
        "truth_mean_abs_z": against_truth(draws),
        "rhat_max": float(np.max(full.rhat_)),
    }


def model_data(model, N):
    """Data of ``model`` (the logistic design and coefficients at half their scale)."""
    beta = truth()
    parts = []
    for i, n in enumerate(chunk_sizes(N)):
        rng = np.random.default_rng([SEED + 1, i])
        X = rng.standard_normal((n, D), dtype=np.float32)
        eta = X.astype(np.float64) @ (0.5 * beta[:-1]) + 0.3
        if model == "poisson":
            y = rng.poisson(np.exp(eta)).astype(np.float64)
        elif model == "negative_binomial":
            mu, alpha = np.exp(eta), 0.5
            y = rng.negative_binomial(1 / alpha, 1 / (1 + alpha * mu)).astype(np.float64)
        elif model == "student_t":
            y = eta + 0.5 * rng.standard_t(4, n)
        elif model == "multinomial":
            other = X.astype(np.float64) @ (0.5 * beta[::-1][1:]) - 0.2
            E = np.column_stack([np.zeros(n), eta, other])
            p = np.exp(E - E.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            y = (rng.random(n)[:, None] > np.cumsum(p, 1)).sum(1).astype(np.int8)
        else:
            y = (rng.random(n) < 1.0 / (1.0 + np.exp(-eta))).astype(np.int8)
        parts.append((X, y))
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def run_model(N, model):
    X, y = model_data(model, N)
    pipeline("omp", model).fit(X[:WARM_ROWS], y[:WARM_ROWS])
    pipe, seconds, fits = warm_fit(lambda: pipeline("omp", model), X, y)
    return {
        "mode": "models",
        "N": N,
        "model": model,
        "algorithm": "omp",
        "seconds": seconds,
        "fit_seconds": fits,
        "numpy_passes": seconds / numpy_pass_seconds(X),
        **coreset_stats(pipe[0]),
    }


class MemorySampler:
    """The resident memory of this process and of the cluster's workers, every 0.25 s: the
    largest sum, and whether a worker process changed (a restart)."""

    def __init__(self, client):
        import psutil

        self.client, self.me = client, psutil.Process()
        self.pids = client.run(os.getpid)
        self.largest, self._stop = 0.0, False
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop:
            try:
                workers = self.client.run(_rss_mb)
                total = self.me.memory_info().rss / 2**20 + sum(workers.values())
                self.largest = max(self.largest, total)
            except Exception:  # noqa: BLE001 - a sample lost while the cluster is busy
                pass
            time.sleep(0.25)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop = True
        self._thread.join()

    def restarted(self):
        return self.client.run(os.getpid) != self.pids


def _warm(algorithm):
    """A small fit in a worker's process, which loads the kernels a chunk's task calls."""
    warnings.simplefilter("ignore")
    X, y = make_chunk(10**6, WARM_ROWS)
    pipeline(algorithm).set_params(
        **{f"{pipeline(algorithm).steps[0][0]}__block_size": 50_000}
    ).fit(X, y)


def _rss_mb():
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def _worker_peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _worker_spilled_bytes(dask_worker=None):
    data = getattr(dask_worker, "data", None)
    slow = getattr(data, "slow", None)
    return int(getattr(slow, "total_weight", 0) or 0) if slow is not None else 0


def run_distributed(N, algorithm, data_dir):
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    folder = parquet_folder(data_dir, N)
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, memory_limit="2GB", dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        frame = dd.read_parquet(str(folder))
        columns = [c for c in frame.columns if c != "y"]
        X, y = frame[columns], frame["y"]
        client.run(_warm, algorithm)  # every worker's kernels loaded
        pipeline(algorithm).fit(X.partitions[:1], y.partitions[:1])
        client_base = peak_mb()
        with MemorySampler(client) as memory:
            start = time.perf_counter()
            pipe = pipeline(algorithm).fit(X, y)
            seconds = time.perf_counter() - start
        workers = client.run(_worker_peak_mb)
        spilled = client.run(_worker_spilled_bytes)
        restarted = memory.restarted()
    out = {
        "mode": "distributed",
        "N": N,
        "algorithm": algorithm,
        "seconds": seconds,
        "us_per_row": 1e6 * seconds / N,
        "client_peak_mb": peak_mb(),
        "client_before_mb": client_base,
        "worker_peak_mb": sorted(workers.values()),
        "sampled_total_peak_mb": memory.largest,
        "restarted": bool(restarted),
        "spilled_bytes": int(sum(spilled.values())),
        **coreset_stats(pipe[0]),
        "truth_mean_abs_z": against_truth(draws_of(pipe[-1])),
    }
    reference = load_reference(data_dir, N)
    if reference is not None:
        out["reference"] = against_reference(draws_of(pipe[-1]), reference)
    return out


def run_cli(N, data_dir):
    """``skcoreset build`` on the Parquet folder, in a child process."""
    folder = parquet_folder(data_dir, N)
    with tempfile.TemporaryDirectory() as tmp:
        out_file = Path(tmp) / "coreset.csv"
        cmd = [
            sys.executable,
            "-m",
            "skcoreset",
            "build",
            str(folder),
            "--label",
            "y",
            "--n-points",
            "auto",
            "--progress",
            "-o",
            str(out_file),
        ]
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
        if done.returncode:
            raise RuntimeError(done.stderr[-3000:])
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        rows = np.loadtxt(out_file, delimiter=",", skiprows=1)
    bar = [line for line in done.stderr.replace("\r", "\n").splitlines() if "row/s" in line]
    return {
        "mode": "parquet",
        "N": N,
        "algorithm": "qnc (the command line's default)",
        "seconds": seconds,
        "us_per_row": 1e6 * seconds / N,
        "peak_mb": peak,
        "size": int(rows.shape[0]),
        "progress_bar": bar[-1].strip() if bar else None,
        "summary": done.stdout.strip().splitlines(),
    }


def run_groups(N, n_groups, where):
    """The multilevel OMP coreset of grouped data (random intercepts), in memory or on the
    cluster: seconds, points, peak memory."""
    from skcoreset import OMPCoreset
    from skcoreset.models import Multilevel

    rng = np.random.default_rng(7)
    X, y = make_data(N)
    groups = rng.integers(0, n_groups, N)
    effects = 0.5 * np.random.default_rng(8).standard_normal(n_groups)
    eta = X.astype(np.float64) @ truth()[:-1] + truth()[-1] + effects[groups]
    y = (rng.random(N) < 1.0 / (1.0 + np.exp(-eta))).astype(np.int8)
    coreset = OMPCoreset(model=Multilevel("logistic"), random_state=0)
    if where == "memory":
        start = time.perf_counter()
        coreset.fit(X, y, groups=groups)
        seconds, extra = time.perf_counter() - start, {}
    else:
        import dask.array as da
        from distributed import Client, LocalCluster

        with (
            LocalCluster(
                n_workers=2, threads_per_worker=1, memory_limit="2GB", dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            chunks = (PART_ROWS,)
            Xd, yd, gd = (da.from_array(a, chunks=chunks + a.shape[1:]) for a in (X, y, groups))
            start = time.perf_counter()
            coreset.fit(Xd, yd, groups=gd)
            seconds = time.perf_counter() - start
            extra = {"worker_peak_mb": sorted(client.run(_worker_peak_mb).values())}
    return {
        "mode": "groups",
        "where": where,
        "N": N,
        "groups": n_groups,
        "seconds": seconds,
        "size": int(coreset.n_points_),
        "peak_mb": peak_mb(),
        **extra,
    }


# -- the parent ---------------------------------------------------------------------------
def child(args):
    warnings.simplefilter("ignore")
    kind = args.child
    if kind == "inmem":
        out = run_inmem(args.N, args.algorithm, args.data_dir)
    elif kind == "reference":
        out = run_reference(args.N, args.data_dir)
    elif kind == "models":
        out = run_model(args.N, args.model)
    elif kind == "distributed":
        out = run_distributed(args.N, args.algorithm, args.data_dir)
    elif kind == "parquet":
        out = run_cli(args.N, args.data_dir)
    else:
        out = run_groups(args.N, args.n_groups, args.where)
    print("RESULT " + json.dumps(out))


def spawn(kind, N, data_dir, **options):
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.bench_scale",
        "--child",
        kind,
        "--N",
        str(N),
        "--data-dir",
        str(data_dir),
    ]
    for key, value in options.items():
        cmd += [f"--{key.replace('_', '-')}", str(value)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    raise RuntimeError(f"{kind} N={N} {options} failed:\n{done.stderr[-3000:]}")


def table(rows):
    lines = []
    inmem = [r for r in rows if r["mode"] == "inmem"]
    if inmem:
        lines.append(
            f"{'in memory':<14} {'N':>10} {'seconds':>8} {'x pass':>7} {'passes':>6} "
            f"{'coreset s':>9} {'points':>6} {'beyond X MB':>11} {'truth |z|':>9} "
            f"{'ref |z|':>8} {'floor':>6} {'sd ratios':>11} {'reaches':>7}"
        )
        for r in inmem:
            ref = r.get("reference", {})
            ratios = f"{ref['sd_ratio_min']:.2f}-{ref['sd_ratio_max']:.2f}" if ref else "-"
            lines.append(
                f"{r['algorithm'] + ' pipeline':<14} {r['N']:>10} {r['seconds']:>8.2f} "
                f"{r['numpy_passes']:>7.0f} {r['passes']:>6.2f} {r['coreset_seconds']:>9.2f} "
                f"{r['size']:>6} {r['peak_beyond_x_mb']:>11.0f} {r['truth_mean_abs_z']:>9.2f} "
                f"{ref.get('mean_abs_z', float('nan')):>8.3f} "
                f"{ref.get('floor', float('nan')):>6.3f} {ratios:>11} "
                f"{str(ref.get('reaches', '-')):>7}"
            )
        for r in inmem:
            stages = ", ".join(f"{k} {v:.2f}" for k, v in r["stage_seconds"].items() if v >= 0.005)
            lines.append(
                f"  {r['algorithm']} {r['N']}: one NumPy pass "
                f"{r['numpy_pass_seconds']:.3f} s; {stages}"
            )
    refs = [r for r in rows if r["mode"] == "reference"]
    for r in refs:
        lines.append(
            f"reference: MALA on all {r['N']} rows {r['seconds']:.0f} s, Monte Carlo floor "
            f"{r['floor']:.3f}, truth |z| {r['truth_mean_abs_z']:.2f}, "
            f"R-hat max {r['rhat_max']:.3f}"
        )
    models = [r for r in rows if r["mode"] == "models"]
    if models:
        logistic = next(
            (r for r in inmem if r["algorithm"] == "omp" and r["N"] == models[0]["N"]), None
        )
        lines.append(
            f"{'model (OMP)':<18} {'N':>10} {'seconds':>8} {'x logistic':>10} {'passes':>6} "
            f"{'points':>6} {'laplace_kl':>10}"
        )
        for r in models:
            ratio = r["seconds"] / logistic["seconds"] if logistic else float("nan")
            lines.append(
                f"{r['model']:<18} {r['N']:>10} {r['seconds']:>8.2f} {ratio:>10.2f} "
                f"{r['passes']:>6.2f} {r['size']:>6} {r['laplace_kl']:>10.2g}"
            )
    dist = [r for r in rows if r["mode"] == "distributed"]
    if dist:
        lines.append(
            f"{'dask (2 workers)':<18} {'N':>10} {'seconds':>8} {'us/row':>7} {'passes':>6} "
            f"{'client MB':>9} {'workers MB':>13} {'sum MB':>7} {'restart':>7} {'spill':>6} "
            f"{'points':>6} {'truth |z|':>9} {'ref |z|':>8} {'reaches':>7}"
        )
        for r in dist:
            ref = r.get("reference", {})
            workers = "/".join(f"{m:.0f}" for m in r["worker_peak_mb"])
            lines.append(
                f"{r['algorithm'] + ' pipeline':<18} {r['N']:>10} {r['seconds']:>8.1f} "
                f"{r['us_per_row']:>7.3f} {r['passes']:>6.2f} {r['client_peak_mb']:>9.0f} "
                f"{workers:>13} {r['client_peak_mb'] + sum(r['worker_peak_mb']):>7.0f} "
                f"{str(r['restarted']):>7} {r['spilled_bytes']:>6} {r['size']:>6} "
                f"{r['truth_mean_abs_z']:>9.2f} {ref.get('mean_abs_z', float('nan')):>8.3f} "
                f"{str(ref.get('reaches', '-')):>7}"
            )
        for algorithm in sorted({r["algorithm"] for r in dist}):
            mine = sorted((r for r in dist if r["algorithm"] == algorithm), key=lambda r: r["N"])
            small = next((r for r in mine if r["N"] == 10_000_000), mine[0])
            big = mine[-1]
            if big is not small:
                mem = lambda r: r["client_peak_mb"] + sum(r["worker_peak_mb"])  # noqa: E731
                lines.append(
                    f"  {algorithm}: from N={small['N']} to N={big['N']}: memory (client + "
                    f"workers) {mem(big) / mem(small):.2f}x, time per row "
                    f"{big['us_per_row'] / small['us_per_row']:.2f}x"
                )
    cli = [r for r in rows if r["mode"] == "parquet"]
    if cli:
        lines.append(
            f"{'skcoreset build':<18} {'N':>10} {'seconds':>8} {'us/row':>7} {'peak MB':>8} "
            f"{'points':>6}"
        )
        for r in cli:
            lines.append(
                f"{'parquet folder':<18} {r['N']:>10} {r['seconds']:>8.1f} {r['us_per_row']:>7.3f} "
                f"{r['peak_mb']:>8.0f} {r['size']:>6}"
            )
        small = next((r for r in cli if r["N"] == 10_000_000), cli[0])
        big = max(cli, key=lambda r: r["N"])
        if big is not small:
            lines.append(
                f"  from N={small['N']} to N={big['N']}: time per row "
                f"{big['us_per_row'] / small['us_per_row']:.2f}x, peak memory "
                f"{big['peak_mb'] / small['peak_mb']:.2f}x; bar: {big['progress_bar']}"
            )
    for r in rows:
        if r["mode"] == "groups":
            lines.append(
                f"groups ({r['where']}): {r['N']} rows in {r['groups']} groups, "
                f"{r['seconds']:.1f} s, {r['size']} points, peak {r['peak_mb']:.0f} MB"
                + (f", workers {r['worker_peak_mb']}" if "worker_peak_mb" in r else "")
            )
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    p.add_argument("--inmem", action="store_true", help="the pipelines on X in memory")
    p.add_argument("--models", action="store_true", help="the other models at the largest size")
    p.add_argument("--distributed", action="store_true", help="from Parquet on a LocalCluster")
    p.add_argument("--parquet", action="store_true", help="skcoreset build on the Parquet folder")
    p.add_argument("--groups", action="store_true", help="the multilevel pipeline")
    p.add_argument(
        "--groups-sizes", type=int, nargs=2, default=[1_000_000, 1000], metavar=("N", "GROUPS")
    )
    p.add_argument(
        "--reference-max",
        type=int,
        default=10_000_000,
        help="the largest N of MALA on all rows (default 10^7)",
    )
    p.add_argument(
        "--data-dir",
        default=None,
        help="where the Parquet folders and the references go (default: a temporary "
        "folder, removed at the end)",
    )
    p.add_argument("--keep-data", action="store_true", help="keep the Parquet folders")
    p.add_argument("--out", help="write the results as JSON here (and a .txt table beside)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--N", type=int, help=argparse.SUPPRESS)
    p.add_argument("--algorithm", help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    p.add_argument("--n-groups", type=int, help=argparse.SUPPRESS)
    p.add_argument("--where", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        return child(args)
    if not (args.inmem or args.models or args.distributed or args.parquet or args.groups):
        args.inmem = True
    own_dir = args.data_dir is None
    data_dir = Path(tempfile.mkdtemp(prefix="bench_scale_") if own_dir else args.data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    plan = []
    for N in args.sizes:
        needs_reference = (args.inmem or args.distributed) and N <= args.reference_max
        if needs_reference and load_reference(data_dir, N) is None:
            plan.append(("reference", N, {}))
        if args.inmem:
            plan += [("inmem", N, {"algorithm": a}) for a in ("omp", "qnc")]
    if args.models:
        largest = max(args.sizes)
        if not args.inmem:
            plan.append(("inmem", largest, {"algorithm": "omp"}))
        plan += [
            ("models", largest, {"model": m})
            for m in ("poisson", "negative_binomial", "student_t", "multinomial")
        ]
    for N in args.sizes:
        if args.distributed:
            plan += [("distributed", N, {"algorithm": a}) for a in ("omp", "qnc")]
        if args.parquet:
            plan.append(("parquet", N, {}))
    if args.groups:
        N, n_groups = args.groups_sizes
        plan += [("groups", N, {"n_groups": n_groups, "where": w}) for w in ("memory", "cluster")]
    rows = []
    try:
        for kind, N, options in plan:
            print(f"running {kind} N={N} {options} ...", flush=True)
            rows.append(spawn(kind, N, data_dir, **options))
            print("  " + json.dumps(rows[-1]), flush=True)
    finally:
        if not args.keep_data:
            for folder in data_dir.glob("bench_scale_parquet_*"):
                shutil.rmtree(folder, ignore_errors=True)
        if own_dir and not args.keep_data:
            shutil.rmtree(data_dir, ignore_errors=True)
    text = table(rows)
    print(text)
    if args.out:
        meta = {
            "machine": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average_at_end": os.getloadavg(),
            "argv": sys.argv[1:],
        }
        with open(args.out, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
        with open(args.out.removesuffix(".json") + ".txt", "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
