"""Every coreset's quality figure (``laplace_kl_``), its warning, and the size that follows it.

``laplace_kl_`` is checked against the test's own computation (NumPy Newton fits of the
oracles, or SciPy's optimiser on the joint log posterior of a model with an extra parameter)
after fit, partial_fit and dask fits; the warning against the target; ``n_points='auto'``
against wide data, where the first coreset is far from the target.
"""

import warnings

import numpy as np
import pytest
import scipy.optimize

from skcoreset.coreset import CoresetQualityWarning, OMPCoreset, QuasiNewtonCoreset
from skcoreset.coreset._quality import quality_target
from skcoreset.coreset._registry import ALGORITHMS
from skcoreset.datasets import make_logistic_regression
from skcoreset.models import laplace_approximation

from .oracles import extra_oracle
from .oracles.laplace_oracle import gaussian_kl, logistic_laplace


def _logistic_kl(est, X, y, w=None):
    """KL(coreset || data) of the oracle's logistic Laplace fits under the coreset's prior."""
    Xd = np.column_stack([X, np.ones(len(y))])
    w = np.ones(len(y)) if w is None else w
    prior_sd = np.broadcast_to(est.prior_scale_, (Xd.shape[1],))
    full = logistic_laplace(Xd, y, w, prior_sd)
    idx = est.sample_indices_
    core = logistic_laplace(Xd[idx], y[idx], est.sample_weight_, prior_sd)
    return gaussian_kl(*core, *full)


@pytest.fixture(scope="module")
def logistic():
    return make_logistic_regression(n_samples=4000, n_features=4, random_state=0)


@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=lambda a: a.name)
def test_every_algorithm_reports_the_kl_of_its_posterior(algorithm, logistic):
    X, y = logistic
    est = algorithm.make(15, random_state=0)  # a KL well above the fits' precision
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 40 points are above the target for some: the subject
        est.fit(X, y)
    assert est.laplace_kl_ == pytest.approx(_logistic_kl(est, X, y), rel=1e-4, abs=1e-8)
    np.testing.assert_allclose(est.laplace_.mean, logistic_laplace(
        np.column_stack([X, np.ones(len(y))]), y, np.ones(len(y)),
        np.broadcast_to(est.prior_scale_, (X.shape[1] + 1,)),
    )[0], atol=1e-8)  # fmt: skip


def _joint_kl(est, X, y, name):
    """KL(coreset || data) of joint Laplace fits (SciPy's optimiser, central-difference
    Hessians) of a model with an extra parameter, under the coreset's prior."""
    prior = est.laplace_.model.extra_prior
    fits = []
    rows = ((np.arange(len(y)), np.ones(len(y))), (est.sample_indices_, est.sample_weight_))
    for idx, w in rows:
        f = extra_oracle.log_posterior(name, X[idx], y[idx], est.prior_scale_, prior, w)
        res = scipy.optimize.minimize(
            lambda t, f=f: -f(t)[0],
            est.laplace_.mean,
            jac=lambda t, f=f: -f(t)[1],
            method="BFGS",
            options={"gtol": 1e-8},
        )
        fits.append((res.x, np.linalg.inv(extra_oracle.neg_hessian(f, res.x))))
    return gaussian_kl(*fits[1], *fits[0])


@pytest.mark.parametrize(
    "est", [OMPCoreset(30, random_state=0), QuasiNewtonCoreset(30, random_state=0)], ids=str
)
def test_the_kl_covers_the_extra_parameter(est):
    """A negative binomial coreset is judged in its dispersion too: the figure is the joint
    fits' KL, coefficients and log dispersion together."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((3000, 2))
    y = rng.negative_binomial(1.5, 1.5 / (1.5 + np.exp(0.7 + X @ [0.6, -0.4]))).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoresetQualityWarning)
        est.set_params(model="negative_binomial").fit(X, y)
    assert est.laplace_.n_extra == 1
    assert est.laplace_kl_ == pytest.approx(
        _joint_kl(est, X, y, "negative_binomial"), rel=1e-3, abs=1e-8
    )


def test_above_the_target_warns_with_the_figure_and_the_remedy(logistic):
    X, y = logistic
    with pytest.warns(CoresetQualityWarning, match=r"n_points=10 is too few") as caught:
        est = OMPCoreset(10, random_state=0).fit(X, y)
    target = quality_target(5)
    assert est.laplace_kl_ > target
    assert f"{est.laplace_kl_:.3g} nats" in str(caught[0].message)
    assert f"{target:.3g}" in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoresetQualityWarning)
        est = OMPCoreset(random_state=0).fit(X, y)  # the default: within the target
    assert est.laplace_kl_ <= target


def test_a_streams_figure_is_against_all_it_has_seen():
    """A shuffled stream's laplace_kl_ is the KL to the Laplace fit of every row seen (from
    the blocks' second-order sums and a sample), within a few per cent of the test's own
    on all rows; its laplace_ is that fit, not its first call's."""
    X, y = make_logistic_regression(n_samples=12_000, n_features=4, random_state=3)
    est = OMPCoreset(12, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoresetQualityWarning)
        for part in np.array_split(np.arange(len(y)), 4):
            est.partial_fit(X[part], y[part])
    assert est.laplace_kl_ == pytest.approx(_logistic_kl(est, X, y), rel=0.1)
    Xd = np.column_stack([X, np.ones(len(y))])
    mean, cov = logistic_laplace(Xd, y, np.ones(len(y)), np.broadcast_to(est.prior_scale_, 5))
    assert gaussian_kl(est.laplace_.mean, est.laplace_.cov, mean, cov) < 1e-3


def test_a_stream_whose_first_call_is_unlike_the_rest_warns():
    """A negative binomial stream whose first call is all zeros: every block is summarised at
    that call's fit, far from the data's posterior, and the data's fit made from the sums is
    then uncertain; the fit says so, predicting its error (it was silent: laplace_kl_ 4.9e-12
    against the first call's fit). Of 8 000 rows the sample holds every row, and the fit is
    the data's own."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80_000, 2))
    y = rng.negative_binomial(2.0, 2.0 / (2.0 + np.exp(1.0 + X @ [0.8, -0.5]))).astype(float)
    order = np.argsort(y, kind="stable")  # the zeros first
    est = OMPCoreset(40, model="negative_binomial", random_state=0)
    with pytest.warns(CoresetQualityWarning, match="uncertain.*first call's fit"):
        for part in np.array_split(order, 4):
            est.partial_fit(X[part], y[part])
    assert est.laplace_kl_ > 1.0
    assert np.all(np.isfinite(est.laplace_.mean))
    small = order[order < 8000]
    est = OMPCoreset(40, model="negative_binomial", random_state=0)
    for part in np.array_split(small, 4):
        est.partial_fit(X[part], y[part])
    full = laplace_approximation(est.laplace_.free_model, X[:8000], y[:8000])
    assert gaussian_kl(est.laplace_.mean, est.laplace_.cov, full.mean, full.cov) < 1e-10


@pytest.mark.parametrize("model", ["poisson", "multinomial"])
def test_a_sorted_stream_says_its_data_fit_is_uncertain(model):
    """A stream sorted by its target (the smallest counts, or one class, first): its first
    call's fit is far from the data's, the data's fit from the sums then misses the data's
    posterior, and the predicted error that says so is the actual one's order of magnitude
    (each a draw: of the sample's error, and of two perturbed fits')."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((12_000, 3))
    if model == "poisson":
        y = rng.poisson(np.exp(0.5 + X @ [0.3, -0.2, 0.1])).astype(float)
        kw = {}
    else:
        E = np.column_stack([np.zeros(12_000), X @ [0.8, -0.5, 0.2] + 0.3, X @ [-0.4, 0.6, 0.1]])
        P = np.exp(E - E.max(axis=1, keepdims=True))
        y = (rng.random(12_000)[:, None] > np.cumsum(P / P.sum(1, keepdims=True), 1)).sum(1)
        kw = {"classes": [0, 1, 2]}
    order = np.argsort(y, kind="stable")
    est = QuasiNewtonCoreset(model=model, random_state=0)
    with pytest.warns(CoresetQualityWarning, match="uncertain: its error is predicted"):
        for part in np.array_split(order, 4):
            est.partial_fit(X[part], y[part], **kw)
    predicted = est._construction.final_context.fit_info["predicted_kl"]
    lap = est.laplace_
    full = laplace_approximation(lap.free_model, X, y)
    actual = gaussian_kl(lap.mean, lap.cov, full.mean, full.cov)
    assert predicted > quality_target(lap.mean.shape[0])
    assert predicted / 10 < actual < 10 * predicted


def test_a_dask_fits_figure_is_the_in_memory_fits():
    da = pytest.importorskip("dask.array")
    import dask

    X, y = make_logistic_regression(n_samples=6000, n_features=3, random_state=2)
    mem = OMPCoreset(12, random_state=0, block_size=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoresetQualityWarning)
        mem.fit(X, y)
        with dask.config.set(scheduler="synchronous"):
            dsk = OMPCoreset(12, random_state=0, block_size=2000).fit(
                da.from_array(X, chunks=(2000, 3)), da.from_array(y, chunks=2000)
            )
    assert dsk.laplace_kl_ == pytest.approx(_logistic_kl(dsk, X, y), rel=1e-4)
    np.testing.assert_allclose(dsk.laplace_.mean, mem.laplace_.mean, rtol=1e-9, atol=1e-12)


@pytest.fixture(scope="module")
def wide():
    """Logistic data of 61 parameters, where 500 points of a 500-dimensional projection are
    far from the target."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30_000, 60))
    beta = rng.normal(0.0, 1.0 / np.sqrt(60), 60)
    y = (rng.random(30_000) < 1.0 / (1.0 + np.exp(-(X @ beta - 0.5)))).astype(float)
    return X, y


@pytest.mark.parametrize("cls", [OMPCoreset, QuasiNewtonCoreset])
def test_auto_size_grows_until_the_posterior_is_within_the_target(wide, cls):
    X, y = wide
    target = quality_target(61)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoresetQualityWarning)
        est = cls(random_state=0).fit(X, y)
    assert est.n_points_ > 500  # grown past the parameters' size
    assert est.laplace_kl_ <= target
    assert est.laplace_kl_ == pytest.approx(_logistic_kl(est, X, y), rel=1e-4)
    with pytest.warns(CoresetQualityWarning, match="n_points=500 is too few"):
        fixed = cls(500, random_state=0).fit(X, y)
    assert fixed.laplace_kl_ > 3 * target


def test_auto_size_stops_at_its_pool_and_says_so(wide):
    X, y = wide
    with pytest.warns(
        CoresetQualityWarning, match=r"n_points='auto' stopped at .*\(n_candidates\)"
    ):
        est = OMPCoreset(n_candidates=2500, random_state=0).fit(X, y)
    assert est.n_points_ <= 2500 and est.laplace_kl_ > quality_target(61)
