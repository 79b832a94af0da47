"""KL coreset methods on the closed-form Gaussian problem of the IHT paper.

x_n ~ N(1, I_d) in d = 200 dimensions, N = 600 points, prior theta ~ N(0, I): every coreset
posterior is Gaussian, so draws are exact and both KL directions are closed-form
(tests/oracles/gaussian_kl_oracle.py). Per coreset size: reverse KL(pi_w || pi) and forward
KL(pi || pi_w), medians over trials, and seconds, for uniform sampling, GIGA and A-IHT II (on
the exact d + 1 dimensional projection, as examples/plot_iht_gaussian.py), SparseVI,
quasi-Newton (QNC) and Coreset MCMC (the cores of skcoreset.coreset._kl, with exact draws in
place of MALA). QNC and Coreset MCMC start from the uniform coreset of the same trial, as in
their papers; QNC/OMP and MCMC/OMP start from OMP's coreset on the same projection, as the
estimators do by default (their seconds include OMP's).

Usage::

    python -m benchmarks.bench_kl_gaussian --out bench_kl_gaussian.json
    python -m benchmarks.bench_kl_gaussian --quick
"""

import argparse
import json
import pathlib
import platform
import time

import numpy as np

from skcoreset import hilbert
from skcoreset.coreset import _kl
from tests.oracles import gaussian_kl_oracle as G

METHODS = [
    "uniform",
    "GIGA",
    "A-IHT II",
    "OMP",
    "SparseVI",
    "QNC",
    "CoresetMCMC",
    "QNC/OMP",
    "MCMC/OMP",
]


def exact_projection(x):
    """The d + 1 dimensional vectors whose inner products are the L2(pi) inner products of
    the centred log-likelihoods (examples/plot_iht_gaussian.py)."""
    mean, var = G.posterior(x, np.ones(x.shape[0]))
    common = np.full((x.shape[0], 1), var * np.sqrt(x.shape[1] / 2.0))
    return np.hstack([np.sqrt(var) * (x - mean), common])


def run_trial(x, M, seed):
    """``{method: (idx, w, seconds)}`` for one data set and size."""
    N = x.shape[0]
    out = {}
    V = exact_projection(x)
    t = time.perf_counter()
    w = hilbert.uniform(V, M, random_state=seed)
    idx = np.flatnonzero(w)
    out["uniform"] = (idx, w[idx], time.perf_counter() - t)
    for name, build in [
        ("GIGA", lambda: hilbert.giga(V, M)),
        ("A-IHT II", lambda: hilbert.iht(V, M, debias=True)),
        ("OMP", lambda: hilbert.omp(V, M)),
    ]:
        t = time.perf_counter()
        w = build()
        keep = np.flatnonzero(w)
        out[name] = (keep, w[keep], time.perf_counter() - t)
    w0 = np.full(idx.shape[0], N / idx.shape[0])
    t = time.perf_counter()
    sv_idx, sv_w, _, _ = _kl.sparse_vi(G.GaussianProblem(x, seed), N, M, max_step=N / M)
    out["SparseVI"] = (sv_idx, sv_w, time.perf_counter() - t)
    t = time.perf_counter()
    w, _, _ = _kl.quasi_newton(G.GaussianProblem(x, seed + 1), idx, w0, max_step=N / M)
    out["QNC"] = (idx, w, time.perf_counter() - t)
    t = time.perf_counter()
    w, _, _ = _kl.coreset_mcmc(
        G.GaussianProblem(x, seed + 2), idx, w0, n_train=2000, learning_rate=0.1
    )
    out["CoresetMCMC"] = (idx, w, time.perf_counter() - t)
    # the estimators' default start: OMP's coreset (its seconds included)
    omp_idx, omp_w, omp_seconds = out["OMP"]
    t = time.perf_counter()
    w, _, _ = _kl.quasi_newton(G.GaussianProblem(x, seed + 3), omp_idx, omp_w, max_step=N / M)
    out["QNC/OMP"] = (omp_idx, w, omp_seconds + time.perf_counter() - t)
    t = time.perf_counter()
    w, _, _ = _kl.coreset_mcmc(
        G.GaussianProblem(x, seed + 4), omp_idx, omp_w, n_train=2000, learning_rate=0.02
    )
    out["MCMC/OMP"] = (omp_idx, w, omp_seconds + time.perf_counter() - t)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dim", type=int, default=200)
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 100, 200, 300])
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="d = 50, N = 150, one trial")
    ap.add_argument("--out", type=str, default=None, help="write the results as JSON here")
    args = ap.parse_args(argv)
    if args.quick:
        args.dim, args.n, args.trials = 50, 150, 1
        args.sizes = [s for s in (5, 10, 25, 50, 75)]
    rev = {m: np.zeros((args.trials, len(args.sizes))) for m in METHODS}
    fwd = {m: np.zeros_like(rev[m]) for m in METHODS}
    sec = {m: np.zeros_like(rev[m]) for m in METHODS}
    for trial in range(args.trials):
        x = np.random.default_rng(trial).normal(1.0, 1.0, size=(args.n, args.dim))
        for k, M in enumerate(args.sizes):
            for name, (idx, w, seconds) in run_trial(x, M, 100 * trial + k).items():
                rev[name][trial, k] = G.reverse_kl(x[idx], w, x)
                fwd[name][trial, k] = G.forward_kl(x[idx], w, x)
                sec[name][trial, k] = seconds
    rows = []
    for k, M in enumerate(args.sizes):
        for m in METHODS:
            rows.append(
                {
                    "size": M,
                    "method": m,
                    "reverse_kl": float(np.median(rev[m][:, k])),
                    "forward_kl": float(np.median(fwd[m][:, k])),
                    "seconds": float(np.median(sec[m][:, k])),
                }
            )
    print(f"Gaussian, d = {args.dim}, N = {args.n}, exact draws, medians of {args.trials} trials")
    for key, title in [
        ("reverse_kl", "reverse KL(pi_w || pi)"),
        ("forward_kl", "forward KL(pi || pi_w)"),
        ("seconds", "seconds"),
    ]:
        print(title)
        print("     M" + "".join(f"{m:>13}" for m in METHODS))
        for M in args.sizes:
            vals = {r["method"]: r[key] for r in rows if r["size"] == M}
            print(f"{M:6d}" + "".join(f"{vals[m]:13.4g}" for m in METHODS))
    if args.out:
        meta = {
            "dim": args.dim,
            "n": args.n,
            "trials": args.trials,
            "python": platform.python_version(),
            "machine": platform.machine(),
        }
        pathlib.Path(args.out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    return rows


if __name__ == "__main__":
    main()
