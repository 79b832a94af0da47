"""Reading the data block by block, so that a fit never holds more than one block of rows.

``X`` stays where it is - a NumPy array, a ``numpy.memmap`` or an HDF5/Zarr dataset on disk, a
pandas DataFrame, a ``scipy.sparse`` matrix or array - and each block of rows is copied to a
C-contiguous float64 array and validated on its own; errors in a block after the first name the
block. A sparse X is densified one block at a time, never whole.
"""

import mmap

import numpy as np
from scipy.sparse import issparse
from sklearn.utils import check_array, check_random_state

from .._stats import rows_read
from ..models import laplace_from_blocks
from ..models._prior import Moments
from ._merge_reduce import Node
from ._taylor import taylor_sums

# The dtypes a pass that builds its own float64 design reads as stored (no float64 copy).
_FLOATS = (np.float64, np.float32)


def as_source(X):
    """``X`` as something whose rows can be sliced without copying the whole of it.

    NumPy arrays (memmaps included), pandas DataFrames, CSR matrices and array-likes with
    ``shape``, ``ndim`` and slicing (h5py and zarr datasets) are kept; other ``scipy.sparse``
    formats become CSR; anything else (lists, objects offering only ``__array__``) is
    converted once with :func:`numpy.asarray`.
    """
    if isinstance(X, np.ndarray) or hasattr(X, "iloc"):
        return X
    if issparse(X):
        # CSR, whose blocks of rows are slices of its arrays. CSC (and COO, DOK, ...) is
        # converted once, a sparse copy: slicing rows of CSC reads every column, per block.
        return check_array(
            X,
            accept_sparse="csr",
            dtype=None,
            ensure_all_finite=False,  # checked block by block, as dense rows are
            ensure_min_samples=0,
            ensure_min_features=0,
        )
    if hasattr(X, "shape") and hasattr(X, "ndim") and hasattr(X, "__getitem__"):
        return X
    return np.asarray(X)


def row_indexable(X):
    """``X``, or for a sparse format without row indexing (COO, DIA, BSR, ...) its CSR copy:
    the container ``fit_resample`` selects the coreset's rows from (CSR and CSC are kept)."""
    if issparse(X) and X.format not in ("csr", "csc"):
        return X.tocsr()
    return X


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


def read_block(
    X, start, stop, *, label=None, estimator=None, dtype=np.float64, checked=False, finite=True
):
    """Rows ``start:stop`` of ``X`` as a validated C-contiguous float64 array.

    ``label`` (e.g. "block 3 (rows 300000 to 399999)") prefixes error messages. ``dtype``
    as for ``check_array``: ``(np.float64, np.float32)`` keeps float32 rows as they are, for
    a caller that converts them itself. ``checked``: an earlier pass validated these rows,
    which are only converted (a pass of the rows saved); ``finite=False``: every check but
    the rows' finiteness, which the caller's pass sees itself (:meth:`InMemoryData.moments`).
    """
    if checked:
        rows = np.asarray(rows_as_read(X, start, stop))
        floats = dtype if isinstance(dtype, tuple) else (dtype,)
        if rows.dtype not in floats:
            rows = rows.astype(floats[0])
        return np.ascontiguousarray(rows)
    try:
        return check_array(
            rows_as_read(X, start, stop),
            dtype=dtype,
            order="C",
            input_name="X",
            estimator=estimator,
            copy=False,
            ensure_all_finite=finite,
        )
    except ValueError as exc:
        if label is None:
            raise
        raise ValueError(f"In {label} of X: {exc}") from None


def rows_as_read(X, start, stop):
    """Rows ``start:stop`` of ``X`` as they are stored (any dtype), not validated: for passes
    over rows a first pass has validated. Sparse rows come dense (this block's only). The
    running fit counts them read (``fit_stats_``)."""
    rows_read(max(0, min(stop, n_rows(X)) - start))
    if issparse(X):
        return X[start:stop].toarray()
    if _is_file_memmap(X):
        return _read_memmap_rows(X, start, stop)
    if hasattr(X, "iloc"):
        return X.iloc[start:stop]
    return X[start:stop]


def read_rows(X, indices, *, estimator=None):
    """Rows ``indices`` (sorted) of ``X`` as a validated float64 array, reading no others.

    An error names the first bad row by its number in ``X``.
    """
    rows_read(len(indices), at_random=True)
    if _is_file_memmap(X):
        part = np.empty((len(indices), X.shape[1]), dtype=X.dtype)
        row_bytes = X.shape[1] * X.dtype.itemsize
        with open(X.filename, "rb") as f:
            for k, i in enumerate(indices):
                f.seek(X.offset + int(i) * row_bytes)
                f.readinto(memoryview(part[k]).cast("B"))
    elif hasattr(X, "iloc"):
        part = X.iloc[indices]
    elif issparse(X):
        part = X[indices].toarray()
    else:
        part = X[indices]
    return validate_rows(part, indices, estimator)


def validate_rows(part, indices, estimator=None):
    """``check_array`` of gathered rows; an error names the first bad row of ``X``."""
    try:
        return check_array(part, dtype=np.float64, order="C", input_name="X", estimator=estimator)
    except ValueError as exc:
        values = np.asarray(part)
        if values.dtype.kind in "fc" and values.ndim == 2:
            bad = np.flatnonzero(~np.isfinite(values).all(axis=1))
            if bad.size:
                raise ValueError(f"In row {int(indices[bad[0]])} of X: {exc}") from None
        raise


def describe_block(index, start, stop):
    """How error messages name a block."""
    return f"block {index} (rows {start} to {stop - 1})"


def _is_file_memmap(X):
    """A C-ordered 2-D memmap of its own file (not a view): its rows can be read with plain
    file reads."""
    return (
        isinstance(X, np.memmap)
        and isinstance(X.base, mmap.mmap)
        and X.ndim == 2
        and X.flags.c_contiguous
        and X.filename is not None
    )


def _read_memmap_rows(X, start, stop):
    """Rows ``start:stop`` of a memmap read from its file into a fresh array.

    Slicing the mapping itself would leave every page it touched resident in the process
    (file-backed pages count in its memory until the mapping is closed): a fit of a file larger
    than memory would then be limited by the page cache. A plain read keeps one block.
    """
    row_bytes = X.shape[1] * X.dtype.itemsize
    count = (stop - start) * X.shape[1]
    rows = np.fromfile(X.filename, dtype=X.dtype, count=count, offset=X.offset + start * row_bytes)
    return rows.reshape(stop - start, X.shape[1])


def sample_rows(n, size, random_state):
    """``size`` of ``range(n)`` drawn uniformly without replacement, sorted: in time of order
    ``size``, where ``RandomState.choice`` permutes all ``n``. NumPy's Generator draws them
    (faster than scikit-learn's ``sample_without_replacement``), seeded from
    ``random_state`` (measured: benchmarks/README.md, Thresholds)."""
    seed = check_random_state(random_state).randint(2**32, size=4, dtype=np.uint64)
    return np.sort(np.random.default_rng(seed).choice(n, size, replace=False))


class InMemoryData:
    """The rows of a fit as its preparation sees them (e.g. for the Laplace fit): a sample,
    all of them when they fit in one block, or blocks; never more than one block at once.

    Parameters
    ----------
    X : source
        From :func:`as_source`.
    y, sample_weight : ndarray of shape (n_samples,)
        Coded targets and weights.
    block_rows : int
        Rows per block.
    estimator : estimator
        For scikit-learn's error messages.
    """

    def __init__(self, X, y, sample_weight, block_rows, estimator=None, pilot=None):
        self.X, self.y, self.sample_weight = X, y, sample_weight
        self.block_rows = block_rows
        self.estimator = estimator
        #: Whether a pass (the moments') has validated every row: later passes convert them
        #: without checking again.
        self.validated = False
        #: The sorted rows of the pilot's sample (:func:`~._preparation.pilot_rows`), or None.
        self.pilot = pilot

    @property
    def n_rows(self):
        return n_rows(self.X)

    @property
    def total_weight(self):
        return float(self.sample_weight.sum())

    def sample(self, size, random_state):
        """``(indices, X, y, w)`` of ``size`` rows drawn uniformly among those with positive
        weight, or None when ``size`` is None or not below their number."""
        positive = np.flatnonzero(self.sample_weight > 0)
        if size is None or size >= positive.shape[0]:
            return None
        rows = positive[sample_rows(positive.shape[0], size, random_state)]
        X = read_rows(self.X, rows, estimator=self.estimator)
        return rows, X, self.y[rows], self.sample_weight[rows]

    def pilot_sample(self):
        """``(indices, X, y, w)`` of the pilot's rows of positive weight (read at random,
        validated), or None when there is no pilot."""
        if self.pilot is None:
            return None
        rows = self.pilot[self.sample_weight[self.pilot] > 0]
        X = read_rows(self.X, rows, estimator=self.estimator)
        return rows, X, self.y[rows], np.array(self.sample_weight[rows], dtype=np.float64)

    def moments(self):
        """The weighted moments of the rows: a pass over the blocks, float32 rows as stored,
        which validates every row (a non-finite value makes the sums non-finite, and the block
        is then checked for the error to name)."""
        total = Moments(self.X.shape[1])
        for index, (start, stop) in enumerate(block_bounds(n_rows(self.X), self.block_rows)):
            where = describe_block(index, start, stop) if stop - start < n_rows(self.X) else None
            read = {"label": where, "estimator": self.estimator, "dtype": _FLOATS}
            X = read_block(self.X, start, stop, finite=False, **read)
            total.add(X, self.y[start:stop], self.sample_weight[start:stop])
            if not total.finite():  # a NaN or an infinity (or squares beyond 1e308)
                read_block(self.X, start, stop, **read)
        self.validated = True
        return total

    def all_rows(self):
        """``(X, y, w)`` of the rows with positive weight if they fit in one block, else None."""
        n = n_rows(self.X)
        if n > self.block_rows:
            return None
        X = read_block(self.X, 0, n, estimator=self.estimator)
        keep = self.sample_weight > 0
        if np.all(keep):
            return X, self.y, self.sample_weight
        return X[keep], self.y[keep], self.sample_weight[keep]

    def taylor_pass(self, point):
        """The data's second-order sums at ``point``'s mean (a Laplace fit), over every row
        of positive weight: a pass over the blocks, whose rows an earlier pass validated
        (:func:`~._taylor.fit_from_sums`'s ``passes``)."""
        total = None
        for start, stop in block_bounds(n_rows(self.X), self.block_rows):
            X = rows_as_read(self.X, start, stop)
            y, w = self.y[start:stop], self.sample_weight[start:stop]
            keep = np.flatnonzero(w > 0)
            if keep.shape[0] < w.shape[0]:
                X, y, w = X[keep], y[keep], w[keep]
            if w.shape[0] == 0:
                continue
            sums = taylor_sums(point, Node(keep, w, X, y))
            total = sums if total is None else total + sums
        return total

    def laplace(self, model, start=None):
        """The Laplace fit of all rows: Newton passes over the blocks (from ``start``, a
        LaplaceApproximation, if given)."""
        checked = False  # Newton reads the blocks several times: the first pass validates
        # one array for every pass, each block's design built in it: a fresh one per pass
        # (42 MB at 250 000 rows of 21 columns) comes from the system page by page
        design = None

        def blocks():
            nonlocal checked, design
            bounds = block_bounds(n_rows(self.X), self.block_rows)
            for index, (start, stop) in enumerate(bounds):
                if checked:
                    X = rows_as_read(self.X, start, stop)
                else:
                    where = describe_block(index, start, stop)
                    X = read_block(
                        self.X, start, stop, label=where, estimator=self.estimator, dtype=_FLOATS
                    )
                y, w = self.y[start:stop], self.sample_weight[start:stop]
                keep = w > 0
                if not keep.all():
                    X, y, w = X[keep], y[keep], w[keep]
                # one copy of the block a pass: its float64 design (from float32 X too), in
                # the shared array (each block is summed before the next is read)
                Xd = model.design(X, out=design)
                if Xd is not X and (design is None or Xd.shape[0] > design.shape[0]):
                    design = Xd  # an array of ours (never the caller's rows), the largest yet
                yield Xd, y, w
            checked = True

        theta0 = None if start is None else start.mean
        return laplace_from_blocks(model, blocks, theta0=theta0)
