"""numba, or the BLAS, on one thread for a while: the one home of those guards.

``numba.set_num_threads`` is thread-local: its guard changes the calling thread's setting
only, and restores it however the block ends. The BLAS's thread count is shared by the
process's threads (though a library may take a count set from another thread than the main one
its own way: OpenBLAS 0.3.31 kept a count the main thread had set, seen from the worker).
"""

import contextlib
import functools
import threading

import numba
from threadpoolctl import ThreadpoolController


@contextlib.contextmanager
def one_numba_thread():
    """Run the block with numba's kernels on one thread.

    For work too small to pay for a thread team's start (its barriers cost more than the
    work), and inside dask tasks, which the scheduler already runs side by side on the cores.
    """
    previous = numba.get_num_threads()
    if previous == 1:
        yield
        return
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


@functools.cache
def _blas():
    """The BLAS libraries loaded when first asked (NumPy's and SciPy's are, by the package's
    imports): found once, since finding them costs far more than limiting them through the
    cached controller (measured: benchmarks/README.md, Thresholds)."""
    return ThreadpoolController()


# Fits running side by side on threads share the process's BLAS setting: the first to enter
# limits it, the last to leave restores it (one fit leaving first must not restore it under
# the other, nor the other then "restore" the limit for good).
_BLAS_GUARD = {"depth": 0, "limiter": None, "lock": threading.Lock()}


@contextlib.contextmanager
def one_blas_thread():
    """Run the block with the BLAS on one thread (a context manager, or a decorator).

    A fit's passes run on as many threads as numba has, one per core; the BLAS's threads,
    which its calls on small matrices (a chunk's 32 768 x 21 products, a Laplace fit's
    solves) leave spinning, took those cores from them: on one BLAS thread QNC with MALA is
    faster at 10^6 and 10^7 rows, and OMP no slower (measured: benchmarks/README.md, Thresholds).
    """
    guard = _BLAS_GUARD
    with guard["lock"]:
        if guard["depth"] == 0:
            guard["limiter"] = _blas().limit(limits=1, user_api="blas")
        guard["depth"] += 1
    try:
        yield
    finally:
        with guard["lock"]:
            guard["depth"] -= 1
            if guard["depth"] == 0:
                guard["limiter"].restore_original_limits()
                guard["limiter"] = None
