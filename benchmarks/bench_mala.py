"""Benchmark of the numba MALA sampler and of the coreset + MALA pipeline.

Part 1 (sampler): synthetic logistic regression with M rows and D features, preconditioned
by the Laplace covariance. For each (M, D): kept draws per second and bulk ESS per second of
``skcoreset.sampler.sample_mala`` (4 chains in one compiled call), beside the plain NumPy MALA
of tests/oracles/mala_oracle.py (one chain, same number of steps per chain) in the same run;
"ratio" = oracle seconds per chain-step / numba seconds per chain-step.

Part 2 (pipeline): synthetic logistic regression with N rows. A coreset of M points
(``GIGACoreset`` and ``OMPCoreset`` by default, ``--coresets``) followed by
``BayesianLogisticRegression`` on the weighted coreset, against
``BayesianLogisticRegression`` on all N rows with the same number of draws. Reports the total
seconds of each and the errors of the coreset posterior relative to the full one:

* mean error: max_k |mean_c,k - mean_f,k| / sd_f,k (in posterior standard deviations);
* cov error: ||L^-1 (S_c - S_f) L^-T||_F / sqrt(P) with S_f = L L^T (whitened, RMS per dim).

The Monte Carlo reference is the same error measured between two halves of the full run's
chains, divided by 2 (each half has half the ESS, and the difference of two independent
estimates has twice the variance of one: sd(diff) = 2 x sd(full estimate)).

Usage::

    python benchmarks/bench_mala.py --out bench_mala.json
    python benchmarks/bench_mala.py --quick
"""

import argparse
import json
import pathlib
import platform
import sys
import time
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from oracles.mala_oracle import glm_log_posterior, mala_oracle  # noqa: E402

from skcoreset.linear_model import BayesianLogisticRegression  # noqa: E402
from skcoreset.models import _glm_kernels as GK  # noqa: E402
from skcoreset.models import get_model, laplace_approximation  # noqa: E402
from skcoreset.sampler import ess_bulk, sample_mala  # noqa: E402


def logistic_data(N, D, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D))
    theta = rng.standard_normal(D) / np.sqrt(D)
    y = (rng.random(N) < 1.0 / (1.0 + np.exp(-(X @ theta + 0.2)))).astype(np.float64)
    return X, y


def bench_sampler(M, D, n_samples, n_warmup, n_chains, oracle_steps):
    X, y = logistic_data(M, D, seed=M + D)
    model = get_model("logistic")
    Xd = model.design(X)
    lap = laplace_approximation(model, Xd, y, design=True)
    w = np.ones(M)
    rng = np.random.default_rng(0)
    init = lap.mean + rng.standard_normal((n_chains, Xd.shape[1])) @ lap.chol.T
    # Compile outside the timing (cache=True makes this a load in later processes).
    sample_mala(GK.LOGISTIC, Xd, y, w, init, precond_chol=lap.chol, n_samples=4, n_warmup=4)
    t = time.perf_counter()
    res = sample_mala(
        GK.LOGISTIC,
        Xd,
        y,
        w,
        init,
        precond_chol=lap.chol,
        n_samples=n_samples,
        n_warmup=n_warmup,
        random_state=0,
    )
    sec = time.perf_counter() - t
    ess = ess_bulk(res.draws).min()
    steps = n_chains * (n_samples + n_warmup)

    f = glm_log_posterior("logistic", Xd, y, w, 1.0)
    o_warm = min(n_warmup, oracle_steps // 3)
    o_samp = oracle_steps - o_warm
    t = time.perf_counter()
    o_draws, _, _ = mala_oracle(f, init[0], o_samp, o_warm, A=lap.cov, seed=0)
    o_sec = time.perf_counter() - t
    o_ess = ess_bulk(o_draws[None]).min()
    return {
        "M": M,
        "D": D,
        "chains": n_chains,
        "kept_draws": n_chains * n_samples,
        "seconds": sec,
        "draws_per_s": n_chains * n_samples / sec,
        "ess_min": float(ess),
        "ess_per_s": float(ess / sec),
        "accept": float(res.acceptance_rate.mean()),
        "oracle_steps": oracle_steps,
        "oracle_seconds": o_sec,
        "oracle_draws_per_s": o_samp / o_sec,
        "oracle_ess_per_s": float(o_ess / o_sec),
        "ratio_per_step": (o_sec / oracle_steps) / (sec / steps),
    }


def _moments(samples):
    flat = samples.reshape(-1, samples.shape[-1])
    return flat.mean(0), np.cov(flat.T)


def _errors(mean_c, cov_c, mean_f, cov_f):
    sd = np.sqrt(np.diag(cov_f))
    L = np.linalg.cholesky(cov_f)
    Li = np.linalg.inv(L)
    W = Li @ (cov_c - cov_f) @ Li.T
    return float(np.max(np.abs(mean_c - mean_f) / sd)), float(np.linalg.norm(W) / np.sqrt(len(sd)))


def _all_draws(est):
    return np.concatenate([est.coef_samples_, est.intercept_samples_[..., None]], axis=-1)


CORESETS = {"giga": "GIGACoreset", "omp": "OMPCoreset", "iht": "IHTCoreset"}


def bench_pipeline(
    N, D, M, n_samples, n_warmup, n_chains, n_projections, dtype, methods, laplace_subsample
):
    """Coreset (each of ``methods``) + MALA on it, against MALA on all N rows."""
    from skcoreset import coreset as coresets

    X, y = logistic_data(N, D, seed=1)
    kw = dict(n_samples=n_samples, n_warmup=n_warmup, n_chains=n_chains, random_state=0)
    ckw = dict(
        model="logistic",
        n_projections=n_projections,
        dtype=dtype,
        laplace_subsample=laplace_subsample,
        random_state=0,
    )
    # Warm numba caches so that neither side pays compilation.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        BayesianLogisticRegression(n_samples=4, n_warmup=4).fit(X[:200], y[:200])
        for m in methods:
            getattr(coresets, CORESETS[m])(n_points=20, model="logistic", random_state=0).fit(
                X[:2000], y[:2000]
            )

    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        full = BayesianLogisticRegression(**kw).fit(X, y)
    full_seconds = time.perf_counter() - t0
    df = _all_draws(full)
    mf, cf = _moments(df)
    h = n_chains // 2
    ma, ca = _moments(df[:h])
    mb, cb = _moments(df[h:])
    mc_mean, mc_cov = _errors(ma, ca, mb, cb)
    rows = []
    for m in methods:
        t0 = time.perf_counter()
        cs = getattr(coresets, CORESETS[m])(n_points=M, **ckw).fit(X, y)
        t1 = time.perf_counter()
        idx, w = cs.sample_indices_, cs.sample_weight_
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            core = BayesianLogisticRegression(**kw).fit(X[idx], y[idx], sample_weight=w)
        t2 = time.perf_counter()
        mc, cc = _moments(_all_draws(core))
        mean_err, cov_err = _errors(mc, cc, mf, cf)
        rows.append(
            {
                "method": m,
                "N": N,
                "D": D,
                "M": M,
                "coreset_size": int(len(idx)),
                "draws": n_chains * n_samples,
                "coreset_seconds": t1 - t0,
                "coreset_mala_seconds": t2 - t1,
                "coreset_total_seconds": t2 - t0,
                "full_seconds": full_seconds,
                "speedup": full_seconds / (t2 - t0),
                "mean_err_sd": mean_err,
                "cov_err": cov_err,
                "mc_mean_err_sd": mc_mean / 2,
                "mc_cov_err": mc_cov / 2,
                "mean_err_over_mc": mean_err / (mc_mean / 2),
                "cov_err_over_mc": cov_err / (mc_cov / 2),
                "full_ess_min": float(full.ess_.min()),
                "full_rhat_max": float(full.rhat_.max()),
                "coreset_ess_min": float(core.ess_.min()),
                "coreset_rhat_max": float(core.rhat_.max()),
                "hilbert_error": float(getattr(cs, "hilbert_error_", np.nan)),
                "iterations": int(getattr(cs, "n_iter_", -1)),
                "stop_reason": cs.stop_reason_,
                "n_projections": n_projections,
                "projection_dtype": dtype,
            }
        )
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    p.add_argument("--out", type=pathlib.Path, default=None, help="write results as JSON")
    p.add_argument("--pipeline-n", type=int, default=None, help="N of the pipeline problem")
    p.add_argument("--skip-pipeline", action="store_true")
    p.add_argument(
        "--coresets",
        nargs="+",
        default=["giga", "omp"],
        choices=sorted(CORESETS),
        help="coreset algorithms of the pipeline part",
    )
    p.add_argument(
        "--projections",
        type=int,
        default=100,
        help="coreset n_projections (the N x J projection is held in memory)",
    )
    p.add_argument(
        "--dtype",
        default="float32",
        choices=["float32", "float64"],
        help="storage of the projection",
    )
    p.add_argument(
        "--laplace-subsample",
        type=int,
        default=100_000,
        help="rows of the Laplace fit behind the projection",
    )
    args = p.parse_args(argv)

    if args.quick:
        sizes_m, sizes_d = [100, 1000], [10]
        n_samples, n_warmup, oracle_steps = 500, 200, 700
        pipe_n, pipe_samples, pipe_warmup = args.pipeline_n or 100_000, 500, 300
    else:
        sizes_m, sizes_d = [100, 1000, 10_000], [10, 50]
        n_samples, n_warmup, oracle_steps = 1000, 500, 1500
        pipe_n, pipe_samples, pipe_warmup = args.pipeline_n or 1_000_000, 1000, 500

    results = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "sampler": [],
        "pipeline": None,
    }
    print(
        f"{'M':>7} {'D':>3} {'draws/s':>10} {'ESS/s':>9} {'acc':>5} "
        f"{'oracle draws/s':>14} {'oracle ESS/s':>12} {'ratio':>7}"
    )
    for D in sizes_d:
        for M in sizes_m:
            r = bench_sampler(M, D, n_samples, n_warmup, 4, oracle_steps)
            results["sampler"].append(r)
            print(
                f"{M:>7} {D:>3} {r['draws_per_s']:>10.0f} {r['ess_per_s']:>9.0f} "
                f"{r['accept']:>5.2f} {r['oracle_draws_per_s']:>14.0f} "
                f"{r['oracle_ess_per_s']:>12.0f} {r['ratio_per_step']:>6.1f}x",
                flush=True,
            )

    if not args.skip_pipeline:
        rows = bench_pipeline(
            pipe_n,
            10,
            500,
            pipe_samples,
            pipe_warmup,
            4,
            args.projections,
            args.dtype,
            args.coresets,
            args.laplace_subsample,
        )
        results["pipeline"] = rows
        r0 = rows[0]
        print(
            f"\nPipeline: logistic, N = {r0['N']:,}, D = {r0['D']}, M = {r0['M']}, "
            f"{r0['draws']} draws each; full-data MALA {r0['full_seconds']:.1f} s "
            f"(min ESS {r0['full_ess_min']:.0f}, max R-hat {r0['full_rhat_max']:.4f}); "
            f"full-chain MC error: mean {r0['mc_mean_err_sd']:.3f} sd, cov {r0['mc_cov_err']:.3f}"
        )
        print(
            f"{'coreset':>8} {'size':>5} {'Hilbert err':>11} {'iters':>6} {'build s':>8} "
            f"{'MALA s':>7} {'speed-up':>9} {'mean err/sd':>11} {'x MC':>6} {'cov err':>8} "
            f"{'x MC':>6}"
        )
        for r in rows:
            print(
                f"{r['method']:>8} {r['coreset_size']:>5} {r['hilbert_error']:>11.3g} "
                f"{r['iterations']:>6} {r['coreset_seconds']:>8.1f} "
                f"{r['coreset_mala_seconds']:>7.2f} {r['speedup']:>8.1f}x "
                f"{r['mean_err_sd']:>11.3f} {r['mean_err_over_mc']:>6.1f} {r['cov_err']:>8.3f} "
                f"{r['cov_err_over_mc']:>6.1f}"
            )
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
        print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
