"""Accuracy of the vectorisable elementary functions over their whole range.

References: NumPy/SciPy over dense grids (in units of the reference's ulp, which adds NumPy's
own error of about one ulp), and exact values from ``decimal`` at 50 digits on random samples,
where the bounds of the module docstring are checked. Every function is compiled in a loop
twice: with the ``contract`` flag of the likelihood kernels (FMA) and without (two roundings).
"""

import decimal
import math

import numpy as np
import pytest
from numba import njit
from scipy.special import expit

from skcoreset.models._fastmath_kernels import (
    _log1p_unit,
    fast_exp,
    fast_log1p,
    sigmoid,
    softplus,
    softplus_sigmoid,
)

D = decimal.Decimal
decimal.getcontext().prec = 50
TINY = 2.0**-1074  # the smallest subnormal


def _loop(f, fastmath):
    @njit(fastmath=fastmath)
    def run(x):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = f(x[i])
        return out

    return run


@njit
def _spsig(x):
    a = np.empty_like(x)
    b = np.empty_like(x)
    for i in range(x.shape[0]):
        a[i], b[i] = softplus_sigmoid(x[i])
    return a, b


FLAGS = pytest.mark.parametrize("fastmath", [{"contract"}, False], ids=["fma", "nofma"])


def _ulps(got, ref):
    """|got - ref| in units of the spacing of ref (refs must be finite and non-zero)."""
    return np.abs(got - ref) / np.spacing(np.abs(ref))


def _exact_ulps(got, exact):
    """The same against exact Decimal values."""
    return np.array(
        [
            float(abs(D(float(g)) - e) / D(float(np.spacing(abs(float(e))))))
            for g, e in zip(got, exact)
        ]
    )


def _log1p_exact(t):
    t = D(t)
    if abs(t) < D("1e-15"):
        return t - t * t / 2 + t * t * t / 3
    return (1 + t).ln()


@FLAGS
def test_exp(fastmath):
    f = _loop(fast_exp, fastmath)
    # dense grid over all finite, normal results
    x = np.linspace(-708.39, 709.78, 2_000_001)
    assert _ulps(f(x), np.exp(x)).max() <= 2.0
    # exact: below 1 ulp
    rng = np.random.default_rng(0)
    xs = np.concatenate([rng.uniform(-708, 709.7, 2000), rng.uniform(-1, 1, 1000)])
    assert _exact_ulps(f(xs), [D(float(v)).exp() for v in xs]).max() < 1.0
    # subnormal results are rounded once: within one subnormal spacing of libm
    xs = np.linspace(-745.13, -708.4, 20001)
    assert np.max(np.abs(f(xs) - np.array([math.exp(v) for v in xs]))) <= TINY
    # overflow, underflow, special values, as math.exp (without its OverflowError)
    special = np.array([709.79, 710.0, 1e308, np.inf, -745.2, -746.0, -1e308, -np.inf, 0.0, -0.0])
    np.testing.assert_array_equal(
        f(special), [np.inf, np.inf, np.inf, np.inf, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0]
    )
    assert np.isnan(f(np.array([np.nan]))[0])
    assert f(np.array([709.78]))[0] == pytest.approx(math.exp(709.78), rel=2.3e-16)
    assert f(np.array([-745.1]))[0] == TINY


@FLAGS
def test_log1p(fastmath):
    f = _loop(fast_log1p, fastmath)
    x = np.concatenate(
        [
            np.linspace(-1 + 2**-52, 4.0, 2_000_001),
            np.geomspace(1e-300, 1e308, 200_001),
            -np.geomspace(1e-300, 1 - 2**-53, 200_001),
        ]
    )
    ref = np.log1p(x)
    assert _ulps(f(x), ref).max() <= 2.0
    rng = np.random.default_rng(1)
    xs = np.concatenate(
        [
            rng.uniform(-1, 1, 1500),
            10 ** rng.uniform(-20, 300, 1000),
            -1 + 10 ** rng.uniform(-15, 0, 500),
            rng.uniform(0, 1, 1000),  # the range softplus uses
        ]
    )
    assert _exact_ulps(f(xs), [_log1p_exact(v) for v in xs]).max() < 1.0
    got = f(np.array([-1.0, -1.5, -np.inf, np.inf, 1e-310, -1e-310, 0.0, -0.0]))
    np.testing.assert_array_equal(got[:6], [-np.inf, np.nan, np.nan, np.inf, 1e-310, -1e-310])
    assert got[6] == 0.0 and not np.signbit(got[6])
    assert got[7] == 0.0 and np.signbit(got[7])
    assert np.isnan(f(np.array([np.nan]))[0])


def _softplus_exact(s):
    return max(D(float(s)), D(0)) + _log1p_exact((-abs(D(float(s)))).exp())


@FLAGS
def test_softplus(fastmath):
    f = _loop(softplus, fastmath)
    x = np.linspace(-745.0, 745.0, 2_000_001)
    assert _ulps(f(x), np.logaddexp(0.0, x)).max() <= 3.0
    rng = np.random.default_rng(2)
    xs = np.concatenate(
        [rng.uniform(-745, 745, 1000), rng.uniform(-40, 40, 2000), rng.uniform(-1, 1, 1000)]
    )
    assert _exact_ulps(f(xs), [_softplus_exact(v) for v in xs]).max() < 2.0
    # far tails: s itself, and e^s (relative accuracy) until it underflows
    np.testing.assert_array_equal(f(np.array([5000.0, 1e300, 38.0])), [5000.0, 1e300, 38.0])
    np.testing.assert_array_equal(f(np.array([-5000.0, -1e300, -746.0])), [0.0, 0.0, 0.0])
    assert f(np.array([-740.0]))[0] == pytest.approx(math.exp(-740.0), rel=1e-13)
    np.testing.assert_array_equal(f(np.array([np.inf, -np.inf])), [np.inf, 0.0])
    assert np.isnan(f(np.array([np.nan]))[0])


@FLAGS
def test_sigmoid(fastmath):
    f = _loop(sigmoid, fastmath)
    x = np.linspace(-745.0, 745.0, 2_000_001)
    ref = expit(x)
    ok = ref > 0
    assert _ulps(f(x)[ok], ref[ok]).max() <= 3.0
    rng = np.random.default_rng(3)
    xs = np.concatenate([rng.uniform(-745, 40, 1000), rng.uniform(-40, 40, 2000)])
    exact = [1 / (1 + (-D(float(v))).exp()) for v in xs]
    assert _exact_ulps(f(xs), exact).max() < 2.0
    np.testing.assert_array_equal(
        f(np.array([5000.0, -5000.0, np.inf, -np.inf, 0.0])), [1.0, 0.0, 1.0, 0.0, 0.5]
    )
    assert f(np.array([-740.0]))[0] == pytest.approx(math.exp(-740.0), rel=1e-13)
    assert np.isnan(f(np.array([np.nan]))[0])


def test_fused_pair_and_vector_scalar_agreement():
    """softplus_sigmoid is the pair of functions; a vectorised loop and one element at a time
    give the same bits (what makes chains independent of their batch)."""
    x = np.concatenate([np.linspace(-60, 60, 1001), [5000.0, -5000.0, 0.0]])
    a, b = _spsig(x)
    np.testing.assert_array_equal(a, _loop(softplus, False)(x))
    np.testing.assert_array_equal(b, _loop(sigmoid, False)(x))
    one = np.array([[*_spsig(x[i : i + 1])] for i in range(len(x))])[:, :, 0]
    np.testing.assert_array_equal(one[:, 0], a)
    np.testing.assert_array_equal(one[:, 1], b)


@FLAGS
def test_log1p_on_unit_interval_is_the_general_one(fastmath):
    """The cheaper log1p of softplus gives fast_log1p's bits on [0, 1] (and NaN)."""
    x = np.concatenate(
        [
            np.linspace(0.0, 1.0, 2_000_001),
            np.geomspace(1e-320, 1.0, 100_001),
            np.sqrt(2.0) - 1.0 + np.arange(-50, 51) * 2.0**-53,  # the reduction's split
        ]
    )
    np.testing.assert_array_equal(_loop(_log1p_unit, fastmath)(x), _loop(fast_log1p, fastmath)(x))
    assert np.isnan(_loop(_log1p_unit, fastmath)(np.array([np.nan]))[0])
