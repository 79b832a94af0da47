"""Elementary functions for float64 that LLVM can vectorise inside numba loops.

``math.exp`` and ``math.log1p`` compile to calls into the C library, one element at a time:
a loop that calls them is never vectorised (numba's LLVM has no vector math library). The
functions here are written in plain arithmetic, integer bit manipulation and selects (no calls,
no data-dependent branches), so a loop over them becomes SIMD code like any other arithmetic.
They are ``inline="always"``: call them from the loop that should vectorise. Divisions are
written ``np.divide``: numba's ``/`` checks for a zero divisor and raises, and that branch
alone stops the vectoriser (under the default ``error_model='python'``).

Accuracy against exact values (decimal arithmetic at 50 digits on random samples; NumPy and
SciPy over dense grids and the extremes; tests/test_fastmath.py). The largest errors seen are
in brackets; the bounds hold with and without FMA contraction by the calling loop.

* :func:`fast_exp`: below 1 ulp (0.92) over the whole float64 range. Results that underflow to
  subnormals are exact to the subnormal spacing (one rounding), 0 below -745.2, ``inf`` above
  709.79 and for ``inf``, 0 for ``-inf``, NaN for NaN: as ``math.exp``, without exceptions.
* :func:`fast_log1p`: below 1 ulp (0.77) for every ``x >= -1``; ``-inf`` at -1, NaN below -1
  and for NaN, ``inf`` for ``inf``, ``x`` itself for ``|x| < 2^-54`` (signed zeros kept).
* :func:`softplus` ``log(1 + e^s)``: below 2 ulp (1.26) for all finite ``s`` (relative error,
  also in the far left tail where the value is ``e^s``, until it underflows); ``s`` itself for
  ``s > 37`` up to rounding, so ``softplus(5000) == 5000`` and ``softplus(-5000) == 0`` (its
  true value 1.4e-2172 underflows).
* :func:`sigmoid` ``1 / (1 + e^-s)``: below 2 ulp (1.86); exactly 0 and 1 at the infinities,
  and ``e^s`` to relative accuracy in the left tail.

No function sets a floating-point exception that matters to numba (there are no traps), and NaN
propagates through each. The polynomial coefficients are the Taylor series of ``exp`` (degree
13 on ``|r| <= ln(2)/2``, truncation error 4e-18) and the minimax coefficients of the
``log1p`` reduction of fdlibm (also used by musl). A calling loop may allow FMA contraction
(``fastmath={"contract"}``, as the likelihood kernels do: faster, never less accurate) but no
reordering flag (``reassoc``, ``fast``), which could cancel the exact range reductions.
Without contraction, vectorised and scalar code give the same bits (tested); with it they may
differ in the last bit, which no caller relies on (a batch of MALA chains runs every chain
through the same loops over the same rows).
"""

import numpy as np
from numba import njit

# exp ----------------------------------------------------------------------------------------
_INV_LN2 = 1.4426950408889634
# ln 2 = _LN2_HI + _LN2_LO; _LN2_HI has 32 significant bits, so n * _LN2_HI is exact for the
# |n| <= 1076 used here (Cody & Waite reduction).
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
# Adding 1.5 * 2^52 rounds a float of magnitude < 2^51 to the nearest integer, which then sits
# in the low bits of the sum: a float-to-int conversion without a conversion instruction
# (AVX2 has no packed float64 -> int64 conversion).
_SHIFT = 6755399441055744.0
_SHIFT_BITS = 0x4338000000000000
# Beyond these the result is inf or 0 whatever the reduction; clamping keeps n in range.
_EXP_LO = -746.0
_EXP_HI = 710.0
_C2 = 1.0 / 2.0
_C3 = 1.0 / 6.0
_C4 = 1.0 / 24.0
_C5 = 1.0 / 120.0
_C6 = 1.0 / 720.0
_C7 = 1.0 / 5040.0
_C8 = 1.0 / 40320.0
_C9 = 1.0 / 362880.0
_C10 = 1.0 / 3628800.0
_C11 = 1.0 / 39916800.0
_C12 = 1.0 / 479001600.0
_C13 = 1.0 / 6227020800.0

# log1p --------------------------------------------------------------------------------------
_ONE_BITS = 0x3FF0000000000000
_SQRT_HALF_BITS = 0x3FE6A09E667F3BCD  # sqrt(2) / 2
_SQRT2 = 1.4142135623730951  # twice that double: where the exponent split of fast_log1p falls
_MANT_MASK = 0x000FFFFFFFFFFFFF
_TINY = 2.0**-54
_LG1 = 6.666666666666735130e-01
_LG2 = 3.999999999940941908e-01
_LG3 = 2.857142874366239149e-01
_LG4 = 2.222219843214978396e-01
_LG5 = 1.818357216161805012e-01
_LG6 = 1.531383769920937332e-01
_LG7 = 1.479819860511658591e-01


@njit(cache=True, inline="always")
def fast_exp(x):
    """e^x for float64, vectorisable; see the module docstring for its accuracy."""
    xc = min(max(x, _EXP_LO), _EXP_HI)
    t = xc * _INV_LN2 + _SHIFT
    n = t - _SHIFT  # round(x / ln 2), an integer-valued float
    k = np.float64(t).view(np.int64) - _SHIFT_BITS  # the same integer
    r = (xc - n * _LN2_HI) - n * _LN2_LO  # |r| <= ln(2) / 2, exactly x - n ln 2 up to rounding
    p = _C12 + r * _C13
    p = _C11 + r * p
    p = _C10 + r * p
    p = _C9 + r * p
    p = _C8 + r * p
    p = _C7 + r * p
    p = _C6 + r * p
    p = _C5 + r * p
    p = _C4 + r * p
    p = _C3 + r * p
    p = _C2 + r * p
    y = 1.0 + (r + (r * r) * p)  # e^r in [0.7, 1.42]
    # 2^k as two factors, built from their exponent bits: both stay normal for k in
    # [-1076, 1025], and y * 2^k1 is exact, so a subnormal or overflowing result is rounded
    # once, by the last product.
    k1 = k >> 1
    two_k1 = np.int64((k1 + 1023) << 52).view(np.float64)
    two_k2 = np.int64((k - k1 + 1023) << 52).view(np.float64)
    res = (y * two_k1) * two_k2
    return x if x != x else res


@njit(cache=True, inline="always")
def fast_log1p(x):
    """log(1 + x) for float64, vectorisable; see the module docstring for its accuracy.

    fdlibm's algorithm (as in musl): ``1 + x = 2^k (1 + f)`` with ``1 + f`` in
    [sqrt(2)/2, sqrt(2)), plus the rounding error ``c`` of ``1 + x`` as a first-order
    correction ``c / (1 + x)``; ``log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2))`` with
    ``s = f / (2 + f)``. The two divisions of that algorithm share one reciprocal here: ``s``
    and the correction enter only as small corrections, so its extra rounding is invisible.
    """
    u = 1.0 + x
    hu = np.float64(u).view(np.int64) + (_ONE_BITS - _SQRT_HALF_BITS)
    k = (hu >> 52) - 1023
    # u / 2^k in [sqrt(2)/2, sqrt(2)), from the mantissa's bits
    m = np.int64((hu & _MANT_MASK) + _SQRT_HALF_BITS).view(np.float64)
    # For k = 0 (x in [sqrt(2)/2 - 1, sqrt(2) - 1)) f = x exactly and there is no correction.
    # Otherwise c is the rounding error of u = 1 + x (exact), negligible from k = 54 on.
    c = (x - (u - 1.0)) if k < 2 else (1.0 - (u - x))
    c = 0.0 if (k == 0 or k >= 54) else c
    f = x if k == 0 else m - 1.0
    # s = f / (2 + f) and c / u = c 2^-k / m from the single reciprocal of m (2 + f).
    inv = np.divide(1.0, m * (2.0 + f))
    kc = min(k, 1022)
    c = (c * (2.0 + f)) * inv * np.int64((1023 - kc) << 52).view(np.float64)  # c 2^-k
    dk = np.int64(_SHIFT_BITS + k).view(np.float64) - _SHIFT  # float(k), no conversion
    res = _log1p_reduced(f, m, inv, c, dk)
    # Special values, as selects: tiny |x| (and signed zeros), -1, below -1, +inf, NaN.
    res = x if abs(x) < _TINY else res
    res = -np.inf if x == -1.0 else res
    res = np.nan if x < -1.0 else res
    res = x if (x == np.inf or x != x) else res
    return res


@njit(cache=True, inline="always")
def _log1p_reduced(f, m, inv, c, dk):
    """k ln 2 + log(1 + f) + c from the reduction of :func:`fast_log1p` (``m = 1 + f``,
    ``inv = 1 / (m (2 + f))``, ``dk = k``, ``c`` the correction already divided by 1 + x)."""
    s = (f * m) * inv
    hfsq = 0.5 * f * f
    z = s * s
    w = z * z
    t1 = w * (_LG2 + w * (_LG4 + w * _LG6))
    t2 = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7)))
    R = t2 + t1
    return s * (hfsq + R) + (dk * _LN2_LO + c) - hfsq + f + dk * _LN2_HI


@njit(cache=True, inline="always")
def _log1p_unit(t):
    """:func:`fast_log1p` for ``t`` in [0, 1] (or NaN), the same bits, a third cheaper.

    There ``1 + t`` is in [1, 2], so k is 0 or 1: a comparison replaces the exponent bits, and
    no special value but NaN can occur (it propagates through the arithmetic).
    """
    u = 1.0 + t
    big = u >= _SQRT2  # k = 1
    m = 0.5 * u if big else u
    f = m - 1.0 if big else t
    c = t - (u - 1.0) if big else 0.0
    inv = np.divide(1.0, m * (2.0 + f))
    c = (c * (2.0 + f)) * inv * 0.5
    return _log1p_reduced(f, m, inv, c, 1.0 if big else 0.0)


@njit(cache=True, inline="always")
def softplus(s):
    """log(1 + e^s) for any float64 ``s``, vectorisable: ``max(s, 0) + log1p(e^-|s|)``."""
    return (s if s > 0.0 else 0.0) + _log1p_unit(fast_exp(-abs(s)))


@njit(cache=True, inline="always")
def sigmoid(s):
    """1 / (1 + e^-s) for any float64 ``s``, vectorisable, from one ``e^-|s|``."""
    e = fast_exp(-abs(s))
    return np.divide(1.0 if s >= 0.0 else e, 1.0 + e)


@njit(cache=True, inline="always")
def softplus_sigmoid(s):
    """``(softplus(s), sigmoid(s))`` sharing one exponential: the logistic log-likelihood
    ``y s - softplus(s)`` and its derivative ``y - sigmoid(s)`` at once."""
    e = fast_exp(-abs(s))
    return (s if s > 0.0 else 0.0) + _log1p_unit(e), np.divide(1.0 if s >= 0.0 else e, 1.0 + e)
