"""Passes over rows, run on Python threads for large inputs around one compiled build.

Every pass over the rows (the data's moments, Newton's gradient and Hessian, the projections and
their statistics, the Hilbert passes) is a :class:`RowTaskKernel`: one numba build, which releases
the GIL; for a large input each thread runs it on a contiguous range of the row tasks. numba's
``parallel=True`` build of the same loops compiles much slower (time a fresh install spends before
its first fit) and runs no faster here (measured: benchmarks/README.md, Thresholds). The results are
the same bits on any number of threads: the tasks are fixed by the input, not by the threads. This
module imports no scikit-learn.
"""

import inspect
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import njit

#: Entries of the input (rows x columns) from which the memory-bound passes (the Hilbert
#: passes, the multinomial Hessian) run on threads: below, a pass is too short for threads to
#: gain much (measured: benchmarks/README.md, Thresholds).
PARALLEL_MIN_ENTRIES = 4_000_000

# Rows from which the passes summing over rows (Newton's gradient and Hessian, the data's
# moments) run on Python threads (:class:`RowTaskKernel`); their row chunks hold at least
# TASK_ROWS rows, at most MAX_TASKS of them, each with a partial sum. Threads pay from a few
# thousand rows: a thread's hand-over is cheap and no barrier spins (measured: benchmarks/README.md,
# Thresholds).
THREADED_ROWS = 8192
TASK_ROWS = 2048
MAX_TASKS = 16


def row_tasks(n, shape, task_rows=TASK_ROWS, max_tasks=MAX_TASKS):
    """``(rows per task, zeroed partial sums (tasks, *shape))`` for ``n`` rows: at least
    ``task_rows`` rows a task, at most ``max_tasks`` tasks, fixed by the row count, not by the
    threads (a last task may be empty: its sum is zero)."""
    n_tasks = max(1, min(n // task_rows, max_tasks))
    return (n + n_tasks - 1) // n_tasks, np.zeros((n_tasks, *shape))


def wide_row_tasks(n, shape):
    """:func:`row_tasks` of the passes whose rows hold hundreds of entries each (the
    projections' statistics, the Hilbert passes): at least 256 rows a task, at most 64 tasks
    (enough to balance 2-8 threads)."""
    return row_tasks(n, shape, 256, 64)


def row_weights(w):
    """Per-row weights as a row-task kernel's build takes them: C-contiguous float64. Unit
    weights often arrive as a read-only view of one number (stride 0), for which numba would
    compile every kernel again (measured: benchmarks/README.md, Thresholds)."""
    return np.ascontiguousarray(w, dtype=np.float64)


def sum_in_order(parts):
    """The sum of the partial sums, added in order: the same bits for any number of threads."""
    total = parts[0].copy()
    for c in range(1, parts.shape[0]):
        total += parts[c]
    return total


def summed_gradient_hessian(parts, P):
    """``(G, H)`` from row tasks' parts laid out ``[G (P), H (P x P)]``, the kernels having
    summed ``H``'s lower triangle only (its upper mirrored here), added in order."""
    total = sum_in_order(parts)
    H = total[P:].reshape(P, P)
    lower = np.tril_indices(P, -1)
    H.T[lower] = H[lower]
    return total[:P], H


class RowTaskKernel:
    """A kernel over row tasks, run for large inputs on Python threads around its one build.

    The kernel sums rows in tasks of ``size`` consecutive rows, task ``c`` into ``parts[c]``
    (the outputs named by ``tasks``), or (no ``tasks``) computes each row's output from that
    row alone. Its build releases the GIL (``nogil``): a large input's tasks (or rows) are
    split into one contiguous range per thread, and each thread runs the build on its range,
    the row arrays (named by ``rows``) and the outputs as views. Every task then sums the
    same rows in the same order as in one call (every row is computed as in one call): the
    same bits, for any number of threads. numba's ``parallel=True`` build of the same loops
    compiles much slower (measured: benchmarks/README.md, Thresholds): time that a fresh install's
    first fit of large data spent for nothing, each task being thousands of rows (or thousands of
    entries a row).

    Parameters
    ----------
    py_func : function
        The kernel: its arguments include the arrays named in ``rows`` and ``tasks``, and
        ``size`` when there are tasks; it returns nothing.
    min_entries : int
        The input size from which it runs on threads.
    rows, tasks : tuple of str
        The arguments with one entry per row (sliced by rows) and per task (by tasks; none:
        the rows are independent).
    **options
        ``numba.njit`` options of the build (``cache=True`` and ``nogil=True`` are implied).
    """

    def __init__(self, py_func, min_entries, rows, tasks, **options):
        self.min_entries = min_entries
        self.serial = njit(cache=True, nogil=True, **options)(py_func)
        names = list(inspect.signature(py_func).parameters)
        self._rows = [names.index(name) for name in rows]
        self._tasks = [names.index(name) for name in tasks]
        self._size = names.index("size") if tasks else None
        self.__name__, self.__doc__ = py_func.__name__, py_func.__doc__

    def for_size(self, n_entries):
        """The build (serial) or :meth:`threaded`, for an input of ``n_entries`` entries."""
        if n_entries >= self.min_entries and numba.get_num_threads() > 1:
            return self.threaded
        return self.serial

    def __call__(self, *args):
        """Run on threads (callers that know the input's size use :meth:`for_size`)."""
        return self.threaded(*args)

    def threaded(self, *args):
        """The build on contiguous ranges of the tasks, one per thread (as many threads as
        numba's thread count, the calling one included)."""
        if self._tasks:
            n_tasks, size = args[self._tasks[0]].shape[0], args[self._size]
        else:  # independent rows: a task is a row
            n_tasks, size = args[self._rows[0]].shape[0], 1

        def run(c0, c1):
            part = list(args)
            for i in self._rows:
                part[i] = args[i][c0 * size : c1 * size]
            for i in self._tasks:
                part[i] = args[i][c0:c1]
            self.serial(*part)

        in_ranges(run, n_tasks)


def in_ranges(run, n_tasks):
    """``run(c0, c1)`` on contiguous ranges of ``n_tasks`` tasks, one range per thread (as
    many threads as numba's thread count, the calling one included, which takes the first).

    For work that releases the GIL: a numba build with ``nogil``, or NumPy's operations on
    large arrays. Returns when every range is done (re-raising the first error). Called from
    one of the pool's own threads (a range whose work has ranges of its own), it runs them
    all on that thread: queued behind it, they would wait for it forever.
    """
    n_threads = max(1, min(numba.get_num_threads(), n_tasks))
    if threading.current_thread().name.startswith(_POOL_NAME):
        n_threads = 1
    bounds = [n_tasks * k // n_threads for k in range(n_threads + 1)]
    pool = _pool(n_threads) if n_threads > 1 else None
    futures = [pool.submit(run, c0, c1) for c0, c1 in zip(bounds[1:-1], bounds[2:])]
    try:
        run(bounds[0], bounds[1])  # the calling thread takes the first range
    finally:  # no thread left writing into the outputs, whatever happened
        for future in futures:
            future.result()


_POOL = {"executor": None, "workers": 0, "lock": threading.Lock()}
_POOL_NAME = "skcoreset-rows"


def _pool(n_threads):
    """The threads of :meth:`RowTaskKernel.threaded` (besides the caller's), created once."""
    with _POOL["lock"]:
        if _POOL["workers"] < n_threads - 1:
            if _POOL["executor"] is not None:
                _POOL["executor"].shutdown(wait=False)
            _POOL["executor"] = ThreadPoolExecutor(n_threads - 1, _POOL_NAME)
            _POOL["workers"] = n_threads - 1
        return _POOL["executor"]


def _forget_pool():
    """In a forked child the parent's threads do not exist: the pool (and its lock, which a
    parent's thread may have held) start afresh, or the first threaded pass would wait
    forever for work no thread takes."""
    _POOL.update(executor=None, workers=0, lock=threading.Lock())


os.register_at_fork(after_in_child=_forget_pool)


def row_task_kernel(min_entries, rows, tasks=("parts",), **options):
    """Decorator: a :class:`RowTaskKernel` of the function, on threads from ``min_entries``
    entries on, with these ``njit`` options."""
    return lambda py_func: RowTaskKernel(py_func, min_entries, rows, tasks, **options)
