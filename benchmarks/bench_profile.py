"""Where the seconds of the default pipelines go, phase by phase, at 10^6 and 10^7 rows.

The judge of every change to the speed of a whole fit (issue: a posterior from a million rows
in one second). Synthetic logistic regression with D = 20 features (intercept added by the
model), float32 X in memory, as in ``bench_scale``. For each size and each pipeline,
``make_pipeline(OMPCoreset(), BayesianLogisticRegression())`` and the same with
``QuasiNewtonCoreset``, all settings default, in a fresh process:

1. a small fit (20 000 rows) compiles the kernels, so that the timed fits are warm;
2. a fit timed end to end (``first fit``: the first at this size in the process, so it also
   loads the threaded builds of the kernels from numba's cache, as a user's first fit does);
3. the same fit under :mod:`cProfile`, whose cumulative seconds of a few functions give the
   phases below (the profiler adds a little, mostly to the many small Python calls of OMP's
   active set: compare its ``profiled total`` with the others);
4. the same fit again, timed end to end (``repeat fit``).

Phases (the functions they time; none calls another of the list):

* ``moments``: the pass computing the data's moments, for the prior's scale (it validates
  every row);
* ``pilot``: the pilot's Laplace fit (its rows read at random);
* ``summaries``: the pass's second-order sums and spreads of every block (the fused kernel);
* ``data fit``: the data's Laplace fit from the sums and the sample (and any pass that
  confirms it, whose summaries it then holds);
* ``laplace``: Newton's passes over the blocks, where a fit still makes them (none here);
* ``projection pass``: the projection of every row, where a fit still makes it (none here);
* ``pool projection``: the projected vectors of the pooled rows;
* ``omp``: orthogonal matching pursuit among them (QNC: its start, several projections);
* ``start KLs``: QNC's Laplace fits of the candidate starts (the best is kept);
* ``kl steps``: QNC's quasi-Newton steps;
* ``mala``, ``diagnostics``: the Bayesian estimator's sampler and its R-hat and ESS;
* ``other``: the rest (validation, copies, pools, the coreset's own Laplace checks).

The accuracy columns compare the pipeline's posterior draws with the full data's Laplace fit,
which the coreset computed with the same prior (at this many rows the posterior is Gaussian
well within the draws' Monte Carlo error): the largest and the mean shift of a posterior mean
in posterior sd, the Monte Carlo floor of the mean shift (sqrt(2 / (pi ESS))), and the range
of the sd ratios.

Usage (from the repository root)::

    python -m benchmarks.bench_profile --out benchmarks/results/bench_profile.json
    python -m benchmarks.bench_profile --sizes 1000000 --algorithms omp
"""

import argparse
import cProfile
import json
import os
import platform
import pstats
import subprocess
import sys
import time
import warnings

import numpy as np

# phase -> (path suffix of the module, function name)
PHASES = {
    "moments": ("coreset/_blocks.py", "moments"),
    "pilot": ("models/_laplace.py", "pilot_of_rows"),
    "summaries": ("coreset/_taylor.py", "data_summary"),
    "data fit": ("coreset/_taylor.py", "fit_from_sums"),
    "laplace": ("models/_laplace.py", "laplace_of_all_rows"),
    "projection pass": ("projection/_projection.py", "summarize"),
    "pool projection": ("projection/_projection.py", "transform"),
    "omp": ("hilbert/_omp.py", "_omp"),
    "start KLs": ("coreset/_kl_coreset.py", "_laplace_kl"),
    "kl steps": ("coreset/_kl.py", "quasi_newton"),
    "mala": ("sampler/_mala.py", "sample_mala"),
    "diagnostics": ("sampler/_diagnostics.py", "diagnostics"),
}
ALGORITHMS = ("omp", "qnc")
WARM_ROWS = 20_000


def _pipeline(algorithm):
    from skcoreset import BayesianLogisticRegression, OMPCoreset, QuasiNewtonCoreset
    from skcoreset.pipeline import make_pipeline

    coreset = {"omp": OMPCoreset, "qnc": QuasiNewtonCoreset}[algorithm]
    return make_pipeline(coreset(random_state=0), BayesianLogisticRegression(random_state=0))


def phase_seconds(profile):
    """Cumulative seconds of each phase's function in a :class:`cProfile.Profile`."""
    stats = pstats.Stats(profile).stats
    seconds = dict.fromkeys(PHASES, 0.0)
    for (path, _, name), (_, _, _, cumulative, _) in stats.items():
        for phase, (suffix, function) in PHASES.items():
            if name == function and path.replace(os.sep, "/").endswith(suffix):
                seconds[phase] += cumulative
    return seconds


def accuracy(pipeline):
    """The posterior draws against the full data's Laplace fit (see the module docstring)."""
    laplace = pipeline[0].laplace_
    fit = pipeline[-1]
    draws = np.concatenate([fit.coef_samples_, fit.intercept_samples_[..., None]], axis=-1)
    flat = draws.reshape(-1, draws.shape[-1])
    sd = np.sqrt(np.diag(laplace.cov))
    shift = np.abs(flat.mean(axis=0) - laplace.mean) / sd
    ratio = flat.std(axis=0, ddof=1) / sd
    return {
        "max mean shift": float(shift.max()),
        "mean shift": float(shift.mean()),
        "shift floor": float(np.mean(np.sqrt(2 / (np.pi * fit.ess_)))),
        "sd ratio min": float(ratio.min()),
        "sd ratio max": float(ratio.max()),
        "coreset size": int(pipeline[0].n_points_),
    }


def worker(N, algorithm):
    """One configuration in this process: its JSON record on the last line of stdout."""
    from benchmarks.bench_scale import make_data

    warnings.simplefilter("ignore")  # the timed fits report their own checks below
    X, y = make_data(N)
    _pipeline(algorithm).fit(X[:WARM_ROWS], y[:WARM_ROWS])
    start = time.perf_counter()
    pipeline = _pipeline(algorithm).fit(X, y)
    total = time.perf_counter() - start
    profile = cProfile.Profile()
    start = time.perf_counter()
    profile.enable()
    _pipeline(algorithm).fit(X, y)
    profile.disable()
    profiled = time.perf_counter() - start
    start = time.perf_counter()
    _pipeline(algorithm).fit(X, y)
    repeat = time.perf_counter() - start
    phases = phase_seconds(profile)
    phases["other"] = profiled - sum(phases.values())
    record = {"N": N, "algorithm": algorithm, "first fit": total, "profiled total": profiled}
    record["passes"] = pipeline[0].fit_stats_["passes"]
    record["repeat fit"] = repeat
    record["phases"] = phases
    record.update(accuracy(pipeline))
    print(json.dumps(record))


def run_one(N, algorithm):
    cmd = [sys.executable, "-m", "benchmarks.bench_profile", "--worker", str(N), algorithm]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{N} {algorithm} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(records):
    names = [f"{r['algorithm']} {r['N']:.0e}".replace("+0", "") for r in records]
    lines = [f"{'seconds':<18}" + "".join(f"{n:>12}" for n in names)]
    for phase in [*PHASES, "other"]:
        lines.append(f"{phase:<18}" + "".join(f"{r['phases'][phase]:>12.2f}" for r in records))
    for key in ("profiled total", "first fit", "repeat fit"):
        lines.append(f"{key:<18}" + "".join(f"{r[key]:>12.2f}" for r in records))
    lines.append(f"{'coreset size':<18}" + "".join(f"{r['coreset size']:>12}" for r in records))
    for key, fmt in (
        ("max mean shift", ".3f"),
        ("mean shift", ".3f"),
        ("shift floor", ".3f"),
        ("sd ratio min", ".3f"),
        ("sd ratio max", ".3f"),
    ):
        lines.append(f"{key:<18}" + "".join(f"{r[key]:>12{fmt}}" for r in records))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--algorithms", nargs="+", choices=ALGORITHMS, default=list(ALGORITHMS))
    parser.add_argument("--out", default=None, help="JSON file for the results")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(int(args.worker[0]), args.worker[1])
        return
    records = []
    for N in args.sizes:
        for algorithm in args.algorithms:
            records.append(run_one(N, algorithm))
            phases = ", ".join(f"{k} {v:.2f}" for k, v in records[-1]["phases"].items())
            print(f"{algorithm} at N={N}: {records[-1]['repeat fit']:.2f} s ({phases})", flush=True)
    text = table(records)
    print(text)
    if args.out:
        meta = {"machine": platform.machine(), "cpus": os.cpu_count(), "python": sys.version}
        with open(args.out, "w") as f:
            json.dump({"meta": meta, "records": records}, f, indent=1)
        with open(os.path.splitext(args.out)[0] + ".txt", "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
