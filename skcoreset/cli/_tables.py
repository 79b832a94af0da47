"""Reading data tables in chunks of rows, and writing a coreset's rows and weights.

Inputs, chosen by the file's extension:

* ``.npz``: the array ``X`` (rows x features) and a label array (``y`` unless named); the
  arrays are streamed from the archive, so only one chunk of rows is ever in memory;
* ``.csv`` (also ``.csv.gz``, ``.csv.bz2``, ``.csv.xz``, ``.csv.zip``): read with pandas, one
  chunk at a time; the label column is named, every other column is a feature;
* ``.parquet``: read with pyarrow, one batch at a time, columns as for csv; also a folder of
  ``.parquet`` part files (as Spark, Dask and pandas write a data set), read in the order of
  their names.

A group column (``groups``, for a multilevel model) is neither a feature nor the label: each
row's group label, any values (numbers or text), none missing; for ``.npz`` an array of the
archive.

Every chunk is checked before it reaches an estimator: features must be numbers (a
non-numeric feature column is refused by name) and every value must be present and finite,
errors naming the column and the row. Rows are numbered from 0 in the order of the file, the
header not counted, which is also how the coreset's rows are written.
"""

import csv
import io
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from ._errors import CommandError, optional_import

#: Bytes of features read per chunk when ``chunk_rows`` is 'auto'.
CHUNK_BYTES = 64 * 2**20

_CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.bz2", ".csv.xz", ".csv.zip")
INPUT_FORMATS = {".npz": "npz", ".parquet": "parquet", **dict.fromkeys(_CSV_SUFFIXES, "csv")}
OUTPUT_FORMATS = {".npz": "npz", ".csv": "csv", ".parquet": "parquet"}


def _format(path, formats, role):
    name = str(path).lower()
    for suffix in sorted(formats, key=len, reverse=True):
        if name.endswith(suffix):
            return formats[suffix]
    listed = ", ".join(sorted(set(formats)))
    raise CommandError(f"{role} {str(path)!r} has an unknown extension; use one of: {listed}")


def auto_chunk_rows(n_features):
    """Rows per chunk that keep a chunk's features near :data:`CHUNK_BYTES`."""
    return max(1000, CHUNK_BYTES // (8 * (n_features + 1)))


# -- reading ------------------------------------------------------------------------------
def open_table(path, label=None, groups=None):
    """Open a data file: its columns are checked, no row is read yet.

    Parameters
    ----------
    path : str or Path
        A ``.npz``, ``.csv`` (possibly compressed) or ``.parquet`` file.
    label : str or None
        The label column (csv, parquet; required) or array (npz; default ``'y'``).
    groups : str or None
        The group column (csv, parquet) or array (npz), or None: no groups.

    Returns
    -------
    table : DataTable
    """
    path = Path(path)
    if path.is_dir():  # a data set of part files
        if not any(path.glob("*.parquet")):
            raise CommandError(
                f"{str(path)!r} is a folder without .parquet files: name a data file, or a "
                "folder of .parquet part files"
            )
        fmt = "parquet"
    else:
        fmt = _format(path, INPUT_FORMATS, "the data file")
    if not path.exists():
        raise CommandError(f"no such file: {str(path)!r}")
    if not path.is_file() and not path.is_dir():
        raise CommandError(f"not a file: {str(path)!r}")
    if fmt == "npz":
        label = "y" if label is None else label
        _check_group_name(groups, label)
        return NpzTable(path, label, groups)
    if label is None:
        raise CommandError(f"--label is required for .{fmt} data: name the label column")
    _check_group_name(groups, label)
    if fmt == "csv":
        return CsvTable(path, label, groups)
    return ParquetTable(path, label, groups)


def _check_group_name(groups, label):
    if groups is not None and groups == label:
        raise CommandError(f"--groups names the label {label!r}: the groups must be another column")


class DataTable:
    """A data file: feature and label columns, read in chunks of rows.

    Subclasses implement ``_read(rows)``, yielding ``(X, y, g)`` per chunk with ``X`` a
    float64 array whose columns were found numeric, ``y`` the labels with none missing and
    ``g`` the group labels with none missing (None without a group column), and
    ``_read_labels(rows)``, yielding the labels alone.
    """

    def __init__(self, path, label, feature_names, groups=None):
        self.path = path
        self.name = path.name
        self.label = label
        self.groups = groups
        self.feature_names = list(feature_names)
        if not self.feature_names:
            besides = f"the label {label!r}"
            if groups is not None:
                besides += f" and the groups {groups!r}"
            raise CommandError(f"{self.name} has no feature column besides {besides}")

    @property
    def n_features(self):
        return len(self.feature_names)

    @property
    def n_rows(self):
        """The rows of the file when its format says without reading them, else None."""
        return None

    def chunks(self, rows):
        """Yield ``(start, X, y)``: the first row number, the features and the labels.

        Parameters
        ----------
        rows : int
            Rows per chunk.
        """
        for start, X, y, _ in self._chunks(rows):
            yield start, X, y

    def _chunks(self, rows):
        start = 0
        for X, y, g in self._read(rows):
            self._check_finite(X, start)
            yield start, X, y, g
            start += len(y)
        if start == 0:
            raise CommandError(f"{self.name} has no data rows")

    def read_all(self, rows):
        """``(X, y, groups, n_chunks)``: every row at once, read in chunks of ``rows`` rows
        (``groups`` None without a group column).

        The group labels are as read, except that a column read as numbers in some chunks and
        as text in others (pandas settles each chunk's type alone) is made text throughout,
        so that ``3`` and ``'3'`` are one group.
        """
        parts = list(self._chunks(rows))
        X = np.concatenate([p[1] for p in parts])
        y = np.concatenate([p[2] for p in parts])
        groups = None
        if self.groups is not None:
            groups = np.concatenate([np.asarray(p[3]) for p in parts])
            if groups.dtype == object:  # text, or text and numbers: text
                groups = groups.astype(str)
        return X, y, groups, len(parts)

    def distinct_labels(self, rows):
        """Yield the distinct labels of the rows read so far, after each chunk (labels only).

        Parameters
        ----------
        rows : int
            Rows per chunk.
        """
        seen = None
        for y in self._read_labels(rows):
            if not len(y):
                continue
            try:
                seen = np.unique(y) if seen is None else np.union1d(seen, y)
            except TypeError:
                raise CommandError(
                    f"the labels {self.label!r} of {self.name} mix values of different types"
                ) from None
            yield seen
        if seen is None:
            raise CommandError(f"{self.name} has no data rows")

    def label_values(self, rows):
        """The distinct labels of the whole file (read chunk by chunk, labels only)."""
        for seen in self.distinct_labels(rows):
            values = seen
        return values

    def _check_finite(self, X, start):
        bad = ~np.isfinite(X)
        if bad.any():
            row, col = np.argwhere(bad)[0]
            value = "missing" if np.isnan(X[row, col]) else "infinite"
            raise CommandError(
                f"{self.name}: feature {self.feature_names[col]!r} is {value} in row "
                f"{start + row}; features must be finite numbers"
            )

    def _refuse_missing_labels(self, missing, start):
        if np.any(missing):
            row = start + int(np.flatnonzero(missing)[0])
            raise CommandError(f"{self.name}: the label {self.label!r} is missing in row {row}")

    def _refuse_missing_groups(self, missing, start):
        if np.any(missing):
            row = start + int(np.flatnonzero(missing)[0])
            raise CommandError(
                f"{self.name}: the group {self.groups!r} is missing in row {row}; every row "
                "needs its group"
            )

    def _refuse_non_numeric(self, columns, detail=""):
        if columns:
            names = ", ".join(repr(c) for c in columns)
            plural = "s" if len(columns) > 1 else ""
            raise CommandError(
                f"{self.name}: non-numeric feature column{plural} {names}{detail}; features must "
                "be numbers: encode or drop them first"
            )


class CsvTable(DataTable):
    """A csv file read with pandas, one chunk of rows at a time."""

    def __init__(self, path, label, groups=None):
        self._pd = optional_import("pandas", "reading .csv files")
        try:
            header = self._pd.read_csv(path, nrows=0)
        except (ValueError, OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read {path.name} as csv: {_first_line(exc)}") from None
        columns = [str(c) for c in header.columns]
        for name in (label, groups):
            if name is not None and name not in columns:
                raise _no_such_column(path, name, columns)
        features = [c for c in columns if c not in (label, groups)]
        super().__init__(path, label, features, groups)

    def _reader(self, rows, usecols=None):
        # pandas before 3.1 parses decimals by default to within an ulp, not exactly (3.1
        # parses exactly and deprecates the option): the file's values, bit for bit
        version = tuple(int(p) for p in self._pd.__version__.split(".")[:2])
        exact = {"float_precision": "round_trip"} if version < (3, 1) else {}
        try:
            yield from self._pd.read_csv(self.path, chunksize=rows, usecols=usecols, **exact)
        except (ValueError, OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read {self.name} as csv: {_first_line(exc)}") from None

    def _read(self, rows):
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        start = 0
        for chunk in self._reader(rows):
            if len(chunk) == 0:  # a header alone: pandas reads its empty columns as text
                continue
            features = chunk[self.feature_names]
            bad = [
                c
                for c in self.feature_names
                if not (is_numeric_dtype(features[c]) or is_bool_dtype(features[c]))
                or features[c].dtype.kind == "c"
            ]
            stop = start + len(chunk) - 1
            self._refuse_non_numeric(bad, f" (in rows {start} to {stop})")
            labels = chunk[self.label]
            self._refuse_missing_labels(labels.isna().to_numpy(), start)
            groups = None
            if self.groups is not None:
                groups = chunk[self.groups]
                self._refuse_missing_groups(groups.isna().to_numpy(), start)
                groups = groups.to_numpy()
            yield features.to_numpy(dtype=np.float64), labels.to_numpy(), groups
            start += len(chunk)

    def _read_labels(self, rows):
        start = 0
        for chunk in self._reader(rows, usecols=[self.label]):
            labels = chunk[self.label]
            self._refuse_missing_labels(labels.isna().to_numpy(), start)
            yield labels.to_numpy()
            start += len(chunk)


class ParquetTable(DataTable):
    """A parquet file, or a folder of part files, read with pyarrow one batch of rows at a
    time (a part file after the other: memory holds a batch, whatever the data set's size)."""

    def __init__(self, path, label, groups=None):
        pa = optional_import("pyarrow", "reading .parquet files")
        ds = optional_import("pyarrow.dataset", "reading .parquet files")
        try:
            files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
            self._dataset = ds.dataset([str(f) for f in files], format="parquet")
        except (pa.ArrowException, OSError) as exc:
            raise CommandError(f"cannot read {path.name} as parquet: {_first_line(exc)}") from None
        schema = self._dataset.schema
        for name in (label, groups):
            if name is not None and name not in schema.names:
                raise _no_such_column(path, name, schema.names)
        features = [name for name in schema.names if name not in (label, groups)]
        super().__init__(path, label, features, groups)
        types = pa.types

        def numeric(t):
            return types.is_integer(t) or types.is_floating(t) or types.is_boolean(t)

        self._refuse_non_numeric([n for n in features if not numeric(schema.field(n).type)])

    @property
    def n_rows(self):
        return int(self._dataset.count_rows())  # the files' metadata

    def _batches(self, rows, columns):
        # one file and one batch ahead at most: the reader's memory stays a few batches
        scanner = self._dataset.scanner(
            columns=columns, batch_size=rows, batch_readahead=1, fragment_readahead=1
        )
        for batch in scanner.to_batches():
            if batch.num_rows:
                yield batch

    def _column(self, batch, name, start, what):
        column = batch.column(name)
        if column.null_count:
            missing = column.is_null().to_numpy(zero_copy_only=False)
            if what == "label":
                self._refuse_missing_labels(missing, start)
            if what == "group":
                self._refuse_missing_groups(missing, start)
            row = start + int(np.flatnonzero(missing)[0])
            raise CommandError(f"{self.name}: feature {name!r} is missing in row {row}")
        return column.to_numpy(zero_copy_only=False)

    def _read(self, rows):
        start = 0
        extra = [] if self.groups is None else [self.groups]
        for batch in self._batches(rows, [*self.feature_names, self.label, *extra]):
            X = np.empty((batch.num_rows, self.n_features))
            for j, name in enumerate(self.feature_names):
                X[:, j] = self._column(batch, name, start, "feature")
            groups = None
            if self.groups is not None:
                groups = self._column(batch, self.groups, start, "group")
            yield X, self._column(batch, self.label, start, "label"), groups
            start += batch.num_rows

    def _read_labels(self, rows):
        start = 0
        for batch in self._batches(rows, [self.label]):
            yield self._column(batch, self.label, start, "label")
            start += batch.num_rows


class NpzTable(DataTable):
    """An ``.npz`` archive: the features ``X`` and a label array, streamed from the archive."""

    def __init__(self, path, label, groups=None):
        try:
            with zipfile.ZipFile(path) as archive:
                members = [m[:-4] for m in archive.namelist() if m.endswith(".npy")]
                for name in ("X", label, groups):
                    if name is not None and name not in members:
                        shown = ", ".join(repr(m) for m in members)
                        raise CommandError(
                            f"{path.name} has no array {name!r} (it has: {shown}); an .npz "
                            "needs the features as 'X' and the labels as 'y' (or --label NAME)"
                            + ("" if groups is None else ", and the groups as --groups NAME")
                        )
                self._X = _npy_member(archive, "X")
                self._y = _npy_member(archive, label)
                self._g = None if groups is None else _npy_member(archive, groups)
        except (zipfile.BadZipFile, ValueError, OSError) as exc:
            raise CommandError(f"cannot read {path.name} as .npz: {_first_line(exc)}") from None
        X_shape, X_dtype = self._X[0], self._X[2]
        y_shape, y_dtype = self._y[0], self._y[2]
        if len(X_shape) != 2:
            raise CommandError(f"{path.name}: 'X' must be 2-D (rows x features), not {X_shape}")
        if len(y_shape) != 1 or y_shape[0] != X_shape[0]:
            raise CommandError(
                f"{path.name}: {label!r} must be 1-D with one label per row of 'X' "
                f"({X_shape[0]}), not of shape {y_shape}"
            )
        if X_dtype.kind not in "biuf":
            raise CommandError(f"{path.name}: 'X' holds {X_dtype} values; features must be numbers")
        if y_dtype.hasobject:
            raise CommandError(f"{path.name}: {label!r} holds Python objects; save plain arrays")
        if self._g is not None:
            g_shape, g_dtype = self._g[0], self._g[2]
            if len(g_shape) != 1 or g_shape[0] != X_shape[0]:
                raise CommandError(
                    f"{path.name}: {groups!r} must be 1-D with one group per row of 'X' "
                    f"({X_shape[0]}), not of shape {g_shape}"
                )
            if g_dtype.hasobject:
                raise CommandError(
                    f"{path.name}: {groups!r} holds Python objects; save plain arrays"
                )
        super().__init__(path, label, [f"X[:, {j}]" for j in range(X_shape[1])], groups)

    @property
    def n_rows(self):
        return int(self._X[0][0])

    def _stream(self, member, rows):
        """Yield consecutive blocks of ``rows`` rows of an array of the archive."""
        shape, fortran, dtype = member[:3]
        with zipfile.ZipFile(self.path) as archive:
            if fortran:  # rows are not contiguous in the file: load the array whole
                array = np.load(self.path, allow_pickle=False)[member[3]]
                for start in range(0, shape[0], rows):
                    yield array[start : start + rows]
                return
            row_bytes = int(np.prod(shape[1:], dtype=np.int64)) * dtype.itemsize
            with archive.open(member[3] + ".npy") as f:
                _skip_header(f)
                for start in range(0, shape[0], rows):
                    n = min(rows, shape[0] - start)
                    data = f.read(n * row_bytes)
                    yield np.frombuffer(data, dtype=dtype).reshape((n, *shape[1:]))

    def _read(self, rows):
        start = 0
        streams = [self._stream(self._X, rows), self._stream(self._y, rows)]
        if self._g is not None:
            streams.append(self._stream(self._g, rows))
        for X, y, *g in zip(*streams):
            if y.dtype.kind == "f":
                self._refuse_missing_labels(np.isnan(y), start)
            groups = g[0] if g else None
            if groups is not None and groups.dtype.kind == "f":
                self._refuse_missing_groups(np.isnan(groups), start)
            yield np.asarray(X, dtype=np.float64), y, groups
            start += len(y)

    def _read_labels(self, rows):
        start = 0
        for y in self._stream(self._y, rows):
            if y.dtype.kind == "f":
                self._refuse_missing_labels(np.isnan(y), start)
            yield y
            start += len(y)


def _no_such_column(path, label, available):
    shown = ", ".join(repr(str(c)) for c in list(available)[:20])
    more = ", ..." if len(available) > 20 else ""
    return CommandError(f"{path.name} has no column {label!r} (it has: {shown}{more})")


def _npy_member(archive, name):
    """``(shape, fortran_order, dtype, name)`` from the header of an array in an archive."""
    with archive.open(name + ".npy") as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f"array {name!r} has an unsupported .npy format {version}")
    return shape, fortran, dtype, name


def _skip_header(f):
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        np.lib.format.read_array_header_1_0(f)
    else:
        np.lib.format.read_array_header_2_0(f)


def _first_line(exc):
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


# -- writing ------------------------------------------------------------------------------
def check_output(path, data):
    """The format of the output file ``path``, checked before any work is done.

    Parameters
    ----------
    path : str or Path
        The output file.
    data : str or Path
        The data file, which the output must not overwrite.

    Returns
    -------
    fmt : {'npz', 'csv', 'parquet'}
    """
    path = Path(path)
    fmt = _format(path, OUTPUT_FORMATS, "the output file")
    parent = path.parent
    if not parent.is_dir():
        raise CommandError(f"the output directory {str(parent)!r} does not exist")
    if path.is_dir():
        raise CommandError(f"the output {str(path)!r} is a directory")
    if path.exists() and Path(data).exists() and os.path.samefile(path, data):
        raise CommandError(
            f"the output {str(path)!r} is the data file: writing the coreset there would "
            "destroy the data; choose another -o"
        )
    if fmt == "parquet":
        optional_import("pyarrow.parquet", "writing .parquet files")
    return fmt


def write_coreset(path, fmt, rows, weights, groups=None):
    """Write the coreset: the columns ``row`` (0-based data row) and ``weight``, and
    ``group`` (each row's group label) when ``groups`` is given.

    The file is written under a temporary name in the same directory and then renamed to
    ``path``: an interrupted or failed write leaves any earlier file at ``path`` as it was,
    never a truncated one. A file replaced keeps its permissions.

    Parameters
    ----------
    path : str or Path
    fmt : {'npz', 'csv', 'parquet'}
        From :func:`check_output`.
    rows : ndarray of int
    weights : ndarray of float
    groups : ndarray or None
        The rows' group labels (numbers or text), or None: no ``group`` column.
    """
    path = Path(path)
    target = Path(os.path.realpath(path))  # through a symbolic link, as open() writes
    rows = np.asarray(rows, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.float64)
    columns = {"row": rows, "weight": weights}
    if groups is not None:
        groups = np.asarray(groups)
        columns["group"] = groups.astype(str) if groups.dtype == object else groups
    # the mode the file would keep if written in place, or the one open() gives a new file
    mode = target.stat().st_mode & 0o7777 if target.exists() else _new_file_mode()
    try:
        fd, temporary = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
        )
    except OSError as exc:
        raise CommandError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
    try:
        with open(fd, "wb") as f:
            if fmt == "npz":
                np.savez(f, **columns)  # a file object: no extension added
            elif fmt == "csv" and groups is None:
                f.write(b"row,weight\n")
                # repr of a float round-trips exactly
                f.writelines(f"{r},{float(w)!r}\n".encode() for r, w in zip(rows, weights))
            elif fmt == "csv":
                _write_csv_with_groups(f, rows, weights, groups)
            else:
                pa = optional_import("pyarrow", "writing .parquet files")
                pq = optional_import("pyarrow.parquet", "writing .parquet files")
                pq.write_table(pa.table(columns), f)
        os.chmod(temporary, mode)  # mkstemp makes the file private (0600)
        os.replace(temporary, target)
    except BaseException as exc:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise CommandError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
        raise


def _write_csv_with_groups(f, rows, weights, groups):
    """The csv of a grouped coreset: group labels quoted where csv needs it (a comma, a
    quote), the weights written as ``repr`` writes them (exactly)."""
    text = io.TextIOWrapper(f, encoding="utf-8", newline="")
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["row", "weight", "group"])
    labels = groups.tolist()  # NumPy scalars as Python values: 3, not np.int64(3)
    writer.writerows([r, repr(float(w)), g] for r, w, g in zip(rows.tolist(), weights, labels))
    text.flush()
    text.detach()  # the file object stays the caller's to close


def _new_file_mode():
    """The permissions ``open`` gives a new file: 0o666 less the process's umask."""
    umask = os.umask(0)  # reading the umask means setting it: set it back at once
    os.umask(umask)
    return 0o666 & ~umask
