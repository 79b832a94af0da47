"""The README's first command: build coresets of the bundled Phishing data and compare them."""

import argparse
import time

import numpy as np

from .coreset import (
    FrankWolfeCoreset,
    GIGACoreset,
    IHTCoreset,
    ImportanceCoreset,
    OMPCoreset,
    UniformCoreset,
)
from .datasets import load_phishing
from .metrics import coreset_laplace_kl

ALGORITHMS = {
    "uniform": UniformCoreset,
    "importance": ImportanceCoreset,
    "frank-wolfe": FrankWolfeCoreset,
    "giga": GIGACoreset,
    "a-iht": IHTCoreset,
    "a-iht-ii": lambda **kw: IHTCoreset(debias=True, **kw),
    "omp": OMPCoreset,
}


def run(sizes=(50, 100, 200), random_state=0, print_fn=print):
    """Fit every Hilbert coreset on Phishing (logistic model); return rows of results.

    Two measures of quality: the relative error in the projection space that the algorithms
    minimise, and what users care about, the KL divergence KL(pi || pi_w) between the Laplace
    fits of the full posterior and of the coreset posterior.
    """
    X, y = load_phishing(return_X_y=True)
    rows = []
    print_fn(
        f"Phishing: N = {X.shape[0]}, D = {X.shape[1]}, logistic likelihood, J = 500 "
        "log-likelihood projection"
    )
    print_fn(
        f"{'algorithm':<12} {'requested':>9} {'size':>5} {'rel. error':>11} "
        f"{'KL to full':>11} {'seconds':>8}"
    )
    for name, cls in ALGORITHMS.items():
        for m in sizes:
            est = cls(n_points=m, model="logistic", random_state=random_state)
            t0 = time.perf_counter()
            est.fit(X, y)
            seconds = time.perf_counter() - t0
            kl = coreset_laplace_kl(X, y, est.sample_indices_, est.sample_weight_, model="logistic")
            rows.append(
                {
                    "algorithm": name,
                    "requested": m,
                    "size": est.n_points_,
                    "hilbert_error": est.hilbert_error_,
                    "kl": kl,
                    "seconds": seconds,
                }
            )
            print_fn(
                f"{name:<12} {m:>9d} {est.n_points_:>5d} {est.hilbert_error_:>11.2e} "
                f"{kl:>11.3g} {seconds:>8.2f}"
            )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m skcoreset", description=__doc__)
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[50, 100, 200],
        help="coreset sizes to build (default: 50 100 200)",
    )
    parser.add_argument("--random-state", type=int, default=0)
    args = parser.parse_args(argv)
    np.set_printoptions(precision=3)
    run(sizes=args.sizes, random_state=args.random_state)
    print("(the first run includes numba compilation; later runs load it from the cache)")


if __name__ == "__main__":
    main()
