"""``skcoreset demo``: every algorithm on the bundled Phishing data, judged by MCMC.

The first ``n_train`` rows of Phishing are the training split of the coreset papers, the rest
a test split. Every algorithm builds coresets of the training rows at a few sizes; MCMC
(:class:`~skcoreset.linear_model.BayesianLogisticRegression`, MALA, with the coreset weights
as ``sample_weight``) runs on each coreset and on all training rows, and each coreset
posterior is compared with the full one. Steps are reported on standard error, the table,
its notes and a sentence on standard output, and a plot is saved. Then one size where
coresets matter (:mod:`._demo_large`): a synthetic problem of a million rows.
"""

import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..coreset import CoresetQualityWarning, CoresetSizeWarning
from ..coreset._registry import ALGORITHMS, BY_NAME
from ..datasets import load_phishing
from ..linear_model import BayesianLogisticRegression
from ..metrics import gaussian_kl, moment_fit
from ..models import SeparationWarning
from ._algorithms import make_coreset
from ._demo_large import run_large
from ._demo_settings import COLUMNS, FULL, QUICK, RHAT_LIMIT, Settings, speed_phrase
from ._errors import CommandError, optional_import


@dataclass
class Row:
    """One line of the table."""

    algorithm: str
    size: int
    requested: int
    kl: float
    mean_shift: float
    test_lpd: float
    seconds: float
    rhat: float


def run_demo(args):
    """Run the demo the parsed arguments ``args`` ask for; return the exit status."""
    settings = QUICK if args.quick else FULL
    sizes = tuple(sorted(set(args.sizes))) if args.sizes else settings.sizes
    plot = _check_plot(args.plot)
    seed = args.random_state
    clock = time.perf_counter()

    data = load_phishing()
    X, y, n_train = data.data, data.target, data.n_train
    X_test, y_test = X[n_train:], y[n_train:]
    X, y = X[:n_train], y[:n_train]
    if settings.train_rows is not None:
        X, y = X[: settings.train_rows], y[: settings.train_rows]
    if sizes[-1] >= X.shape[0]:
        raise CommandError(f"--sizes must be below the {X.shape[0]} training rows; got {sizes[-1]}")
    _step(
        f"Phishing: {X.shape[0]} training rows, {X_test.shape[0]} test rows, "
        f"{X.shape[1]} features; {len(ALGORITHMS)} algorithms x sizes "
        f"{', '.join(map(str, sizes))}"
    )

    start = time.perf_counter()
    _compile_kernels(X, y, settings, seed)
    compile_seconds = time.perf_counter() - start
    _step(
        f"numba kernels ready in {compile_seconds:.1f} s (compiled on the first run, then cached)"
    )

    _step(
        f"MCMC on all {X.shape[0]} training rows ({settings.n_chains} chains x "
        f"{settings.n_samples} draws after {settings.n_warmup} warm-up steps)"
    )
    start = time.perf_counter()
    full_fit = _posterior(X, y, None, settings, seed)
    full_seconds = time.perf_counter() - start
    full_draws = _draws(full_fit)
    full = Row(
        "full data",
        X.shape[0],
        X.shape[0],
        np.nan,
        np.nan,
        full_fit.log_predictive_density(X_test, y_test),
        full_seconds,
        float(np.max(full_fit.rhat_)),
    )
    noise_kl, noise_shift = _fidelity(*np.array_split(full_draws, 2, axis=0))

    print(_header(), flush=True)
    print(_format(full, full_seconds), flush=True)
    rows = []
    for algorithm in ALGORITHMS:
        for size in sizes:
            row = _coreset_row(algorithm, size, X, y, X_test, y_test, full_draws, settings, seed)
            rows.append(row)
            print(_format(row, full_seconds), flush=True)

    print()
    for line in _notes(noise_kl, noise_shift, X_test.shape[0], full_draws.shape[-1]):
        print(line)
    print()
    print(summary(full, rows, noise_kl))
    if plot is not None:
        save_plot(rows, noise_kl, plot)
        print(f"plot: {plot.resolve()}")
    large_rows = settings.large_rows if args.rows is None else args.rows
    if large_rows:
        print()
        for line in run_large(large_rows, seed, _step):
            print(line, flush=True)
    total = time.perf_counter() - clock
    print(f"total {total:.0f} s, of which {compile_seconds:.0f} s preparing numba kernels")
    return 0


# -- the steps ------------------------------------------------------------------------------
def _step(message):
    print(f"[skcoreset demo] {message}", file=sys.stderr, flush=True)


def _check_plot(path):
    """The plot's path, checked before any work (None for 'none')."""
    if path.lower() == "none":
        return None
    optional_import("matplotlib", "the demo's plot (or pass --plot none)")
    from matplotlib.backend_bases import FigureCanvasBase

    path = Path(path)
    formats = FigureCanvasBase.get_supported_filetypes()
    if path.suffix.lower().lstrip(".") not in formats:
        raise CommandError(
            f"--plot {str(path)!r}: unknown image format; use one of "
            f"{', '.join('.' + f for f in sorted(formats))}"
        )
    if not path.parent.is_dir():
        raise CommandError(f"--plot: the directory {str(path.parent)!r} does not exist")
    return path


def _coreset(algorithm, size, seed, **options):
    coreset = make_coreset(algorithm.name, size, model="logistic", random_state=seed, **options)
    if algorithm.name == "uniform":
        coreset.set_params(projection=None)  # uniform sampling needs no projection
    return coreset


def _compile_kernels(X, y, settings, seed):
    """Run every numba kernel once, on all the rows and with the projections of the runs but
    few points and draws, so that the times measured later leave out the compilation of the
    first run: the kernels' builds are picked by the size of their input (serial or threaded),
    so the same sizes compile the same builds."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for algorithm in ALGORITHMS:
            _coreset(algorithm, 5, seed).fit(X, y)
        few = Settings(
            None, (), n_samples=10, n_warmup=10, n_chains=settings.n_chains, large_rows=0
        )
        _posterior(X, y, None, few, seed)


def _posterior(X, y, sample_weight, settings, seed):
    """MALA on the weighted rows; the convergence check is reported in the table instead,
    and so is what separable classes do to a small coreset (its KL to the full posterior)."""
    model = BayesianLogisticRegression(
        n_samples=settings.n_samples,
        n_warmup=settings.n_warmup,
        n_chains=settings.n_chains,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", SeparationWarning)
        return model.fit(X, y, sample_weight=sample_weight)


def _draws(model):
    """Draws of (coefficients, intercept), shape (chains, draws, parameters)."""
    return np.concatenate([model.coef_samples_, model.intercept_samples_[..., None]], axis=-1)


def _fidelity(full_draws, draws):
    """(KL(full || coreset) of the moment fits, mean shift in full-posterior sd)."""
    full_mean, full_cov = moment_fit(full_draws)
    mean, cov = moment_fit(draws)
    kl = gaussian_kl(full_mean, full_cov, mean, cov)
    shift = np.mean(np.abs(mean - full_mean) / np.sqrt(np.diag(full_cov)))
    return kl, float(shift)


def _coreset_row(algorithm, size, X, y, X_test, y_test, full_draws, settings, seed):
    start = time.perf_counter()
    with warnings.catch_warnings():
        # sizes below the parameter count are shown on purpose; the notes say what they mean,
        # and the table gives every coreset's fidelity (a KL method that kept its start too)
        warnings.simplefilter("ignore", CoresetSizeWarning)
        warnings.simplefilter("ignore", CoresetQualityWarning)
        coreset = _coreset(algorithm, size, seed).fit(X, y)
    X_c, y_c, params = coreset.get_coreset()
    X_c, y_c, weights = _both_classes(X_c, y_c, params["sample_weight"], np.unique(y))
    # Chains independent of the full-data ones (seed + 1, within NumPy's seeds): with the same
    # random numbers, chains on nearly equal posteriors move together and hide their Monte
    # Carlo noise.
    fit = _posterior(X_c, y_c, weights, settings, (seed + 1) % 2**32)
    seconds = time.perf_counter() - start
    kl, shift = _fidelity(full_draws, _draws(fit))
    return Row(
        algorithm.label,
        coreset.n_points_,
        size,
        kl,
        shift,
        fit.log_predictive_density(X_test, y_test),
        seconds,
        float(np.max(fit.rhat_)),
    )


def _both_classes(X, y, weights, classes):
    """The coreset, with a row of each class of ``classes`` (the data's labels) it misses, at
    a negligible weight.

    A small coreset can hold one class only. Its posterior exists (the prior is proper), but
    the logistic model refuses targets of one class, so a zero row of the other class is added
    with weight 1e-12: its log-likelihood term changes the posterior by a factor within
    1e-12 of 1.
    """
    missing = np.setdiff1d(classes, y)
    if missing.size == 0:
        return X, y, weights
    X = np.vstack([X, np.zeros((missing.size, X.shape[1]))])
    return X, np.concatenate([y, missing]), np.concatenate([weights, np.full(missing.size, 1e-12)])


# -- the report ----------------------------------------------------------------------------
#: The baseline's label: the summary compares the best coreset with it, the plot dashes it.
_UNIFORM = BY_NAME["uniform"].label
_WIDTHS = (12, 6, 10, 11, 13, 8, 9)


def _header():
    names = ("algorithm", "size", "KL", "mean shift", "test log-lik", "seconds", "speed-up")
    units = ("", "", "(nats)", "(sd)", "", "", "")
    first = _WIDTHS[0]
    line1 = f"{names[0]:<{first}}" + "".join(f"{n:>{w}}" for n, w in zip(names[1:], _WIDTHS[1:]))
    line2 = f"{'':<{first}}" + "".join(f"{u:>{w}}" for u, w in zip(units[1:], _WIDTHS[1:]))
    return line1 + "\n" + line2


def _format(row, full_seconds):
    kl = "-" if np.isnan(row.kl) else f"{row.kl:.3g}"
    shift = "-" if np.isnan(row.mean_shift) else f"{row.mean_shift:.2f}"
    cells = (
        str(row.size),
        kl,
        shift,
        f"{row.test_lpd:.4f}",
        f"{row.seconds:.2f}",
        f"{full_seconds / row.seconds:.1f}x",
    )
    text = f"{row.algorithm:<{_WIDTHS[0]}}" + "".join(
        f"{c:>{w}}" for c, w in zip(cells, _WIDTHS[1:])
    )
    return text + (" *" if row.rhat > RHAT_LIMIT else "")


def _notes(noise_kl, noise_shift, n_test, n_params):
    """The columns explained under the table, with the Monte Carlo noise measured."""
    notes = dict(COLUMNS)
    lines = [f"{name}: {notes[name]}" for name in ("size", "KL", "mean shift")]
    lines[0] += (
        f"; below the {n_params} parameters no coreset can pin the posterior down in every "
        "direction"
    )
    lines[-1] += f" ({n_params} of them)"
    lines.append(
        f"  Monte Carlo noise: the two halves of the full-data draws (half the draws each) "
        f"differ by KL {noise_kl:.2g} nats and mean shift {noise_shift:.2f} sd"
    )
    lines.append(f"test log-lik: {notes['test log-lik']}; {n_test} test rows")
    lines.append(f"seconds: {notes['seconds']}")
    lines.append(f"speed-up: {notes['speed-up']}")
    lines.append(f"*: R-hat above {RHAT_LIMIT}, the chains may not have converged")
    return lines


def summary(full, rows, noise_kl):
    """One sentence on what the table shows, computed from its numbers."""
    largest = max(r.requested for r in rows)
    at = [r for r in rows if r.requested == largest]
    best = min(at, key=lambda r: r.kl)
    noise = ", within the Monte Carlo noise" if best.kl <= noise_kl else ""
    text = (
        f"At {largest} points {best.algorithm} comes closest to the full posterior "
        f"(KL {best.kl:.3g} nats{noise}, posterior means {best.mean_shift:.2f} sd off, test "
        f"log-likelihood {best.test_lpd:.4f} against {full.test_lpd:.4f} with all "
        f"{full.size} rows) and is {speed_phrase(full.seconds / best.seconds)} MCMC on all rows"
    )
    uniform = next((r for r in at if r.algorithm == _UNIFORM), None)
    if uniform is not None and uniform is not best:
        text += (
            f"; a uniform subsample of the same size is at KL {uniform.kl:.3g} nats, its "
            f"posterior means {uniform.mean_shift:.2f} sd off"
        )
    return text + "."


def save_plot(rows, noise_kl, path):
    """KL to the full posterior against the coreset size, one line per algorithm."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.5))
    ax = fig.add_subplot()
    floor = 1e-4  # a KL of 0 has no place on a log axis
    for name in dict.fromkeys(r.algorithm for r in rows):
        mine = [r for r in rows if r.algorithm == name]
        ax.plot(
            [r.size for r in mine],
            [max(r.kl, floor) for r in mine],
            marker="o",
            ls="--" if name == _UNIFORM else "-",
            label=name,
        )
    ax.axhline(max(noise_kl, floor), color="grey", ls=":", label="Monte Carlo noise")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("coreset size (rows)")
    ax.set_ylabel("KL(full || coreset), nats")
    ax.set_title("Phishing: fidelity of the coreset posterior to the full one")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=100)
    except OSError as exc:
        raise CommandError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
