"""What a fit costs: its passes over the data and the seconds of its stages (``fit_stats_``).

A coreset fit records, while it runs, the rows it reads block by block (a pass over the data
reads each row once: the moments, the one pass of the summaries, any pass that confirms the
data's fit) and apart from them the rows it reads at random (a pilot's sample), and the
seconds of each stage. The recorder is the fit's own (a context variable): the readers of rows
(:mod:`skcoreset.coreset._blocks`, the dask client) and the stages report to whichever fit is
running, and nothing when none is (a dask task on a worker reports nothing: its client counts
the pass of tasks).
"""

import contextvars
import time
from contextlib import contextmanager

_CURRENT = contextvars.ContextVar("skcoreset_fit_stats", default=None)

#: The stages of a coreset fit, in their order (``fit_stats_["seconds"]``).
STAGES = (
    "validation and moments",
    "first Laplace fit",
    "pass over the data",
    "data fit",
    "selection",
    "growth",
    "quality",
)


class FitStats:
    """The cost of one fit (or of a stream so far), filled by :func:`recording`."""

    def __init__(self):
        self.rows_read = 0
        self.rows_sampled = 0
        self.seconds = dict.fromkeys(STAGES, 0.0)
        self.total = 0.0
        self._open = []  # the stages entered, innermost last: [name, start, nested seconds]

    def as_dict(self, n_rows, data_fit=None):
        """``fit_stats_``: passes over the ``n_rows`` rows of the data, rows read at random,
        seconds per stage (exclusive of the stages inside them) and in all, and how the data's
        fit was made (``data_fit``: its passes and predicted error, when made from sums)."""
        seconds = dict(self.seconds)
        seconds["other"] = max(self.total - sum(seconds.values()), 0.0)
        out = {
            "passes": self.rows_read / n_rows if n_rows else 0.0,
            "rows": int(n_rows),
            "rows_sampled": int(self.rows_sampled),
            "seconds": seconds,
            "total_seconds": self.total,
        }
        if data_fit:
            out["data_fit"] = dict(data_fit)
        return out


@contextmanager
def recording(stats=None):
    """Record the fit run inside: yields its :class:`FitStats` (``stats`` to add to, a
    stream's)."""
    stats = FitStats() if stats is None else stats
    token = _CURRENT.set(stats)
    start = time.perf_counter()
    try:
        yield stats
    finally:
        stats.total += time.perf_counter() - start
        _CURRENT.reset(token)


@contextmanager
def paused():
    """Nothing inside is recorded: a dask task run in the fit's own thread (the synchronous
    scheduler, a local thread that inherits the context), whose pass the client counts."""
    token = _CURRENT.set(None)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def untracked(task):
    """``task`` run :func:`paused` (a decorator of the dask tasks)."""

    def run(*args, **kwargs):
        with paused():
            return task(*args, **kwargs)

    run.__name__, run.__qualname__, run.__doc__ = task.__name__, task.__qualname__, task.__doc__
    run.__module__ = task.__module__
    return run


def rows_read(n, at_random=False):
    """Report ``n`` rows read by the running fit: in a pass over the blocks, or at random."""
    stats = _CURRENT.get()
    if stats is None:
        return
    if at_random:
        stats.rows_sampled += int(n)
    else:
        stats.rows_read += int(n)


@contextmanager
def stage(name):
    """Time a stage of the running fit (a name of :data:`STAGES`); a stage inside another
    counts for itself only, not for the one around it."""
    stats = _CURRENT.get()
    if stats is None:
        yield
        return
    entry = [name, time.perf_counter(), 0.0]
    stats._open.append(entry)
    try:
        yield
    finally:
        stats._open.pop()
        elapsed = time.perf_counter() - entry[1]
        stats.seconds[name] = stats.seconds.get(name, 0.0) + elapsed - entry[2]
        if stats._open:
            stats._open[-1][2] += elapsed
