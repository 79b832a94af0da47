"""Property-based checks of the array API on arbitrary small matrices."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from skcoreset import hilbert

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=64)
matrices = st.tuples(st.integers(2, 25), st.integers(1, 8)).flatmap(
    lambda shape: arrays(np.float64, shape, elements=finite)
)


@settings(max_examples=60, deadline=None)
@given(V=matrices, frac=st.floats(0.05, 1.0), seed=st.integers(0, 2**31 - 1))
def test_every_algorithm_returns_a_sparse_nonnegative_weighting(V, frac, seed):
    M = max(1, int(frac * V.shape[0]))
    V0 = V.copy()
    for name in ["uniform", "importance", "frank_wolfe", "giga", "iht", "omp"]:
        w, info = getattr(hilbert, name)(V, M, random_state=seed, return_info=True)
        assert w.shape == (V.shape[0],) and w.dtype == np.float64, name
        assert np.all(np.isfinite(w)) and np.all(w >= 0), name
        assert np.count_nonzero(w) <= M, name
        assert np.isfinite(info["error"]) or np.linalg.norm(V.sum(0)) == 0, name
        np.testing.assert_array_equal(V, V0)


@settings(max_examples=60, deadline=None)
@given(V=matrices, frac=st.floats(0.05, 1.0))
def test_optimal_scaling_never_worse_than_empty(V, frac):
    # GIGA rescales optimally and OMP solves NNLS on its support: w = 0 (error 1) is feasible
    # for both, so neither may end above it.
    M = max(1, int(frac * V.shape[0]))
    y = V.sum(0)
    if np.linalg.norm(y) < 1e-6 * max(np.abs(V).max(), 1e-300):
        return  # a (numerically) zero target has no relative error
    for name in ["giga", "omp"]:
        w = getattr(hilbert, name)(V, M)
        err = np.linalg.norm(V.T @ w - y) / np.linalg.norm(y)
        assert err <= 1 + 1e-9, (name, err)
