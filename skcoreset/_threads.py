"""numba on one thread for a while: the one home of that guard.

``numba.set_num_threads`` is thread-local: the guard changes the calling thread's setting
only, and restores it however the block ends.
"""

import contextlib

import numba


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
