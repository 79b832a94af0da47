"""Coresets of dask arrays and DataFrames, on the local schedulers and a distributed cluster."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

from skcoreset.coreset import (  # noqa: E402
    GIGACoreset,
    OMPCoreset,
    QuasiNewtonCoreset,
    SensitivityCoreset,
)
from skcoreset.datasets import make_logistic_regression, make_poisson_regression  # noqa: E402

N = 12_000


@pytest.fixture(scope="module")
def data():
    X, y = make_logistic_regression(N, 4, random_state=0)
    return X, y, da.from_array(X, chunks=(3000, 4)), da.from_array(y, chunks=3000)


ESTIMATORS = [
    lambda: OMPCoreset(40, n_projections=100, block_size=1000, random_state=0),
    lambda: GIGACoreset(40, n_projections=100, laplace_subsample=2000, random_state=1),
    lambda: SensitivityCoreset(60, block_size=2000, random_state=2),
]


def _fit_all(make, X, y):
    """The same fit on the threaded and the synchronous scheduler."""
    out = []
    for scheduler in ("threads", "synchronous"):
        with dask.config.set(scheduler=scheduler):
            est = make().fit(X, y)
        out.append((est.sample_indices_, est.sample_weight_))
    return out


@pytest.fixture(scope="module")
def cluster():
    """A real cluster of two worker processes."""
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as lc,
        distributed.Client(lc) as client,
    ):
        yield client


@pytest.mark.parametrize("make", ESTIMATORS, ids=["omp", "giga", "sensitivity"])
def test_same_result_on_every_scheduler(data, make, cluster):
    _, _, Xd, yd = data
    local = _fit_all(make, Xd, yd)
    est = make().fit(Xd, yd)  # the client is active: the cluster runs the tasks
    for idx, w in local:
        np.testing.assert_array_equal(est.sample_indices_, idx)
        np.testing.assert_allclose(est.sample_weight_, w, rtol=1e-12)
    assert est.n_points_ <= 60 and est.sample_indices_.max() >= 6000  # global row numbers


def test_dask_fit_equals_numpy_fit_of_one_chunk(data):
    """One chunk is one in-memory fit: the same blocks, seeds and tree."""
    X, y, _, _ = data
    with dask.config.set(scheduler="synchronous"):
        a = OMPCoreset(40, n_projections=100, block_size=3000, random_state=0).fit(
            da.from_array(X, chunks=(N, 4)), da.from_array(y, chunks=N)
        )
    b = OMPCoreset(40, n_projections=100, block_size=3000, random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.sample_indices_, b.sample_indices_)
    np.testing.assert_allclose(a.sample_weight_, b.sample_weight_, rtol=1e-10)
    assert a.hilbert_error_ == pytest.approx(b.hilbert_error_, rel=1e-10)


def test_dataframe_weights_and_poisson():
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y = make_poisson_regression(8000, 3, random_state=0)
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    dX = dd.from_pandas(frame, npartitions=4)
    dy = dd.from_pandas(pd.Series(y), npartitions=4)
    with dask.config.set(scheduler="synchronous"):
        est = OMPCoreset(30, model="poisson", n_projections=60, random_state=0).fit(
            dX, dy, sample_weight=w
        )
    assert list(est.feature_names_in_) == ["a", "b", "c"] and est.model_ == "poisson"
    # the coreset approximates the weighted data: its weights carry the data's total weight
    assert est.sample_weight_.sum() == pytest.approx(w.sum(), rel=0.2)
    assert est.hilbert_error_ < 0.2


def test_laplace_on_all_rows_by_parallel_newton(data):
    """laplace_subsample=None: Newton passes of tasks over the chunks give the same fit."""
    X, y, Xd, yd = data
    with dask.config.set(scheduler="threads"):
        est = OMPCoreset(20, n_projections=50, laplace_subsample=None, block_size=2000).fit(Xd, yd)
    ref = OMPCoreset(20, n_projections=50, laplace_subsample=None, block_size=2000).fit(X, y)
    np.testing.assert_allclose(est.laplace_.mean, ref.laplace_.mean, rtol=1e-8)
    np.testing.assert_allclose(est.laplace_.cov, ref.laplace_.cov, rtol=1e-7)
    # the threads' design arrays, reused from task to task, are not kept after the fit
    from skcoreset.coreset import _dask

    assert _dask._DESIGNS == {}


def test_bad_chunk_and_ambiguous_targets(data):
    X, y, _, _ = data
    Xbad = X.copy()
    Xbad[7000, 1] = np.nan
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(
            ValueError, match="(chunk 2 \\(rows 6000 to 8999\\)|row 7000) of X.*NaN"
        ):
            OMPCoreset(20, n_projections=30, block_size=1000).fit(
                da.from_array(Xbad, chunks=(3000, 4)), da.from_array(y, chunks=3000)
            )
        # no moments pass with a given prior scale: the start's sample or the first of
        # Newton's passes (later passes read the rows unchecked) names the row
        with pytest.raises(
            ValueError, match="(chunk 2 \\(rows 6000 to 8999\\)|row 7000) of X.*NaN"
        ):
            QuasiNewtonCoreset(20, prior_scale=1.0).fit(
                da.from_array(Xbad, chunks=(3000, 4)), da.from_array(y, chunks=3000)
            )
        with pytest.raises(ValueError, match="distinct integer values"):
            OMPCoreset(20).fit(
                da.from_array(X, chunks=(3000, 4)), da.from_array(np.arange(N) % 5, chunks=3000)
            )


@pytest.mark.parametrize("store", ["zarr", "hdf5"])
def test_arrays_on_disk_are_read_chunk_by_chunk(data, store, tmp_path):
    """A Zarr- or HDF5-backed dask array gives the coreset of the same array in memory."""
    X, y, Xd, yd = data
    if store == "zarr":
        pytest.importorskip("zarr")
        da.to_zarr(Xd, str(tmp_path / "X.zarr"))
        da.to_zarr(yd, str(tmp_path / "y.zarr"))
        X_disk, y_disk = (
            da.from_zarr(str(tmp_path / "X.zarr")),
            da.from_zarr(str(tmp_path / "y.zarr")),
        )
        f = None
    else:
        h5py = pytest.importorskip("h5py")
        f = h5py.File(tmp_path / "data.h5", "w")
        f.create_dataset("X", data=X, chunks=(3000, 4))
        f.create_dataset("y", data=y, chunks=(3000,))
        X_disk = da.from_array(f["X"], chunks=(3000, 4))
        y_disk = da.from_array(f["y"], chunks=3000)
    try:
        with dask.config.set(scheduler="synchronous"):
            a = ESTIMATORS[0]().fit(X_disk, y_disk)
            b = ESTIMATORS[0]().fit(Xd, yd)
    finally:
        if f is not None:
            f.close()
    assert isinstance(X_disk, da.Array) and X_disk.chunks == Xd.chunks
    np.testing.assert_array_equal(a.sample_indices_, b.sample_indices_)
    np.testing.assert_allclose(a.sample_weight_, b.sample_weight_, rtol=1e-12)


def test_estimated_extra_parameter_is_drawn_by_the_projection():
    """A Gaussian fit through dask fits the noise scale jointly with the coefficients, as in
    memory: the same joint Laplace fit (its log's sd about 1 / sqrt(2 N), the likelihood's
    information), for the projections to draw."""
    from skcoreset.datasets import make_linear_regression

    X, y = make_linear_regression(N, 3, noise_scale=0.5, random_state=0)
    Xd, yd = da.from_array(X, chunks=(3000, 3)), da.from_array(y, chunks=3000)
    with dask.config.set(scheduler="synchronous"):
        est = OMPCoreset(40, model="gaussian", n_projections=100, random_state=0).fit(Xd, yd)
    lap = est.laplace_
    assert lap.n_extra == 1
    assert np.sqrt(lap.cov[-1, -1]) == pytest.approx(1.0 / np.sqrt(2 * N), rel=0.01)
    assert lap.model.extra == pytest.approx(0.5, rel=0.05)
    mem = OMPCoreset(40, model="gaussian", n_projections=100, random_state=0).fit(X, y)
    np.testing.assert_allclose(mem.laplace_.mean, lap.mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(mem.laplace_.cov, lap.cov, rtol=1e-7, atol=1e-15)


def _models_of_draws(rng, n):
    """(model, X, y) of the three models of draws: multinomial (string labels), Student-t
    and a user's NumPy logistic regression (intercept column in X)."""
    from scipy.special import expit, log_expit

    from skcoreset.models import CustomModel

    Z = rng.standard_normal((n, 2))
    labels = np.array(["a", "b", "c"])[
        np.argmax(Z @ rng.normal(size=(2, 3)) + rng.gumbel(size=(n, 3)), axis=1)
    ]
    heavy = Z @ [1.0, -2.0] + rng.standard_t(3, n)
    X1 = np.column_stack([Z, np.ones(n)])
    binary = (rng.random(n) < expit(Z @ [1.0, -0.5] + 0.3)).astype(float)

    def loglik(t, X, y):
        eta = t @ X.T
        return y * log_expit(eta) + (1 - y) * log_expit(-eta)

    def grad(t, X, y):
        return (y - expit(t @ X.T))[:, :, None] * X[None]

    custom = CustomModel(loglik, grad, 3, prior_scale=2.0)
    return [("multinomial", Z, labels), ("student_t", Z, heavy), (custom, X1, binary)]


def test_models_of_draws_through_dask():
    """The multinomial, Student-t and NumPy custom models build their coresets from dask
    chunks (their own Newton start on a sample, their classes from the chunks' labels), as
    close to the full posterior (Laplace KL) as the in-memory fit's."""
    from skcoreset.metrics import coreset_laplace_kl

    rng = np.random.default_rng(3)
    for model, X, y in _models_of_draws(rng, 6000):
        chunked = OMPCoreset(n_points=40, model=model, random_state=0).fit(
            da.from_array(X, chunks=2000), da.from_array(y, chunks=2000)
        )
        memory = OMPCoreset(n_points=40, model=model, random_state=0).fit(X, y)
        kl = [
            coreset_laplace_kl(X, y, est.sample_indices_, est.sample_weight_, model=model)
            for est in (chunked, memory)
        ]
        assert chunked.model_ == memory.model_
        assert kl[0] < max(10 * kl[1], 1e-6), (model, kl)
