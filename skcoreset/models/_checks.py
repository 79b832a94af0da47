"""A user's model checked at the start of a fit: its derivatives against finite differences.

A wrong derivative of a user's model - a flipped sign, swapped columns, zeros, a negative
curvature - did not stop a fit: Newton's method met an indefinite Hessian and blamed "the
scale of X and y", or the sampler followed a wrong drift and only R-hat noticed (117
posterior sds off for a zero gradient). The checks here compare the user's functions with
central differences of the user's own log-likelihood, at a few points on a few rows, and name
the function, the parameter and what it returned.

* :func:`check_custom_gradient`: a :class:`~skcoreset.models.CustomModel`'s ``grad`` against
  the differences of its ``loglik`` in each parameter.
* :func:`check_family`: a :class:`~skcoreset.models.SingleIndexFamily`'s ``terms`` (what it
  returns, and its ``dl/deta``), ``curvature`` (non-negative; ``-d2l/deta2`` for a
  log-concave model) and ``dlog_extra``, at scalar ``(eta, y)``, through the functions'
  Python code (no compilation; a function that fails in Python at a point is not checked
  there).

Both raise ``ValueError`` (``TypeError`` for a function returning the wrong kind of value)
and are switched off by the model's ``check_gradient=False``.
"""

import numpy as np

#: Rows of the data a check reads (the first rows with positive weight, at most).
CHECK_ROWS = 5
#: Relative step of the central differences (times max(1, |value|)).
_STEP = 1e-5
#: A derivative is wrong when it misses the differences by more than this fraction of the
#: larger of the two, plus _ABS_TOL (1 + |l|): the differences' own error is below 1e-9
#: relative for smooth functions (rounding 2e-11 |l|, truncation h^2 |l'''| / 6).
_REL_TOL = 1e-3
_ABS_TOL = 1e-8
#: Offsets of the check's linear predictors from the fit's start (single-index families).
_ETA_OFFSETS = (-0.5, 0.0, 0.5)
#: How to switch a check off, by the kind of model.
_SWITCH = {
    "custom": "CustomModel(..., check_gradient=False)",
    "family": "SingleIndexFamily(..., check_gradient=False)",
}


def _wrong(got, ref, value):
    """Where a derivative misses its finite differences (NaN entries are not judged)."""
    tol = _REL_TOL * np.maximum(np.abs(got), np.abs(ref)) + _ABS_TOL * (1.0 + np.abs(value))
    with np.errstate(invalid="ignore"):
        return np.abs(got - ref) > tol


def _fmt(x):
    return np.array2string(np.asarray(x, dtype=float), precision=4, max_line_width=200)


def _diagnosis(got, ref, value, j):
    """What a wrong column ``j`` of a gradient looks like, if it has a simple shape: a
    flipped sign, zeros, or another parameter's slope (swapped columns)."""
    ok = np.isfinite(got[..., j]) & np.isfinite(ref[..., j])
    g, r, v = got[..., j][ok], ref[..., j][ok], value[..., j][ok]
    if not np.any(_wrong(g, -r, v)):
        return " Its sign is flipped."
    if np.all(g == 0.0):
        return " It is 0 where the log-likelihood changes."
    for k in range(ref.shape[-1]):
        other = ref[..., k][ok]
        if k != j and np.all(np.isfinite(other)) and not np.any(_wrong(g, other, v)):
            return f" It is the slope in parameter {k}: columns {j} and {k} swapped?"
    return ""


def check_custom_gradient(model, Xd, y):
    """Check a ``CustomModel``'s ``grad`` against central differences of its ``loglik``.

    At three parameter vectors (zeros, and two draws of N(0, (min(prior_scale, 1) / 2)^2)
    about them, fixed seed) on the rows given, in one call of ``loglik`` with ``3 (2P + 1)``
    vectors and one of ``grad`` with 3. Entries where the log-likelihood is not finite are not
    judged.

    Parameters
    ----------
    model : CustomModel
        The model (its raw functions are called, their shapes checked).
    Xd : ndarray of shape (n, D)
        A few rows, as ``fit`` passes them.
    y : ndarray of shape (n,)
        Their coded targets.

    Raises
    ------
    ValueError
        Naming the parameter, the point and the row where ``grad`` misses the differences.
    """
    P = model.n_parameters
    scale = np.minimum(np.broadcast_to(np.asarray(model.prior_scale, dtype=float), (P,)), 1.0)
    rng = np.random.RandomState(0)
    points = np.vstack([np.zeros(P), 0.5 * scale * rng.standard_normal((2, P))])
    h = _STEP * np.maximum(1.0, np.abs(points))  # (3, P)
    steps = np.eye(P)[None] * h[:, None, :]  # (3, P, P): point m moved along parameter j
    up = (points[:, None, :] + steps).reshape(-1, P)
    down = (points[:, None, :] - steps).reshape(-1, P)
    with np.errstate(all="ignore"):
        try:
            ll = model.raw_draws("loglik", np.vstack([points, up, down]), Xd, y)
            grad = model.raw_draws("grad", points, Xd, y)  # (3, n, P)
        except ValueError:  # a wrong shape: the fit's own first call names it, on its data
            return
        M, n = points.shape[0], Xd.shape[0]
        at = ll[:M]  # (3, n)
        lu, ld = ll[M : M + M * P].reshape(M, P, n), ll[M + M * P :].reshape(M, P, n)
        ref = ((lu - ld) / (2.0 * h[:, :, None])).transpose(0, 2, 1)  # (3, n, P)
        judged = (np.isfinite(lu) & np.isfinite(ld)).transpose(0, 2, 1) & np.isfinite(at)[
            :, :, None
        ]
        ref = np.where(judged, ref, np.nan)
        value = np.broadcast_to(at[:, :, None], ref.shape)
        wrong = _wrong(grad, ref, value) & judged
    if not np.any(wrong):
        return
    counts = wrong.sum(axis=(0, 1))
    j = int(np.argmax(counts))
    m, i = map(int, np.argwhere(wrong[:, :, j])[0])
    hint = _diagnosis(grad, ref, value, j)
    raise ValueError(
        f"The {model.name!r} model's grad does not match its loglik in parameter {j}: at "
        f"theta = {_fmt(points[m])}, on row {i} of the {n} rows checked, loglik's slope in "
        f"theta[{j}] is {ref[m, i, j]:.6g} (central differences) and grad gives "
        f"{grad[m, i, j] + 0.0:.6g} (column {j} of grad's last axis); it misses in "
        f"{int(counts[j])} of {int(judged[:, :, j].sum())} entries.{hint} Fix grad (or "
        f"loglik), or skip this check with {_SWITCH['custom']}."
    )


def _call(fn, *args):
    """``fn``'s Python code on ``args``, or None where it fails (numba's arithmetic differs
    there: a point not to judge)."""
    try:
        return fn.py_func(*args)
    except Exception:  # noqa: BLE001 - any failure of a user's code at a point: skip it
        return None


def _number(value):
    """``value`` as a float, or None if it is not one real number."""
    if isinstance(value, (bool, np.bool_)) or np.ndim(value) != 0:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _pair(family, value, eta, y):
    """``terms``' value as ``(l - l0, dl/deta)``; a TypeError naming it if it is not."""
    pair = None
    if isinstance(value, (tuple, list)) and len(value) == 2:
        pair = (_number(value[0]), _number(value[1]))
    if pair is None or None in pair:
        raise TypeError(
            f"The terms of the family {family.name!r} must return a pair (l - l0, dl/deta) "
            f"of numbers; at eta = {eta:.6g}, y = {y:.6g} it returned {value!r} "
            f"({type(value).__name__}). Return both: `return l, dl`."
        )
    return pair


def _full_loglik(family, eta, y, extra):
    """The whole log-likelihood ``terms + offset + extra_offset`` at one extra parameter (None
    where a function fails)."""
    param = _call(family.prepare, extra)
    if param is None:
        return None
    parts = (
        _call(family.terms, eta, y, param),
        _call(family.offset, y, param),
        _call(family.extra_offset, extra),
    )
    if any(p is None for p in parts) or not isinstance(parts[0], (tuple, list)):
        return None
    values = [_number(parts[0][0]), _number(parts[1]), _number(parts[2])]
    return None if None in values else sum(values)


def check_family(family, y, eta, extra, log_concave, model_name):
    """Check a ``SingleIndexFamily``'s functions at scalar ``(eta, y)`` points.

    At each row's ``y`` and each linear predictor of ``eta`` (the fit's start, moved by
    -0.5, 0 and 0.5): ``terms`` returns a pair of numbers; its ``dl/deta`` matches the
    central differences of ``l`` in ``eta``; ``curvature`` is a number, non-negative, and
    ``-d2l/deta2`` (the differences of ``dl/deta``) when the model is log-concave; with
    ``dlog_extra``, it matches the differences of the whole ``l`` in ``log(extra)``.

    Parameters
    ----------
    family : SingleIndexFamily
        The functions (their Python code is run).
    y : ndarray of shape (n,)
        Coded targets of a few rows.
    eta : ndarray of shape (n,)
        Their linear predictors at the fit's start.
    extra : float
        The extra parameter (1.0 when the model has none).
    log_concave : bool
        Whether the model says ``curvature`` is ``-d2l/deta2`` (else the Fisher information
        may stand for it, and only its sign is checked).
    model_name : str
        For the messages.

    Raises
    ------
    TypeError
        If ``terms`` or ``curvature`` returns the wrong kind of value.
    ValueError
        Naming the function, the point and the values where a derivative is wrong.
    """
    switch = _SWITCH["family"]
    param = _call(family.prepare, extra)
    if param is None:
        return
    for yi, e0 in zip(map(float, y), map(float, eta)):
        for e in (e0 + d for d in _ETA_OFFSETS):
            value = _call(family.terms, e, yi, param)
            if value is None:
                continue
            lv, dv = _pair(family, value, e, yi)
            curv = _call(family.curvature, e, yi, param)
            if curv is not None and _number(curv) is None:
                raise TypeError(
                    f"The curvature of the family {family.name!r} must return one number "
                    f"(-d2l/deta2); at eta = {e:.6g}, y = {yi:.6g} it returned {curv!r}."
                )
            h = _STEP * max(1.0, abs(e))
            ends = [_call(family.terms, e + s * h, yi, param) for s in (1.0, -1.0)]
            if any(v is None for v in ends) or not np.isfinite(lv):
                continue
            (lu, du), (ld, dd) = (_pair(family, v, e, yi) for v in ends)
            slope, bend = (lu - ld) / (2 * h), -(du - dd) / (2 * h)
            if np.isfinite(slope) and _wrong(dv, slope, lv):
                flipped = not _wrong(dv, -slope, lv)
                raise ValueError(
                    f"The family {family.name!r} of the {model_name!r} model: terms' dl/deta "
                    f"does not match its l at eta = {e:.6g}, y = {yi:.6g}: the slope of l is "
                    f"{slope:.6g} (central differences), terms returns {dv:.6g}"
                    f"{' (its sign flipped)' if flipped else ''}. Fix terms' second value, or "
                    f"skip this check with {switch}."
                )
            if curv is None or not np.isfinite(curv):
                continue
            curv = float(curv)
            if curv < -_ABS_TOL * (1.0 + abs(bend)):
                raise ValueError(
                    f"The family {family.name!r} of the {model_name!r} model: curvature is "
                    f"negative ({curv:.6g} at eta = {e:.6g}, y = {yi:.6g}); it must be "
                    "-d2l/deta2, the Laplace fit's weight of the row, which is not negative "
                    f"(here {bend:.6g} by differences of dl/deta; the Fisher information for a "
                    "model that is not log-concave). Fix its sign, or skip this check with "
                    f"{switch}."
                )
            if log_concave and np.isfinite(bend) and _wrong(curv, bend, dv):
                raise ValueError(
                    f"The family {family.name!r} of the {model_name!r} model: curvature "
                    f"returns {curv:.6g} at eta = {e:.6g}, y = {yi:.6g}, where -d2l/deta2 is "
                    f"{bend:.6g} (central differences of terms' dl/deta). Fix curvature; if it "
                    "is the Fisher information of a likelihood that is not log-concave, set "
                    "the model's log_concave = False (Newton then falls back to L-BFGS), or "
                    f"skip this check with {switch}."
                )
        if family.has_extra:
            _check_dlog_extra(family, yi, e0, extra, model_name)


def _check_dlog_extra(family, y, eta, extra, model_name):
    """``dlog_extra`` against central differences of the whole ``l`` in ``log(extra)``."""
    param = _call(family.prepare, extra)
    got = _number(_call(family.dlog_extra, eta, y, param))
    ends = [_full_loglik(family, eta, y, extra * np.exp(s * _STEP)) for s in (1.0, -1.0)]
    value = _full_loglik(family, eta, y, extra)
    if got is None or value is None or None in ends:
        return
    slope = (ends[0] - ends[1]) / (2 * _STEP)
    if np.isfinite(slope) and np.isfinite(got) and _wrong(got, slope, value):
        raise ValueError(
            f"The family {family.name!r} of the {model_name!r} model: dlog_extra returns "
            f"{got:.6g} at eta = {eta:.6g}, y = {y:.6g}, extra = {extra:.6g}, where the slope of "
            f"l (terms + offset + extra_offset) in log(extra) is {slope:.6g} (central "
            "differences). Fix dlog_extra, or skip this check with "
            f"{_SWITCH['family']}."
        )
