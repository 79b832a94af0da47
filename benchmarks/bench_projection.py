"""Cost of the (N, J) projection against the matrix product it contains and a NumPy oracle.

For logistic regression the log-likelihood features need the product X @ Theta^T (N x P x J
flops) plus one softplus per entry. We time, in one run:

* ``matmul``: NumPy's X @ Theta^T into a fresh (N, J) array (allocation included, as in a fit);
* ``numba``: skcoreset's fused projection (float64 and float32 storage);
* ``oracle``: the plain NumPy formula (tests/oracles/models_oracle.py), which makes several
  (N, J) temporaries;

and report the peak resident memory of each, since the (N, J) matrix is the largest
allocation of a coreset fit. Usage::

    python -m benchmarks.bench_projection --n 100000 1000000 --out results/projection.json
"""

import argparse
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

CHILD = r"""
import sys, time, json, resource
import numpy as np
from skcoreset.models import get_model, laplace_approximation
from skcoreset.projection import project
from tests.oracles import models_oracle as oracle
N, D, J, what, kind, repeat = {N}, {D}, {J}, {what!r}, {kind!r}, {repeat}
rng = np.random.default_rng(0)
X = rng.standard_normal((N, D))
y = (rng.random(N) < 1 / (1 + np.exp(-X @ (rng.standard_normal(D) / np.sqrt(D))))).astype(float)
model = get_model("logistic")
Xd = model.design(X)
lap = laplace_approximation(model, Xd, y, design=True, subsample=min(N, 20000), random_state=0)
thetas = lap.sample(J, random_state=1)
# warm up the compiled kernels on a few rows
project(model, Xd[:64], y[:64], lap, projection=kind, n_projections=J)
project(model, Xd[:64], y[:64], lap, projection=kind, n_projections=J, dtype=np.float32)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
seconds, out = float("inf"), None
for _ in range(1 if what == "oracle" else repeat):
    out = None  # free the previous result first: the peak is that of one run
    t = time.perf_counter()
    if what == "matmul":
        out = Xd @ thetas.T
    elif what == "numba64":
        out = project(model, Xd, y, lap, projection=kind, n_projections=J, random_state=1)
    elif what == "numba32":
        out = project(
            model, Xd, y, lap, projection=kind, n_projections=J, dtype=np.float32, random_state=1
        )
    elif what == "oracle":
        if kind == "loglik":
            out = oracle.loglik_features("logistic", Xd, y, thetas)
        else:
            coords = np.random.RandomState(1).randint(0, Xd.shape[1], size=J)
            out = oracle.fisher_features("logistic", Xd, y, thetas, coords)
    seconds = min(seconds, time.perf_counter() - t)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"seconds": seconds, "extra_peak_mb": (peak - base) / 1024,
                  "out_mb": out.nbytes / 2**20}}))
"""


def run_child(N, D, J, what, kind, repeat):
    code = CHILD.format(N=N, D=D, J=J, what=what, kind=kind, repeat=repeat)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    if res.returncode != 0:
        return {"error": res.stderr.strip().splitlines()[-1]}
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--j", type=int, default=500)
    parser.add_argument(
        "--oracle-max-n",
        type=int,
        default=1_000_000,
        help="skip the NumPy oracle above this N (it needs ~4 (N, J) temporaries)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="timed runs of matmul and numba in each process, the best kept (the oracle: one)",
    )
    parser.add_argument("--out", type=pathlib.Path, default=None)
    args = parser.parse_args()

    rows = []
    header = (
        f"{'N':>9} {'projection':>10} {'method':>8} {'seconds':>8} {'x matmul':>9} "
        f"{'x oracle':>9} {'out MB':>7} {'peak MB':>8}"
    )
    print(
        f"D = {args.d}, J = {args.j}; each figure from a fresh process, best of {args.repeat} "
        "runs (oracle: 1; peak = extra resident memory)"
    )
    print(header)
    for N in args.n:
        for kind in ["loglik", "fisher"]:
            res = {
                w: run_child(N, args.d, args.j, w, kind, args.repeat)
                for w in ["matmul", "numba64", "numba32"]
            }
            if N <= args.oracle_max_n:
                res["oracle"] = run_child(N, args.d, args.j, "oracle", kind, 1)
            mm = res["matmul"].get("seconds")
            orc = res.get("oracle", {}).get("seconds")
            for what, r in res.items():
                if "error" in r:
                    print(f"{N:>9} {kind:>10} {what:>8} failed: {r['error']}")
                    continue
                row = {
                    "N": N,
                    "D": args.d,
                    "J": args.j,
                    "projection": kind,
                    "method": what,
                    **r,
                    "ratio_to_matmul": r["seconds"] / mm if mm else None,
                    "ratio_to_oracle": r["seconds"] / orc if orc else None,
                }
                rows.append(row)

                def f(v):
                    return f"{v:9.2f}" if v is not None else f"{'-':>9}"

                print(
                    f"{N:>9} {kind:>10} {what:>8} {r['seconds']:8.2f} {f(row['ratio_to_matmul'])} "
                    f"{f(row['ratio_to_oracle'])} {r['out_mb']:7.0f} {r['extra_peak_mb']:8.0f}"
                )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=1))
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
