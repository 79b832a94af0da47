"""User families, sound and broken, for tests/hostile_cases.py: a logistic likelihood written
as a user would, and the same with one function wrong."""

from numba import njit

from skcoreset.models._fastmath_kernels import sigmoid, softplus_sigmoid


@njit(cache=True)
def terms(eta, y, param):
    sp, p = softplus_sigmoid(eta)
    return y * eta - sp, y - p


@njit(cache=True)
def curvature(eta, y, param):
    p = sigmoid(eta)
    return p * (1.0 - p)


@njit(cache=True)
def negative_curvature(eta, y, param):
    return -curvature(eta, y, param)


@njit(cache=True)
def flipped_terms(eta, y, param):
    lv, dv = terms(eta, y, param)
    return lv, -dv


@njit(cache=True)
def scalar_terms(eta, y, param):
    return terms(eta, y, param)[0]


@njit(cache=True)
def half_curvature(eta, y, param):
    return 0.5 * curvature(eta, y, param)


#: name -> (terms, curvature)
FAMILIES = {
    "sound": (terms, curvature),
    "negative_curvature": (terms, negative_curvature),
    "flipped_derivative": (flipped_terms, curvature),
    "terms_scalar": (scalar_terms, curvature),
    "curvature_half": (terms, half_curvature),
}
