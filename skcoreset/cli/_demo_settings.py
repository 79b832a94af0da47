"""The scale of ``skcoreset demo`` and the meaning of its columns.

Apart from :mod:`._demo` so that the command line's help can show them without loading the
demo's numerical stack.
"""

import textwrap
from dataclasses import dataclass

#: R-hat above this marks a row: its chains may not have converged.
RHAT_LIMIT = 1.01


@dataclass(frozen=True)
class Settings:
    """The scale of a demo run: training rows (None: all), sizes and the MCMC of each fit;
    the rows of the large synthetic problem (0: none)."""

    train_rows: int | None
    sizes: tuple
    n_samples: int
    n_warmup: int
    n_chains: int
    large_rows: int


#: The full demo, and ``--quick`` (for tests: fewer rows, sizes and draws).
FULL = Settings(
    train_rows=None, sizes=(10, 30, 100), n_samples=1000, n_warmup=500, n_chains=4, large_rows=10**6
)
QUICK = Settings(
    train_rows=2000, sizes=(10, 30), n_samples=250, n_warmup=250, n_chains=2, large_rows=20_000
)

#: What each column of the table means (the help's epilog and the notes under the table).
COLUMNS = (
    ("algorithm", "how the coreset was built; 'full data' is MCMC on all training rows"),
    (
        "size",
        "rows in the coreset (fewer than asked when a method draws with replacement or "
        "drives weights to zero)",
    ),
    (
        "KL",
        "KL(full || coreset) in nats between Gaussians fitted (mean and covariance) to the "
        "MCMC draws of the full-data posterior and of the coreset posterior: 0 = the same "
        "posterior; 0.5 = equal covariances and means 1 sd apart",
    ),
    (
        "mean shift",
        "distance between the coreset and full posterior means, in full-posterior standard "
        "deviations, averaged over the parameters",
    ),
    (
        "test log-lik",
        "mean log posterior predictive density of the test rows (higher is better)",
    ),
    ("seconds", "building the coreset + MCMC on it (full data: MCMC on all rows)"),
    ("speed-up", "full-data MCMC seconds / seconds"),
)


def columns_help():
    """The meaning of the table's columns, one item each (for ``--help``)."""
    return "\n".join(
        textwrap.fill(text, 88, initial_indent=f"  {name:<13} ", subsequent_indent=" " * 16)
        for name, text in COLUMNS
    )


def speed_phrase(ratio):
    """'2.5x faster than', 'about as fast as' or '1.8x slower than', for a ratio of times."""
    if 0.95 <= ratio < 1.05:
        return "about as fast as"
    return f"{ratio:.1f}x faster than" if ratio >= 1 else f"{1 / ratio:.1f}x slower than"
