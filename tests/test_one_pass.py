"""The pooled coresets read the data once after their moments (issue 54): a pilot's Laplace
fit, every block summarised at its mean, the data's fit from the sums and a sample, confirmed
by more passes when its predicted error asks; ``fit_stats_`` counts the passes.

The data's fit is judged against the exact Laplace fit of all rows (the model's own Newton on
the rows in memory); the sample's Horvitz-Thompson weights against the sums they estimate,
over many seeds; the fused summary kernels against the NumPy sums they replace.
"""

import warnings

import numpy as np
import pytest

from skcoreset.coreset import CoresetQualityWarning, OMPCoreset, QuasiNewtonCoreset
from skcoreset.coreset._merge_reduce import Node
from skcoreset.coreset._quality import quality_target
from skcoreset.coreset._taylor import (
    FIT_ERROR_SHARE,
    data_summary,
    draw_sample,
    sample_weights,
)
from skcoreset.datasets import make_logistic_regression
from skcoreset.metrics import gaussian_kl
from skcoreset.models import get_model, laplace_approximation
from skcoreset.models._general import GeneralModel

N = 60_000


@pytest.fixture(scope="module")
def data():
    X, y = make_logistic_regression(N, 5, random_state=0)
    return X.astype(np.float32), y


def _quiet(fit, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit(*args, **kw)


def _exact(est, X, y):
    """The exact Laplace fit of all rows under the estimator's prior and model."""
    return laplace_approximation(est.laplace_.free_model, np.asarray(X, np.float64), y)


@pytest.mark.parametrize("cls", [OMPCoreset, QuasiNewtonCoreset])
def test_a_pooled_fit_reads_the_data_twice(cls, data):
    """Blocks of 5 000 rows: the moments' pass and the one pass of the summaries, the
    pilot's rows read at random; with a given prior, no moments: one pass."""
    X, y = data
    est = _quiet(cls(100, block_size=5000, random_state=0).fit, X, y)
    stats = est.fit_stats_
    assert stats["passes"] == pytest.approx(2.0, abs=1e-3)  # (and the first row, checked)
    assert stats["rows"] == N and 0 < stats["rows_sampled"] <= 5000
    assert stats["data_fit"]["passes"] == 0
    assert all(v >= 0 for v in stats["seconds"].values())
    assert sum(stats["seconds"].values()) == pytest.approx(stats["total_seconds"], rel=1e-6)
    given = _quiet(cls(100, block_size=5000, prior_scale=2.0, random_state=0).fit, X, y)
    assert given.fit_stats_["passes"] == pytest.approx(1.0, abs=1e-3)


@pytest.mark.parametrize("cls", [OMPCoreset, QuasiNewtonCoreset])
def test_the_data_fit_from_the_sums_is_the_laplace_fit(cls, data):
    """The pilot 5 000 rows of 60 000: the data's fit from its sums and sample is within
    the tolerance it was taken at of the exact fit of all rows (a factor of 3 for the
    prediction's own noise), and laplace_kl_ is measured against it."""
    X, y = data
    est = _quiet(cls(100, block_size=5000, random_state=0).fit, X, y)
    exact = _exact(est, X, y)
    kl = gaussian_kl(est.laplace_.mean, est.laplace_.cov, exact.mean, exact.cov)
    tolerance = FIT_ERROR_SHARE * quality_target(exact.mean.shape[0])
    assert kl < 3 * tolerance


def test_a_far_pilot_is_confirmed_by_more_passes(data):
    """A pilot of 300 rows (sqrt(60 000 / 300) = 14 sds a parameter from the data's mode):
    the first fit from the sums is predicted far off, a pass at its mode confirms it, and the
    fit taken is the exact one's within the tolerance; every pass counted."""
    X, y = data
    est = _quiet(OMPCoreset(100, block_size=5000, laplace_subsample=300, random_state=0).fit, X, y)
    info = est.fit_stats_["data_fit"]
    assert info["passes"] >= 1
    assert est.fit_stats_["passes"] == pytest.approx(2.0 + info["passes"], abs=1e-3)
    exact = _exact(est, X, y)
    kl = gaussian_kl(est.laplace_.mean, est.laplace_.cov, exact.mean, exact.cov)
    assert kl < 3 * FIT_ERROR_SHARE * quality_target(exact.mean.shape[0])


def test_the_samples_weights_are_unbiased():
    """Horvitz-Thompson weights of the sample by weight and by weight x spread: over 400
    seeds, the mean of the weighted sums of a row function is the full sum within 4 standard
    errors, for rows of very unequal weights and spreads."""
    rng = np.random.default_rng(1)
    n = 3000
    w = rng.exponential(1.0, n) * np.where(rng.random(n) < 0.05, 20.0, 1.0)
    spread = rng.lognormal(0.0, 1.0, n)
    f = rng.standard_normal(n) + spread  # correlated with the spread, as remainders are
    node = Node(np.arange(n), w, np.zeros((n, 1)), np.zeros(n), spread=spread)
    truth = w @ f
    estimates = []
    for seed in range(400):
        sample = draw_sample(node, (150, 150), np.random.RandomState(seed))
        positions, weights, variances = sample_weights(sample, n)
        assert np.all(variances >= 0) and np.all(weights > 0)
        estimates.append(weights @ f[sample.indices[positions]])
    estimates = np.array(estimates)
    se = estimates.std(ddof=1) / np.sqrt(estimates.shape[0])
    assert abs(estimates.mean() - truth) < 4 * se


def _glm_data(name, n, rng):
    X = rng.standard_normal((n, 6)).astype(np.float32)
    eta = X.astype(np.float64) @ rng.standard_normal(6) * 0.3 + 0.2
    if name == "logistic":
        y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    elif name in ("poisson", "negative_binomial"):
        y = rng.poisson(np.exp(eta)).astype(float)
    elif name == "gamma":
        y = rng.gamma(2.0, np.exp(eta) / 2.0)
    elif name == "multinomial":
        E = np.column_stack([np.zeros(n), eta, -eta + 0.1])
        p = np.exp(E - E.max(1, keepdims=True))
        y = (rng.random(n)[:, None] > np.cumsum(p / p.sum(1, keepdims=True), 1)).sum(1)
        y = y.astype(float)
    else:  # gaussian, student_t
        y = eta + 0.5 * rng.standard_t(4, n)
    return X, y


@pytest.mark.parametrize(
    "name", ["logistic", "poisson", "negative_binomial", "gamma", "gaussian", "student_t",
             "multinomial"],
)  # fmt: skip
def test_the_fused_summaries_are_the_numpy_sums(name):
    """The fused kernels of a block's second-order sums and spreads (a single-index model's,
    the Student-t's, the multinomial's) equal the sums they replace: NumPy's in chunks for a
    single-index model (below the kernel's threshold), the generic sums of a model of draws
    (its gradients, its Hessian by central differences: 1e-7), on float32 rows."""
    rng = np.random.default_rng(2)
    X, y = _glm_data(name, 120_000, rng)
    model = get_model(name)
    if name == "multinomial":
        model = model.with_classes(np.array([0, 1, 2]))
    lap = laplace_approximation(model, X[:4000].astype(np.float64), y[:4000])
    w = rng.random(y.shape[0]) + 0.5
    node = Node(np.arange(y.shape[0]), w, X, y)
    fused, spread = data_summary(lap, node)
    if model.family is None:
        G, H, reference = GeneralModel.second_order_sums(
            lap.model, lap.mean, lap.chol, X, y, w, True
        )
        sums = np.concatenate([[w.sum(), float(y.shape[0])], G, H.ravel()])
        if name == "student_t":  # the generic spread has the gradient's term alone
            reference = None
        rtol = 1e-7
    else:
        from skcoreset.coreset import _taylor

        threshold = _taylor.FUSED_SUMMARY_ROWS
        _taylor.FUSED_SUMMARY_ROWS = 10**12
        try:
            sums, reference = data_summary(lap, Node(node.indices, w, X.astype(np.float64), y))
        finally:
            _taylor.FUSED_SUMMARY_ROWS = threshold
        # the kernel's derivatives in the log extra parameter are central differences, as
        # GLM.extra_derivatives' (relative error near 1e-8); the Gaussian's NumPy ones exact
        rtol = 1e-7 if lap.n_extra else 1e-10
    scale = np.abs(sums).max()
    np.testing.assert_allclose(fused, sums, rtol=0, atol=rtol * scale)
    if reference is not None:
        np.testing.assert_allclose(spread, reference, rtol=1e-9)


def test_a_sorted_file_is_confirmed_by_the_command_line(tmp_path):
    """A Parquet file sorted by its label, read in chunks: a stream of it summarises every
    chunk at the first one's fit (all zeros) and warns that its data's fit is uncertain; the
    command line reads the file again to confirm the fit, and warns of nothing."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    import subprocess
    import sys

    rng = np.random.default_rng(3)
    n = 40_000
    X = rng.standard_normal((n, 3))
    y = rng.poisson(np.exp(0.5 + X @ [0.3, -0.2, 0.1]))
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    table = pa.table({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "count": y})
    path = tmp_path / "sorted.parquet"
    pq.write_table(table, path, row_group_size=5000)
    est = OMPCoreset(60, model="poisson", random_state=0)
    with pytest.warns(CoresetQualityWarning, match="uncertain"):
        for part in np.array_split(np.arange(n), 8):
            est.partial_fit(X[part], y[part])
    out = tmp_path / "coreset.csv"
    done = subprocess.run(
        [sys.executable, "-m", "skcoreset", "build", str(path), "--label", "count", "--model",
         "poisson", "--algorithm", "omp", "--n-points", "60", "--chunk-rows", "5000", "-o",
         str(out)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "uncertain" not in done.stderr
    assert out.exists()


def test_a_pipeline_fits_a_dask_dataframe_from_parquet(tmp_path):
    """``dd.read_parquet`` of part files: the partitions' lengths from the files' statistics,
    X read twice (the moments and the summaries), and the pipeline's Bayesian estimator
    fitted on the coreset's rows, which are the data's rows at its indices."""
    dd = pytest.importorskip("dask.dataframe")
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from skcoreset import BayesianLogisticRegression
    from skcoreset.pipeline import make_pipeline

    X, y = make_logistic_regression(30_000, 3, random_state=4)
    for i in range(3):
        part = slice(10_000 * i, 10_000 * (i + 1))
        columns = {f"x{k}": X[part, k] for k in range(3)}
        pq.write_table(pa.table({**columns, "y": y[part]}), tmp_path / f"part-{i}.parquet")
    frame = dd.read_parquet(str(tmp_path))
    Xd, yd = frame[["x0", "x1", "x2"]], frame["y"]
    pipe = make_pipeline(
        OMPCoreset(50, block_size=4000, random_state=0),
        BayesianLogisticRegression(n_samples=200, n_warmup=200, random_state=0),
    )
    _quiet(pipe.fit, Xd, yd)
    coreset = pipe[0]
    assert coreset.fit_stats_["passes"] == pytest.approx(2.0, abs=1e-3)
    np.testing.assert_allclose(pipe.X_coreset_.to_numpy(), X[coreset.sample_indices_])
    assert list(pipe.X_coreset_.columns) == ["x0", "x1", "x2"]
    assert np.all(np.isfinite(pipe[-1].coef_)) and pipe[-1].coef_.shape == (1, 3)
