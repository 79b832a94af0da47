"""The demo's second part: one size where coresets matter.

The bundled Phishing data has 11 000 rows, where MCMC on all rows takes seconds and a coreset
buys little time. Here a synthetic logistic regression of ``rows`` rows and 20 features is fitted
by the default pipeline (:class:`~skcoreset.coreset.OMPCoreset`, then MALA on the coreset), by
the same with :class:`~skcoreset.coreset.QuasiNewtonCoreset` (which makes no projection pass over
every row: the faster of the two from about a million rows, at the same accuracy; see
``benchmarks/bench_profile.py``), and by a uniform subsample of the default's size for contrast,
against MALA on all rows:

* MALA on all rows takes minutes at a million rows, so its time is **projected**: two short
  runs (``_SHORT`` warm-up + kept steps each) give a fixed cost (its start and checks) and a
  cost per step, extrapolated linearly to the estimator's default number of steps. The output
  says so.
* The accuracy is measured against the full data's Laplace approximation (the one the coreset
  computed, with the same prior): at this many rows the posterior is Gaussian far within the
  Monte Carlo error of the coreset's draws (Bernstein-von Mises), which is printed beside it.
"""

import time
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..coreset import CoresetQualityWarning, OMPCoreset, QuasiNewtonCoreset, UniformCoreset
from ..datasets import make_logistic_regression
from ..linear_model import BayesianLogisticRegression
from ..metrics import gaussian_kl, moment_fit
from ..models._glm_kernels import FUSED_MIN_ROWS
from ..pipeline import make_pipeline
from ._demo_settings import RHAT_LIMIT, speed_phrase

#: Features of the synthetic problem (the intercept excluded).
N_FEATURES = 20
#: Warm-up and kept steps of the two short full-data runs behind the projection.
_SHORT = (5, 20)
#: Rows per block of the fits that prepare the kernels: above the fused Newton pass's threshold,
#: as the default blocks of a million rows are.
_PREPARE_BLOCK = 3 * FUSED_MIN_ROWS // 2


@dataclass
class LargeRow:
    """One line of the large-size table."""

    method: str
    size: int
    seconds: float
    mean_shift: float = np.nan
    sd_ratio: tuple = (np.nan, np.nan)
    kl: float = np.nan
    rhat: float = np.nan


def run_large(rows, seed, step):
    """The large-size comparison: its lines of output; ``step(message)`` reports progress."""
    step(f"synthetic logistic regression: {rows:,} rows, {N_FEATURES} features")
    X, y = make_logistic_regression(rows, N_FEATURES, random_state=seed)

    # Small fits on the first rows and a short run on all of them compile the kernels' builds
    # for this size, which the Phishing part did not need: the timed fits below then measure
    # the methods, not numba. The small fits' rows come in two blocks of _PREPARE_BLOCK rows,
    # so that their Laplace fits run the fused Newton pass over large blocks that the full
    # data's fit runs (slow to compile; measured: benchmarks/README.md, Thresholds).
    step("preparing the kernels for this size")
    head = slice(0, 2 * _PREPARE_BLOCK)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # OMP's pool is as large at 5 points (the same builds); QNC's steps need as many
        # points as parameters
        for coreset in (OMPCoreset(n_points=5), QuasiNewtonCoreset()):
            make_pipeline(
                coreset.set_params(random_state=seed, block_size=_PREPARE_BLOCK),
                BayesianLogisticRegression(n_samples=10, n_warmup=10, random_state=seed),
            ).fit(X[head], y[head])
        _full_data_seconds(X, y, seed, 4)

    step("the default pipeline: OMPCoreset, then MALA on the coreset")
    start = time.perf_counter()
    default = _fit(_pipeline(OMPCoreset, seed), X, y)
    seconds = time.perf_counter() - start
    laplace = default[0].laplace_
    size = default[0].n_points_
    table = [_row("OMP + MALA (default)", size, seconds, default[-1], laplace)]

    step("the same with QuasiNewtonCoreset: no projection of every row")
    start = time.perf_counter()
    qnc = _fit(_pipeline(QuasiNewtonCoreset, seed), X, y)
    seconds = time.perf_counter() - start
    table.append(_row("QNC + MALA", qnc[0].n_points_, seconds, qnc[-1], laplace))

    step(f"a uniform subsample of {size} rows, then MALA on it")
    start = time.perf_counter()
    # without its projection, which only measures its error (a pass over every row): a
    # uniform subsample's own cost
    uniform = _fit(_pipeline(UniformCoreset, seed, n_points=size, projection=None), X, y)
    table.append(_row("uniform + MALA", size, time.perf_counter() - start, uniform[-1], laplace))

    steps = _default_steps()
    step(f"MALA on all {rows:,} rows: two short runs to project its {steps} steps")
    short = [_full_data_seconds(X, y, seed, n) for n in _SHORT]
    return _report(rows, table, projected_seconds(short, steps), steps, default[-1])


def projected_seconds(short, steps):
    """Seconds of ``steps`` steps per chain, from the seconds of the two short runs (``_SHORT``
    warm-up and kept steps each): their difference is the cost of the extra steps.

    At a few thousand rows that difference is within the runs' timing noise: its cost per
    step came out negative in 1 pair of runs in 5 at 10 000 rows, which can make the
    projection, and every speed-up, negative. A cost per step is then taken as 0: the longer
    run's time alone, an underestimate.
    """
    per_step = max((short[1] - short[0]) / (2 * (_SHORT[1] - _SHORT[0])), 0.0)
    return short[1] + per_step * (steps - 2 * _SHORT[1])


def _pipeline(coreset, seed, **options):
    return make_pipeline(
        coreset(random_state=seed, **options), BayesianLogisticRegression(random_state=seed)
    )


def _fit(pipeline, X, y):
    """The fitted pipeline; its convergence check and its posterior's distance from the
    full one are shown in the table (R-hat, KL) instead of as warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", CoresetQualityWarning)
        return pipeline.fit(X, y)


def _default_steps():
    """Warm-up and kept steps of a default :class:`BayesianLogisticRegression`, per chain."""
    params = BayesianLogisticRegression().get_params()
    return params["n_warmup"] + params["n_samples"]


def _full_data_seconds(X, y, seed, n):
    """Seconds of a MALA fit on all rows with ``n`` warm-up and ``n`` kept steps per chain."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a run this short has not converged, by design
        BayesianLogisticRegression(n_samples=n, n_warmup=n, random_state=seed).fit(X, y)
    return time.perf_counter() - start


def _row(method, size, seconds, fit, laplace):
    """The row of a fitted Bayesian estimator, judged against the full-data Laplace fit."""
    draws = np.concatenate([fit.coef_samples_, fit.intercept_samples_[..., None]], axis=-1)
    mean, cov = moment_fit(draws)
    sd = np.sqrt(np.diag(laplace.cov))
    ratio = np.sqrt(np.diag(cov)) / sd
    return LargeRow(
        method,
        size,
        seconds,
        float(np.mean(np.abs(mean - laplace.mean) / sd)),
        (float(ratio.min()), float(ratio.max())),
        float(gaussian_kl(laplace.mean, laplace.cov, mean, cov)),
        float(np.max(fit.rhat_)),
    )


def _report(rows, table, projected, steps, default_fit):
    # The Monte Carlo error of a posterior mean is sd / sqrt(ESS): the mean of |z| over the
    # parameters, for z ~ N(0, 1 / ESS), is sqrt(2 / (pi ESS)). A Gaussian fitted to n
    # independent draws of a P-dimensional one is at KL about P (P + 3) / (4 n) from it.
    ess = default_fit.ess_
    shift_floor = float(np.mean(np.sqrt(2 / (np.pi * ess))))
    kl_floor = ess.size * (ess.size + 3) / (4 * float(np.median(ess)))
    approx = f"~{projected:.{1 if projected < 100 else 0}f}"
    lines = [
        f"At {rows:,} rows (synthetic logistic regression, {N_FEATURES} features + intercept; "
        "default settings):",
        f"{'method':<22}{'size':>8}{'seconds':>10}{'speed-up':>10}{'mean shift':>12}"
        f"{'sd ratio':>13}{'KL':>9}",
        f"{'MALA on all rows':<22}{rows:>8}{approx:>10}{'1.0x':>10}{'-':>12}{'-':>13}{'-':>9}",
    ]
    for r in table:
        lines.append(
            f"{r.method:<22}{r.size:>8}{r.seconds:>10.2f}{projected / r.seconds:>9.1f}x"
            f"{r.mean_shift:>12.3f}{f'{r.sd_ratio[0]:.2f}-{r.sd_ratio[1]:.2f}':>13}"
            f"{r.kl:>9.3g}" + (" *" if r.rhat > RHAT_LIMIT else "")
        )
    # the faster of the two pipelines, which reach the same accuracy (the uniform row: last)
    best = min(table[:-1], key=lambda r: r.seconds)
    lines += [
        f"~: projected from two short runs on all rows ({_SHORT[0]} and {_SHORT[1]} warm-up + "
        f"kept steps per chain) to the {steps} steps of the default sampler",
        "mean shift (sd), sd ratio and KL (nats): the coreset posterior's draws against the "
        "full data's Laplace approximation, which at this many rows is the posterior to well "
        f"within the Monte Carlo error of the draws (about {shift_floor:.3f} sd and "
        f"{kl_floor:.2g} nats)",
        f"*: R-hat above {RHAT_LIMIT}, the chains may not have converged",
        f"The faster pipeline here, {best.method}, is {speed_phrase(projected / best.seconds)} "
        f"MALA on all "
        f"{rows:,} rows, its posterior means {best.mean_shift:.3f} sd off; a uniform "
        f"subsample of the same size is {table[-1].mean_shift:.2f} sd off.",
    ]
    return lines
