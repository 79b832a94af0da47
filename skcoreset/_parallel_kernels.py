"""Kernels with a serial and a threaded build, each compiled on its first use.

numba compiles a ``parallel=True`` kernel several times slower than the same loop without
threads (measured 1.6x to 4x on the projections and the Hilbert passes), and its threads only
pay on large inputs: below a few million entries a pass takes milliseconds, less than the
compilation costs in seconds, and on a shared machine the threads' barriers cost more than
they save. :func:`parallel_kernel` builds both from one function (``prange`` is ``range`` in the
serial build); :meth:`ParallelKernel.for_size` picks one by the size of the input, so a small
problem never compiles the threaded build. The two give the same bits: every kernel here splits
its work into chunks fixed by the input, not by the number of threads. This module imports no
scikit-learn.
"""

import numba
import numpy as np
from numba import njit

#: Entries of the input (e.g. rows x columns) from which a kernel runs on numba's threads.
#: Measured on 2 busy cores: a 300 x 20 pass took 7.6 ms threaded against 29 us on one thread
#: (the barrier), and below a few million entries a pass takes about a millisecond.
PARALLEL_MIN_ENTRIES = 4_000_000

# Rows from which the passes summing over rows (Newton's gradient and Hessian, the data's
# moments) run on numba's threads (a Hessian over 250 000 rows of 21 columns: 18 ms serial);
# their row chunks hold at least TASK_ROWS rows, at most MAX_TASKS of them, each with a
# partial sum.
THREADED_ROWS = 100_000
TASK_ROWS = 2048
MAX_TASKS = 16


def row_tasks(n, shape):
    """``(rows per task, zeroed partial sums (tasks, *shape))`` for ``n`` rows: the chunks
    are fixed by the row count, not by the threads."""
    n_tasks = max(1, min(n // TASK_ROWS, MAX_TASKS))
    return (n + n_tasks - 1) // n_tasks, np.zeros((n_tasks, *shape))


def sum_in_order(parts):
    """The sum of the partial sums, added in order: the same bits for any number of threads."""
    total = parts[0].copy()
    for c in range(1, parts.shape[0]):
        total += parts[c]
    return total


class ParallelKernel:
    """The serial and the threaded build of one kernel (see the module docstring).

    Parameters
    ----------
    py_func : function
        The kernel's Python source, with ``numba.prange`` for its parallel loop.
    min_entries : int, default=PARALLEL_MIN_ENTRIES
        The input size from which the threaded build runs.
    **options
        ``numba.njit`` options of both builds (``cache=True`` is implied).
    """

    def __init__(self, py_func, min_entries=PARALLEL_MIN_ENTRIES, **options):
        self.min_entries = min_entries
        self.serial = njit(cache=True, **options)(py_func)
        # A copy under another name: numba names its cache files after the qualified name, so
        # the two builds must not share it.
        twin = type(py_func)(
            py_func.__code__,
            py_func.__globals__,
            py_func.__name__,
            py_func.__defaults__,
            py_func.__closure__,
        )
        twin.__qualname__ = f"{py_func.__qualname__}_threaded"
        twin.__module__ = py_func.__module__
        self.threaded = njit(cache=True, parallel=True, **options)(twin)
        self.__name__, self.__doc__ = py_func.__name__, py_func.__doc__

    def for_size(self, n_entries):
        """The build for an input of ``n_entries`` entries: threaded from ``min_entries`` on
        when numba has several threads, serial otherwise."""
        if n_entries >= self.min_entries and numba.get_num_threads() > 1:
            return self.threaded
        return self.serial

    def __call__(self, *args):
        """Run the threaded build (callers that know the input's size use :meth:`for_size`)."""
        return self.threaded(*args)


def parallel_kernel(min_entries=PARALLEL_MIN_ENTRIES, **options):
    """Decorator: a :class:`ParallelKernel` of the function, threaded from ``min_entries``
    entries on, with these ``njit`` options."""
    return lambda py_func: ParallelKernel(py_func, min_entries, **options)
