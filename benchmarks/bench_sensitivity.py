"""Benchmark of the sensitivity coreset for logistic regression (Huggins, Campbell, Broderick 2016).

(a) Construction at N = 10^6, D = 10 (the paper's synthetic Mixture data): the whole fit, the
    bound kernel alone, and the plain NumPy oracle (tests/oracles/sensitivity_oracle.py,
    vectorised) on the same clustering in the same process (ratio, agreement); as context the
    time of a full-data Laplace fit and of one pass of the log posterior and its gradient over
    the data (what every MALA step costs on the full data).
(b) Quality on Phishing and DS1 (training rows = the first ``n_train``): for each coreset size
    and seed, the polynomial-kernel MMD ((0.2 + <a, b>)^3) between draws of the Laplace
    approximation of the weighted coreset posterior and of the full-data posterior, and the test
    log-likelihood averaged over the draws; sensitivity (origin and Laplace-centred balls),
    uniform, GIGA and OMP. ``--mala`` adds the same comparison with MALA posteriors
    (BayesianLogisticRegression) for the coreset and the full data.

Usage::

    python -m benchmarks.bench_sensitivity --out bench_sensitivity.json
    python -m benchmarks.bench_sensitivity --quick
"""

import argparse
import json
import pathlib
import platform
import time
import warnings

import numpy as np

from skcoreset.coreset import GIGACoreset, OMPCoreset, UniformCoreset
from skcoreset.coreset import _sensitivity_kernels as K
from skcoreset.coreset._sensitivity import SensitivityCoreset
from skcoreset.linear_model import BayesianLogisticRegression
from skcoreset.models import get_model, laplace_approximation
from tests.oracles import sensitivity_oracle as O

ROOT = pathlib.Path(__file__).resolve().parents[1]


def timed(f, *args, repeat=1, **kw):
    best, out = np.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f(*args, **kw)
        best = min(best, time.perf_counter() - t)
    return out, best


# -- (a) construction time ----------------------------------------------------------------------
def bench_construction(N, seed=0):
    X, y = O.make_mixture(N, d=10, random_state=seed)
    # compile (and load the numba cache) outside the timings
    SensitivityCoreset(n_points=10, random_state=0).fit(X[:2000], y[:2000])
    out = {"N": N, "D": X.shape[1]}
    cs, out["fit_origin_s"] = timed(
        lambda: SensitivityCoreset(n_points=1000, random_state=0).fit(X, y), repeat=3
    )
    _, out["fit_laplace_s"] = timed(
        lambda: SensitivityCoreset(n_points=1000, center="laplace", random_state=0).fit(X, y)
    )
    Z = np.ascontiguousarray(O.z_vectors(X, y))
    s = np.ones(N)
    labels, R, theta0 = cs.labels_, cs.radius_, cs.center_

    def kernel(exact):
        W, means = K.cluster_stats(Z, s, labels, 4)
        return K.sensitivity_bound(Z, s, labels, W, means, theta0, R, exact)

    m_exact, out["kernel_exact_s"] = timed(kernel, True, repeat=3)
    m_approx, out["kernel_approx_s"] = timed(kernel, False, repeat=3)
    ref, out["oracle_numpy_s"] = timed(O.bound_vectorized, Z, labels, 4, R, theta0, s, exact=True)
    out["oracle_over_kernel"] = out["oracle_numpy_s"] / out["kernel_exact_s"]
    out["max_rel_diff_vs_oracle"] = float(np.max(np.abs(m_exact - ref) / ref))
    out["mean_sensitivity"] = cs.mean_sensitivity_
    out["approx_over_exact_mean_sensitivity"] = float(m_approx.mean() / m_exact.mean())
    model = get_model("logistic")
    _, out["laplace_full_s"] = timed(laplace_approximation, model, X, y)
    Xd = model.design(X)
    theta = np.zeros(Xd.shape[1])
    model.log_posterior(theta, Xd[:100], y[:100], s[:100])
    _, out["one_logpost_grad_pass_s"] = timed(model.log_posterior, theta, Xd, y, s, repeat=3)
    return out


# -- (b) posterior quality ------------------------------------------------------------------------
def load(data_dir, name):
    d = np.load(pathlib.Path(data_dir) / name, allow_pickle=False)
    X, y, n = d["X"], d["y"], int(d["n_train"])
    return X[:n], y[:n], X[n:], y[n:]


def methods(M, seed):
    out = {
        "sensitivity": lambda X, y: SensitivityCoreset(n_points=M, random_state=seed).fit(X, y),
        "sensitivity_laplace": lambda X, y: SensitivityCoreset(
            n_points=M, center="laplace", random_state=seed
        ).fit(X, y),
    }
    out["uniform"] = lambda X, y: UniformCoreset(
        n_points=M, model="logistic", projection=None, random_state=seed
    ).fit(X, y)
    out["giga"] = lambda X, y: GIGACoreset(n_points=M, model="logistic", random_state=seed).fit(
        X, y
    )
    out["omp"] = lambda X, y: OMPCoreset(n_points=M, model="logistic", random_state=seed).fit(X, y)
    return out


def mala_draws(X, y, w, seed, n_samples):
    est = BayesianLogisticRegression(
        n_samples=n_samples, n_warmup=n_samples // 2, n_chains=2, random_state=seed
    )
    with warnings.catch_warnings():
        # short chains: R-hat slightly above 1.01 is common here and only adds noise to the MMD
        warnings.simplefilter("ignore")
        est.fit(X, y, sample_weight=w)
    coef = est.coef_samples_.reshape(-1, X.shape[1])
    icpt = np.asarray(est.intercept_samples_).reshape(-1, 1)
    return np.hstack([coef, icpt])


def bench_quality(data_dir, name, sizes, seeds, n_draws, mala, mala_samples, giga_seeds):
    X, y, Xt, yt = load(data_dir, name)
    N = X.shape[0]
    model = get_model("logistic", prior_scale=1.0)
    full = laplace_approximation(model, X, y)
    z = np.random.default_rng(12345).standard_normal((n_draws, X.shape[1] + 1))
    F = full.mean + z @ full.chol.T
    z2 = np.random.default_rng(54321).standard_normal((n_draws, X.shape[1] + 1))
    floor = O.poly_mmd2(full.mean + z2 @ full.chol.T, F)
    info = {
        "dataset": name,
        "N_train": N,
        "N_test": Xt.shape[0],
        "D": X.shape[1],
        "full_test_ll": O.heldout_loglik(F, Xt, yt),
        "mmd_noise_floor": floor,
        "rows": [],
    }
    if mala:
        Fm = mala_draws(X, y, None, 0, mala_samples)
        Fm2 = mala_draws(X, y, None, 1, mala_samples)
        info["full_test_ll_mala"] = O.heldout_loglik(Fm, Xt, yt)
        info["mmd_noise_floor_mala"] = O.poly_mmd2(Fm2, Fm)
    for M in sizes:
        for meth, make in methods(M, 0).items():
            rec = {"method": meth, "M": M, "size": [], "mmd": [], "test_ll": [], "seconds": []}
            if mala:
                rec |= {"mmd_mala": [], "test_ll_mala": []}
            # GIGA and OMP are deterministic up to their random projection and cost ~100x more:
            # fewer seeds
            for seed in seeds[:giga_seeds] if meth in ("giga", "omp") else seeds:
                make = methods(M, seed)[meth]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est, sec = timed(make, X, y)
                idx, w = est.sample_indices_, est.sample_weight_
                la = laplace_approximation(model, X[idx], y[idx], w)
                A = la.mean + z @ la.chol.T
                rec["size"].append(len(idx))
                rec["seconds"].append(sec)
                rec["mmd"].append(O.poly_mmd2(A, F))
                rec["test_ll"].append(O.heldout_loglik(A, Xt, yt))
                if mala:
                    Am = mala_draws(X[idx], y[idx], w, seed, mala_samples)
                    rec["mmd_mala"].append(O.poly_mmd2(Am, Fm))
                    rec["test_ll_mala"].append(O.heldout_loglik(Am, Xt, yt))
            info["rows"].append(rec)
    return info


def summarise(values):
    v = np.asarray(values, dtype=float)
    se = v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0.0
    return float(v.mean()), float(se)


def print_quality(info, mala):
    print(
        f"\n{info['dataset']}: N_train={info['N_train']} N_test={info['N_test']} D={info['D']}; "
        f"full-posterior test LL {info['full_test_ll']:.4f}; "
        f"MMD^2 noise floor {info['mmd_noise_floor']:.2e}"
    )
    head = (
        f"{'method':<20}{'M':>6}{'seeds':>6}{'size':>8}{'MMD^2 (Laplace)':>24}"
        f"{'test LL':>20}{'sec':>8}"
    )
    if mala:
        head += f"{'MMD^2 (MALA)':>24}{'test LL (MALA)':>20}"
    print(head)
    for r in info["rows"]:
        mm, ms = summarise(r["mmd"])
        lm, ls = summarise(r["test_ll"])
        line = (
            f"{r['method']:<20}{r['M']:>6}{len(r['size']):>6}{np.mean(r['size']):>8.1f}"
            f"{mm:>14.3e} ± {ms:.1e}"
            f"{lm:>12.4f} ± {ls:.4f}{np.mean(r['seconds']):>8.2f}"
        )
        if mala:
            a, b = summarise(r["mmd_mala"])
            c, d = summarise(r["test_ll_mala"])
            line += f"{a:>14.3e} ± {b:.1e}{c:>12.4f} ± {d:.4f}"
        print(line)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=1_000_000, help="N of the construction benchmark")
    p.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    p.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 500])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument(
        "--giga-seeds", type=int, default=2, help="seeds for GIGA and OMP (the slow ones)"
    )
    p.add_argument("--draws", type=int, default=1000, help="posterior draws per Laplace fit")
    p.add_argument("--mala", action="store_true", help="also compare MALA posteriors")
    p.add_argument("--mala-samples", type=int, default=1000)
    p.add_argument(
        "--datasets", nargs="+", default=["phishing_campbell_pca10.npz", "ds1_chemreact10.npz"]
    )
    p.add_argument("--quick", action="store_true", help="small N, two sizes, two seeds")
    p.add_argument("--out", default=None, help="write the results as JSON here")
    a = p.parse_args(argv)
    if a.quick:
        a.n, a.sizes, a.seeds, a.draws, a.mala_samples = 100_000, [100, 500], 2, 500, 400
    result = {"python": platform.python_version(), "machine": platform.machine()}
    c = bench_construction(a.n)
    result["construction"] = c
    print(
        f"(a) construction, N={c['N']:,}, D={c['D']} (Mixture data, k=4, origin ball, 1000 draws)"
    )
    print(f"  SensitivityCoreset.fit, origin ball       {c['fit_origin_s']:8.3f} s")
    print(f"  SensitivityCoreset.fit, Laplace ball      {c['fit_laplace_s']:8.3f} s")
    print(f"  bound kernel (stats + exact bound)        {c['kernel_exact_s']:8.3f} s")
    print(f"  bound kernel (approximate)                {c['kernel_approx_s']:8.3f} s")
    print(
        f"  NumPy oracle (vectorised, exact)          {c['oracle_numpy_s']:8.3f} s   "
        f"ratio oracle/kernel {c['oracle_over_kernel']:.1f}x, "
        f"max rel diff {c['max_rel_diff_vs_oracle']:.1e}"
    )
    print(f"  context: full-data Laplace fit            {c['laplace_full_s']:8.3f} s")
    print(f"  context: one log-posterior+gradient pass  {c['one_logpost_grad_pass_s']:8.3f} s")
    print(
        f"  mean sensitivity {c['mean_sensitivity']:.2f}; "
        f"approx/exact mean {c['approx_over_exact_mean_sensitivity']:.4f}"
    )

    result["quality"] = []
    for name in a.datasets:
        info = bench_quality(
            a.data_dir,
            name,
            a.sizes,
            list(range(a.seeds)),
            a.draws,
            a.mala,
            a.mala_samples,
            a.giga_seeds,
        )
        print_quality(info, a.mala)
        result["quality"].append(info)
    if a.out:
        pathlib.Path(a.out).write_text(json.dumps(result, indent=1))
        print(f"\nwrote {a.out}")
    return result


if __name__ == "__main__":
    main()
