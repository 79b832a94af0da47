"""The KL coresets of a multilevel model: each group's problem against a NumPy oracle, the
importance draws and KL estimate, and every KL estimator's coreset posterior against the full
data's (fit and stream)."""

import numpy as np
import pytest
from scipy.special import expit

from skcoreset import CoresetMCMC, QuasiNewtonCoreset, SparseVICoreset
from skcoreset.coreset._multilevel_kl import GroupProblem, group_bank, kl_weights, uniform_start
from skcoreset.models import Multilevel
from skcoreset.models import _multilevel_laplace as multilevel_laplace
from skcoreset.models._multilevel_laplace import fit_laplace
from tests.oracles.multilevel_oracle import laplace_moments


def grouped(n=12000, n_groups=8, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, n_groups, n)
    X = rng.standard_normal((n, 3))
    u = rng.normal(0, 0.6, n_groups)
    y = (rng.random(n) < expit(X @ [0.8, -0.5, 0.3] - 0.2 + u[g])).astype(int)
    return X, y, g


def problem_of(seed=0):
    X, y, g = grouped(seed=seed)
    spec = Multilevel("logistic")
    post = spec.posterior(X, y.astype(float), g, 8, np.ones(len(y)))
    laplace = fit_laplace(post)
    bank = group_bank(laplace, np.random.RandomState(0), np.array([3]))[3]
    rows = slice(*np.searchsorted(post.g, [3, 4]))
    problem = GroupProblem(
        post.base, post.E, post.Xd[rows], post.Z[rows], post.y[rows], post.w[rows], bank, 4,
        np.random.RandomState(1),
    )  # fmt: skip
    return problem, post, rows, bank


def test_group_problem_is_the_oracle():
    """Log-likelihoods of a group's rows at (beta, u_g) draws, and its full sum, from the
    logistic formula; the bank is the Laplace fit's (beta, u_3) draws."""
    problem, post, rows, bank = problem_of()
    D = post.D
    eta = bank[:, :D] @ post.Xd[rows].T + bank[:, D:] @ post.Z[rows].T
    y = post.y[rows]
    oracle = y * eta - np.logaddexp(0.0, eta)
    np.testing.assert_allclose(problem.loglik(bank, None), oracle, rtol=1e-12, atol=1e-12)
    idx = np.array([0, 5, 9])
    np.testing.assert_allclose(problem.loglik(bank[:7], idx), oracle[:7, idx], rtol=1e-12)
    np.testing.assert_allclose(problem.full(bank[:7]), oracle[:7].sum(axis=1), rtol=1e-12)
    # the bank's draws of the shared parameters and effect: the Laplace fit's moments
    lap_draws = multilevel_laplace.MultilevelLaplace.draws(
        fit_laplace(post), 20000, np.random.RandomState(2)
    )
    _, u = post.effects(lap_draws)
    ref = np.concatenate([lap_draws[:, :D], u[:, 3, :]], axis=1)
    se = ref.std(0) / np.sqrt(bank.shape[0])
    assert np.all(np.abs(bank.mean(0) - ref.mean(0)) < 5 * se)


def test_importance_draws_and_kl_estimate():
    """Weights equal to the data's: pi_w is pi, the resampling uniform over the bank and the
    KL zero; doubled weights on half the rows: a positive KL, the draws pulled away."""
    problem, post, rows, bank = problem_of()
    n = problem.y.shape[0]
    all_rows = np.arange(n)
    assert problem.kl(all_rows, problem.full_weights) == pytest.approx(0.0, abs=1e-12)
    draws = problem.draws(all_rows, problem.full_weights, 4000)
    # resampled uniformly: the mean of the draws is the bank's, within its Monte Carlo error
    se = bank.std(0) / np.sqrt(4000)
    assert np.all(np.abs(draws.mean(0) - bank.mean(0)) < 5 * se)
    np.testing.assert_allclose(problem.full(draws), problem._bank_full[problem._last[1]])
    half = all_rows[::2]
    assert problem.kl(half, np.full(half.shape[0], 2.0)) > 0.01


@pytest.mark.parametrize("cls", [QuasiNewtonCoreset, SparseVICoreset, CoresetMCMC])
def test_kl_coresets_match_the_full_posterior(cls, monkeypatch):
    """Each KL estimator's multilevel coreset (defaults, except Coreset MCMC's training
    shortened): its Laplace posterior against the full data's, every parameter's mean within
    0.25 of its sd, sds within 15 %, every group kept, at most the 'auto' points a group."""
    X, y, g = grouped(seed=3)
    spec = Multilevel("logistic")
    kw = {"n_train": 300} if cls is CoresetMCMC else {}
    cs = cls(model=spec, random_state=0, **kw)
    Xm, ym, params = cs.fit_resample(X, y, groups=g)
    assert set(params) == {"sample_weight", "groups"}
    assert set(params["groups"]) == set(g)
    # the 'auto' size: 10 points per parameter a group informs (coefficients, intercept,
    # effect) in all, shared by mass; at least 4 per parameter a group
    counts = np.bincount(params["groups"])
    assert counts.sum() <= 8 * 10 * 5
    assert counts.min() >= 4 * 5 or cls is SparseVICoreset  # SparseVI may stop early
    monkeypatch.setattr(multilevel_laplace, "SEARCH_ROWS_PER_GROUP", 10**9)
    full = cs.laplace_.posterior
    ref = fit_laplace(full, "centred")
    coreset = spec.posterior(
        Xm, ym.astype(float), params["groups"], 8, params["sample_weight"],
        data_scale=full.data_scale,
    )  # fmt: skip
    small = fit_laplace(coreset, "centred")

    (m1, s1), (m0, s0) = laplace_moments(small), laplace_moments(ref)
    assert np.max(np.abs(m1 - m0) / s0) < 0.25
    np.testing.assert_allclose(s1 / s0, 1, atol=0.15)


def test_qnc_steps_lower_a_groups_kl_from_a_uniform_start():
    """From the uniform start (the papers'), the quasi-Newton steps at least halve the
    group's estimated KL."""
    problem, post, rows, bank = problem_of(seed=4)
    est = QuasiNewtonCoreset(init="uniform")
    start = uniform_start(
        problem.y.shape[0], 30, float(problem.full_weights.sum()), np.random.RandomState(0)
    )
    idx, w = kl_weights(est, problem, start, 30)
    assert problem.kl(idx, w) < 0.5 * problem.kl(*start)


def test_qnc_streams_grouped_blocks(monkeypatch):
    """partial_fit of a KL coreset: candidates kept per group, the weights optimised in the
    result; its Laplace posterior against the full data's as above."""
    X, y, g = grouped(n=16000, seed=5)
    spec = Multilevel("logistic")
    cs = QuasiNewtonCoreset(model=spec, random_state=0)
    for start in range(0, len(y), 4000):
        part = slice(start, start + 4000)
        cs.partial_fit(X[part], y[part], groups=g[part])
    assert cs.n_samples_seen_ == len(y)
    assert len(cs.sample_indices_) <= 8 * 10 * 5
    monkeypatch.setattr(multilevel_laplace, "SEARCH_ROWS_PER_GROUP", 10**9)
    full = spec.posterior(X, y.astype(float), g, 8, np.ones(len(y)))
    rows = cs.sample_indices_
    coreset = spec.posterior(
        X[rows], y[rows].astype(float), g[rows], 8, cs.sample_weight_, data_scale=full.data_scale
    )
    d0 = fit_laplace(full, "centred").draws(4000, np.random.default_rng(0))
    d1 = fit_laplace(coreset, "centred").draws(4000, np.random.default_rng(0))
    m0, s0 = d0[:, :4].mean(0), d0[:, :4].std(0)
    assert np.max(np.abs(d1[:, :4].mean(0) - m0) / s0) < 0.25
    np.testing.assert_allclose(d1[:, :4].std(0) / s0, 1, atol=0.15)


def test_sparse_vi_candidates_are_bounded_in_a_large_group(monkeypatch):
    """A group of more rows than MAX_CANDIDATES: SparseVI chooses among a sample of them,
    its points the group's rows, the full sum still every row's."""
    from skcoreset.coreset import _multilevel_kl

    problem, post, rows, bank = problem_of()
    n = problem.y.shape[0]
    monkeypatch.setattr(_multilevel_kl, "MAX_CANDIDATES", n // 3)
    est = SparseVICoreset(n_draws=100, n_rounds=5)
    idx, w = kl_weights(est, problem, None, 20)
    assert problem.pool is None and 0 < idx.size <= 20 and idx.max() < n
    assert np.all(w > 0)
    np.testing.assert_allclose(
        problem.full(bank[:5]), problem.loglik(bank[:5], None) @ problem.full_weights
    )
