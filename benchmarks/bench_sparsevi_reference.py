"""SparseVI against its reference implementation on Phishing (logistic), M = 10 and 50.

The reference is trevorcampbell/bayesian-coresets (MIT licence, Copyright 2017 Trevor
Campbell), run from a checkout given with ``--reference``: its ``SparseVICoreset`` with the
settings of its ``examples/logistic_poisson_regression/main.py`` (500 projection draws from
the Laplace fit of the coreset posterior, 100 optimisation steps per point, step 1 / (1 + i),
no subsampling), its own logistic log-likelihood code, and the example's Laplace sampler
(``get_laplace``, copied below). Deviations, so that both coreset posteriors are measured the
same way: skcoreset's prior (the example's is N(0, I)), features standardised per column
(the example whitens them), and the fidelity of ``benchmarks/bench_posterior.py`` (MALA on
each coreset and on all rows, KL between Gaussian moment fits). Construction seconds of both
are timed in one process, alternating.

Usage::

    git clone https://github.com/trevorcampbell/bayesian-coresets /path/to/bayesian-coresets
    python -m benchmarks.bench_sparsevi_reference --reference /path/to/bayesian-coresets \
        --out benchmarks/results/bench_sparsevi_reference.json

(about 20 minutes: the reference takes minutes per coreset; ``--smoke`` for a tiny check).
Without ``--reference`` only skcoreset's side runs: the reference is deterministic (two runs
gave its KL divergences to every digit), so its figures from an earlier run still stand.
"""

# The reference draws from NumPy's global generator, so this script seeds and keeps it.
# ruff: noqa: NPY002

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
from scipy.linalg import solve_triangular
from scipy.optimize import minimize

from benchmarks.bench_posterior import ROOT, posterior_draws
from skcoreset.coreset import SparseVICoreset, UniformCoreset
from skcoreset.metrics import gaussian_kl, moment_fit
from skcoreset.models import get_model

bc = model = None  # the reference's package and model code, imported by load_reference


def load_reference(path):
    """Import ``bayesiancoresets`` and the example's ``model_lr`` from a checkout."""
    global bc, model
    sys.path[:0] = [str(path), os.path.join(str(path), "examples", "common")]
    import bayesiancoresets
    import model_lr

    bc, model = bayesiancoresets, model_lr


# --- Deviation: the reference's model_lr hard-codes a N(0, I) prior; replace the prior terms by
# N(0, diag(s^2)) with s = skcoreset's prior (intercept last), so both coreset posteriors share
# the prior of the fidelity measurement. The likelihood functions stay the reference's own.
def install_prior(s):
    s2 = s**2

    def log_prior(th):
        th = np.atleast_2d(th)
        return -0.5 * np.log(2.0 * np.pi * s2).sum() - 0.5 * (th**2 / s2).sum(axis=1)

    def grad_th_log_prior(th):
        th = np.atleast_2d(th)
        return -th / s2

    def hess_th_log_prior(th):
        th = np.atleast_2d(th)
        return np.tile(-np.diag(1.0 / s2), (th.shape[0], 1, 1))

    def diag_hess_th_log_prior(th):
        th = np.atleast_2d(th)
        return np.tile(-1.0 / s2, (th.shape[0], 1))

    model.log_prior = log_prior
    model.grad_th_log_prior = grad_th_log_prior
    model.hess_th_log_prior = hess_th_log_prior
    model.diag_hess_th_log_prior = diag_hess_th_log_prior


# From examples/logistic_poisson_regression/main.py of the reference (MIT licence, Copyright
# 2017 Trevor Campbell), unchanged but for formatting.
def get_laplace(wts, Z, mu0, model, diag=False):
    trials = 10
    Zw = Z[wts > 0, :]
    ww = wts[wts > 0]
    while True:
        try:
            res = minimize(
                lambda mu: -model.log_joint(Zw, mu, ww)[0],
                mu0,
                jac=lambda mu: -model.grad_th_log_joint(Zw, mu, ww)[0, :],
            )
            mu = res.x
        except Exception as e:
            print(e)
            mu0 = mu0.copy()
            mu0 += np.sqrt((mu0**2).sum()) * 0.1 * np.random.randn(mu0.shape[0])
            trials -= 1
            if trials <= 0:
                print("Tried laplace opt 10 times, failed")
                mu = mu0
                break
            continue
        break
    if diag:
        LSigInv = np.sqrt(-model.diag_hess_th_log_joint(Zw, mu, ww)[0, :])
        LSig = 1.0 / LSigInv
    else:
        LSigInv = np.linalg.cholesky(-model.hess_th_log_joint(Zw, mu, ww)[0, :, :])
        LSig = solve_triangular(
            LSigInv, np.eye(LSigInv.shape[0]), lower=True, overwrite_b=True, check_finite=False
        )
    return mu, LSig, LSigInv


def _example_steps(i):
    """The example's step schedule."""
    return 1.0 / (1.0 + i)


def make_reference(Z, prior, proj_dim, opt_itrs, step_sched):
    """The example's SparseVI: BlackBoxProjector whose sampler draws proj_dim points from the
    Laplace approximation of the current coreset posterior (the prior when the coreset is
    empty); no subsampling (n_subsample_select = n_subsample_opt = None)."""
    D = Z.shape[1]
    mu0 = np.zeros(D)
    LSig0 = np.diag(prior)  # deviation: the example has np.eye(D) (its N(0, I) prior)

    def sampler_w(n, wts, pts):
        if wts is None or pts is None or pts.shape[0] == 0:
            muw = mu0
            LSigw = LSig0
        else:
            muw, LSigw, _ = get_laplace(wts, pts, np.zeros(Z.shape[1]), model, diag=False)
        return muw + np.random.randn(n, muw.shape[0]).dot(LSigw.T)

    prj_bb = bc.BlackBoxProjector(
        sampler_w, proj_dim, model.log_likelihood, model.grad_z_log_likelihood
    )
    return bc.SparseVICoreset(Z, prj_bb, opt_itrs=opt_itrs, step_sched=step_sched)


def kls(mdl, full, X, y, idx, w):
    core = moment_fit(
        posterior_draws(mdl, X[idx], y[idx], w, ARGS.core_samples, ARGS.core_samples // 2, 1)
    )
    try:
        return gaussian_kl(*core, *full), gaussian_kl(*full, *core)
    except ValueError:
        return float("inf"), float("inf")


def main():
    data = np.load(os.path.join(ARGS.data, "phishing_campbell_pca10.npz"), allow_pickle=True)
    X = np.asarray(data["X"], dtype=np.float64)
    y = np.asarray(data["y"], dtype=np.float64)  # {0, 1}
    if ARGS.smoke:
        X, y = X[:400], y[:400]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    N = len(y)
    prior = UniformCoreset(10, projection=None, model="logistic").fit(X, y).prior_scale_
    mdl = get_model("logistic", prior_scale=prior)
    print(f"N = {N}, D = {X.shape[1]}, prior sd = {np.round(prior, 4).tolist()}", flush=True)

    # reference data: Z = y_pm * [X, 1] (model_lr.load_data's Z, with the intercept column last)
    ypm = 2.0 * y - 1.0
    Z = ypm[:, None] * mdl.design(X)
    if ARGS.reference is not None:
        install_prior(np.asarray(prior, dtype=np.float64))

    rows = []

    def save():
        if ARGS.out:
            with open(ARGS.out, "w") as f:
                json.dump(
                    {"args": vars(ARGS), "prior": np.asarray(prior).tolist(), "rows": rows},
                    f,
                    indent=1,
                )

    t = time.perf_counter()
    full = moment_fit(
        posterior_draws(mdl, X, y, np.ones(N), ARGS.full_samples, ARGS.full_samples // 2, 0)
    )
    print(f"full MALA {time.perf_counter() - t:.1f} s", flush=True)
    again = moment_fit(
        posterior_draws(mdl, X, y, np.ones(N), ARGS.core_samples, ARGS.core_samples // 2, 2)
    )
    floor = (gaussian_kl(*again, *full), gaussian_kl(*full, *again))
    print(f"MC floor: rev KL {floor[0]:.4g}  fwd KL {floor[1]:.4g}", flush=True)
    rows.append({"method": "MC floor", "reverse_kl": floor[0], "forward_kl": floor[1]})
    save()

    # warm-up (numba kernels load from cache / compile), not timed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        SparseVICoreset(5, model="logistic", n_draws=20, n_rounds=2, random_state=0).fit(
            X[:300], y[:300]
        )

    def record(method, M, seed, secs, cpu, idx, w, extra=None):
        rev, fwd = kls(mdl, full, X, y, idx, w)
        row = {
            "method": method,
            "M": M,
            "seed": seed,
            "seconds": secs,
            "cpu_seconds": cpu,
            "n_points": int(len(idx)),
            "reverse_kl": rev,
            "forward_kl": fwd,
            "idx": np.asarray(idx).tolist(),
            "w": np.asarray(w).tolist(),
        } | (extra or {})
        rows.append(row)
        print(
            f"{method:10s} M={M:3d} seed={seed} {secs:9.2f} s (cpu {cpu:9.2f})  "
            f"{len(idx):3d} pts  rev KL {rev:10.4g}  fwd KL {fwd:10.4g}",
            flush=True,
        )
        save()

    def ours(M, seed):
        est = SparseVICoreset(M, model="logistic", random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0, c0 = time.perf_counter(), time.process_time()
            est.fit(X, y)
            secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        same_prior = bool(np.allclose(est.prior_scale_, prior))
        record(
            "skcoreset",
            M,
            seed,
            secs,
            cpu,
            est.sample_indices_,
            est.sample_weight_,
            {"same_prior": same_prior, "stop_reason": est.stop_reason_},
        )

    Ms = ARGS.sizes
    first_ref_total = None
    for k, (our_seed, trial) in enumerate(zip(ARGS.our_seeds, ARGS.ref_trials)):
        ours(Ms[0], our_seed)
        if ARGS.reference is not None and (k == 0 or not ARGS.ref_once_big):
            # the example builds incrementally (alg.build(Ms[m] - Ms[m-1])) and reports the
            # cumulative time: the M = 50 coreset is the one a fresh 50-iteration build gives
            np.random.seed(trial)
            alg = make_reference(Z, prior, ARGS.proj_dim, ARGS.opt_itrs, _example_steps)
            t_alg = c_alg = 0.0
            prev = 0
            max_m = ARGS.ref_max_m
            if first_ref_total is not None and first_ref_total > ARGS.ref_big_limit:
                max_m = Ms[0]  # the first reference run at the largest M was too slow: once
                print(f"reference at M={Ms[-1]} took {first_ref_total:.0f} s: run once", flush=True)
            for M in Ms:
                t0, c0 = time.perf_counter(), time.process_time()
                alg.build(M - prev)
                t_alg += time.perf_counter() - t0
                c_alg += time.process_time() - c0
                prev = M
                wts, pts, idcs = alg.get()
                state = np.random.get_state()  # fidelity MCMC must not disturb the build's RNG
                record("reference", M, trial, t_alg, c_alg, idcs, wts)
                np.random.set_state(state)
                if max_m and M >= max_m:
                    break
            if first_ref_total is None:
                first_ref_total = t_alg
        for M in Ms[1:]:
            ours(M, our_seed)
    print("done", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--reference", default=None, help="checkout of bayesian-coresets (omit: skcoreset only)"
    )
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"), help="data folder")
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 50])
    ap.add_argument("--our-seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--ref-trials", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--proj-dim", type=int, default=500)  # example's --proj_dim default
    ap.add_argument("--opt-itrs", type=int, default=100)  # example's --opt_itrs default
    ap.add_argument("--full-samples", type=int, default=10_000)
    ap.add_argument("--core-samples", type=int, default=2_000)
    ap.add_argument(
        "--ref-once-big", action="store_true", help="run the reference only for the first seed"
    )
    ap.add_argument("--ref-max-m", type=int, default=0)
    ap.add_argument(
        "--ref-big-limit",
        type=float,
        default=900.0,
        help="seconds; a slower first reference run at the largest M is not repeated",
    )
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--out", type=str, default=None)
    ARGS = ap.parse_args()
    if ARGS.smoke:
        ARGS.sizes, ARGS.proj_dim, ARGS.opt_itrs = [3, 5], 50, 5
        ARGS.full_samples, ARGS.core_samples = 400, 200
    if ARGS.reference is not None:
        load_reference(ARGS.reference)
    main()
