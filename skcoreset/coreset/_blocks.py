"""Reading the data block by block, so that a fit never holds more than one block of rows.

``X`` stays where it is - a NumPy array, a ``numpy.memmap`` or an HDF5/Zarr dataset on disk, a
pandas DataFrame - and each block of rows is copied to a C-contiguous float64 array and
validated on its own; errors in a block after the first name the block.
"""

import numpy as np
from sklearn.utils import check_array


def as_source(X):
    """``X`` as something whose rows can be sliced without copying the whole of it.

    NumPy arrays (memmaps included), pandas DataFrames and array-likes with ``shape``,
    ``ndim`` and slicing (h5py and zarr datasets) are kept; anything else (lists, objects
    offering only ``__array__``) is converted once with :func:`numpy.asarray`.
    """
    if isinstance(X, np.ndarray) or hasattr(X, "iloc"):
        return X
    if (
        hasattr(X, "shape")
        and hasattr(X, "ndim")
        and hasattr(X, "__getitem__")
        and not hasattr(X, "tocsr")
    ):
        return X
    if hasattr(X, "tocsr"):
        return X  # sparse: check_array refuses it with scikit-learn's message
    return np.asarray(X)


def n_rows(X):
    """Number of rows of a source."""
    return int(X.shape[0])


def block_bounds(n, block_size, start=0):
    """``(start, stop)`` of consecutive blocks of ``block_size`` rows covering ``n`` rows.

    An empty source still has one (empty) block, so that its validation reports it.
    """
    if n == 0:
        return [(start, start)]
    return [(start + a, start + min(a + block_size, n)) for a in range(0, n, block_size)]


def read_block(X, start, stop, *, label=None, estimator=None):
    """Rows ``start:stop`` of ``X`` as a validated C-contiguous float64 array.

    ``label`` (e.g. "block 3 (rows 300000 to 399999)") prefixes error messages.
    """
    if hasattr(X, "tocsr"):
        part = X  # let check_array refuse the sparse matrix itself
    elif hasattr(X, "iloc"):
        part = X.iloc[start:stop]
    else:
        part = X[start:stop]
    try:
        return check_array(
            part,
            dtype=np.float64,
            order="C",
            input_name="X",
            estimator=estimator,
            copy=False,
        )
    except ValueError as exc:
        if label is None:
            raise
        raise ValueError(f"In {label} of X: {exc}") from None


def describe_block(index, start, stop):
    """How error messages name a block."""
    return f"block {index} (rows {start} to {stop - 1})"
