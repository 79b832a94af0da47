"""Numba kernel of the data's moments (``_prior.Moments``): one pass over a block.

In NumPy the shifted sums took a block-sized temporary for ``X - shift``, another for the
float64 copy of float32 data, and a pass each for the sums, a visible part of a large fit
(measured: benchmarks/README.md, Thresholds). Here each row is read once. The rows go in chunks
fixed by their count, each summed by one task, and the chunks' sums are added in order: the same
bits for any number of threads. This module imports no scikit-learn.
"""

from .._parallel_kernels import THREADED_ROWS, row_task_kernel


@row_task_kernel(THREADED_ROWS, rows=("X", "y", "w"))
def moment_tasks(X, y, w, shift_x, shift_y, size, parts):
    """parts[c] += the sums of rows c size .. (c + 1) size - 1, a task each.

    With ``d = x - shift_x`` and ``e = y - shift_y``, a part is ``(sum w d, sum w d^2,
    sum w e, sum w e^2, sum w)``: 2 D + 3 numbers.
    """
    n, D = X.shape
    for c in range(parts.shape[0]):
        part = parts[c]
        for i in range(c * size, min(n, (c + 1) * size)):
            wi = w[i]
            for k in range(D):
                dx = X[i, k] - shift_x[k]
                wdx = wi * dx
                part[k] += wdx
                part[D + k] += wdx * dx
            dy = y[i] - shift_y
            part[2 * D] += wi * dy
            part[2 * D + 1] += wi * dy * dy
            part[2 * D + 2] += wi
