"""The numba MALA kernels: exactness on known targets, against the NumPy oracle."""

import numba
import numpy as np
import pytest

from skcoreset.models import _glm_kernels as GK
from skcoreset.models import get_model
from skcoreset.sampler import _mala as M
from skcoreset.sampler import _mala_kernels as K
from skcoreset.sampler import ess_bulk, sample_mala, split_rhat

from .oracles import models_oracle
from .oracles.mala_oracle import glm_log_posterior, mala_chains, mala_oracle

SIGMA = 0.7
PRIOR = 1.5
GAUSS = get_model("gaussian", extra=SIGMA)  # the noise scale fixed
LOGISTIC = get_model("logistic").family
GAUSSIAN = get_model("gaussian").family


def _gaussian_problem(seed=0, N=40, D=3):
    """Gaussian-linear data; the posterior of theta (noise known) is N(mean, cov) exactly."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D))
    y = X @ np.linspace(-1, 1, D) + SIGMA * rng.standard_normal(N)
    w = rng.uniform(0.5, 2.0, N)
    prec = np.eye(D) / PRIOR**2 + X.T @ (w[:, None] * X) / SIGMA**2
    cov = np.linalg.inv(prec)
    mean = cov @ X.T @ (w * y) / SIGMA**2
    return X, y, w, mean, cov


def _z_scores(draws, mean, cov):
    """Mean z-scores from the ESS, and variance z-scores (MC sd of a variance ~ var sqrt(2/ESS))."""
    ess = ess_bulk(draws)
    flat = draws.reshape(-1, draws.shape[-1])
    sd = flat.std(axis=0)
    z_mean = (flat.mean(axis=0) - mean) / (sd / np.sqrt(ess))
    var = np.diag(cov)
    z_var = (flat.var(axis=0) - var) / (var * np.sqrt(2.0 / ess))
    return z_mean, z_var


@pytest.mark.parametrize("precond", ["laplace", "diag", None])
def test_recovers_gaussian_posterior(precond):
    X, y, w, mean, cov = _gaussian_problem()
    L = {"laplace": np.linalg.cholesky(cov), "diag": np.diag(np.sqrt(np.diag(cov))), None: None}[
        precond
    ]
    rng = np.random.default_rng(1)
    init = mean + rng.standard_normal((4, 3)) @ np.linalg.cholesky(cov).T
    res = sample_mala(
        GAUSS,
        X,
        y,
        w,
        init,
        prior_scale=PRIOR,
        precond_chol=L,
        n_samples=1000,
        n_warmup=400,
        random_state=0,
    )
    assert res.draws.shape == (4, 1000, 3)
    z_mean, z_var = _z_scores(res.draws, mean, cov)
    assert np.all(np.abs(z_mean) < 4), z_mean
    assert np.all(np.abs(z_var) < 4), z_var
    assert np.all(split_rhat(res.draws) < 1.02)
    # The adapted step gives an acceptance rate near the optimum 0.574.
    assert np.all(np.abs(res.acceptance_rate - 0.574) < 0.1), res.acceptance_rate


def test_matches_numpy_oracle():
    """Both samplers recover the same known Gaussian; and their means agree with each other."""
    X, y, w, mean, cov = _gaussian_problem(seed=2)
    f = glm_log_posterior("gaussian", X, y, w, PRIOR, noise=SIGMA)
    oracle, acc_o, _ = mala_oracle(f, mean, 2000, 300, A=cov, seed=3)
    oracle = oracle[None]
    res = sample_mala(
        GAUSS,
        X,
        y,
        w,
        np.tile(mean, (4, 1)),
        prior_scale=PRIOR,
        precond_chol=np.linalg.cholesky(cov),
        n_samples=500,
        n_warmup=300,
        random_state=4,
    )
    for draws in (oracle, res.draws):
        z_mean, z_var = _z_scores(draws, mean, cov)
        assert np.all(np.abs(z_mean) < 4) and np.all(np.abs(z_var) < 4), (z_mean, z_var)
    ess_o, ess_n = ess_bulk(oracle), ess_bulk(res.draws)
    diff = oracle.reshape(-1, 3).mean(0) - res.draws.reshape(-1, 3).mean(0)
    se = np.sqrt(np.diag(cov) / ess_o + np.diag(cov) / ess_n)
    assert np.all(np.abs(diff / se) < 4)
    assert abs(acc_o - 0.574) < 0.1 and abs(res.acceptance_rate.mean() - 0.574) < 0.1
    # Same chain efficiency per draw, within noise: same algorithm, same preconditioner.
    assert 0.5 < (ess_n.mean() / 2000) / (ess_o.mean() / 2000) < 2.0


def test_fixed_step_oracle_acceptance_logistic():
    """With the same fixed step, oracle and kernel accept at the same rate (same MH ratio)."""
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.standard_normal((200, 2)), np.ones(200)])
    y = (rng.random(200) < 1 / (1 + np.exp(-X @ [1.0, -1.0, 0.3]))).astype(float)
    w = np.ones(200)
    f = glm_log_posterior("logistic", X, y, w, 1.0)
    theta0 = np.zeros(3)
    _, acc_o, _ = mala_oracle(f, theta0, 3000, 200, step_size=0.15, seed=6)
    res = sample_mala(
        "logistic",
        X,
        y,
        w,
        np.zeros((4, 3)),
        n_samples=750,
        n_warmup=200,
        step_size=0.15,
        random_state=7,
    )
    assert res.step_size == 0.15
    # Binomial sd of 3000 Bernoulli draws ~ 0.01; autocorrelation inflates it a few times.
    assert abs(acc_o - res.acceptance_rate.mean()) < 0.06


def test_reproducible_and_seed_dependent():
    X, y, w, mean, _cov = _gaussian_problem()
    kw = {"prior_scale": PRIOR, "n_samples": 150, "n_warmup": 120}
    init = np.tile(mean, (2, 1))
    a = sample_mala(GAUSS, X, y, w, init, random_state=11, **kw)
    b = sample_mala(GAUSS, X, y, w, init, random_state=11, **kw)
    c = sample_mala(GAUSS, X, y, w, init, random_state=12, **kw)
    np.testing.assert_array_equal(a.draws, b.draws)
    assert a.step_size == b.step_size
    assert not np.array_equal(a.draws, c.draws)
    np.testing.assert_array_equal(init, np.tile(mean, (2, 1)))  # the caller's init untouched


def test_non_finite_proposals_rejected():
    # Poisson with a huge fixed step: proposals overflow exp(eta) and must all be rejected.
    rng = np.random.default_rng(8)
    X = np.column_stack([10 * rng.standard_normal(50), np.ones(50)])
    y = rng.poisson(3.0, 50).astype(float)
    init = np.array([[0.0, np.log(3.0)]])
    res = sample_mala(
        "poisson", X, y, np.ones(50), init, n_samples=50, n_warmup=0, step_size=1e3, random_state=0
    )
    assert np.all(np.isfinite(res.draws))
    assert res.acceptance_rate[0] == 0.0
    np.testing.assert_array_equal(res.draws[0], np.tile(init[0], (50, 1)))


def test_non_finite_start_raises():
    X = np.ones((3, 1))
    with pytest.raises(ValueError, match="not finite"):
        sample_mala("poisson", X, np.ones(3), np.ones(3), np.array([[1e4]]), n_samples=4)


def test_log_target_gradient_with_noise():
    """The log sigma coordinate: gradient by finite differences, value from the formula."""
    rng = np.random.default_rng(9)
    X = rng.standard_normal((30, 2))
    y = rng.standard_normal(30)
    w = rng.uniform(0, 2, 30)
    theta = np.array([0.3, -0.2, np.log(0.8)])
    s_mu, s_sd = 0.5, 2.0

    def f(t):
        lp, g = np.empty(1), np.empty((1, 3))
        prior = (s_mu, 1 / s_sd**2)
        data = K.target_data(GAUSSIAN, X, y, w, 1.0, prior)
        K.mala_init(GAUSSIAN, t[None], data, np.full(X.shape[1], 1 / 1.3**2), 1.0, prior, lp, g)
        return lp[0], g[0]

    lp, g = f(theta)
    sigma = np.exp(theta[2])
    r = y - X @ theta[:2]
    expected = (
        np.sum(w * (-0.5 * (r / sigma) ** 2 - np.log(sigma) - 0.5 * np.log(2 * np.pi)))
        - 0.5 * theta[:2] @ theta[:2] / 1.3**2
        - 0.5 * (theta[2] - s_mu) ** 2 / s_sd**2
    )
    assert lp == pytest.approx(expected, rel=1e-12)
    h = 1e-6
    num = [(f(theta + h * e)[0] - f(theta - h * e)[0]) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-6)


def test_sampled_noise_matches_quadrature():
    """Joint posterior of (theta, log sigma) for a one-coefficient model vs a 2-D grid."""
    rng = np.random.default_rng(10)
    N = 15
    X = rng.standard_normal((N, 1))
    y = 0.8 * X[:, 0] + 0.5 * rng.standard_normal(N)
    w = np.ones(N)
    s_mu, s_sd = 0.0, 3.0
    th = np.linspace(-1.5, 3.0, 500)
    ss = np.linspace(-3.0, 1.5, 500)
    T, S = np.meshgrid(th, ss, indexing="ij")
    r = y[None, None, :] - T[..., None] * X[None, None, :, 0]
    logp = (
        -0.5 * np.sum(r**2, axis=-1) * np.exp(-2 * S)
        - N * S
        - 0.5 * T**2
        - 0.5 * ((S - s_mu) / s_sd) ** 2
    )
    p = np.exp(logp - logp.max())
    p /= p.sum()
    exact = np.array([np.sum(p * T), np.sum(p * S)])
    exact_var = np.array([np.sum(p * T**2), np.sum(p * S**2)]) - exact**2
    init = exact + 0.1 * rng.standard_normal((4, 2))
    L = np.diag(np.sqrt(exact_var))
    res = sample_mala(
        "gaussian",
        X,
        y,
        w,
        init,
        sample_extra=True,
        extra_prior=(s_mu, s_sd),
        precond_chol=L,
        n_samples=1500,
        n_warmup=300,
        random_state=1,
    )
    z_mean, z_var = _z_scores(res.draws, exact, np.diag(exact_var))
    assert np.all(np.abs(z_mean) < 4), z_mean
    assert np.all(np.abs(z_var) < 4), z_var


def _driver_problem(C=4, N=300, D=3, seed=13):
    """A logistic problem and an over-dispersed start for calling the kernels directly."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.standard_normal((N, D - 1)), np.ones(N)])
    y = (rng.random(N) < 0.4).astype(float)
    w = rng.uniform(0.5, 2.0, N)
    theta = 0.3 * rng.standard_normal((C, D))
    logp = np.empty(C)
    grad = np.empty((C, D))
    prec = np.ones(X.shape[1])
    data = K.target_data(LOGISTIC, X, y, w, 1.0, None)
    assert K.mala_init(LOGISTIC, theta, data, prec, 1.0, None, logp, grad) == 0
    L = np.linalg.cholesky(np.linalg.inv(X.T @ (w[:, None] * X) / 4 + np.eye(D)))
    return X, y, w, theta, logp, grad, L


def _run_driver(run, problem, adapt, n_steps=60, n_calls=2, seed=14):
    X, y, w, theta, logp, grad, L = (a.copy() for a in problem)
    C, P = theta.shape
    data = K.target_data(LOGISTIC, X, y, w, 1.0, None)
    da = np.zeros(K.DA_SIZE)
    da[K.DA_LOG_EPS], da[K.DA_MU], da[K.DA_TARGET] = np.log(0.8), np.log(8.0), 0.574
    draws = np.zeros((C, n_steps * n_calls, P))
    n_accept = np.zeros(C, dtype=np.int64)
    rng = np.random.RandomState(seed)
    eps = []
    for k in range(n_calls):
        z, u = rng.standard_normal((C, n_steps, P)), rng.random_sample((C, n_steps))
        eps.append(
            run(
                LOGISTIC,
                theta,
                logp,
                grad,
                *data,
                np.ones(X.shape[1]),
                1.0,
                None,
                L,
                np.ascontiguousarray(L.T),
                0.8,
                adapt,
                da,
                z,
                u,
                draws,
                k * n_steps,
                True,
                n_accept,
                K.chain_work(C),
            )  # fmt: skip
        )
    return draws, theta, logp, grad, da, n_accept, eps


def test_serial_and_parallel_drivers_identical():
    """The threaded driver gives the serial driver's bits, whatever the number of threads."""
    adapt = False
    problem = _driver_problem()
    ref = _run_driver(K.mala_run.serial, problem, adapt)
    draws = ref[0]
    assert np.all(np.isfinite(draws)) and 0 < ref[5].min() and ref[5].max() < draws.shape[1]
    # Every chain moved, independently: no two chains share a draw.
    assert len(np.unique(draws[:, -1, 0])) == draws.shape[0]
    n_threads = numba.get_num_threads()
    try:
        for t in sorted({1, 2, n_threads}):
            numba.set_num_threads(min(t, numba.config.NUMBA_NUM_THREADS))
            out = _run_driver(K.mala_run.threaded, problem, adapt)
            for a, b in zip(ref[:-1], out[:-1]):  # all but the step sizes (returned serially)
                np.testing.assert_array_equal(a, b)
    finally:
        numba.set_num_threads(n_threads)


def test_sample_mala_same_draws_either_driver(monkeypatch):
    """sample_mala: the driver choice (by problem size) never changes the result."""
    X, y, w, mean, _cov = _gaussian_problem(N=60)
    kw = {
        "prior_scale": PRIOR,
        "n_samples": 130,
        "n_warmup": 110,
        "random_state": 3,
    }
    init = mean + 0.1 * np.random.default_rng(4).standard_normal((3, 3))
    monkeypatch.setattr(K.mala_run, "min_entries", 10**12)
    a = sample_mala(GAUSS, X, y, w, init, **kw)
    monkeypatch.setattr(K.mala_run, "min_entries", 0)
    if numba.get_num_threads() > 1:
        assert M._use_parallel(X.shape[0], 3, 3)
    b = sample_mala(GAUSS, X, y, w, init, **kw)
    np.testing.assert_array_equal(a.draws, b.draws)
    np.testing.assert_array_equal(a.acceptance_rate, b.acceptance_rate)
    assert a.step_size == b.step_size


def _glm_problem(name, seed, N=300, D=4):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.standard_normal((N, D - 1)) / np.sqrt(D), np.ones(N)])
    eta = X @ rng.standard_normal(D) * 0.7
    y = {
        "logistic": (rng.random(N) < 1 / (1 + np.exp(-eta))).astype(float),
        "poisson": rng.poisson(np.exp(eta)).astype(float),
        "gaussian": eta + SIGMA * rng.standard_normal(N),
    }[name]
    w = rng.uniform(0.5, 2.0, N)
    return X, y, w


@pytest.mark.parametrize("name", ["logistic", "poisson", "gaussian"])
def test_same_chains_as_batched_numpy_mala(name):
    """The NumPy MALA of the benchmark consumes the same random numbers: same chains, up to
    rounding, through warm-up (dual averaging) and the kept draws; same accept decisions."""
    X, y, w = _glm_problem(name, 20)
    model = get_model(name, extra=SIGMA)
    init = 0.1 * np.random.default_rng(21).standard_normal((3, 4))
    L = np.linalg.cholesky(np.linalg.inv(X.T @ (w[:, None] * X) + np.eye(4)))
    kw = {"precond_chol": L, "n_samples": 250, "n_warmup": 150}
    res = sample_mala(model, X, y, w, init, random_state=22, **kw)
    draws, acc, eps = mala_chains(name, X, y, w, init, noise=SIGMA, seed=22, **kw)
    assert res.step_size == pytest.approx(eps, rel=1e-6)
    np.testing.assert_array_equal(res.acceptance_rate, acc)
    assert 0.3 < acc.mean() < 0.9
    np.testing.assert_allclose(res.draws, draws, rtol=0, atol=1e-7)


def test_batched_numpy_mala_recovers_gaussian_posterior():
    """The NumPy baseline itself samples the right posterior (conjugate Gaussian)."""
    X, y, w, mean, cov = _gaussian_problem(seed=5)
    init = mean + np.random.default_rng(6).standard_normal((4, 3)) @ np.linalg.cholesky(cov).T
    draws, acc, _ = mala_chains(
        "gaussian",
        X,
        y,
        w,
        init,
        prior_scale=PRIOR,
        noise=SIGMA,
        precond_chol=np.linalg.cholesky(cov),
        n_samples=1000,
        n_warmup=300,
        seed=7,
    )
    z_mean, z_var = _z_scores(draws, mean, cov)
    assert np.all(np.abs(z_mean) < 4) and np.all(np.abs(z_var) < 4), (z_mean, z_var)
    assert abs(acc.mean() - 0.574) < 0.1


@pytest.mark.parametrize("P", [1, 3, 4, 6, 11])
def test_step_algebra_against_numpy(P):
    """The per-step helpers of the kernels: both triangular products (four rows per pass, then
    the rows left over), the log ratio of proposal densities, the finiteness check."""
    rng = np.random.default_rng(P)
    L = np.tril(rng.standard_normal((P, P)))
    g, v, out0 = rng.standard_normal((3, P))
    u = np.full(P, np.nan)  # overwritten, not accumulated into
    K._whiten_grad(L, g, u)
    scale = np.abs(L).T @ np.abs(g)  # the size of the terms: rounding is relative to it
    np.testing.assert_allclose(u, L.T @ g, rtol=0, atol=1e-14 * scale.max())
    out = out0.copy()
    K._add_tril_product(np.ascontiguousarray(L.T), v, out)
    scale = np.abs(out0) + np.abs(L) @ np.abs(v)
    np.testing.assert_allclose(out, out0 + L @ v, rtol=0, atol=1e-14 * scale.max())
    xi, uc, up = rng.standard_normal((3, P))
    half_eps = 0.35
    direct = 0.5 * (xi @ xi - np.sum((xi + half_eps * (uc + up)) ** 2))
    assert K._log_proposal_ratio(xi, uc, up, half_eps) == pytest.approx(direct, rel=1e-12)
    assert K._all_finite(g)
    for bad in (np.inf, -np.inf, np.nan):
        h = g.copy()
        h[P // 2] = bad
        assert not K._all_finite(h)


def test_chain_layout_aligned_padded_and_same_results():
    """chain_layout: the transposed design with rows padded to whole 64-byte lines, y and w,
    each starting on a 64-byte boundary; the chain kernel gives the same bits on it as on a
    plain transposed copy."""
    for N, D in [(1, 1), (7, 3), (300, 5), (1000, 10)]:
        X, y, w = _glm_problem("logistic", 40, N=N, D=D)
        Xt, ya, wa = GK.chain_layout(X, y, w)
        assert Xt.shape == (D, -(-N // 8) * 8) and Xt.flags.c_contiguous
        for a in (Xt, ya, wa):
            assert a.ctypes.data % 64 == 0
        np.testing.assert_array_equal(Xt[:, :N], X.T)
        np.testing.assert_array_equal(Xt[:, N:], 0.0)
        np.testing.assert_array_equal(ya, y)
        np.testing.assert_array_equal(wa, w)
        thetas = np.random.default_rng(N).standard_normal((3, D))
        out = []
        for xt, yy, ww in ((Xt, ya, wa), (np.ascontiguousarray(X.T), y, w)):
            ll, grad = np.empty(3), np.empty((3, D))
            work = np.empty((3, 2, GK.CHAIN_BLOCK))
            GK.weighted_loglik_grad_chains(
                LOGISTIC, None, thetas, xt, yy, ww, ww.sum(), 0.0, np.ones(3), ll, grad, work
            )
            out.append((ll, grad))
        np.testing.assert_array_equal(out[0][0], out[1][0])
        np.testing.assert_array_equal(out[0][1], out[1][1])


@pytest.mark.parametrize("D", [7, 8, 2, 1])  # column groups: 3 + 4, 4 + 4, 2, 1
@pytest.mark.parametrize("name", ["logistic", "poisson", "gaussian"])
def test_chain_kernel_matches_oracle_and_is_batch_independent(name, D):
    """weighted_loglik_grad_chains: each chain against the NumPy formulas (|eta| up to ~5000
    for the logistic model), several row blocks; a chain alone gives the bits it gives in a
    batch."""
    family = get_model(name).family
    N, C = 2 * GK.CHAIN_BLOCK + 37, 5
    X, y, w = _glm_problem(name, 30, N=N, D=D)
    rng = np.random.default_rng(31)
    thetas = np.column_stack([0.5 * rng.standard_normal((C, D)), rng.standard_normal(C)])
    if name == "logistic":
        thetas[0, :D] = 3000.0 * np.sign(rng.standard_normal(D))  # |eta| in the thousands
    noise = rng.uniform(0.3, 2.0, C)
    offset = GK.weighted_offset(family, y, w, 1.0)
    Xt = np.ascontiguousarray(X.T)

    def run(th, sig):
        ll, grad = np.empty(len(th)), np.full((len(th), D + 1), 7.0)
        work = np.empty((len(th), 2, GK.CHAIN_BLOCK))
        GK.weighted_loglik_grad_chains(
            family, None, th, Xt, y, w, w.sum(), offset, sig, ll, grad, work
        )
        return ll, grad

    ll, grad = run(thetas, noise)
    np.testing.assert_array_equal(grad[:, D], 7.0)  # the column past D is left alone
    for c in range(C):
        lp0, g0 = models_oracle.log_posterior(name, thetas[c, :D], X, y, w, np.inf, noise[c])
        assert ll[c] == pytest.approx(lp0, rel=1e-12)
        np.testing.assert_allclose(grad[c, :D], g0, rtol=1e-11, atol=1e-11 * np.abs(g0).max())
        one = run(thetas[c : c + 1].copy(), noise[c : c + 1].copy())
        assert one[0][0] == ll[c]
        np.testing.assert_array_equal(one[1][0], grad[c])


def test_a_chain_stuck_in_warm_up_resumes_from_the_best_chain():
    """Warm-up: a chain that accepted none of a chunk's steps (where MALA's proposals all
    overshoot) resumes at the state of the chain of the highest log posterior; the others, and
    a warm-up where every chain is stuck alike, are left as they are."""
    from skcoreset.sampler._mala import _restart_stuck

    theta = np.arange(12.0).reshape(4, 3)
    logp, grad = np.array([-5.0, -1.0, -900.0, -3.0]), -theta.copy()
    _restart_stuck(np.array([40, 57, 0, 61]), theta, logp, grad)
    np.testing.assert_array_equal(theta[2], theta[1])
    assert logp[2] == -1.0 and np.array_equal(grad[2], grad[1])
    np.testing.assert_array_equal(theta[[0, 1, 3]], np.arange(12.0).reshape(4, 3)[[0, 1, 3]])
    before = theta.copy()
    _restart_stuck(np.zeros(4, dtype=np.int64), theta, logp, grad)
    np.testing.assert_array_equal(theta, before)
