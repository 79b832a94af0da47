"""The coreset methods that optimise KL(pi_w || pi): the gradient identity against the closed
form of the conjugate Gaussian model (tests/oracles/gaussian_kl_oracle.py), the three cores on
that model with exact draws, and the estimators (MALA draws) on Gaussian linear regression,
whose coreset posteriors are Gaussian so that the Laplace KL is exact."""

import pathlib
import re
import warnings

import numpy as np
import pytest

from skcoreset.coreset import (
    CoresetMCMC,
    CoresetQualityWarning,
    QuasiNewtonCoreset,
    SparseVICoreset,
    _kl,
    _kl_coreset,
)
from skcoreset.metrics import coreset_laplace_kl

from .oracles import gaussian_kl_oracle as G
from .oracles.laplace_oracle import gaussian_kl, glm_laplace, logistic_laplace
from .test_coreset_estimators import _rare_feature_data


def test_kl_gradient_matches_finite_differences_of_closed_form():
    rng = np.random.default_rng(0)
    D, N = 3, 20
    x = rng.normal(1.0, 1.0, size=(N, D))
    idx = np.array([1, 4, 7, 11, 15])
    w = rng.uniform(1.0, 6.0, size=idx.shape[0])
    h = 1e-5
    fd = np.array(
        [
            (G.reverse_kl(x[idx], w + h * e, x) - G.reverse_kl(x[idx], w - h * e, x)) / (2 * h)
            for e in np.eye(idx.shape[0])
        ]
    )
    problem = G.GaussianProblem(x, 1)
    S = 200_000
    thetas = problem.draws(idx, w, S)
    g, r = problem.loglik(thetas, idx), problem.full(thetas)
    grad, centred = _kl.kl_gradient(g, r, w)
    # Monte Carlo standard error of each coordinate: the products averaged by the estimate
    resid = r - g @ w
    products = centred * (resid - resid.mean())[:, None]
    se = products.std(axis=0) / np.sqrt(S)
    assert np.all(np.abs(grad - fd) < 5 * se), (grad, fd, se)
    # and the estimate is informative: the gradient is many standard errors from zero
    assert np.linalg.norm(fd) > 20 * np.linalg.norm(se)


def test_kl_gradient_needs_two_draws():
    with pytest.raises(ValueError, match="at least 2 draws"):
        _kl.kl_gradient(np.ones((1, 3)), np.ones(1), np.ones(3))


def test_newton_step_stays_in_its_trust_region():
    rng = np.random.default_rng(1)
    centred = rng.standard_normal((50, 4))
    w = np.array([1.0, 0.0, 2.0, 0.5])
    grad = np.array([-100.0, -50.0, 30.0, -10.0])
    new = _kl.newton_step(w, grad, centred, 1.0, 0.1, max_step=0.25)
    free = w - _kl.newton_direction(grad, centred, 0.1)
    # a weight at most doubles (a zero weight grows to max_step at most) and at most halves
    upper, lower = w + np.maximum(w, 0.25), 0.5 * w
    assert np.all((new <= upper + 1e-12) & (new >= lower - 1e-12))
    # where the free step leaves that region the bound binds, elsewhere the step is free
    assert np.any(free > upper) and np.any(free < lower)
    np.testing.assert_allclose(new, np.clip(free, lower, upper))
    # without a cap: the free step, clipped at 0
    np.testing.assert_allclose(
        _kl.newton_step(w, grad, centred, 1.0, 0.1, max_step=None), np.maximum(free, 0.0)
    )


def test_newton_direction_oracle():
    rng = np.random.default_rng(2)
    centred = rng.standard_normal((30, 5)) * np.array([1.0, 10.0, 0.1, 3.0, 1e3])
    centred -= centred.mean(axis=0)
    grad = rng.standard_normal(5)
    C = centred.T @ centred / 29
    expect = np.linalg.solve(C + 0.1 * np.trace(C) / 5 * np.eye(5), grad)
    np.testing.assert_allclose(_kl.newton_direction(grad, centred, 0.1), expect, rtol=1e-10)
    own = np.linalg.solve(C + 0.1 * np.diag(np.diag(C)), grad)
    np.testing.assert_allclose(
        _kl.newton_direction(grad, centred, 0.1, "per_point"), own, rtol=1e-10
    )
    # the per-point ridge: measuring point j's log-likelihood in other units (column times
    # s_j, gradient times s_j) changes its step by 1 / s_j and nothing else; the average
    # ridge does not have this property
    s = np.array([1.0, 1e-2, 1e2, 5.0, 1e-3])
    np.testing.assert_allclose(
        _kl.newton_direction(grad * s, centred * s, 0.1, "per_point"), own / s, rtol=1e-8
    )
    assert not np.allclose(_kl.newton_direction(grad * s, centred * s, 0.1), expect / s)


def test_newton_step_caps_every_weight():
    rng = np.random.default_rng(3)
    centred = rng.standard_normal((40, 3))
    w = np.array([4.0, 1.0, 2.0])
    grad = np.array([-1e4, 1.0, -1.0])
    free = _kl.newton_step(w, grad, centred, 1.0, 0.1, max_step=None)
    assert free[0] > 5.0
    capped = _kl.newton_step(w, grad, centred, 1.0, 0.1, max_step=None, max_weight=5.0)
    np.testing.assert_allclose(capped, np.minimum(free, 5.0))


def _collinear_model(seed, S=60, C=40, P=3):
    """A weight step's quadratic model as a large support makes it: the log-likelihoods of C
    logistic points at S draws of P parameters (nearly collinear columns), weights that are
    all 1 and a target that a quarter of the points make up alone (the rest should go to 0)."""
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal((S, P))
    x = 2.0 * rng.standard_normal((C, P))
    centred = -np.logaddexp(0.0, -(theta @ x.T))
    centred -= centred.mean(axis=0)
    w = np.ones(C)
    target = centred @ np.where(rng.random(C) < 0.25, rng.uniform(2.0, 6.0, C), 0.0)
    grad = -(centred.T @ (target - centred @ w)) / (S - 1)
    return w, grad, centred


def _bvls(H, q, upper):
    """Oracle: min 1/2 v^T H v + q^T v on [0, upper] by scipy's bounded-variable least squares
    (``= 1/2 ||U v + U^-T q||^2 + const``, ``H = U^T U``)."""
    import scipy.linalg
    import scipy.optimize

    U = scipy.linalg.cholesky(H)
    b = -scipy.linalg.solve_triangular(U, q, trans="T")
    return scipy.optimize.lsq_linear(U, b, bounds=(0.0, upper), method="bvls", tol=1e-14).x


@pytest.mark.parametrize("seed", [0, 2, 3, 4])  # seeds whose bounds bind
def test_box_qp_matches_bounded_least_squares(seed):
    """The kernel, run to convergence, against the oracle, and the optimality (KKT)
    conditions at its result."""
    from skcoreset.coreset._kl_kernels import box_qp

    w, grad, centred = _collinear_model(seed)
    H = _kl.model_hessian(centred, 0.1, "per_point" if seed > 2 else "average")
    q = grad - H @ w
    upper = np.where(np.arange(w.shape[0]) % 3 == 0, 1.5 * w, np.inf)
    # the bounds bind: the unconstrained minimiser is not in the box
    free = np.linalg.solve(H, -q)
    assert np.any(free < 0) and np.any(free > upper)
    v = np.minimum(w, upper)
    box_qp(H, q, v, upper, 1e-15, 100_000)
    oracle = _bvls(H, q, upper)
    objective = lambda u: 0.5 * u @ H @ u + q @ u  # noqa: E731
    assert objective(v) <= objective(oracle) + 1e-9 * abs(objective(oracle))
    assert np.all((v >= 0) & (v <= upper))
    g = H @ v + q
    tol = 1e-6 * np.abs(q).max()
    inside = (v > 0) & (v < upper)
    assert np.all(np.abs(g[inside]) < tol)
    assert np.all(g[v == 0] > -tol) and np.all(g[v == upper] < tol)


def test_exact_projection_is_the_newton_step_inside_the_box():
    rng = np.random.default_rng(5)
    centred = rng.standard_normal((50, 4))
    w = np.array([10.0, 8.0, 12.0, 9.0])
    grad = 0.5 * rng.standard_normal(4)
    free = w - 0.5 * _kl.newton_direction(grad, centred, 0.1)
    assert np.all((free > 0.5 * w) & (free < 2 * w))
    exact = _kl.newton_step(w, grad, centred, 0.5, 0.1, max_step=1.0, projection="exact")
    np.testing.assert_allclose(exact, free, rtol=1e-10)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ridge", ["average", "per_point"])
def test_exact_projection_lowers_the_model_more_than_clipping(seed, ridge):
    """On a large support the unconstrained Newton step puts negative weights on many points,
    and clipping it loses much of the model's decrease. The exact projection (stopped at its
    relative tolerance) is never worse than clipping and gets within 5% of the constrained
    optimum's gain over it."""
    w, grad, centred = _collinear_model(seed)
    H = _kl.model_hessian(centred, 0.1, ridge)
    model = lambda v: 0.5 * (v - w) @ H @ (v - w) + grad @ (v - w)  # noqa: E731
    free = w - _kl.newton_direction(grad, centred, 0.1, ridge)
    clipped = _kl.newton_step(w, grad, centred, 1.0, 0.1, None, ridge=ridge)
    np.testing.assert_allclose(clipped, np.maximum(free, 0.0))
    exact = _kl.newton_step(w, grad, centred, 1.0, 0.1, None, ridge=ridge, projection="exact")
    best = model(_bvls(H, grad - H @ w, np.full(w.shape, np.inf)))
    assert np.all(exact >= 0)
    slack = 1e-9 * abs(best)  # rounding, where no bound binds and all three agree
    assert model(free) <= best + slack and best <= model(exact) + slack
    assert model(exact) <= model(clipped) + slack
    if np.any(free < 0):
        assert model(exact) - best <= 0.05 * (model(clipped) - best)


def test_exact_projection_keeps_the_trust_region_and_cap():
    w, grad, centred = _collinear_model(7)
    grad = grad * 1e3  # steps that would leave the region
    for step_size in (0.5, 1.5):
        new = _kl.newton_step(
            w, grad, centred, step_size, 0.1, 0.25, max_weight=1.8, projection="exact"
        )
        upper = np.minimum(w + np.maximum(w, 0.25), 1.8)
        assert np.all((new >= 0) & (new <= upper))
        if step_size == 0.5:  # damped by 1/2: a weight at most halves
            assert np.all(new >= 0.5 * w - 1e-12)
        else:  # extrapolated past the box's edge: back on it
            assert np.any(new == upper) and np.any(new == 0.0)


def _nnls_kkt(A, b, v, rtol=1e-8):
    """The optimality conditions of min ||b - A v|| over v >= 0 at ``v``."""
    g = A.T @ (A @ v - b)  # the objective's gradient
    tol = rtol * np.abs(A.T @ b).max()
    assert np.all(v >= 0)
    assert np.all(np.abs(g[v > 0]) < tol) and np.all(g[v == 0] > -tol)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nonnegative_fit_is_the_centred_least_squares_optimum(seed):
    """Against the optimality conditions, and the bounded least-squares oracle's value, on
    nearly collinear log-likelihoods where the fit keeps only some of the points."""
    import scipy.optimize

    _, _, centred = _collinear_model(seed)
    rng = np.random.default_rng(seed)
    g = centred + rng.normal(5.0, 1.0, size=centred.shape[1])  # uncentred columns
    r = centred @ rng.uniform(-1.0, 3.0, centred.shape[1]) + 7.0
    v = _kl.nonnegative_fit(g, r)
    A, b = g - g.mean(axis=0), r - r.mean()
    _nnls_kkt(A, b, v)
    assert 0 < np.count_nonzero(v) < v.shape[0]
    oracle = scipy.optimize.lsq_linear(A, b, bounds=(0.0, np.inf), method="bvls", tol=1e-14).x
    np.testing.assert_allclose(np.linalg.norm(A @ v - b), np.linalg.norm(A @ oracle - b))


def test_nonnegative_fit_reports_a_solver_failure(monkeypatch):
    import scipy.optimize

    def fail(A, b):
        raise RuntimeError("Maximum number of iterations reached.")

    monkeypatch.setattr(scipy.optimize, "nnls", fail)
    assert _kl.nonnegative_fit(np.eye(3), np.ones(3)) is None


def _refit_problem(gaussian_data, monkeypatch):
    problem = G.GaussianProblem(gaussian_data, 11)
    thetas = problem.laplace_draws(3000)
    monkeypatch.setattr(_kl, "_REFIT_MIN_DRAWS", thetas.shape[0])
    problem.laplace_draws = lambda n: thetas  # the same draws for the oracle
    idx = np.arange(0, N_SMALL, 2)  # 30 points for 20 dimensions
    return problem, thetas, idx, np.full(idx.shape[0], 1.0)


def test_refit_of_a_small_support_is_exact_least_squares(gaussian_data, monkeypatch):
    """SparseVI's refit: the non-negative least-squares fit, on draws of the data's Laplace fit
    (the exact posterior here), of the full log-likelihood sum by the support's."""
    x = gaussian_data
    problem, thetas, idx, w = _refit_problem(x, monkeypatch)
    assert idx.shape[0] <= _kl._EXACT_FIT_MAX
    new = _kl.refit(problem, idx, w, max_weight=float(N_SMALL))
    g, r = problem.loglik(thetas, idx), problem.full(thetas)
    _nnls_kkt(g - g.mean(axis=0), r - r.mean(), new)
    # and it fits: the coreset posterior is far closer to the full one than at the start
    assert G.reverse_kl(x[idx], new, x) < 0.01 * G.reverse_kl(x[idx], w, x)


def test_refit_of_a_large_support_is_the_ridged_step(gaussian_data, monkeypatch):
    """Above ``_EXACT_FIT_MAX`` points: the weights minimising the ridged quadratic model over
    ``0 <= w <= max_weight``, against the bounded least-squares oracle on the same draws."""
    x = gaussian_data
    problem, thetas, idx, w = _refit_problem(x, monkeypatch)
    monkeypatch.setattr(_kl, "_EXACT_FIT_MAX", idx.shape[0] - 1)
    new = _kl.refit(problem, idx, w, max_weight=float(N_SMALL))
    grad, centred = _kl.kl_gradient(problem.loglik(thetas, idx), problem.full(thetas), w)
    H = _kl.model_hessian(centred, _kl._REFIT_TAU, "per_point")
    model = lambda v: 0.5 * (v - w) @ H @ (v - w) + grad @ (v - w)  # noqa: E731
    best = model(_bvls(H, grad - H @ w, np.full(w.shape, float(N_SMALL))))
    assert np.all((new >= 0) & (new <= N_SMALL))
    assert model(new) - best <= 0.01 * (model(w) - best)
    assert G.reverse_kl(x[idx], new, x) < 0.01 * G.reverse_kl(x[idx], w, x)


def test_refit_keeps_the_cap(gaussian_data, monkeypatch):
    """An exact fit above ``max_weight`` gives way to the capped step."""
    problem, thetas, idx, w = _refit_problem(gaussian_data, monkeypatch)
    free = _kl.refit(problem, idx, w)
    cap = 0.5 * free.max()
    new = _kl.refit(problem, idx, w, max_weight=cap)
    assert np.all((new >= 0) & (new <= cap)) and np.any(new == cap)


def test_laplace_sample_extends_and_keeps_its_draws(gaussian_data):
    problem = G.GaussianProblem(gaussian_data, 3)
    calls = []
    draw = problem.laplace_draws
    problem.laplace_draws = lambda n: calls.append(n) or draw(n)
    sample = _kl.LaplaceSample(problem)
    t1, r1 = sample.take(100)
    t2, r2 = sample.take(250)
    t3, r3 = sample.take(50)
    assert calls == [100, 150]  # only the new draws are drawn, and summed
    assert t2.shape[0] == r2.shape[0] == 250
    np.testing.assert_array_equal(t2[:100], t1)
    np.testing.assert_array_equal(t3, t1[:50])
    np.testing.assert_allclose(r2, problem.full(t2))
    np.testing.assert_array_equal(r3, r1[:50])


@pytest.mark.parametrize("n_points", [5, 300])
def test_refit_draws_enough_for_the_points_and_the_parameters(n_points, monkeypatch):
    """The refit's draws grow with the support and with the parameters: a least-squares fit
    with fewer draws than the parameters' directions need follows the draws' noise."""
    monkeypatch.setattr(_kl, "_REFIT_MIN_DRAWS", 50)
    for n_params in (3, 40):
        x = np.random.default_rng(n_params).normal(1.0, 1.0, size=(400, n_params))
        sample = _kl.LaplaceSample(G.GaussianProblem(x, 5))
        thetas, r = sample.for_support(n_points)
        want = max(50, _kl._REFIT_DRAWS_PER_POINT * n_points, _kl._REFIT_DRAWS_PER_PARAM * n_params)
        assert thetas.shape == (want, n_params) and r.shape == (want,)


def test_selection_weights_leave_no_copy_of_the_support_to_choose():
    """The choice correlates with the residual of the support's own fit on the draws: a copy
    of a support point is not chosen, as it is from weights fitted elsewhere."""
    rng = np.random.default_rng(5)
    S = 200
    a, b, c = rng.standard_normal((3, S))
    r = 3.0 * a + 2.0 * b + 1.0 * c
    g = np.column_stack([a, b, a + 0.01 * rng.standard_normal(S), c])  # 2 is a copy of 0
    idx, w = np.array([0, 1]), np.array([0.5, 0.5])  # weights fitted elsewhere
    assert _kl.greedy_batch(g, r, idx, w, 1).tolist() == [2]
    fit = _kl._selection_weights(g, r, idx, w, n_params=1)
    np.testing.assert_allclose(fit, [3.0, 2.0], atol=0.2)
    assert _kl.greedy_batch(g, r, idx, fit, 1).tolist() == [3]
    # w is kept with fewer than twice as many draws as points (the fit would match noise),
    # and with fewer points than twice the parameters (pi_w is wide)
    assert _kl._selection_weights(g[:3], r[:3], idx, w, n_params=1) is w
    assert _kl._selection_weights(g, r, idx, w, n_params=2) is w


def test_sparse_vi_refits_after_every_round(gaussian_data, monkeypatch):
    # 4 points in the first round, then one per round: 7 rounds for 10 points, 7 refits
    calls = []
    real = _kl.refit

    def spy(problem, idx, w, max_weight=None, sample=None):
        calls.append((idx.shape[0], id(sample)))
        return real(problem, idx, w, max_weight, sample)

    monkeypatch.setattr(_kl, "refit", spy)
    kw = dict(n_draws=50, n_rounds=10, n_polish=3, first_round=4, max_step=N_SMALL / 10)
    _kl.sparse_vi(G.GaussianProblem(gaussian_data, 0), N_SMALL, 10, **kw)
    assert [m for m, _ in calls] == [4, 5, 6, 7, 8, 9, 10]
    # all on one sample of the Laplace fit
    assert len({sample for _, sample in calls}) == 1


def test_sparse_vi_stops_when_the_log_likelihoods_overflow(gaussian_data):
    """Draws far enough out to overflow the log-likelihoods are no guide to a choice: the
    rounds stop there and say why (the estimator then warns)."""
    problem = G.GaussianProblem(gaussian_data, 0)
    real, rounds = problem.loglik, []

    def loglik(thetas, idx):
        if idx is None:  # a round's choice: the third one's draws overflow
            rounds.append(1)
            if len(rounds) == 3:
                return np.full((thetas.shape[0], N_SMALL), -np.inf)
        return real(thetas, idx)

    problem.loglik = loglik
    kw = dict(n_draws=50, n_rounds=10, n_polish=0, first_round=4)
    idx, _, _, reason = _kl.sparse_vi(problem, N_SMALL, 10, **kw)
    assert reason == "nonfinite_loglik"
    assert idx.shape[0] == 5  # two rounds: 4 points, then 1


def test_sparse_vi_stops_when_the_laplace_draws_overflow(gaussian_data, monkeypatch):
    """A refit whose draws overflow the log-likelihoods has nothing to fit (and its step would
    make the weights NaN): the rounds stop at the last refitted support, with finite weights."""
    # four draws per point and no more: the sample grows with every round
    monkeypatch.setattr(_kl, "_REFIT_MIN_DRAWS", 20)
    monkeypatch.setattr(_kl, "_REFIT_DRAWS_PER_PARAM", 1)
    problem = G.GaussianProblem(gaussian_data, 0)
    real, sums = problem.full, []

    def full(thetas, g_all=None, step=False):
        if g_all is None:  # the full sums at new Laplace draws: from the second batch on, NaN
            sums.append(1)
            if len(sums) >= 2:
                return np.full(thetas.shape[0], np.nan)
        return real(thetas, g_all)

    problem.full = full
    kw = dict(n_draws=100, n_rounds=3, n_polish=0, first_round=10)
    idx, w, _, reason = _kl.sparse_vi(problem, N_SMALL, 30, **kw)
    assert reason == "nonfinite_loglik"
    # round 1 (10 points) drew 4 x 10 = 40; round 2's 40 more (20 points) overflowed
    assert len(sums) == 2 and idx.shape[0] == 10
    assert w.shape == idx.shape and np.isfinite(w).all() and np.any(w > 0)
    assert _kl.refit(problem, idx, w) is None  # the refit itself says so


@pytest.mark.parametrize("reason", ["no_correlation", "nonfinite_loglik"])
def test_sparse_vi_coreset_warns_when_it_stops_early(regression, monkeypatch, reason):
    X, y = regression
    monkeypatch.setattr(
        _kl, "sparse_vi", lambda problem, *a, **k: (np.arange(3), np.ones(3), 0, reason)
    )
    with pytest.warns(UserWarning) as record:
        cs = SparseVICoreset(20, random_state=0).fit(X, y)
    messages = [str(r.message) for r in record]
    assert any("stopped at 3 of 20 points" in m for m in messages)
    # three points of weight 1 are far worse than the OMP start the other methods take: the
    # start is kept, and said so
    assert any("the start is kept" in m for m in messages)
    assert cs.stop_reason_ == reason and cs.n_points_ > 3
    assert cs.laplace_kl_ == cs.start_laplace_kl_ < 1.0
    # stopped before the first point: no coreset at all, an error
    none = (np.empty(0, dtype=np.intp), np.empty(0), 0, reason)
    monkeypatch.setattr(_kl, "sparse_vi", lambda problem, *a, **k: none)
    with pytest.raises(ValueError, match="found no point"):
        SparseVICoreset(20, random_state=0).fit(X, y)


def test_flat_candidates_are_never_chosen():
    # a candidate whose log-likelihood barely varies over the draws but points exactly along
    # the residual: chosen by correlation alone, it would need a weight 1e7 times the others'
    rng = np.random.default_rng(5)
    S = 200
    a, b = rng.standard_normal(S), rng.standard_normal(S)
    r = a.copy()
    g = np.column_stack([1e-7 * a, a + 0.5 * b, b, rng.standard_normal(S)]) - 0.7
    none, w0 = np.empty(0, dtype=np.intp), np.empty(0)
    corr = [np.corrcoef(g[:, j], r)[0, 1] for j in range(4)]
    assert np.argmax(corr) == 0 and corr[0] > 0.999
    assert _kl.flat(np.linalg.norm(g - g.mean(axis=0), axis=0)).tolist() == [1, 0, 0, 0]
    assert _kl.greedy_batch(g, r, none, w0, 1).tolist() == [1]
    assert 0 not in _kl.greedy_batch(g, r, none, w0, 3)
    # at a millionth of the median and more, a candidate is chosen as before
    g[:, 0] = 1e-5 * a
    assert _kl.greedy_batch(g, r, none, w0, 1).tolist() == [0]


def test_greedy_batch_is_matching_pursuit_on_the_draws():
    rng = np.random.default_rng(4)
    S = 200
    a, b = rng.standard_normal(S), rng.standard_normal(S)
    r = 3.0 * a + 1.0 * b
    # candidates 0 and 1 are copies of the main direction; 2 carries the rest; 3 is noise
    g = np.column_stack([a, a, b, rng.standard_normal(S)]) + 5.0
    none, w0 = np.empty(0, dtype=np.intp), np.empty(0)
    # one point: the paper's rule, the best correlation with the residual
    corr = [np.corrcoef(g[:, j], r)[0, 1] for j in range(4)]
    assert _kl.greedy_batch(g, r, none, w0, 1).tolist() == [int(np.argmax(corr))]
    # two points: not the copy of the first (the two best correlations), but what explains
    # the residual that the first leaves
    assert sorted(np.argsort(corr)[-2:].tolist()) == [0, 1]
    assert _kl.greedy_batch(g, r, none, w0, 2).tolist() == [0, 2]
    # the support is never chosen again, and its weights enter the residual
    new = _kl.greedy_batch(g, r, np.array([0]), np.array([3.0]), 2)
    assert new[0] == 2 and 0 not in new
    # nothing correlates positively: nothing is chosen
    assert _kl.greedy_batch(g[:, [3]], -g[:, 3], none, w0, 1).shape == (0,)


# Reduced scale of the IHT paper's Gaussian problem (d = 200, N = 600 in benchmarks/).
D_SMALL, N_SMALL = 20, 60
SIZES = [5, 10, 20, 30]


@pytest.fixture(scope="module")
def gaussian_data():
    return np.random.default_rng(0).normal(1.0, 1.0, size=(N_SMALL, D_SMALL))


@pytest.mark.parametrize("M", SIZES)
def test_cores_beat_uniform_on_gaussian(gaussian_data, M):
    x = gaussian_data
    idx = np.sort(np.random.default_rng(M).choice(N_SMALL, M, replace=False))
    w0 = np.full(M, N_SMALL / M)
    uniform = G.reverse_kl(x[idx], w0, x)
    w, _, _ = _kl.quasi_newton(G.GaussianProblem(x, 2), idx, w0, max_step=N_SMALL / M)
    assert G.reverse_kl(x[idx], w, x) < uniform
    w, _, _ = _kl.coreset_mcmc(G.GaussianProblem(x, 3), idx, w0, n_train=1000, learning_rate=0.1)
    assert G.reverse_kl(x[idx], w, x) < uniform
    sv_idx, sv_w, _, _ = _kl.sparse_vi(
        G.GaussianProblem(x, 4), N_SMALL, M, n_draws=200, max_step=N_SMALL / M
    )
    assert sv_idx.shape[0] <= M
    assert G.reverse_kl(x[sv_idx], sv_w, x) < uniform


def test_coreset_mcmc_steps_follow_the_uniform_weight_not_the_start(gaussian_data):
    """ADAM's first step moves every weight by the step size: in units of the uniform weight
    W / M it leaves the ordinary weights of a start that has one huge weight in place; in units
    of the start's mean (the huge weight's share) it zeroes them."""
    x = gaussian_data
    M = 10
    idx = np.arange(M)
    w0 = np.r_[1e9, np.full(M - 1, 20.0)]
    lr = 0.003
    kw = dict(n_train=1, learning_rate=lr)
    w, _, _ = _kl.coreset_mcmc(G.GaussianProblem(x, 3), idx, w0, weight_scale=N_SMALL / M, **kw)
    moved = np.abs(w - w0)
    assert np.all(moved <= lr * N_SMALL / M * (1 + 1e-6)) and np.all(w[1:] > 0)
    assert moved[1:].max() > 0.5 * lr * N_SMALL / M  # the step was taken
    w, _, _ = _kl.coreset_mcmc(G.GaussianProblem(x, 3), idx, w0, **kw)  # mean(w0) ~ 1e8
    assert np.count_nonzero(w[1:]) < M - 1


def test_sparse_vi_first_round_adds_first_round_points(gaussian_data):
    # one point per round, two weight steps per round, no polish: the steps count the rounds
    x = gaussian_data
    kw = dict(n_draws=50, n_rounds=10, n_steps=2, n_polish=0, max_step=N_SMALL / 10)
    idx, _, n_iter, reason = _kl.sparse_vi(G.GaussianProblem(x, 0), N_SMALL, 10, **kw)
    assert (len(idx), n_iter, reason) == (10, 20, "size_reached")
    idx, _, n_iter, _ = _kl.sparse_vi(G.GaussianProblem(x, 0), N_SMALL, 10, first_round=6, **kw)
    assert (len(idx), n_iter) == (10, 2 * (1 + 4))


def _spy_keywords(monkeypatch, name):
    """The keyword arguments of the calls to ``_kl.<name>`` (which still runs)."""
    seen = {}
    real = getattr(_kl, name)

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(_kl, name, spy)
    return seen


def test_sparse_vi_coreset_first_round_pins_down_the_parameters(monkeypatch):
    # the estimator asks for as many points in the first round as the model has parameters
    seen = _spy_keywords(monkeypatch, "sparse_vi")
    rng = np.random.default_rng(5)
    X = rng.standard_normal((400, 3))
    y = (X @ np.array([1.0, -1.0, 0.5]) + rng.logistic(size=400) > 0).astype(float)
    SparseVICoreset(8, n_draws=20, n_rounds=8, n_polish=0, random_state=0).fit(X, y)
    assert seen["first_round"] == 4  # three features and the intercept


def test_quasi_newton_stops_when_the_gradient_settles(gaussian_data):
    # 10 points cannot match 20 dimensions: the KL optimum is positive and the gradient
    # estimate levels off at its noise (with 30 points the optimum is exact, and the
    # gradient keeps falling geometrically)
    x = gaussian_data
    idx = np.arange(10)
    w0 = np.full(10, N_SMALL / 10)
    w, n_iter, reason = _kl.quasi_newton(G.GaussianProblem(x, 5), idx, w0, max_iter=100)
    assert reason == "converged" and n_iter < 100
    assert G.reverse_kl(x[idx], w, x) < 0.75 * G.reverse_kl(x[idx], w0, x)


@pytest.mark.parametrize(
    "norms, kept",
    [
        ([0.2, 1.1, 2.7, 14.5], 0),  # growing from the start: astray, the start is kept
        ([5.0, 2.0, 1.0, 1.5, 1.2, 1.1], 2),  # settled after its least: that iterate
        ([5.0, 4.0, 3.0, 2.0], 4),  # still falling at max_iter: the last step is kept
    ],
)
def test_quasi_newton_keeps_the_weights_of_least_gradient(norms, kept, monkeypatch):
    # each step adds 1 to every weight; the gradient's norm at iterate k is norms[k]
    calls = iter(norms)

    def gradient(problem, thetas, idx, w):
        return np.full(w.shape, next(calls) / np.sqrt(w.shape[0])), None

    monkeypatch.setattr(_kl, "_gradient_at", gradient)
    monkeypatch.setattr(_kl, "newton_step", lambda w, *args: w + 1.0)

    class Problem:
        def draws(self, idx, w, n):
            return None

    w0 = np.zeros(3)
    w, n_iter, reason = _kl.quasi_newton(Problem(), np.arange(3), w0, max_iter=len(norms))
    np.testing.assert_array_equal(w, w0 + kept)
    assert n_iter == len(norms)
    # without the stop rule (tol=None, SparseVI's decaying steps) the last iterate stays
    calls = iter(norms)
    w, _, _ = _kl.quasi_newton(Problem(), np.arange(3), w0, max_iter=len(norms), tol=None)
    np.testing.assert_array_equal(w, w0 + len(norms))


def test_quasi_newton_decaying_steps_take_every_step(gaussian_data, monkeypatch):
    # decay=True: the k-th step is step_size / sqrt(k), and with tol=None no settling stops
    # the loop (the test above settles within 100 steps)
    sizes = []
    real = _kl.newton_step

    def spy(w, grad, centred, step_size, *args):
        sizes.append(step_size)
        return real(w, grad, centred, step_size, *args)

    monkeypatch.setattr(_kl, "newton_step", spy)
    x = gaussian_data
    w0 = np.full(10, N_SMALL / 10)
    problem = G.GaussianProblem(x, 5)
    _, n_iter, reason = _kl.quasi_newton(
        problem, np.arange(10), w0, max_iter=40, step_size=0.5, decay=True, tol=None
    )
    assert (n_iter, reason) == (40, "max_iter")
    np.testing.assert_allclose(sizes, 0.5 / np.sqrt(np.arange(1, 41)))


def test_sparse_vi_polish_takes_n_polish_decaying_steps(gaussian_data, monkeypatch):
    seen = _spy_keywords(monkeypatch, "quasi_newton")
    kw = dict(n_draws=50, n_rounds=10, n_steps=2, n_polish=7, max_step=N_SMALL / 10)
    _, _, n_iter, _ = _kl.sparse_vi(G.GaussianProblem(gaussian_data, 0), N_SMALL, 10, **kw)
    assert n_iter == 10 * 2 + 7
    assert seen["decay"] and seen["tol"] is None
    assert (seen["ridge"], seen["projection"]) == ("per_point", "exact")


# -- the estimators, on Gaussian linear regression (conjugate: Laplace KL is exact) --------


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(0)
    N, D = 2000, 3
    X = rng.standard_normal((N, D))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.3 + rng.standard_normal(N)
    return X, y


def _kl_of(cs, X, y):
    return coreset_laplace_kl(
        X, y, cs.sample_indices_, cs.sample_weight_, direction="reverse", model="gaussian"
    )


def _uniform_kl(cs, X, y):
    """The KL of the same support with the uniform weights W / M the methods start from."""
    w = np.full(cs.n_points_, X.shape[0] / cs.n_points_)
    return coreset_laplace_kl(X, y, cs.sample_indices_, w, direction="reverse", model="gaussian")


FAST = {
    QuasiNewtonCoreset: dict(n_draws=200),
    SparseVICoreset: dict(n_draws=100, n_rounds=4, n_steps=5),
    CoresetMCMC: dict(n_train=500, n_samples=200),
}


@pytest.mark.parametrize("cls", [QuasiNewtonCoreset, CoresetMCMC])
def test_estimator_weights_beat_uniform_weights(regression, cls):
    X, y = regression
    cs = cls(n_points=20, random_state=0, **FAST[cls]).fit(X, y)
    assert _kl_of(cs, X, y) < _uniform_kl(cs, X, y)


def test_sparse_vi_beats_uniform_sample(regression):
    from skcoreset.coreset import UniformCoreset

    X, y = regression
    cs = SparseVICoreset(n_points=20, random_state=0, **FAST[SparseVICoreset]).fit(X, y)
    uniform = UniformCoreset(20, projection=None, random_state=0).fit(X, y)
    assert _kl_of(cs, X, y) < _kl_of(uniform, X, y)


@pytest.mark.parametrize("cls", list(FAST))
def test_estimator_reproducible_and_resamples(regression, cls):
    X, y = regression
    a = cls(n_points=10, random_state=3, **FAST[cls]).fit(X, y)
    b = cls(n_points=10, random_state=3, **FAST[cls])
    X_m, y_m, params = b.fit_resample(X, y)
    np.testing.assert_array_equal(a.sample_indices_, b.sample_indices_)
    if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
        np.testing.assert_array_equal(a.sample_weight_, b.sample_weight_)
    else:
        # NumPy 1.26 (the floors) runs np.exp and np.log on its AVX-512 routine or on the C
        # library's by where the output array lies relative to the input (measured: an
        # output that starts where the input ends gets the C library's, one 8 bytes further
        # the AVX-512 one), and the two can differ in the last bit. So two fits of one seed
        # can differ in the weights' last bits (SparseVI: up to 7.4e-13 relative). With
        # those two calls made in place on a copy, 0 of 30 SparseVI fits differed, against
        # 29 of 30 without. The rows must still agree exactly, the weights to far below any
        # statistical effect.
        np.testing.assert_allclose(a.sample_weight_, b.sample_weight_, rtol=1e-10, atol=0)
    np.testing.assert_array_equal(X_m, X[b.sample_indices_])
    assert np.all(params["sample_weight"] > 0) and len(y_m) <= 10


def test_pool_smaller_than_data_estimates_the_full_sum(regression):
    # a pool of 500 of the 2000 rows, read in blocks of 300: the full-data term is the
    # subsample estimate, and the weights still improve on the uniform start
    X, y = regression
    cs = QuasiNewtonCoreset(
        n_points=20, n_candidates=500, block_size=300, n_draws=200, random_state=0
    ).fit(X, y)
    assert _kl_of(cs, X, y) < _uniform_kl(cs, X, y)


@pytest.mark.parametrize("cls", [QuasiNewtonCoreset, SparseVICoreset, CoresetMCMC])
def test_float32_rows_in_blocks_give_the_float64_coreset(cls):
    # the leaves take float32 rows as stored (their summaries convert them chunk by chunk):
    # the same coreset, bit for bit, as the same values in float64, with float64 rows
    rng = np.random.default_rng(5)
    X = rng.standard_normal((3000, 4)).astype(np.float32)
    y = (rng.random(3000) < 1 / (1 + np.exp(-X @ np.array([1.0, -0.5, 0.3, 0.0])))).astype(int)
    w = rng.uniform(0.0, 2.0, 3000)
    w[::7] = 0.0  # rows without weight: a leaf keeps the others
    kw = dict(n_points=15, n_candidates=400, block_size=700, random_state=0)
    if cls is not QuasiNewtonCoreset:
        kw["n_points"] = 10
    a = cls(**kw).fit(X, y, sample_weight=w)
    b = cls(**kw).fit(X.astype(np.float64), y, sample_weight=w)
    np.testing.assert_array_equal(a.sample_indices_, b.sample_indices_)
    np.testing.assert_array_equal(a.sample_weight_, b.sample_weight_)
    assert a._coreset_node.X.dtype == np.float64  # the nodes' rows, as before
    np.testing.assert_array_equal(a._coreset_node.X, b._coreset_node.X)


def test_budget_in_seconds_stops_the_loop(regression):
    X, y = regression
    cs = CoresetMCMC(n_points=10, n_train=10**6, max_seconds=0.2, n_samples=10, random_state=0)
    cs.fit(X, y)
    assert cs.stop_reason_ == "max_seconds" and cs.n_iter_ < 10**6


def test_coreset_mcmc_draws_the_coreset_posterior(regression):
    # with every row kept the chains sample the exact (Gaussian) posterior: their mean is
    # within Monte Carlo error of the conjugate posterior mean
    X, y = regression
    X, y = X[:200], y[:200]
    cs = CoresetMCMC(n_points=500, n_samples=2000, random_state=0)
    with pytest.warns(UserWarning, match="larger than"):
        cs.fit(X, y)
    assert cs.stop_reason_ == "all_rows"
    draws = np.concatenate(
        [
            cs.coef_samples_,
            cs.intercept_samples_[..., None],
            np.log(cs.noise_scale_samples_)[..., None],
        ],
        axis=2,
    )
    draws = draws.reshape(-1, 5)
    # the noise scale is sampled too, its log the Laplace fit's last parameter
    mean, cov = cs.laplace_.mean, cs.laplace_.cov
    # effective sample size at least a tenth of the draws (MALA on a Gaussian, preconditioned
    # with its exact covariance)
    se = np.sqrt(np.diag(cov) / (draws.shape[0] / 10))
    # the mean of log sigma sits above the joint mode by about P / (2 N) (its marginal
    # integrates the coefficients out: sigma^2 ~ RSS / (N - P) rather than RSS / N)
    mean = mean + np.append(np.zeros(4), 0.5 * np.log(200 / (200 - 4)))
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 4 * se)
    assert cs.coef_samples_.shape == (4, 2000, 3)


# -- the full-data term from a pool: Taylor control variate --------------------------------


@pytest.fixture(scope="module")
def poisson_taylor():
    """Poisson rows, the Laplace fit of all of them, its draws, and the exact summary."""
    from skcoreset.coreset._merge_reduce import Node
    from skcoreset.coreset._taylor import data_summary, split_summary
    from skcoreset.models import get_model, laplace_approximation

    rng = np.random.default_rng(1)
    N, D = 4000, 3
    X = rng.standard_normal((N, D))
    y = rng.poisson(np.exp(X @ np.array([0.5, -0.3, 0.2]) + 1.0)).astype(float)
    w = rng.uniform(0.5, 2.0, N)
    model = get_model("poisson")
    Xd = model.design(X)
    lap = laplace_approximation(model, Xd, y, w, design=True)
    # the summary of two blocks, added: as the pass accumulates it
    halves = [slice(0, N // 2), slice(N // 2, N)]
    summary = sum(
        data_summary(lap, Node(np.arange(N)[h], w[h], X[h], y[h], None))[0] for h in halves
    )
    thetas = lap.sample(300, random_state=0)
    exact = model.loglik_matrix(Xd, y, thetas).T @ w
    return model, Xd, y, w, lap, split_summary(summary, D + 1), thetas, exact


def test_data_summary_of_many_chunks_on_threads():
    # a node of several chunks, summed on the fit's threads: the formulas' sums and sds
    # (oracle), and the same bits on one thread as on two
    import numba

    from skcoreset.coreset._merge_reduce import Node
    from skcoreset.coreset._taylor import _SUMMARY_ROWS, data_summary, split_summary
    from skcoreset.models import get_model, laplace_approximation

    from .oracles import models_oracle as oracle

    rng = np.random.default_rng(2)
    N, D = 3 * _SUMMARY_ROWS + 17, 3
    X = rng.standard_normal((N, D)).astype(np.float32)
    y = rng.poisson(np.exp(X @ np.array([0.5, -0.3, 0.2]) + 1.0)).astype(float)
    w = rng.uniform(0.5, 2.0, N)
    model = get_model("poisson")
    lap = laplace_approximation(model, model.design(X[:2000]), y[:2000], w[:2000], design=True)
    node = Node(np.arange(N), w, X, y, None)
    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = data_summary(lap, node)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = data_summary(lap, node)
    finally:
        numba.set_num_threads(previous)
    np.testing.assert_array_equal(one[0], two[0])
    np.testing.assert_array_equal(one[1], two[1])
    Xd = np.column_stack([X.astype(np.float64), np.ones(N)])
    eta = Xd @ lap.mean
    d, c = oracle.dloglik("poisson", eta, y), oracle.curv("poisson", eta, y)
    W, n, G, H = split_summary(one[0], D + 1)
    assert (W, n) == (pytest.approx(w.sum(), rel=1e-13), N)
    np.testing.assert_allclose(G, Xd.T @ (w * d), rtol=1e-10)
    np.testing.assert_allclose(H, (Xd * (w * c)[:, None]).T @ Xd, rtol=1e-10)
    s2 = np.einsum("ij,jk,ik->i", Xd, lap.cov, Xd)
    np.testing.assert_allclose(one[1], np.sqrt(s2 * (d**2 + 0.5 * c**2 * s2)), rtol=1e-10)


def test_row_spread_is_the_sd_of_the_second_order_expansion(poisson_taylor):
    # the oracle: the sample sd, over draws of the Laplace fit, of each row's second-order
    # expansion d e - c e^2 / 2 in e = x . (theta - mu), with its own standard error
    from skcoreset.coreset._taylor import row_spread

    model, Xd, y, w, lap, _, _, _ = poisson_taylor
    rows = slice(0, 40)
    X = Xd[rows, :-1]  # the design's last column is the intercept
    spread = row_spread(lap, X, y[rows])
    d, c = model.loglik_derivatives(Xd[rows] @ lap.mean, y[rows])
    S = 40_000
    e = (lap.sample(S, random_state=3) - lap.mean) @ Xd[rows].T  # (S, rows)
    q = d * e - 0.5 * c * e**2
    q -= q.mean(axis=0)
    sd = np.sqrt((q**2).mean(axis=0))
    se = np.sqrt(((q**4).mean(axis=0) - sd**4) / (4 * S * sd**2))  # delta method
    assert np.all(np.abs(sd - spread) < 5 * se)
    # the curvature term matters: without it the formula is off by many standard errors
    assert np.max(np.abs(sd - np.sqrt(d**2 * (e**2).mean(axis=0))) / se) > 10


@pytest.mark.parametrize("spread_rows", [True, False])
def test_pool_adds_the_rows_of_largest_spread_as_candidates_only(spread_rows, monkeypatch):
    from skcoreset.coreset import CoresetCoverageWarning
    from skcoreset.coreset import _kl_coreset as KC

    if not spread_rows:  # the uniform pool alone, for contrast
        size = KC._KLCoreset._pool_size
        monkeypatch.setattr(KC._KLCoreset, "_pool_size", lambda self: (size(self)[0], 0))
    problems = []
    init = KC.GLMProblem.__init__

    def keep(self, *args, **kwargs):
        init(self, *args, **kwargs)
        problems.append(self)

    monkeypatch.setattr(KC.GLMProblem, "__init__", keep)
    # a 0/1 feature set in 2 of 20 000 rows: a uniform pool of 1000 holds one 10% of the time
    X, y = _rare_feature_data(20_000, n_rare=2)
    for seed in range(3):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cs = QuasiNewtonCoreset(20, n_candidates=1000, n_draws=100, random_state=seed)
            cs.fit(X, y)
        covered = X[cs.sample_indices_, 2].any()
        assert covered == spread_rows
        assert any(w.category is CoresetCoverageWarning for w in caught) != covered
        # the full data's sums are estimated on the uniform part alone: 1000 rows at W / 1000
        fw = problems[-1].full_weights
        assert np.count_nonzero(fw) == 1000
        np.testing.assert_allclose(fw[fw > 0], len(y) / 1000)
        # and 250 rows of largest spread join them, less those sampled already
        assert 1000 < len(fw) <= 1250 if spread_rows else len(fw) == 1000


def test_taylor_total_and_remainder_on_all_rows_give_the_exact_sum(poisson_taylor):
    from skcoreset.coreset._kl_problem import Taylor

    model, Xd, y, w, lap, (W, n, G, H), thetas, exact = poisson_taylor
    assert W == pytest.approx(w.sum()) and n == len(y)
    taylor = Taylor(lap, G, H, Xd, y, w)
    ll = model.loglik_matrix(Xd, y, thetas).T
    estimate = ll @ w + taylor.correction(thetas)
    # equal up to one constant (the expansion's value at theta0, left out)
    diff = estimate - exact
    assert np.ptp(diff) < 1e-9 * np.ptp(exact)


def test_batch_sums_and_their_correction_match_numpy(poisson_taylor):
    """A batch of rows (with repeats, as Coreset MCMC draws them): the kernel's sums of
    log-likelihoods and Taylor terms against NumPy's, and the correction they give against
    the difference of the two quadratics, from their gradient and curvature sums."""
    from skcoreset.coreset._kl_problem import Taylor
    from skcoreset.coreset._kl_problem_kernels import batch_sums

    model, Xd, y, w, lap, (W, n, G, H), thetas, exact = poisson_taylor
    taylor = Taylor(lap, G, H, Xd, y, w)
    rows = np.random.default_rng(4).integers(len(y), size=300)
    scale = len(y) / 300
    near = thetas[:20]  # the bulk, where the quadratic is not capped
    Xc = np.ascontiguousarray(Xd)
    out = batch_sums(
        model.family, Xc, y, rows, w, scale, near, model.extra_value, np.empty(0), taylor.eta0,
        taylor.d, taylor.c,
        np.empty((3, 20)),
    )  # fmt: skip
    weights = w[rows] * scale
    r = model.log_density(y[rows][None, :], near @ Xd[rows].T) @ weights
    diff = out[0] - r  # the rows' constants, left out by the kernel: the same at every draw
    np.testing.assert_allclose(diff, diff[0], rtol=1e-10, atol=1e-9 * np.ptp(r))
    e = near @ Xd[rows].T - (Xd @ lap.mean)[rows]
    d, c = model.loglik_derivatives(Xd @ lap.mean, y)
    np.testing.assert_allclose(out[1], e @ (weights * d[rows]), rtol=1e-10)
    np.testing.assert_allclose(out[2], (e * e) @ (weights * c[rows]), rtol=1e-10)
    G_b = Xd[rows].T @ (weights * d[rows])
    H_b = Xd[rows].T @ (Xd[rows] * (weights * c[rows])[:, None])
    delta = near - lap.mean
    want = delta @ (G - G_b) - 0.5 * np.einsum("sp,pq,sq->s", delta, H - H_b, delta)
    np.testing.assert_allclose(taylor.correction(near, out[1:]), want, rtol=1e-9)
    # without Taylor terms, the log-likelihoods alone
    bare = batch_sums(
        model.family, Xc, y, rows, w, scale, near, model.extra_value, np.empty(0), np.empty(0),
        np.empty(0),
        np.empty(0), np.full((3, 20), np.nan),
    )  # fmt: skip
    np.testing.assert_array_equal(bare[0], out[0])
    assert not bare[1:].any()


def test_weight_steps_estimate_the_full_sum_on_batches_without_bias(poisson_taylor):
    """``full_batch``: a weight step's full sum comes from a fresh batch of pooled rows under
    the control variate, unbiased up to a constant; every other call gets the pool's sum."""
    from skcoreset.coreset._kl_problem import GLMProblem, Taylor

    model, Xd, y, w, lap, (W, n, G, H), thetas, exact = poisson_taylor
    taylor = Taylor(lap, G, H, Xd, y, w)
    rng = np.random.RandomState(0)
    problem = GLMProblem(model, Xd, y, w, None, rng, full_batch=50, start=lap, taylor=taylor)
    near = thetas[:6]
    np.testing.assert_allclose(problem.full(near), exact[:6], rtol=1e-10)
    # differences between draws: the constant the batch leaves out cancels
    steps = np.array([problem.full(near, step=True) for _ in range(400)])
    steps -= steps[:, :1]
    want = exact[:6] - exact[0]
    sd = steps.std(axis=0)
    assert np.all(sd[1:] > 0)  # a new batch at every step
    # within 4 standard errors (a batch's scale 10% off fails it)
    assert np.all(np.abs(steps.mean(axis=0) - want) <= 4 * sd / np.sqrt(400) + 1e-9)


def test_taylor_control_variate_beats_the_plain_pool_estimate(poisson_taylor):
    from skcoreset.coreset._kl_problem import Taylor

    model, Xd, y, w, lap, (W, n, G, H), thetas, exact = poisson_taylor
    rng = np.random.default_rng(2)
    pool = rng.choice(len(y), size=400, replace=False, p=w / w.sum())  # proportional to w
    ll = model.loglik_matrix(Xd[pool], y[pool], thetas).T
    per_row = np.full(len(pool), W / len(pool))
    plain = ll @ per_row
    taylor = Taylor(lap, G, H, Xd[pool], y[pool], per_row)
    controlled = plain + taylor.correction(thetas)
    # what matters to the KL gradient is how the error varies over the posterior's draws
    # (a constant cancels): the control variate cuts it by orders of magnitude
    assert np.std(controlled - exact) < 0.01 * np.std(plain - exact)


# -- the start of the weights ----------------------------------------------------------


@pytest.mark.parametrize("cls", [QuasiNewtonCoreset, CoresetMCMC])
def test_omp_start_beats_uniform_start_at_small_size(cls):
    # logistic data with a few strong features: a uniform handful of rows leaves the coreset
    # posterior nearly improper, OMP's start does not (the reason init='omp' is the default)
    rng = np.random.default_rng(3)
    N, D = 3000, 4
    X = rng.standard_normal((N, D))
    y = (rng.random(N) < 1 / (1 + np.exp(-(X @ np.array([2.0, -1.5, 1.0, 0.5]))))).astype(float)
    kw = dict(n_points=12, random_state=0, **FAST[cls])
    kls = {}
    for init in ("omp", "uniform"):
        cs = cls(init=init, **kw).fit(X, y)
        kls[init] = coreset_laplace_kl(
            X, y, cs.sample_indices_, cs.sample_weight_, direction="reverse", model="logistic"
        )
    assert kls["omp"] < 0.5 * kls["uniform"]


def test_taylor_correction_grows_at_most_linearly_far_out(poisson_taylor):
    # a pool whose curvature differs from the data's: uncapped, the quadratic part of the
    # correction grows like s^2 along a ray and, where the pool's curvature is the larger,
    # makes the estimated target improper; capped, it is bounded and the linear part rules
    from skcoreset.coreset._kl_problem import Taylor

    model, Xd, y, w, lap, (W, n, G, H), thetas, exact = poisson_taylor
    pool = np.arange(200)
    per_row = np.full(len(pool), W / len(pool))
    taylor = Taylor(lap, G, H, Xd[pool], y[pool], per_row)
    G_pool, H_pool = taylor._pool_sums(per_row)
    # the direction (in the posterior's units) where the pool's curvature most exceeds H's
    L = lap.chol
    evals, evecs = np.linalg.eigh(L.T @ (H_pool - H) @ L)
    assert evals[-1] > 0
    v = L @ evecs[:, -1]
    far = np.array([lap.mean + s * v for s in (100.0, 200.0, 400.0)])
    fix = taylor.correction(far)
    uncapped = (far - lap.mean) @ (G - G_pool) - 0.5 * np.einsum(
        "sp,pq,sq->s", far - lap.mean, H - H_pool, far - lap.mean
    )
    assert uncapped[2] / uncapped[1] > 3.5  # quadratic growth without the cap
    assert abs(fix[2] - fix[1]) <= 1.05 * abs(fix[1] - fix[0]) * 2  # at most linear with it
    # and within the bulk of the posterior the correction is the full quadratic
    near = lap.mean + 0.5 * v
    delta = near - lap.mean
    full = delta @ (G - G_pool) - 0.5 * delta @ (H - H_pool) @ delta
    assert taylor.correction(near[None])[0] == pytest.approx(full)


def test_kl_methods_keep_their_start_when_they_end_far_worse(regression, monkeypatch):
    """An optimisation that lands far from the posterior (here: every weight on one point)
    is dropped for its start, the OMP coreset of the pool, with a CoresetQualityWarning that
    gives both Laplace KLs; both are reported."""
    from skcoreset.coreset import CoresetQualityWarning

    X, y = regression

    def one_point(problem, idx, w0, **kw):
        w = np.zeros_like(w0)
        w[0] = w0.sum()
        return w, 1, "converged"

    monkeypatch.setattr(_kl, "quasi_newton", one_point)
    with pytest.warns(CoresetQualityWarning, match="the start is kept"):
        cs = QuasiNewtonCoreset(30, random_state=0).fit(X, y)
    assert cs.n_points_ > 1 and cs.laplace_kl_ == cs.start_laplace_kl_
    assert cs.laplace_kl_ == pytest.approx(_kept_kl(cs, X, y), rel=1e-9, abs=1e-12)


def _kept_kl(cs, X, y):
    """The Laplace KL of a fitted coreset to the estimator's own fit of the data."""
    from skcoreset.metrics import gaussian_kl
    from skcoreset.metrics._fidelity import coreset_fit

    full = cs.laplace_
    idx = cs.sample_indices_
    Xd = full.model.design(X[idx])
    core = coreset_fit(full.free_model, Xd, y[idx], cs.sample_weight_, full.mean)
    return gaussian_kl(core.mean, core.cov, full.mean, full.cov)


@pytest.mark.parametrize("Est", [QuasiNewtonCoreset, SparseVICoreset, CoresetMCMC])
def test_kl_methods_report_their_laplace_kl(regression, Est):
    """Without a failure nothing warns, and the kept coreset's Laplace KL is reported beside
    its start's, within the margin of the rule (0.1 nats)."""
    X, y = regression
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        cs = Est(30, random_state=0).fit(X, y)
    assert np.isfinite(cs.laplace_kl_) and np.isfinite(cs.start_laplace_kl_)
    assert cs.laplace_kl_ <= cs.start_laplace_kl_ + 0.1
    assert cs.laplace_kl_ == pytest.approx(_kept_kl(cs, X, y), rel=1e-9, abs=1e-12)


def _width_ratio(est, X, y):
    """The test's own largest sd ratio, over directions, of the coreset's Laplace fit to the
    data's (NumPy Newton fits, the top eigenvalue of the whitened covariance)."""
    Xd = np.column_stack([X, np.ones(len(y))])
    prior_sd = np.broadcast_to(est.prior_scale_, (Xd.shape[1],))
    _, full_cov = logistic_laplace(Xd, y, np.ones(len(y)), prior_sd)
    idx = est.sample_indices_
    _, core_cov = logistic_laplace(Xd[idx], y[idx], est.sample_weight_, prior_sd)
    L = np.linalg.cholesky(full_cov)
    whitened = np.linalg.solve(L, np.linalg.solve(L, core_cov).T)
    return float(np.sqrt(np.linalg.eigvalsh(whitened)[-1]))


@pytest.mark.parametrize("cls", [QuasiNewtonCoreset, CoresetMCMC])
def test_a_direction_left_to_the_prior_warns(cls):
    """A support that misses every row of a rare feature leaves its coefficient to the prior:
    the KL methods say so, with the width the test measures itself. A support that holds
    such rows does not warn."""
    X, y = _rare_feature_data(20_000, 100)  # the data pin the rare feature's coefficient
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = cls(12, init="uniform", random_state=0).fit(X, y)
    assert not X[est.sample_indices_, -1].any()  # the premise: no rare row in the support
    ratio = _width_ratio(est, X, y)
    messages = [str(w.message) for w in caught if issubclass(w.category, CoresetQualityWarning)]
    wide = [m for m in messages if "as wide (in sd)" in m]
    assert ratio > 10 and len(wide) == 1, (ratio, messages)
    printed = float(re.search(r"is ([\d.e+]+)x as wide", wide[0]).group(1))
    np.testing.assert_allclose(printed, ratio, rtol=5e-3)  # printed to 3 significant digits

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = cls(60, random_state=0).fit(X, y)
    assert X[est.sample_indices_, -1].any() and _width_ratio(est, X, y) < 10
    assert not [w for w in caught if "as wide (in sd)" in str(w.message)]


def test_the_start_gives_a_row_to_a_direction_it_left_to_the_prior(monkeypatch):
    """AirportDelays at 21 points: one feature is non-zero on 30 of its 7 580 rows, and every
    start missed them, leaving that coefficient to the prior (the test's own Laplace KL
    5.4e6). The start now swaps in a row for such a direction: a row of that feature, and a
    KL (the test's own, as the estimator reports it) thousands of times lower."""
    data = np.load(pathlib.Path(__file__).parent / "data" / "airportdelays.npz")
    X, y = data["X"], data["y"]
    Xd = np.column_stack([X, np.ones(len(y))])
    rare = X[:, 8] != 0
    assert rare.sum() == 30

    def fit_and_kl():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = QuasiNewtonCoreset(21, model="poisson", random_state=0).fit(X, y)
        prior_sd = np.broadcast_to(est.prior_scale_, (Xd.shape[1],))
        full = glm_laplace("poisson", Xd, y, np.ones(len(y)), prior_sd)
        idx = est.sample_indices_
        core = glm_laplace("poisson", Xd[idx], y[idx], est.sample_weight_, prior_sd)
        return est, gaussian_kl(*core, *full)

    monkeypatch.setattr(_kl_coreset, "_IDENTIFY", 0)  # the start as it was
    before, kl_before = fit_and_kl()
    monkeypatch.undo()
    after, kl_after = fit_and_kl()
    assert not rare[before.sample_indices_].any() and kl_before > 1e6
    assert rare[after.sample_indices_].any() and kl_after < kl_before / 1000
    np.testing.assert_allclose(after.laplace_kl_, kl_after, rtol=1e-6)
