"""Benchmark of skcoreset.hilbert on the GIGA paper's vector-sum problem.

N standard normal vectors in D = 50 (rows), target y = their sum.  For every algorithm and
coreset size: relative Hilbert error, support size, seconds, and the ratio to the plain NumPy
oracle (tests/oracles/hilbert_oracles.py) run on the same data in the same process (only where
affordable: N <= --oracle-max-n).  Also the time of one pass over the matrix (numpy
``vectors @ x``, the memory-bandwidth floor of every greedy iteration) and, for GIGA, the ratio
seconds / (iterations x one pass), in float64 and float32 storage.

Usage::

    python -m benchmarks.bench_hilbert --sizes-n 100000 1000000 --out bench_hilbert.json
    python -m benchmarks.bench_hilbert --quick
"""

import argparse
import json
import os
import pathlib
import platform
import time

import numba
import numpy as np

from skcoreset import hilbert
from tests.oracles import hilbert_oracles as O

D = 50


def algorithms():
    """name -> (package call, oracle call or None)."""
    return {
        "uniform": (lambda V, M: hilbert.uniform(V, M, random_state=0, return_info=True), None),
        "importance": (
            lambda V, M: hilbert.importance(V, M, random_state=0, return_info=True),
            None,
        ),
        "frank_wolfe": (
            lambda V, M: hilbert.frank_wolfe(V, M, return_info=True),
            lambda V, M: O.frank_wolfe(V, M),
        ),
        "giga": (lambda V, M: hilbert.giga(V, M, return_info=True), lambda V, M: O.giga(V, M)),
        "iht": (lambda V, M: hilbert.iht(V, M, return_info=True), lambda V, M: O.iht(V, M)),
        "iht_ii": (
            lambda V, M: hilbert.iht(V, M, debias=True, return_info=True),
            lambda V, M: O.iht(V, M, debias=True),
        ),
        "iht_stoch0.2": (
            lambda V, M: hilbert.iht(V, M, batch_fraction=0.2, random_state=0, return_info=True),
            None,
        ),
        "omp": (lambda V, M: hilbert.omp(V, M, return_info=True), lambda V, M: O.omp(V, M)),
    }


def timed(f, *args):
    t = time.perf_counter()
    out = f(*args)
    return out, time.perf_counter() - t


def one_pass_seconds(V, repeats):
    x = np.random.default_rng(0).standard_normal(V.shape[1]).astype(V.dtype)
    V @ x
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        V @ x
        best = min(best, time.perf_counter() - t)
    return best


def warm_up():
    """Compile every kernel variant first so that timings exclude numba compilation."""
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        X = rng.standard_normal((600, D)).astype(dtype)
        for call, _ in algorithms().values():
            call(X, 5)


def run(n, sizes, oracle_max_n, oracle_max_m, seed=0):
    rows = []
    V = np.random.default_rng(seed).standard_normal((n, D))
    V32 = V.astype(np.float32)
    y = V.sum(axis=0)
    repeats = 20 if n <= 200_000 else 5
    p64, p32 = one_pass_seconds(V, repeats), one_pass_seconds(V32, repeats)
    print(
        f"\nN = {n}, D = {D}: one pass (vectors @ x) float64 {p64 * 1e3:.2f} ms, "
        f"float32 {p32 * 1e3:.2f} ms"
    )
    for name, (call, oracle) in algorithms().items():
        dtypes = [("f64", V), ("f32", V32)] if name == "giga" else [("f64", V)]
        for M in sizes:
            for tag, X in dtypes:
                (w, info), sec = timed(call, X, M)
                row = {
                    "N": n,
                    "algorithm": name,
                    "dtype": tag,
                    "M": M,
                    "seconds": sec,
                    "error": info["error"],
                    "support": info["n_support"],
                    "n_iter": info["n_iter"],
                    "stop_reason": info["stop_reason"],
                    "one_pass_seconds": p64 if tag == "f64" else p32,
                }
                if name == "giga":
                    row["seconds_per_iter_over_pass"] = sec / (
                        info["n_iter"] * row["one_pass_seconds"]
                    )
                if oracle is not None and tag == "f64" and n <= oracle_max_n and M <= oracle_max_m:
                    wo, osec = timed(oracle, V, M)
                    row["oracle_seconds"] = osec
                    row["oracle_ratio"] = osec / sec
                    row["oracle_error"] = float(np.linalg.norm(V.T @ wo - y) / np.linalg.norm(y))
                rows.append(row)
                print(fmt_row(row), flush=True)
    return rows, {"N": n, "one_pass_f64": p64, "one_pass_f32": p32}


HEADER = (
    f"{'N':>8} {'algorithm':<13} {'dt':<3} {'M':>4} {'error':>10} {'supp':>5} "
    f"{'iter':>5} {'stop':<15} {'sec':>8} {'sec/(it*pass)':>13} {'oracle_err':>10} "
    f"{'oracle_x':>8}"
)


def fmt_row(r):
    ratio = r.get("seconds_per_iter_over_pass")
    oe = r.get("oracle_error")
    orat = r.get("oracle_ratio")
    return (
        f"{r['N']:>8} {r['algorithm']:<13} {r['dtype']:<3} {r['M']:>4} {r['error']:>10.3e} "
        f"{r['support']:>5} {r['n_iter']:>5} {r['stop_reason']:<15} {r['seconds']:>8.4f} "
        f"{'' if ratio is None else format(ratio, '.2f'):>13} "
        f"{'' if oe is None else format(oe, '.3e'):>10} "
        f"{'' if orat is None else format(orat, '.1f') + 'x':>8}"
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes-n", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--sizes-m", type=int, nargs="+", default=[10, 20, 50, 100, 200])
    ap.add_argument(
        "--oracle-max-n",
        type=int,
        default=100_000,
        help="run the NumPy oracles only for N up to this (they are slow)",
    )
    ap.add_argument("--oracle-max-m", type=int, default=200)
    ap.add_argument(
        "--quick",
        action="store_true",
        help="N = 1e5, M in {10, 50}, oracles at M = 10 only: under a minute",
    )
    ap.add_argument("--out", type=str, default=None, help="write the results as JSON here")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes_n, args.sizes_m, args.oracle_max_m = [100_000], [10, 50], 10
    t0 = time.perf_counter()
    load0 = os.getloadavg()
    print(
        f"load average at start: {load0[0]:.2f} (timings are only meaningful on an idle "
        f"machine; numba threads: {numba.get_num_threads()})"
    )
    warm_up()
    print(f"warm-up (numba compile or cache load): {time.perf_counter() - t0:.1f} s")
    print(
        "oracle_x = oracle seconds / package seconds; sec/(it*pass) = GIGA seconds / "
        "(iterations x one numpy pass over the matrix)"
    )
    print(HEADER)
    rows, passes = [], []
    for n in args.sizes_n:
        r, p = run(n, args.sizes_m, args.oracle_max_n, args.oracle_max_m)
        rows += r
        passes.append(p)
    print("\nSummary\n" + HEADER)
    for r in rows:
        print(fmt_row(r))
    print("\nGIGA float32 / float64 seconds:")
    for n in args.sizes_n:
        for M in args.sizes_m:
            g = {
                r["dtype"]: r
                for r in rows
                if r["N"] == n and r["M"] == M and r["algorithm"] == "giga"
            }
            print(f"  N={n:>8} M={M:>4}: {g['f32']['seconds'] / g['f64']['seconds']:.2f}")
    print(f"total {time.perf_counter() - t0:.1f} s, load average at end: {os.getloadavg()[0]:.2f}")
    if args.out:
        meta = {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "machine": platform.machine(),
            "D": D,
            "one_pass": passes,
            "numba_threads": numba.get_num_threads(),
            "loadavg_start": load0[0],
            "loadavg_end": os.getloadavg()[0],
        }
        pathlib.Path(args.out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
