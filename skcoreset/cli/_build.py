"""``skcoreset build``: the coreset of a data file, built chunk by chunk, written as rows and
weights.

The file is read in chunks of rows, each passed to the estimator's ``partial_fit``, which
reduces it and merges it into the coreset of the rows seen so far (merge-reduce): memory holds
one chunk and a few coresets, whatever the size of the file. A file that fits in one chunk
gives exactly the coreset of ``fit`` on all its rows; for more chunks, the first one fixes
what every chunk shares (for the Hilbert methods the Laplace fit the projection is drawn from).
"""

import sys
import time

import numpy as np

from ..models import get_model
from ._algorithms import is_hilbert, label, make_coreset
from ._errors import CommandError
from ._tables import auto_chunk_rows, check_output, open_table, write_coreset


def run_build(args):
    """Build, write and describe the coreset the parsed arguments ``args`` ask for."""
    fmt = check_output(args.output)
    table = open_table(args.data, args.label)
    estimator = make_coreset(
        args.algorithm,
        args.n_points,
        model=args.model,
        random_state=args.random_state,
        block_size=args.block_size,
        n_projections=args.n_projections,
        prior_scale=args.prior_scale,
        fit_intercept=False if args.no_intercept else None,
    )
    chunk_rows = args.chunk_rows or auto_chunk_rows(table.n_features)
    model = get_model(args.model)
    classes = _classes(model, table, chunk_rows) if model.labels is not None else None

    started = time.perf_counter()
    n_chunks = n_rows = 0
    for start, X, y in table.chunks(chunk_rows):
        where = f"{table.name}, rows {start} to {start + len(y) - 1}"
        if classes is None:
            _check_targets(model, y, f"{where}, label {table.label!r}")
        elif n_chunks == 0 and is_hilbert(args.algorithm) and np.unique(y).shape[0] < 2:
            _warn(
                f"the first chunk ({where}) holds one class only, and the Laplace fit the "
                "projection is drawn from is made on the first chunk: shuffle the rows or "
                "raise --chunk-rows"
            )
        try:
            estimator.partial_fit(X, y, classes=classes)
        except ValueError as exc:
            raise CommandError(f"{where}: {exc}") from None
        n_chunks += 1
        n_rows += len(y)
        elapsed = time.perf_counter() - started
        print(
            f"chunk {n_chunks}: rows {start} to {n_rows - 1} done ({elapsed:.1f} s)",
            file=sys.stderr,
        )
    seconds = time.perf_counter() - started
    if args.n_points >= n_rows:
        _warn(
            f"--n-points {args.n_points} is not below the {n_rows} rows of {table.name}: the "
            "coreset is every row, with its weight"
        )

    write_coreset(args.output, fmt, estimator.sample_indices_, estimator.sample_weight_)
    _describe(args, table, estimator, classes, n_rows, n_chunks, chunk_rows, seconds)
    return 0


def _classes(model, table, chunk_rows):
    """The class labels of a classification model, from a pass over the label column."""
    values = table.label_values(chunk_rows)
    try:
        return model.labels.fit(values, input_name=f"the label {table.label!r}").classes
    except ValueError as exc:
        raise CommandError(f"{table.name}: {exc}") from None


def _check_targets(model, y, where):
    """Refuse labels the model cannot take (the model's own rule), saying where they are."""
    try:
        model.encode_targets(y)
    except ValueError as exc:
        raise CommandError(f"{where}: {exc}") from None


def _show(value):
    """A label as the user wrote it (a NumPy scalar as its Python value)."""
    return repr(value.item() if hasattr(value, "item") else value)


def _warn(message):
    print(f"skcoreset: warning: {message}", file=sys.stderr)


def _describe(args, table, estimator, classes, n_rows, n_chunks, chunk_rows, seconds):
    """The summary on standard output: what was read, what was built, how close it is."""
    shown = None if classes is None else [_show(c) for c in classes]
    labels = "" if shown is None else f" (classes {', '.join(shown[:-1])} and {shown[-1]})"
    chunks = "1 chunk" if n_chunks == 1 else f"{n_chunks} chunks of up to {chunk_rows} rows"
    print(
        f"{table.name}: {n_rows} rows, {table.n_features} features, label {table.label!r}"
        f"{labels}; read in {chunks}"
    )
    weights = estimator.sample_weight_
    print(
        f"{label(args.algorithm)} coreset for the {args.model} model: "
        f"{estimator.n_points_} rows, weights summing to {weights.sum():.6g} "
        f"(the data: {n_rows} rows), built in {seconds:.1f} s"
    )
    error = getattr(estimator, "hilbert_error_", None)
    if error is not None:
        print(
            f"hilbert error {error:.3g}: distance between the coreset's and the data's "
            f"log-likelihoods in a {estimator.n_projections}-dimensional random projection, "
            "relative to the data's (0 = exact; an empty coreset scores 1)"
        )
    else:
        print(
            f"no fidelity measure: {label(args.algorithm)} has none without the data in "
            "memory (compare the posteriors with skcoreset.metrics)"
        )
    print(
        f"wrote {args.output}: columns 'row' (0-based row of {table.name}, header not "
        "counted) and 'weight'"
    )
