"""Separable classes: the logistic fit is set by the prior, and every entry point says so."""

import warnings

import numpy as np
import pytest

from skcoreset.coreset import GIGACoreset, UniformCoreset
from skcoreset.datasets import load_phishing, make_logistic_regression
from skcoreset.linear_model import BayesianLogisticRegression
from skcoreset.models import (
    SeparationWarning,
    get_model,
    laplace_approximation,
    laplace_from_blocks,
)
from skcoreset.models._logistic import separating_mode


def _separable(n=400, seed=0):
    """Two classes split by a hyperplane with a gap: the likelihood has no maximum."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    X[:, 0] += np.where(y == 1, 0.3, -0.3)
    return X, y


def _separation_warnings(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [w for w in caught if issubclass(w.category, SeparationWarning)]


@pytest.mark.parametrize("prior_scale", [1e4, "auto"])
def test_coreset_on_separable_data_warns(prior_scale):
    X, y = _separable()
    found = _separation_warnings(
        lambda: GIGACoreset(n_points=30, prior_scale=prior_scale, random_state=0).fit(X, y)
    )
    assert found
    message = str(found[0].message)
    assert "separable" in message and "prior_scale" in message
    # attributed to the caller's line, not to a library frame
    assert found[0].filename == __file__


def test_bayesian_glm_on_separable_data_warns():
    X, y = _separable()
    est = BayesianLogisticRegression(prior_scale=100.0, n_samples=50, n_warmup=50, random_state=0)
    assert _separation_warnings(lambda: est.fit(X, y))


def test_block_fit_applies_the_same_rule():
    X, y = _separable()
    model = get_model("logistic", prior_scale=100.0)
    Xd, yv = model.design(X), y.astype(float)
    halves = [(Xd[:200], yv[:200], np.ones(200)), (Xd[200:], yv[200:], np.ones(200))]
    assert _separation_warnings(lambda: laplace_from_blocks(model, lambda: halves))


def test_block_rule_stops_at_the_first_overlap():
    # once two rows of different classes overlap no later row can separate them: the pass
    # stops there (the first block, on ordinary data) and reads no further block
    X, y = make_logistic_regression(n_samples=400, n_features=3, random_state=0)
    model = get_model("logistic", prior_scale=100.0)
    Xd, yv = model.design(X), y.astype(float)
    theta = laplace_approximation(model, X, y).mean

    def blocks():
        yield Xd[:200], yv[:200], np.ones(200)
        raise AssertionError("a block after the overlap was read")

    assert not separating_mode(blocks, theta)
    # separable blocks, then the one contradicting row in a block of its own: read to it
    Xs, ys = _separable()
    theta = laplace_approximation(model, Xs, ys).mean
    Xd, yv = model.design(Xs), ys.astype(float)
    halves = [(Xd[:200], yv[:200], np.ones(200)), (Xd[200:], yv[200:], np.ones(200))]
    assert separating_mode(lambda: halves, theta)
    eta = Xd @ theta
    wrong = (Xd[[np.argmax(eta)]], np.zeros(1), np.ones(1))  # class 0 above every class 1
    assert not separating_mode(lambda: [*halves, wrong], theta)


def test_rows_with_zero_weight_do_not_count():
    # one row of class 0 deep inside class 1 breaks the separation, unless its weight is 0
    X, y = _separable()
    X = np.r_[X, [[5.0, 5.0, 0.0]]]
    y = np.r_[y, 0]
    model = get_model("logistic", prior_scale=100.0)
    w = np.ones(len(y))
    assert not _separation_warnings(lambda: laplace_approximation(model, X, y, w))
    w[-1] = 0.0
    assert _separation_warnings(lambda: laplace_approximation(model, X, y, w))


def test_ordinary_data_do_not_warn():
    X, y = load_phishing(return_X_y=True)
    assert not _separation_warnings(lambda: GIGACoreset(n_points=100, random_state=0).fit(X, y))
    X, y = make_logistic_regression(n_samples=2000, n_features=5, random_state=0)
    assert not _separation_warnings(lambda: UniformCoreset(n_points=100, random_state=0).fit(X, y))
    est = BayesianLogisticRegression(n_samples=50, n_warmup=50, random_state=0)
    assert not _separation_warnings(lambda: est.fit(X, y))


def test_other_likelihoods_never_warn():
    X, y = _separable()
    for name in ("poisson", "gaussian"):
        model = get_model(name, prior_scale=100.0)
        assert not _separation_warnings(lambda m=model: laplace_approximation(m, X, y * 1.0))
