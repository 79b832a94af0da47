"""skcoreset.hilbert against the plain NumPy oracles in tests/oracles/hilbert_oracles.py."""

import numpy as np
import pytest

from skcoreset import hilbert

from .oracles import hilbert_oracles as O


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(1)
    V = rng.standard_normal((200, 30))
    V[:, 0] += 0.3  # a common direction makes the target non-trivial
    return V


@pytest.fixture(scope="module")
def problem_with_zero_rows(problem):
    V = problem.copy()
    V[[3, 50, 199]] = 0.0
    return V


def _rel_diff(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.mark.parametrize("n_points", [1, 2, 7, 20, 45])
@pytest.mark.parametrize("name", ["giga", "frank_wolfe"])
def test_greedy_weights_match_oracle(problem, name, n_points):
    w = getattr(hilbert, name)(problem, n_points)
    wo = getattr(O, name)(problem, n_points)
    assert np.count_nonzero(w) == np.count_nonzero(wo) == n_points
    assert _rel_diff(w, wo) < 1e-10


@pytest.mark.parametrize("name", ["giga", "frank_wolfe", "omp"])
def test_zero_rows_are_never_selected(problem_with_zero_rows, name):
    V = problem_with_zero_rows
    w = getattr(hilbert, name)(V, 15)
    wo = getattr(O, name)(V, 15)
    assert np.all(w[[3, 50, 199]] == 0)
    assert _rel_diff(w, wo) < 1e-10


def test_giga_with_target_matches_oracle(problem):
    target = problem[:100].sum(axis=0) * 1.5
    w, info = hilbert.giga(problem, 12, target=target, return_info=True)
    wo = O.giga(problem, 12, target=target)
    assert _rel_diff(w, wo) < 1e-10
    assert info["error"] == pytest.approx(O.relative_error(problem, wo, target), rel=1e-9)


def test_giga_runs_past_repeated_indices(problem):
    # Asking for many points forces re-selections: the support grows slower than n_iter.
    w, info = hilbert.giga(problem, 100, return_info=True)
    wo = O.giga(problem, 100)
    assert info["n_iter"] > np.count_nonzero(w)
    assert _rel_diff(w, wo) < 1e-8


@pytest.mark.parametrize("n_points", [1, 3, 10, 25])
def test_omp_matches_oracle(problem, n_points):
    w, info = hilbert.omp(problem, n_points, return_info=True)
    wo = O.omp(problem, n_points)
    assert np.count_nonzero(w) == np.count_nonzero(wo)
    assert np.all(w >= 0)
    assert _rel_diff(w, wo) < 1e-9
    assert info["error"] == pytest.approx(O.relative_error(problem, wo), rel=1e-8)


@pytest.mark.parametrize("per_pass", [2, 3])
def test_omp_several_rows_per_pass_matches_oracle(problem, per_pass, monkeypatch):
    """The KL methods' start takes the best rows of each pass in turn: the oracle's weights,
    in fewer passes than additions."""
    from skcoreset.hilbert import _kernels
    from skcoreset.hilbert._omp import _omp

    passes = []
    top = _kernels.top_scaled_dots
    monkeypatch.setattr(_kernels, "top_scaled_dots", lambda *a: passes.append(1) or top(*a))
    target = problem.sum(axis=0)
    sigma = np.linalg.norm(problem, axis=1)
    for M in (1, 10, 25):
        passes.clear()
        w, n_iter, _ = _omp(problem, M, sigma, target, per_pass=per_pass)
        wo = O.omp(problem, M, per_pass=per_pass)
        assert np.count_nonzero(w) == np.count_nonzero(wo) == M
        assert _rel_diff(w, wo) < 1e-9
    assert len(passes) < 0.75 * n_iter


@pytest.mark.parametrize("per_pass", [1, 2])
def test_omp_quantized_search_matches_oracle(per_pass):
    """A quantised search (int16 rows, its best re-ranked from the rows as given) makes the
    oracle's picks. Each row comes in five copies a few 1e-6 apart, closer than the
    quantisation can tell: without the re-ranking the picks differ (checked on the oracle)."""
    from skcoreset.hilbert import _omp as omp_module

    rng = np.random.default_rng(4)
    base = rng.standard_t(3, size=(600, 40)) * rng.lognormal(0, 1, size=(600, 1))
    base[:, 0] += 0.5
    V = np.repeat(base, 5, axis=0) * (1 + 3e-6 * rng.standard_normal((3000, 40)))
    target = V.sum(axis=0)
    sigma = np.linalg.norm(V, axis=1)
    for M in (5, 30):
        w, _, _ = omp_module._omp(V, M, sigma, target, per_pass=per_pass, quantize=True)
        wo = O.omp(V, M, per_pass=per_pass, rerank=omp_module._RERANK)
        assert np.array_equal(w > 0, wo > 0)
        assert _rel_diff(w, wo) < 1e-9
        assert _rel_diff(O.omp(V, M, per_pass=per_pass), wo) < 1e-9  # the exact ranking's
        assert not np.array_equal(O.omp(V, M, per_pass=per_pass, rerank=0) > 0, wo > 0)


def test_omp_active_set_drops_points():
    # A generic target outside the cone of the rows: NNLS zeroes an earlier choice on the way.
    rng = np.random.default_rng(8)
    V = rng.standard_normal((40, 8))
    target = rng.standard_normal(8)
    for M in (4, 6, 8):
        w, info = hilbert.omp(V, M, target=target, return_info=True)
        wo = O.omp(V, M, target=target)
        assert info["error"] == pytest.approx(O.relative_error(V, wo, target), rel=1e-8, abs=1e-12)
        assert np.abs(w - wo).max() < 1e-9 * np.abs(wo).max()
    assert info["n_iter"] > np.count_nonzero(w)  # one point left the support


@pytest.mark.parametrize("k", [0, 2, 5])
def test_cholesky_downdate(k):
    from skcoreset.hilbert._omp import _ActiveSet

    rng = np.random.default_rng(k)
    rows = rng.standard_normal((6, 9))
    act = _ActiveSet(rng.standard_normal(9), capacity=2)  # also exercises growth
    for n, row in enumerate(rows):
        assert act.try_add(n, row)
    act.remove(k)
    keep = np.delete(rows, k, axis=0)
    L = act.L[: act.p, : act.p]
    np.testing.assert_allclose(L @ L.T, keep @ keep.T, atol=1e-12)
    assert np.all(np.diag(L) > 0) and np.allclose(L, np.tril(L))
    assert act.idx == [n for n in range(6) if n != k]
    np.testing.assert_allclose(act.b[: act.p], keep @ act.y)
    assert not act.try_add(99, keep[:2].sum(axis=0))  # in the span: refused


def test_omp_stops_at_rank(problem):
    # J = 30: once the residual vanishes no further point can help.
    w, info = hilbert.omp(problem, 150, return_info=True)
    assert info["stop_reason"] in ("numerical_limit", "converged")
    assert np.count_nonzero(w) <= problem.shape[1]
    assert info["error"] < 1e-10


@pytest.mark.parametrize("debias", [False, True])
@pytest.mark.parametrize("n_points", [1, 5, 20, 60])
def test_iht_objective_matches_oracle(problem, debias, n_points):
    w, info = hilbert.iht(problem, n_points, debias=debias, return_info=True)
    wo = O.iht(problem, n_points, debias=debias)
    e, eo = info["error"], O.relative_error(problem, wo)
    assert np.count_nonzero(w) <= n_points
    assert np.all(w >= 0)
    assert abs(e - eo) <= 1e-6 * eo + 1e-12
    assert info["objective"] == pytest.approx(
        np.linalg.norm(problem.T @ w - problem.sum(0)) ** 2, rel=1e-9
    )


@pytest.mark.parametrize("c", [0.5, 1.0])
def test_iht_step_scale(problem, c):
    e = hilbert.iht(problem, 10, step_scale=c, return_info=True)[1]["error"]
    assert abs(e - O.relative_error(problem, O.iht(problem, 10, c=c))) < 1e-6


def test_uniform_and_importance_formulas():
    rng = np.random.default_rng(2)
    V = rng.standard_normal((50, 4))
    N, M = 50, 7
    # Replay the generator: the package draws with RandomState(seed).randint / multinomial.
    w = hilbert.uniform(V, M, replace=True, random_state=3)
    draws = np.random.RandomState(3).randint(0, N, size=M)
    np.testing.assert_allclose(w, O.uniform_weights(N, M, draws), rtol=1e-14)
    w = hilbert.importance(V, M, replace=True, random_state=4)
    sigma = np.linalg.norm(V, axis=1)
    counts = np.random.RandomState(4).multinomial(M, sigma / sigma.sum())
    draws = np.repeat(np.arange(N), counts)
    np.testing.assert_allclose(w, O.importance_weights(sigma, M, draws), rtol=1e-12)


def test_omp_beyond_float32_range_matches_the_oracle():
    # the search runs on a float32 copy of the vectors unless they exceed its range
    rng = np.random.default_rng(11)
    V = rng.standard_normal((300, 20)) * 1e39
    w = hilbert.omp(V, 10)
    wo = O.omp(V, 10)
    np.testing.assert_allclose(w, wo, rtol=1e-9, atol=1e-9 * np.abs(wo).max())
