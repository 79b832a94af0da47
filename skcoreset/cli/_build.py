"""``skcoreset build``: the coreset of a data file, built chunk by chunk, written as rows and
weights.

The file is read in chunks of rows, each passed to the estimator's ``partial_fit``, which
reduces it and merges it into the coreset of the rows seen so far (merge-reduce): memory holds
one chunk and a few coresets, whatever the size of the file. The coreset of all the rows is
finalized once, after the last chunk, not after every chunk as ``partial_fit`` does. A file
that fits in one chunk gives exactly the coreset of ``fit`` on all its rows; for more chunks,
the first one fixes what every chunk shares (for the pooled methods the fit each chunk is
summarised at), and the file is read again where the data's fit from the summaries is too
uncertain (``_finish_stream(chunks=...)``).

With ``--groups`` the model is multilevel (:class:`~skcoreset.models.Multilevel`), whose
coreset is built by the estimator's ``fit(X, y, groups=...)`` on the whole file (read in
chunks of rows, all kept), so that its small groups can become a coreset of groups; the
output has each kept row's group beside its weight.
"""

import re
import sys
import time

import numpy as np

from ..coreset._quality import quality_target
from ..models import Multilevel, get_model, model_from_targets
from ._algorithms import BY_NAME, choose_algorithm, make_coreset, resolve_model
from ._errors import CommandError
from ._tables import auto_chunk_rows, check_output, open_table, write_coreset


def run_build(args):
    """Build, write and describe the coreset the parsed arguments ``args`` ask for."""
    fmt = check_output(args.output, args.data)
    groups = getattr(args, "groups", None)
    if getattr(args, "slopes", None) and groups is None:
        raise CommandError("--slopes needs --groups: random slopes vary by group")
    args.algorithm = choose_algorithm(args.algorithm, groups)
    algorithm = BY_NAME[args.algorithm]
    model_name = resolve_model(args.algorithm, args.model)  # None: the labels settle it
    # built before any row is read, so that its options are checked first; 'auto' is
    # replaced by the model of the whole label column below
    estimator = make_coreset(
        args.algorithm,
        args.n_points,
        model=model_name or "auto",
        random_state=args.random_state,
        block_size=args.block_size,
        n_projections=args.n_projections,
        prior_scale=args.prior_scale,
        fit_intercept=False if args.no_intercept else None,
    )
    table = open_table(args.data, args.label, groups)
    slopes = _slope_columns(table, args.slopes) if groups is not None else None
    chunk_rows = args.chunk_rows or auto_chunk_rows(table.n_features)
    values = None
    if model_name is None:
        # the estimators' 'auto' would judge from the first chunk only
        model_name, values = _model_from_labels(table, chunk_rows)
        estimator.set_params(model=model_name)
    model = get_model(model_name)
    classes = None
    if model.labels is not None:
        values = table.label_values(chunk_rows) if values is None else values
        classes = _classes(model, table, values)
    if groups is not None:
        return _build_grouped(
            args, fmt, algorithm, model_name, table, estimator, classes, slopes, chunk_rows
        )

    started = time.perf_counter()
    bar = _progress(table, getattr(args, "progress", None))
    try:
        n_rows, n_chunks = _stream(algorithm, model, table, estimator, classes, chunk_rows, bar)
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - started
    if args.n_points != "auto" and args.n_points >= n_rows:
        _warn(
            f"--n-points {args.n_points} is not below the {n_rows} rows of {table.name}: the "
            "coreset is every row, with its weight"
        )

    write_coreset(args.output, fmt, estimator.sample_indices_, estimator.sample_weight_)
    read = (n_rows, n_chunks, chunk_rows, seconds)
    _describe(args, algorithm, model_name, table, estimator, classes, *read)
    return 0


def _stream(algorithm, model, table, estimator, classes, chunk_rows, bar):
    """``(rows, chunks)``: the file's chunks through ``partial_fit``, then the coreset of
    all of them, its data fit confirmed by passes over the file again when it asks."""
    started = time.perf_counter()
    n_chunks = n_rows = 0
    for start, X, y in table.chunks(chunk_rows):
        where = f"{table.name}, rows {start} to {start + len(y) - 1}"
        if classes is None:
            _check_targets(model, y, f"{where}, label {table.label!r}")
        elif n_chunks == 0 and algorithm.projected:
            missing = classes[~np.isin(classes, y)]
            if missing.size:
                _warn(
                    f"the first chunk ({where}) has no row of the class"
                    f"{'es' if missing.size > 1 else ''} {_list(missing)}, and the Laplace fit "
                    "the projection is drawn from is made on the first chunk: shuffle the rows "
                    "or raise --chunk-rows"
                )
        try:  # finalized once, after the last chunk (the same coreset)
            estimator._partial_fit(X, y, classes=classes, finalize=False)
        except ValueError as exc:
            raise _user_error(where, exc) from None
        n_chunks += 1
        n_rows += len(y)
        if bar is not None:
            bar.update(len(y))
        else:
            elapsed = time.perf_counter() - started
            print(
                f"chunk {n_chunks}: rows {start} to {n_rows - 1} done ({elapsed:.1f} s)",
                file=sys.stderr,
            )
    if bar is not None:
        bar.close()
    try:
        # the file can be read again: the data's fit from the chunks' sums is confirmed by
        # more passes over it when its predicted error asks for them
        estimator._finish_stream(chunks=lambda: ((X, y) for _, X, y in table.chunks(chunk_rows)))
    except ValueError as exc:
        raise _user_error(table.name, exc) from None
    return n_rows, n_chunks


def _progress(table, asked=None):
    """A progress bar of the rows read (tqdm's, on standard error, sized by the file's rows
    when its format gives them) when ``asked`` (``--progress``; None: when standard error is
    a terminal), or None: then each chunk prints a line. Without tqdm, None and a warning
    when it was asked for."""
    if asked is None:
        asked = sys.stderr.isatty()
    if not asked:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        _warn("--progress needs tqdm (pip install tqdm): each chunk prints a line instead")
        return None
    return tqdm(total=table.n_rows, desc=table.name, unit="row", unit_scale=True, file=sys.stderr)


def _build_grouped(args, fmt, algorithm, model_name, table, estimator, classes, slopes, chunk_rows):
    """The multilevel coreset of the whole file (``--groups``): read at once, built by
    ``fit(X, y, groups=...)``, written with each row's group."""
    try:
        spec = Multilevel(model_name, slopes=slopes or None)
    except ValueError as exc:
        raise CommandError(f"--groups with the {model_name} model: {exc}") from None
    estimator.set_params(model=spec)
    started = time.perf_counter()
    try:
        X, y, g, n_chunks = table.read_all(chunk_rows)
    except MemoryError:
        raise CommandError(
            f"{table.name} does not fit in memory: with --groups the file is read whole; "
            "stream it from Python with the estimator's partial_fit(X, y, groups=...)"
        ) from None
    n_rows = len(y)
    print(
        f"{table.name}: read {n_rows} rows in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    if classes is None:
        _check_targets(get_model(model_name), y, f"{table.name}, label {table.label!r}")
    try:
        estimator.fit(X, y, groups=g)
    except TypeError as exc:
        # the library's refusals (an algorithm that builds no multilevel coreset, group
        # labels that cannot be sorted) are the user's; any other TypeError is a bug
        if "multilevel" in str(exc):
            raise CommandError(f"--algorithm {args.algorithm}: {exc}") from None
        if "cannot be sorted" in str(exc):
            raise _user_error(f"{table.name}, groups {table.groups!r}", exc) from None
        raise
    except ValueError as exc:
        raise _user_error(table.name, exc) from None
    except MemoryError:
        raise CommandError(
            f"the multilevel coreset of {table.name} does not fit in memory (it is built "
            "on all rows at once)"
        ) from None
    seconds = time.perf_counter() - started
    if args.n_points != "auto" and args.n_points >= n_rows:
        _warn(
            f"--n-points {args.n_points} is not below the {n_rows} rows of {table.name}: the "
            "coreset is every row, with its weight"
        )
    write_coreset(
        args.output,
        fmt,
        estimator.sample_indices_,
        estimator.sample_weight_,
        groups=estimator.sample_groups_,
    )
    _describe_grouped(
        args,
        algorithm,
        model_name,
        table,
        estimator,
        classes,
        slopes,
        n_rows,
        n_chunks,
        chunk_rows,
        seconds,
    )
    return 0


def _slope_columns(table, names):
    """The columns of ``X`` of the ``--slopes`` names: feature names (for .npz also column
    numbers of 'X')."""
    columns = []
    for name in names or ():
        if name in table.feature_names:
            columns.append(table.feature_names.index(name))
        elif name.isdigit() and table.feature_names[0].startswith("X[:,"):
            if int(name) >= table.n_features:
                raise CommandError(
                    f"--slopes {name}: 'X' of {table.name} has {table.n_features} columns"
                )
            columns.append(int(name))
        else:
            raise CommandError(
                f"--slopes {name}: {table.name} has no feature column {name!r} (the features: "
                f"{_names(table.feature_names)})"
            )
    if len(set(columns)) != len(columns):
        raise CommandError("--slopes names a column twice")
    return columns


def _names(names, most=20):
    shown = ", ".join(repr(n) for n in names[:most])
    return shown + (", ..." if len(names) > most else "")


def _model_from_labels(table, chunk_rows):
    """``(model, labels)``: the model the label column calls for (the rule of
    ``model='auto'``, :func:`~skcoreset.models.model_from_targets`, on the whole column), and
    its distinct labels (None if they were not all read).

    Once the rule says 'gaussian' (numbers, more than two, some not integers) no further row
    can change that, and the rest of the column is not read for it.
    """
    for values in table.distinct_labels(chunk_rows):
        try:
            if model_from_targets(values) == "gaussian":
                return "gaussian", None
        except ValueError:
            pass  # not settled yet (integers only, so far): the next rows may settle it
    try:
        return model_from_targets(values), values
    except ValueError as exc:
        raise _user_error(f"{table.name}, label {table.label!r}", exc) from None


def _classes(model, table, values):
    """The class labels of a classification model, from the distinct labels of the file."""
    try:
        return model.labels.fit(values, input_name=f"the label {table.label!r}").classes
    except ValueError as exc:
        raise _user_error(table.name, exc) from None


def _check_targets(model, y, where):
    """Refuse labels the model cannot take (the model's own rule), saying where they are."""
    try:
        model.encode_targets(y)
    except ValueError as exc:
        raise _user_error(where, exc) from None


def _user_error(where, exc):
    """A library's ValueError as the command line's error: where, and the message with the
    estimators' ``model='name'`` written as the option ``--model name``."""
    message = re.sub(r"model='(\w+)'", r"--model \1", str(exc))
    return CommandError(f"{where}: {message}")


def _list(values):
    """Labels as the user wrote them (a NumPy scalar as its Python value): 'a', 'b' and 'c'."""
    shown = [repr(v.item() if hasattr(v, "item") else v) for v in values]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def _warn(message):
    print(f"skcoreset: warning: {message}", file=sys.stderr)


def _describe(
    args, algorithm, model, table, estimator, classes, n_rows, n_chunks, chunk_rows, seconds
):
    """The summary on standard output: what was read, what was built, how close it is."""
    labels = "" if classes is None else f" (classes {_list(classes)})"
    chunks = "1 chunk" if n_chunks == 1 else f"{n_chunks} chunks of up to {chunk_rows} rows"
    print(
        f"{table.name}: {n_rows} rows, {table.n_features} features, label {table.label!r}"
        f"{labels}; read in {chunks}"
    )
    weights = estimator.sample_weight_
    inferred = args.model == "auto" and algorithm.model is None
    print(
        f"{algorithm.label} coreset for the {model} model"
        f"{' (the model the labels call for)' if inferred else ''}: "
        f"{estimator.n_points_} rows, weights summing to {weights.sum():.6g} "
        f"(the data: {n_rows} rows), built in {seconds:.1f} s"
    )
    error = getattr(estimator, "hilbert_error_", None)
    laplace_kl = getattr(estimator, "laplace_kl_", None)
    if laplace_kl is not None:
        target = quality_target(estimator.laplace_.mean.shape[0])
        verdict = "within" if laplace_kl <= target else "ABOVE"
        print(
            f"laplace KL {laplace_kl:.3g}: KL divergence, in nats, from the Laplace fit of the "
            f"coreset's posterior to the data's (0 = the same Gaussian); {verdict} the target "
            f"{target:.3g} (a fifth of the default sampler's Monte Carlo error)"
        )
    if error is not None:
        print(
            f"hilbert error {error:.3g}: the projection's error, the distance between the "
            f"coreset's and the data's log-likelihoods in a {estimator.n_projections}-"
            "dimensional random projection, relative to the data's (0 = exact in it)"
        )
    if laplace_kl is None and error is None:
        print(
            f"no fidelity measure: {algorithm.label} has none without the data in memory "
            "(compare the posteriors with skcoreset.metrics)"
        )
    print(
        f"wrote {args.output}: columns 'row' (0-based row of {table.name}, header not "
        "counted) and 'weight'"
    )


def _describe_grouped(
    args, algorithm, model, table, estimator, classes, slopes, n_rows, n_chunks, chunk_rows, seconds
):
    """The summary of a multilevel coreset: the groups, how many kept whole, the size."""
    labels = "" if classes is None else f" (classes {_list(classes)})"
    chunks = "1 chunk" if n_chunks == 1 else f"{n_chunks} chunks of up to {chunk_rows} rows"
    n_groups = len(estimator.groups_)
    print(
        f"{table.name}: {n_rows} rows, {table.n_features} features, label {table.label!r}"
        f"{labels}, {n_groups} groups in {table.groups!r}; read whole in {chunks}"
    )
    inferred = args.model == "auto" and algorithm.model is None
    effects = "a random intercept per group"
    if slopes:
        effects += " and random slopes on " + _list([table.feature_names[j] for j in slopes])
    print(
        f"{algorithm.label} coreset for the multilevel {model} model"
        f"{' (the model the labels call for)' if inferred else ''}, {effects}: "
        f"{estimator.n_points_} rows, weights summing to {estimator.sample_weight_.sum():.6g} "
        f"(the data: {n_rows} rows), built in {seconds:.1f} s"
    )
    whole = estimator.n_groups_kept_whole_
    print(
        f"groups: {n_groups}; {whole} kept whole (no more rows than their budget: every row, "
        f"weight unchanged), {n_groups - whole} reduced"
    )
    if args.n_points != "auto" and estimator.n_points_ > args.n_points:
        print(
            f"the coreset is larger than --n-points {args.n_points}: a reduced group keeps at "
            "least 4 points per parameter its rows inform, and a group with no more rows "
            "than that is kept whole"
        )
    error = getattr(estimator, "hilbert_error_", None)
    if error is not None:
        print(
            f"hilbert error {error:.3g}: the projection's error inside the reduced groups, "
            "the distances between each group's coreset and data log-likelihoods in a random "
            "projection, summed, relative to the sum of the data's (0 = exact in it; the "
            "groups kept whole are exact)"
        )
    print(
        f"wrote {args.output}: columns 'row' (0-based row of {table.name}, header not "
        f"counted), 'weight' and 'group' (the row's label in {table.groups!r})"
    )
