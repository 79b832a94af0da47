"""Projections against the NumPy oracle, and their statistical meaning."""

import numpy as np
import pytest

from skcoreset.models import LaplaceApproximation, get_model, laplace_approximation
from skcoreset.projection import Projection, project

from .oracles import models_oracle as oracle


def _problem(name, n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    eta = X @ np.array([0.5, -0.3, 0.2])
    y = {
        "logistic": (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float),
        "poisson": rng.poisson(np.exp(eta)).astype(float),
        "gaussian": eta + 0.5 * rng.standard_normal(n),
    }[name]
    model = get_model(name)
    Xd = model.design(X)
    lap = laplace_approximation(model, Xd, y, design=True)
    return lap.model, Xd, y, lap


@pytest.mark.parametrize("name", ["logistic", "poisson", "gaussian"])
@pytest.mark.parametrize("projection", ["loglik", "fisher"])
def test_projection_matches_oracle(name, projection):
    model, Xd, y, lap = _problem(name)
    V = project(model, Xd, y, lap, projection=projection, n_projections=50, random_state=7)
    # the oracle's features at the projection's own draws: the coefficients, the Fisher
    # coordinates and (Gaussian, its noise scale a parameter of the fit) each draw's noise
    proj = Projection.draw(lap, projection=projection, n_projections=50, random_state=7)
    thetas = proj.thetas_t.T
    per_draw = proj.extras is not None
    assert per_draw == (name == "gaussian") == bool(lap.n_extra)
    noise = proj.extras if per_draw else model.extra_value
    if projection == "loglik":
        expected = oracle.loglik_features(name, Xd, y, thetas, noise)
    else:
        expected = oracle.fisher_features(name, Xd, y, thetas, proj.coords, noise)
    np.testing.assert_allclose(V, expected, rtol=1e-10, atol=1e-12)
    V32 = project(
        model, Xd, y, lap, projection=projection, n_projections=50, dtype=np.float32, random_state=7
    )
    assert V32.dtype == np.float32
    np.testing.assert_allclose(V32, expected, rtol=1e-5, atol=1e-6 * np.abs(expected).max())
    if not per_draw:  # the draws of a model without an extra parameter: the Laplace fit's
        rng = np.random.RandomState(7)
        np.testing.assert_array_equal(thetas, lap.sample(50, random_state=rng))


def test_joint_draws_follow_the_joint_laplace_fit():
    """With a free extra parameter the draws are the joint Laplace fit's: its log takes 16
    quantile levels of its marginal, the coefficients their conditional given it, so the
    draws' mean and covariance (correlations with the log extra parameter included) are the
    fit's within their Monte Carlo error."""
    # a fit whose log extra parameter is correlated with the coefficients (the models' own
    # parametrisations are nearly orthogonal at the mode: a made-up covariance tests more)
    A = np.random.default_rng(1).standard_normal((4, 4))
    cov = A @ A.T + 0.5 * np.eye(4)
    model = get_model("negative_binomial", extra=0.5)
    mean = np.array([0.3, -0.2, 1.0, np.log(0.5)])
    lap = LaplaceApproximation(mean, cov, np.linalg.cholesky(cov), model, n_extra=1)
    J = 40_000
    draws = Projection.draw(lap, n_projections=J, random_state=0).joint_draws()
    assert np.unique(draws[:, -1]).shape[0] == 16
    sd = np.sqrt(np.diag(lap.cov))
    z = (draws.mean(axis=0) - lap.mean) / (sd / np.sqrt(J))
    assert np.all(np.abs(z) < 4.5)
    corr = np.corrcoef(draws.T)
    expected = lap.cov / np.outer(sd, sd)
    # sd of a sample correlation: at most 1 / sqrt(J); of a sample sd, 1 / sqrt(2 J) of it
    np.testing.assert_allclose(corr, expected, atol=4.5 / np.sqrt(J))
    np.testing.assert_allclose(draws.std(axis=0), sd, rtol=4.5 / np.sqrt(2 * J))


@pytest.mark.parametrize("name", ["logistic", "poisson", "gaussian"])
def test_summaries_from_stored_features_are_the_fused_kernels(name, monkeypatch):
    """A block's sum and norms: from the features in slices (small blocks) or by the fused
    kernel that stores none (large ones): the oracle's, and the same bits either way."""
    from skcoreset.projection import _projection

    model, Xd, y, lap = _problem(name, n=3000)
    draws = _projection.Projection.draw(lap, n_projections=64, random_state=3)
    draws.model = model
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    monkeypatch.setattr(_projection, "_SLICE_ENTRIES", 64 * 100)  # slices inside the tasks
    total, norms = draws.summarize(Xd, y, w)
    V = draws.transform(Xd, y, w)
    np.testing.assert_allclose(total, V.sum(axis=0), rtol=1e-12, atol=1e-12 * np.abs(V).max())
    np.testing.assert_allclose(norms, np.linalg.norm(V, axis=1), rtol=1e-13)
    monkeypatch.setattr(_projection, "_STORED_SUMMARY_ENTRIES", 0)  # the fused kernel
    fused_total, fused_norms = draws.summarize(Xd, y, w)
    np.testing.assert_array_equal(total, fused_total)
    np.testing.assert_array_equal(norms, fused_norms)


def test_loglik_inner_product_estimates_posterior_covariance():
    # <v_n, v_m> -> Cov_{pi_hat}(l_n, l_m) as J grows: compare with a large independent draw.
    model, Xd, y, lap = _problem("logistic", n=6)
    V = project(model, Xd, y, lap, n_projections=20000, random_state=0)
    L = model.loglik_matrix(Xd, y, lap.sample(200000, random_state=1))
    C = np.cov(L)
    np.testing.assert_allclose(V @ V.T, C, rtol=0.1, atol=0.05 * np.abs(C).max())


def test_fisher_inner_product_is_unbiased():
    # E[<v_n, v_m>] = E_pi_hat[grad l_n . grad l_m]: average over independent projections.
    model, Xd, y, lap = _problem("poisson", n=5)
    thetas = lap.sample(200000, random_state=3)
    eta = Xd @ thetas.T  # (n, S): the exact expectation by a large Monte Carlo average
    D = oracle.dloglik("poisson", eta, y[:, None])
    exact = np.einsum("is,js,ik,jk->ij", D, D, Xd, Xd) / thetas.shape[0]
    reps = [
        project(model, Xd, y, lap, projection="fisher", n_projections=2000, random_state=s)
        for s in range(20)
    ]
    est = np.mean([V @ V.T for V in reps], axis=0)
    se = np.std([V @ V.T for V in reps], axis=0) / np.sqrt(len(reps))
    assert np.all(np.abs(est - exact) < 5 * se + 1e-3 * np.abs(exact).max())


def test_sample_weight_scales_rows_and_inputs_untouched():
    model, Xd, y, lap = _problem("gaussian")
    X0, y0 = Xd.copy(), y.copy()
    w = np.linspace(0, 2, len(y))
    V = project(model, Xd, y, lap, n_projections=30, random_state=1)
    Vw = project(model, Xd, y, lap, n_projections=30, random_state=1, sample_weight=w)
    np.testing.assert_allclose(Vw, V * w[:, None])
    np.testing.assert_array_equal(Xd, X0)
    np.testing.assert_array_equal(y, y0)


def test_bad_arguments():
    model, Xd, y, lap = _problem("logistic", n=20)
    with pytest.raises(ValueError, match="projection"):
        project(model, Xd, y, lap, projection="random")
    with pytest.raises(ValueError, match="dtype"):
        project(model, Xd, y, lap, dtype=np.int32)
