"""Input validation and helpers shared by the Hilbert coreset functions.

The public functions (``giga``, ``omp``, ...) validate their input with :func:`validate` and
call a private core (``_giga``, ``_omp``, ...) that assumes it: a C-contiguous float64 or
float32 matrix V, an integer 1 <= M <= N, the row norms sigma and a float64 target y. The
coreset estimators call the cores directly with what they have already checked.
"""

import numbers

import numpy as np

from . import _kernels


def check_vectors(vectors):
    """Return ``vectors`` as a C-contiguous float64 or float32 2-D array (never a view we write).

    float32 is kept as storage (the algorithms accumulate in float64); every other real dtype
    is converted to float64.
    """
    if hasattr(vectors, "toarray") and hasattr(vectors, "nnz"):
        raise TypeError("vectors must be a dense array; sparse matrices are not supported")
    V = np.asarray(vectors)
    if V.dtype == object or np.iscomplexobj(V):
        raise TypeError(f"vectors must be a real numeric array, got dtype {V.dtype}")
    if V.ndim != 2:
        raise ValueError(f"vectors must be a 2-D array (rows are the vectors), got ndim={V.ndim}")
    if V.shape[0] < 1 or V.shape[1] < 1:
        raise ValueError(f"vectors must have at least one row and one column, got shape {V.shape}")
    if V.dtype not in (np.float64, np.float32):
        if not (np.issubdtype(V.dtype, np.number) or V.dtype == np.bool_):
            raise TypeError(f"vectors must be a real numeric array, got dtype {V.dtype}")
        V = V.astype(np.float64)
    return np.ascontiguousarray(V)


def check_n_points(n_points, n_rows):
    """n_points must be an integer in [1, N]."""
    if isinstance(n_points, (bool, np.bool_)) or not isinstance(n_points, numbers.Integral):
        raise TypeError(f"n_points must be an integer, got {n_points!r}")
    n_points = int(n_points)
    if n_points < 1 or n_points > n_rows:
        raise ValueError(f"n_points must be in [1, N={n_rows}], got {n_points}")
    return n_points


def check_max_iter(max_iter, default):
    """max_iter must be a positive integer, or None for ``default``."""
    if max_iter is None:
        return int(default)
    if isinstance(max_iter, (bool, np.bool_)) or not isinstance(max_iter, numbers.Integral):
        raise TypeError(f"max_iter must be an integer or None, got {max_iter!r}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter}")
    return int(max_iter)


def check_nonneg_float(value, name):
    """A finite real number >= 0."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


def greedy_setup(M, sigma, y, max_iter):
    """What the greedy cores start from: ``(max_iter, ||y||, inv_sigma, positive)``.

    ``max_iter`` None becomes the default for M; ``inv_sigma`` is 1 / sigma_n where
    ``positive`` (sigma_n > 0) and 0 elsewhere: rows of norm zero carry no information and
    are never selected.
    """
    if max_iter is None:
        max_iter = default_max_iter(M)
    positive = sigma > 0
    inv_sigma = np.zeros(sigma.shape[0])
    inv_sigma[positive] = 1.0 / sigma[positive]
    return max_iter, np.linalg.norm(y), inv_sigma, positive


def row_norms_and_sum(V):
    """sigma_n = ||v_n|| and y = sum_n v_n in one pass; a ValueError if V is not finite."""
    sigma, ysum = _kernels.norms_and_sum(V)
    if not np.all(np.isfinite(sigma)):
        if np.isnan(V).any():
            raise ValueError("vectors contains NaN")
        if np.isinf(V).any():
            raise ValueError("vectors contains inf")
        raise ValueError("vectors has entries so large that their squared norm overflows")
    return sigma, ysum


def check_target(target, n_columns):
    """The target as a float64 copy of length J (never an alias of the caller's array)."""
    y = np.asarray(target)
    if np.iscomplexobj(y) or not (np.issubdtype(y.dtype, np.number) or y.dtype == np.bool_):
        raise TypeError(f"target must be a real numeric array, got dtype {y.dtype}")
    y = np.array(y, dtype=np.float64)
    if y.ndim != 1 or y.shape[0] != n_columns:
        raise ValueError(
            f"target must be a vector of length J={n_columns}, got shape {np.shape(target)}"
        )
    if not np.all(np.isfinite(y)):
        raise ValueError("target contains NaN or inf")
    return y


def validate(vectors, n_points, target):
    """What every public function checks: ``(V, M, sigma, y)`` ready for a private core.

    y is ``target`` if given, else the row sum.
    """
    V = check_vectors(vectors)
    M = check_n_points(n_points, V.shape[0])
    sigma, ysum = row_norms_and_sum(V)
    y = ysum if target is None else check_target(target, V.shape[1])
    return V, M, sigma, y


def default_max_iter(n_points):
    """Iteration cap of the greedy methods: a point can be chosen again, so allow slack."""
    return 10 * n_points + 100


def combination(V, idx, coef):
    """sum_i coef[i] * v_{idx[i]} in float64 (a J-vector); touches only the listed rows."""
    idx = np.asarray(idx, dtype=np.intp)
    if idx.size == 0:
        return np.zeros(V.shape[1])
    return np.asarray(coef, dtype=np.float64) @ V[idx].astype(np.float64, copy=False)


def relative_error(V, w, y):
    """||Phi w - y|| / ||y|| (absolute error ||Phi w - y|| when y == 0)."""
    idx = np.flatnonzero(w)
    res = combination(V, idx, w[idx]) - y
    ynorm = np.linalg.norm(y)
    err = np.linalg.norm(res)
    return float(err / ynorm) if ynorm > 0 else float(err)


def finish(V, w, y, return_info, n_iter, stop_reason, **extra):
    """What the public functions return: ``w``, or ``(w, info)``."""
    if not return_info:
        return w
    info = {
        "n_iter": int(n_iter),
        "stop_reason": stop_reason,
        "error": relative_error(V, w, y),
        "n_support": int(np.count_nonzero(w)),
    }
    info.update(extra)
    return w, info
