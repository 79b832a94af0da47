"""Statistical tests of the sampling baselines: unbiasedness and inclusion probabilities."""

import numpy as np
import pytest

from skcoreset import hilbert


@pytest.fixture(scope="module")
def V():
    rng = np.random.default_rng(4)
    # Heterogeneous norms so that importance sampling differs from uniform sampling.
    return rng.standard_normal((120, 5)) * rng.gamma(1.0, 1.0, size=(120, 1)) + 0.2


def _phi_w_draws(V, func, M, R, **kw):
    return np.array([V.T @ func(V, M, random_state=s, **kw) for s in range(R)])


@pytest.mark.parametrize(
    "func,kw",
    [
        (hilbert.uniform, {"replace": True}),
        (hilbert.uniform, {"replace": False}),
        (hilbert.importance, {"replace": True}),
        (hilbert.importance, {"replace": False}),
    ],
)
def test_unbiased(V, func, kw):
    R, M = 3000, 10
    draws = _phi_w_draws(V, func, M, R, **kw)
    y = V.sum(axis=0)
    se = draws.std(axis=0, ddof=1) / np.sqrt(R)
    z = (draws.mean(axis=0) - y) / se
    # 5 coordinates, fixed seeds: |z| < 4 fails with probability ~3e-4 for an unbiased method
    assert np.all(np.abs(z) < 4), z
    # and the Monte Carlo error is small relative to y: the check has power
    assert np.all(se < 0.1 * np.linalg.norm(y))


def test_importance_beats_uniform_on_heterogeneous_norms(V):
    y = V.sum(axis=0)
    mse = {}
    for func in (hilbert.uniform, hilbert.importance):
        d = _phi_w_draws(V, func, 10, 400, replace=True) - y
        mse[func.__name__] = (d**2).sum(axis=1).mean()
    assert mse["importance"] < mse["uniform"]


def test_without_replacement_sizes_and_inclusion(V):
    N, M, R = V.shape[0], 15, 4000
    sigma = np.linalg.norm(V, axis=1)
    counts = np.zeros(N)
    for s in range(R):
        w = hilbert.importance(V, M, replace=False, random_state=s)
        nz = np.flatnonzero(w)
        assert nz.size == M  # exactly M distinct points
        counts[nz] += 1
        # Horvitz-Thompson weights: 1 / pi_n
        assert np.all(w[nz] >= 1.0 - 1e-12)
    pi = np.minimum(1.0, M * sigma / sigma.sum())  # no capping is active for this V
    assert pi.max() < 1
    se = np.sqrt(pi * (1 - pi) / R)
    assert np.all(np.abs(counts / R - pi) < 4.5 * se + 1e-12)
    w = hilbert.uniform(V, M, random_state=0)
    assert np.count_nonzero(w) == M and np.allclose(w[w > 0], N / M)


def test_importance_certainty_units():
    # One dominant row must be taken with probability 1 and weight 1.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 3))
    X[7] *= 1000
    X[11] = 0.0  # sigma = 0: never drawn
    for s in range(20):
        w = hilbert.importance(X, 5, replace=False, random_state=s)
        assert w[7] == 1.0 and w[11] == 0.0 and np.count_nonzero(w) == 5
        w = hilbert.importance(X, 5, replace=True, random_state=s)
        assert w[11] == 0.0


def test_replace_true_support_can_be_smaller():
    X = np.ones((3, 2))
    supports = {
        np.count_nonzero(hilbert.uniform(X, 3, replace=True, random_state=s)) for s in range(30)
    }
    assert min(supports) < 3
    w = hilbert.uniform(X, 3, replace=True, random_state=0)
    assert np.isclose(w.sum(), 3.0)  # (N/M) * sum of counts = N
