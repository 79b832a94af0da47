"""The multilevel sampler's parameterisation, measured: bulk ESS of the group sd and of the
group effects per parameterisation, on the three regimes that break one fixed choice or
another.

Cases (logistic, two standard normal features, a random intercept):

* ``small_groups``: 800 groups of 5 rows, tau 0.8 (the funnel: the rows say little);
* ``large_groups``: 200 groups of 100 rows, tau 0.8 (the rows pin each effect down);
* ``few_groups``: 10 groups of 20 rows, tau 0.3 (tau poorly known: the funnel again).

Settings (``BayesianMultilevelRegression``, 4 chains x (500 warm-up + 1000 draws)):

* ``auto``: the default, partially non-centred effects, the groups whose rows' precision on
  their effect is under 10 times the prior's integrated out (quadrature) and recovered after;
* ``auto_explicit``: the same partial centring, no group integrated out;
* ``non-centred`` and ``centred``: every effect so, none integrated out.

Printed and written (``--out``): per case and setting, seconds, the smallest bulk ESS and the
largest R-hat of the group sd and of the group effects, and the groups integrated out.

    python -m benchmarks.bench_multilevel_sampler \
        --out benchmarks/results/bench_multilevel_sampler.json
"""

import argparse
import json
import pathlib
import subprocess
import time
import warnings

import numpy as np

CASES = {
    "small_groups": (4000, 800, 0.8),
    "large_groups": (20000, 200, 0.8),
    "few_groups": (200, 10, 0.3),
}
SETTINGS = ("auto", "auto_explicit", "non-centred", "centred")


def data(n_rows, n_groups, tau, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_rows, 2))
    g = np.repeat(np.arange(n_groups), n_rows // n_groups)
    u = rng.normal(0, tau, n_groups)
    y = (rng.random(n_rows) < 1 / (1 + np.exp(-(X @ [0.5, -1.0] + u[g])))).astype(int)
    return X, y, g


def run(case, setting, seed):
    import skcoreset.linear_model._multilevel as multilevel
    from skcoreset import BayesianMultilevelRegression
    from skcoreset.models import Multilevel

    X, y, g = data(*CASES[case], seed)
    saved = multilevel.WEAK_GROUP
    if setting == "auto_explicit":
        multilevel.WEAK_GROUP = 0.0  # no group integrated out
    parameterisation = "auto" if setting.startswith("auto") else setting
    try:
        est = BayesianMultilevelRegression(
            Multilevel("logistic"), parameterisation=parameterisation, random_state=seed
        )
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y, groups=g)
        seconds = time.perf_counter() - start
    finally:
        multilevel.WEAK_GROUP = saved
    D = 3  # two coefficients and the intercept
    marginals = est.laplace_.posterior.marginals
    return {
        "case": case,
        "setting": setting,
        "seed": seed,
        "seconds": seconds,
        "tau_ess": float(est.ess_[D]),
        "tau_rhat": float(est.rhat_[D]),
        "effects_min_ess": float(est.ess_[D + 1 :].min()),
        "effects_max_rhat": float(est.rhat_[D + 1 :].max()),
        "integrated": 0 if marginals is None else int(marginals.G),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=SETTINGS)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--out", type=pathlib.Path)
    args = parser.parse_args(argv)
    rows = []
    header = (
        f"{'case':14s} {'setting':14s} {'seed':>4s} {'seconds':>8s} {'tau ESS':>8s} "
        f"{'tau R-hat':>9s} {'u min ESS':>9s} {'u max R-hat':>11s} {'integrated':>10s}"
    )
    lines = [header]
    print(header, flush=True)
    for case in args.cases:
        for setting in args.settings:
            for seed in range(args.seeds):
                r = run(case, setting, seed)
                rows.append(r)
                line = (
                    f"{case:14s} {setting:14s} {seed:4d} {r['seconds']:8.1f} "
                    f"{r['tau_ess']:8.0f} {r['tau_rhat']:9.3f} {r['effects_min_ess']:9.0f} "
                    f"{r['effects_max_rhat']:11.3f} {r['integrated']:10d}"
                )
                lines.append(line)
                print(line, flush=True)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    lines.append(f"commit {commit}; 4 chains x (500 + 1000); bulk ESS of 4000 draws")
    print(lines[-1])
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"rows": rows, "commit": commit}, indent=1))
        args.out.with_suffix(".txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
