"""Benchmark of the numba MALA sampler (and, optionally, of the coreset + MALA pipeline).

Part 1 (sampler, the default): synthetic logistic regression with M rows and D features
(intercept included), preconditioned by the Laplace covariance, 4 chains. For each (M, D), in
the same process and alternating repeats: kept draws per second of
``skcoreset.sampler.sample_mala`` and of the chain-batched NumPy MALA
``tests/oracles/mala_oracle.py::mala_chains`` (all chains advanced together: one
``X @ Theta^T``, the likelihood elementwise on the (M, C) array, one ``(w d)^T @ X``, BLAS,
preallocated buffers), with the same target, preconditioner, dual averaging and number of warm-up
and kept steps. "ratio" = NumPy seconds / numba seconds (best of ``--repeat`` runs each).
Both consume the same random numbers, so their chains coincide up to rounding; the maximum
difference of the draws is reported as a check. "fit ratio" = NumPy seconds / seconds of the
Bayesian estimator's ``fit`` (what users call) with as many chains and steps; "diag" = the
share of that fit taken by its R-hat and ESS (``skcoreset.sampler.diagnostics`` timed again
on the fit's draws). A Poisson row is added at M = 1000, D = 10.
"bound" is the roofline of the comparison: every MALA step needs ``X theta'`` and ``X^T d``,
2 M D multiply-adds per chain, so no sampler can beat the NumPy one by more than its seconds
over those flops at the core's matrix-product peak (measured here, same thread count).

Part 2 (pipeline, ``--pipeline``, minutes): synthetic logistic regression with N rows. A
coreset of M points (``GIGACoreset`` and ``OMPCoreset`` by default, ``--coresets``) followed
by ``BayesianLogisticRegression`` on the weighted coreset, against
``BayesianLogisticRegression`` on all N rows with the same number of draws. Reports the total
seconds of each and the errors of the coreset posterior relative to the full one:

* mean error: max_k |mean_c,k - mean_f,k| / sd_f,k (in posterior standard deviations);
* cov error: ||L^-1 (S_c - S_f) L^-T||_F / sqrt(P) with S_f = L L^T (whitened, RMS per dim).

The Monte Carlo reference is the same error measured between two halves of the full run's
chains, divided by 2 (each half has half the ESS, and the difference of two independent
estimates has twice the variance of one: sd(diff) = 2 x sd(full estimate)).

Usage::

    python -m benchmarks.bench_mala --out benchmarks/results/bench_mala.json
    python -m benchmarks.bench_mala --quick
    python -m benchmarks.bench_mala --pipeline
"""

import argparse
import json
import pathlib
import platform
import time
import warnings

import numba
import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from skcoreset.linear_model import BayesianLogisticRegression, BayesianPoissonRegression
from skcoreset.models import get_model, laplace_approximation
from skcoreset.sampler import diagnostics, sample_mala
from tests.oracles.mala_oracle import mala_chains

ESTIMATORS = {"logistic": BayesianLogisticRegression, "poisson": BayesianPoissonRegression}


def logistic_data(N, D, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D))
    theta = rng.standard_normal(D) / np.sqrt(D)
    y = (rng.random(N) < 1.0 / (1.0 + np.exp(-(X @ theta + 0.2)))).astype(np.float64)
    return X, y


def poisson_data(N, D, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D)) / np.sqrt(D)
    y = rng.poisson(np.exp(X @ rng.standard_normal(D) * 0.5 + 0.5)).astype(np.float64)
    return X, y


def bench_sampler(name, M, D, n_samples, n_warmup, n_chains, repeat):
    """Seconds of the numba and the NumPy MALA on one problem (best of ``repeat`` each)."""
    X, y = (logistic_data if name == "logistic" else poisson_data)(M, D - 1, seed=M + D)
    model = get_model(name)
    Xd = model.design(X)
    lap = laplace_approximation(model, Xd, y, design=True)
    w = np.ones(M)
    rng = np.random.default_rng(0)
    init = lap.mean + rng.standard_normal((n_chains, D)) @ lap.chol.T
    kw = dict(precond_chol=lap.chol, n_samples=n_samples, n_warmup=n_warmup)
    # Compile outside the timing (cache=True makes this a load in later processes).
    sample_mala(model, Xd, y, w, init, precond_chol=lap.chol, n_samples=4, n_warmup=4)
    # What users call: the estimator's fit, with its Laplace start, its checks and its
    # diagnostics (R-hat, ESS), the same number of chains and steps, the rest at defaults.
    estimator = ESTIMATORS[name](n_samples=n_samples, n_warmup=n_warmup, n_chains=n_chains)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a convergence warning says nothing about speed
        estimator.set_params(n_samples=4, n_warmup=4).fit(X, y)  # compile (or load)
        estimator.set_params(n_samples=n_samples, n_warmup=n_warmup)
    sec, np_sec, fit_sec, diag_sec = np.inf, np.inf, np.inf, np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        res = sample_mala(model, Xd, y, w, init, random_state=0, **kw)
        sec = min(sec, time.perf_counter() - t)
        t = time.perf_counter()
        ref = mala_chains(name, Xd, y, w, init, seed=0, **kw)
        np_sec = min(np_sec, time.perf_counter() - t)
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimator.fit(X, y)
        fit_sec = min(fit_sec, time.perf_counter() - t)
        # the fit's R-hat and ESS, again on its draws: their share of the fit
        t = time.perf_counter()
        diagnostics(estimator._theta_samples)
        diag_sec = min(diag_sec, time.perf_counter() - t)
    kept = n_chains * n_samples
    return {
        "model": name,
        "M": M,
        "D": D,
        "chains": n_chains,
        "warmup_steps": n_warmup,
        "kept_draws": kept,
        "numba_seconds": sec,
        "numba_draws_per_s": kept / sec,
        "numpy_seconds": np_sec,
        "numpy_draws_per_s": kept / np_sec,
        "ratio": np_sec / sec,
        "fit_seconds": fit_sec,
        "fit_ratio": np_sec / fit_sec,
        "diagnostics_seconds": diag_sec,
        "diagnostics_share": diag_sec / fit_sec,
        "accept": float(res.acceptance_rate.mean()),
        "max_draw_difference": float(np.max(np.abs(res.draws - ref[0]))),
    }


def peak_gflops(repeat=3, n=1500):
    """The core's dense floating-point rate: GFLOP/s of an n x n float64 matrix product
    (BLAS, best of ``repeat``), under the caller's thread limits."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    a @ b
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    return 2.0 * n**3 / best / 1e9


def roofline(r, peak):
    """What the two (M x D) products of every MALA step cost at the core's peak rate.

    A MALA step on a GLM needs the linear predictors ``X theta'`` of its proposal and the
    gradient ``X^T d``: 2 M D multiply-adds per chain and step that no implementation avoids.
    ``bound`` = NumPy seconds / (those flops at ``peak``): the speed-up over the NumPy MALA of
    a sampler whose products ran at the BLAS peak and whose exp/log and bookkeeping were
    free. No MALA on this core can exceed it.
    """
    steps = r["chains"] * (r["warmup_steps"] + r["kept_draws"] // r["chains"])
    flops = 4.0 * r["M"] * r["D"] * steps
    return {
        "peak_gflops": peak,
        "numba_gflops": flops / r["numba_seconds"] / 1e9,
        "numpy_gflops": flops / r["numpy_seconds"] / 1e9,
        "bound": r["numpy_seconds"] / (flops / (peak * 1e9)),
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
    p.add_argument("--repeat", type=int, default=None, help="timed runs of each sampler")
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="threads of both numba and the BLAS (1: per-core speed, least noisy on a shared "
        "machine; numba's threads run only the fixed-step phase, from M D >= 10000)",
    )
    p.add_argument(
        "--pipeline", action="store_true", help="also run Part 2 (N = 10^6 pipeline, minutes)"
    )
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
    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    threadpool_limits(args.threads)

    if args.quick:
        sizes_m, sizes_d, n_samples, n_warmup, repeat = [100, 1000], [10], 300, 200, 1
        pipe_n, pipe_samples, pipe_warmup = args.pipeline_n or 100_000, 500, 300
    else:
        sizes_m, sizes_d, n_samples, n_warmup, repeat = [100, 1000, 10_000], [10, 50], 1000, 500, 3
        pipe_n, pipe_samples, pipe_warmup = args.pipeline_n or 1_000_000, 1000, 500
    repeat = args.repeat or repeat

    results = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numba_threads": numba.get_num_threads(),
        "blas": threadpool_info(),
        "sampler": [],
        "pipeline": None,
    }
    lines = []

    def emit(line):
        lines.append(line)
        print(line, flush=True)

    peak = peak_gflops()
    results["peak_gflops"] = peak
    emit(
        f"{'model':>8} {'M':>6} {'D':>3} {'numba draws/s':>13} {'NumPy draws/s':>13} "
        f"{'ratio':>7} {'fit ratio':>9} {'diag':>5} {'bound':>7} {'numba GF/s':>10} {'acc':>5} "
        f"{'max |diff|':>10}"
    )
    cases = [("logistic", M, D) for D in sizes_d for M in sizes_m] + [("poisson", 1000, 10)]
    for name, M, D in cases:
        r = bench_sampler(name, M, D, n_samples, n_warmup, 4, repeat)
        r.update(roofline(r, peak))
        results["sampler"].append(r)
        emit(
            f"{name:>8} {M:>6} {D:>3} {r['numba_draws_per_s']:>13.0f} "
            f"{r['numpy_draws_per_s']:>13.0f} {r['ratio']:>6.1f}x {r['fit_ratio']:>8.1f}x "
            f"{r['diagnostics_share']:>5.0%} "
            f"{r['bound']:>6.1f}x "
            f"{r['numba_gflops']:>10.1f} {r['accept']:>5.2f} {r['max_draw_difference']:>10.1e}"
        )
    header = (
        f"4 chains, {n_warmup} warm-up + {n_samples} kept steps each, best of {repeat}; "
        f"numba and BLAS threads: {args.threads}; D includes the intercept\n"
        f"bound: the ratio if the two M x D products of each step ran at this core's "
        f"matrix-product peak ({peak:.1f} GFLOP/s, float64) and all else were free; "
        f"numba GF/s: the rate of those products in the numba sampler\n"
        f"fit ratio: NumPy MALA seconds / seconds of the Bayesian estimator's fit with as many "
        f"chains and steps (what users call: its Laplace start, checks and diagnostics included)\n"
        f"diag: the fit's R-hat and ESS (skcoreset.sampler.diagnostics on its draws, best of "
        f"{repeat}) as a share of the fit"
    )
    emit(header)

    if args.pipeline:
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
        emit(
            f"\nPipeline: logistic, N = {r0['N']:,}, D = {r0['D']}, M = {r0['M']}, "
            f"{r0['draws']} draws each; full-data MALA {r0['full_seconds']:.1f} s "
            f"(min ESS {r0['full_ess_min']:.0f}, max R-hat {r0['full_rhat_max']:.4f}); "
            f"full-chain MC error: mean {r0['mc_mean_err_sd']:.3f} sd, cov {r0['mc_cov_err']:.3f}"
        )
        emit(
            f"{'coreset':>8} {'size':>5} {'Hilbert err':>11} {'iters':>6} {'build s':>8} "
            f"{'MALA s':>7} {'speed-up':>9} {'mean err/sd':>11} {'x MC':>6} {'cov err':>8} "
            f"{'x MC':>6}"
        )
        for r in rows:
            emit(
                f"{r['method']:>8} {r['coreset_size']:>5} {r['hilbert_error']:>11.3g} "
                f"{r['iterations']:>6} {r['coreset_seconds']:>8.1f} "
                f"{r['coreset_mala_seconds']:>7.2f} {r['speedup']:>8.1f}x "
                f"{r['mean_err_sd']:>11.3f} {r['mean_err_over_mc']:>6.1f} {r['cov_err']:>8.3f} "
                f"{r['cov_err_over_mc']:>6.1f}"
            )
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
        # the table beside the JSON, same name with .txt
        args.out.with_suffix(".txt").write_text("\n".join(lines) + "\n")
        print(f"\nwrote {args.out} and {args.out.with_suffix('.txt')}")


if __name__ == "__main__":
    main()
