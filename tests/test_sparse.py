"""scipy.sparse input: every coreset estimator, the Bayesian estimators and the compositions take
CSR and CSC matrices and arrays, give what their dense form gives (the same coreset, the same
draws), and densify one block of rows at a time, never the whole matrix."""

import tracemalloc
import warnings
from functools import partial

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.compose import ColumnTransformer
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline as sk_make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.utils import get_tags

from skcoreset.compose import CoresetClassifier, CoresetRegressor
from skcoreset.coreset import OMPCoreset, UniformCoreset
from skcoreset.coreset._registry import ALGORITHMS
from skcoreset.linear_model import (
    BayesianGammaRegression,
    BayesianGLM,
    BayesianLinearRegression,
    BayesianLogisticRegression,
    BayesianNegativeBinomialRegression,
    BayesianPoissonRegression,
    BayesianStudentTRegression,
)
from skcoreset.pipeline import make_pipeline

# CSR and CSC, as matrices and as arrays
CONTAINERS = [sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array]
IDS = [c.__name__ for c in CONTAINERS]

# Parameters that keep each algorithm cheap (the others: a small projection).
CHEAP = {
    "SensitivityCoreset": dict(n_clusters=2),
    "QuasiNewtonCoreset": dict(n_draws=20, max_iter=3),
    "SparseVICoreset": dict(n_draws=20, n_rounds=2, n_steps=2),
    "CoresetMCMC": dict(n_train=20, n_samples=10),
}
NAMES = [a.name for a in ALGORITHMS]


def _make(algorithm, **params):
    """40 points of ``algorithm``, in blocks of 400 rows (the data are 4 blocks)."""
    cheap = CHEAP.get(algorithm.estimator, dict(n_projections=50))
    return algorithm.make(40, block_size=400, random_state=0, **cheap, **params)


def _one_hot_data(n=1500, seed=0):
    """Logistic data: 3 numeric features and a one-hot category of 12 levels (74% zeros)."""
    rng = np.random.default_rng(seed)
    cat = rng.integers(0, 12, n)
    X = np.column_stack([rng.standard_normal((n, 3)), np.eye(12)[cat]])
    eta = X[:, :3] @ [1.0, -0.5, 0.3] + 0.4 * (cat % 3) - 0.4
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-eta))).astype(int)
    return X, y


X, Y = _one_hot_data()
_DENSE = {}


def _dense_fit(algorithm):
    """``(sample_indices_, sample_weight_)`` of the dense fit (once per algorithm)."""
    if algorithm.name not in _DENSE:
        est = _make(algorithm).fit(X, Y)
        _DENSE[algorithm.name] = (est.sample_indices_, est.sample_weight_)
    return _DENSE[algorithm.name]


@pytest.fixture(autouse=True)
def _quiet():
    # the rare categories leave some coreset columns zero: a coverage warning, beside the point
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


# -- the coreset estimators --------------------------------------------------------------------
@pytest.mark.parametrize("container", CONTAINERS, ids=IDS)
@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=NAMES)
def test_fit_gives_the_dense_coreset(algorithm, container):
    indices, weights = _dense_fit(algorithm)
    est = _make(algorithm).fit(container(X), Y)
    np.testing.assert_array_equal(est.sample_indices_, indices)
    np.testing.assert_array_equal(est.sample_weight_, weights)
    # get_coreset: dense float64 rows whatever the container
    X_m, _, _ = est.get_coreset()
    assert type(X_m) is np.ndarray and X_m.dtype == np.float64
    np.testing.assert_array_equal(X_m, X[indices])


@pytest.mark.parametrize("container", CONTAINERS, ids=IDS)
@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=NAMES)
def test_fit_resample_returns_sparse_rows(algorithm, container):
    indices, weights = _dense_fit(algorithm)
    X_m, y_m, params = _make(algorithm).fit_resample(container(X), Y)
    assert type(X_m) is container  # the caller's container: CSC stays CSC
    np.testing.assert_array_equal(X_m.toarray(), X[indices])
    np.testing.assert_array_equal(y_m, Y[indices])
    np.testing.assert_array_equal(params["sample_weight"], weights)


@pytest.mark.parametrize(
    "container", [sp.csr_matrix, sp.csc_array], ids=["csr_matrix", "csc_array"]
)
@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=NAMES)
def test_partial_fit_in_sparse_chunks_equals_dense(algorithm, container):
    dense, sparse = _make(algorithm), _make(algorithm)
    for start in range(0, X.shape[0], 500):
        rows = slice(start, start + 500)
        dense.partial_fit(X[rows], Y[rows])
        sparse.partial_fit(container(X[rows]), Y[rows])
    np.testing.assert_array_equal(sparse.sample_indices_, dense.sample_indices_)
    np.testing.assert_array_equal(sparse.sample_weight_, dense.sample_weight_)
    assert sparse.n_samples_seen_ == X.shape[0]


def test_other_sparse_formats_become_csr():
    # COO has no row indexing: read (and returned) as CSR, the same coreset
    est = UniformCoreset(40, projection=None, block_size=400, random_state=0)
    X_m, _, params = est.fit_resample(sp.coo_matrix(X), Y)
    assert sp.issparse(X_m) and X_m.format == "csr"
    dense = UniformCoreset(40, projection=None, block_size=400, random_state=0).fit(X, Y)
    np.testing.assert_array_equal(X_m.toarray(), X[dense.sample_indices_])
    np.testing.assert_array_equal(params["sample_weight"], dense.sample_weight_)


def test_tags_say_sparse():
    estimators = [_make(a) for a in ALGORITHMS] + [
        BayesianLogisticRegression(),
        BayesianLinearRegression(),
        CoresetClassifier(),
        CoresetRegressor(),
    ]
    for est in estimators:
        assert get_tags(est).input_tags.sparse, type(est).__name__


def test_export_reads_sparse_rows():
    est = OMPCoreset(40, n_projections=50, random_state=0).fit(X, Y)
    _, dense = est.to_stan(X, Y)
    _, sparse = est.to_stan(sp.csc_matrix(X), Y)
    assert dense.keys() == sparse.keys()
    for key in dense:
        np.testing.assert_array_equal(np.asarray(sparse[key]), np.asarray(dense[key]))


# -- memory: one block at a time ---------------------------------------------------------------
@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csc_matrix], ids=["csr", "csc"])
def test_sparse_fit_never_densifies_whole(container):
    n, d = 500_000, 100  # dense: 381 MB
    rng = np.random.default_rng(0)
    Xs = container(sp.random(n, d, density=0.002, format="csr", random_state=0))
    y = (rng.random(n) < 0.5).astype(int)
    dense_bytes = n * d * 8
    est = UniformCoreset(100, projection=None, block_size=5000, random_state=0)
    est.fit(Xs[:5000], y[:5000])  # the first fit's one-time allocations (about 16 MB)
    tracemalloc.start()
    try:
        est.fit(Xs, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert est.n_points_ == 100
    # a block of 5000 rows is 4 MB dense (measured peak: 19-23 MB); the whole matrix 381 MB
    assert peak < dense_bytes / 8, f"peak {peak / 2**20:.1f} MB"


# -- errors ------------------------------------------------------------------------------------
def _message(fit, data):
    with pytest.raises(ValueError) as info:
        fit(data)
    return str(info.value)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_sparse_rows_raise_as_dense(bad):
    Xb = X.copy()
    Xb[1234, 1] = bad

    def fit(data):
        UniformCoreset(40, block_size=400, random_state=0).fit(data, Y)

    dense = _message(fit, Xb)
    assert "In block 3 (rows 1200 to 1499) of X" in dense
    for container in CONTAINERS:
        assert _message(fit, container(Xb)) == dense


def test_nonfinite_sparse_row_of_a_sample_raises_as_dense():
    # the Laplace fit's start reads a sample of rows: the error names the row, as for dense X
    Xb, y = _one_hot_data(n=12_000, seed=1)
    Xb[5000:5100, 0] = np.nan

    def fit(data):
        OMPCoreset(40, n_projections=50, prior_scale=1.0, block_size=5000, random_state=0).fit(
            data, y
        )

    dense = _message(fit, Xb)
    assert "of X" in dense and "NaN" in dense
    assert _message(fit, sp.csr_matrix(Xb)) == dense
    assert _message(fit, sp.csc_matrix(Xb)) == dense


def test_nonfinite_sparse_chunk_of_partial_fit_raises_as_dense():
    Xb = X.copy()
    Xb[700, 4] = np.nan

    def stream(data):
        est = UniformCoreset(40, block_size=400, random_state=0)
        est.partial_fit(data[:500], Y[:500])
        est.partial_fit(data[500:1000], Y[500:1000])

    dense = _message(stream, Xb)
    assert "call 1 of partial_fit" in dense
    assert _message(stream, sp.csr_matrix(Xb)) == dense


def test_nonfinite_sparse_rows_in_bayesian_fit_raise_as_dense():
    Xb = X.copy()
    Xb[3, 2] = np.nan

    def fit(data):
        BayesianLogisticRegression(n_samples=20, n_warmup=20, n_chains=1).fit(data, Y)

    dense = _message(fit, Xb)
    assert "NaN" in dense
    assert _message(fit, sp.csr_matrix(Xb)) == dense


def test_dask_array_of_sparse_chunks_is_refused():
    da = pytest.importorskip("dask.array")
    Xd = da.from_array(sp.csr_matrix(X), chunks=(500, -1))
    with pytest.raises(TypeError, match="sparse chunks"):
        UniformCoreset(40, random_state=0).fit(Xd, da.from_array(Y, chunks=500))


# -- the Bayesian estimators -------------------------------------------------------------------
def _targets(name):
    rng = np.random.default_rng(1)
    eta = 0.3 * X[:, 0] - 0.2 * X[:, 1] + 0.2 * X[:, 3]
    return {
        "logistic": Y,
        "multinomial": (X[:, 3:6].argmax(axis=1) + (X[:, 0] > 0.5)) % 3,
        "poisson": rng.poisson(np.exp(eta)),
        "negative_binomial": rng.poisson(np.exp(eta) * rng.gamma(2.0, 0.5, X.shape[0])),
        "gamma": rng.gamma(4.0, np.exp(eta) / 4.0),
        "linear": eta + 0.5 * rng.standard_normal(X.shape[0]),
        "student_t": eta + 0.5 * rng.standard_t(3, X.shape[0]),
    }[name]


BAYESIAN = [
    (BayesianLogisticRegression, "logistic"),
    (BayesianLogisticRegression, "multinomial"),
    (partial(BayesianGLM, model="multinomial"), "multinomial"),
    (BayesianPoissonRegression, "poisson"),
    (BayesianNegativeBinomialRegression, "negative_binomial"),
    (BayesianGammaRegression, "gamma"),
    (BayesianLinearRegression, "linear"),
    (BayesianStudentTRegression, "student_t"),
]
BAYESIAN_IDS = [
    f"{getattr(c, 'func', c).__name__.removeprefix('Bayesian')}-{t}" for c, t in BAYESIAN
]


@pytest.mark.parametrize("cls, target", BAYESIAN, ids=BAYESIAN_IDS)
def test_bayesian_estimators_give_the_dense_draws(cls, target):
    y = _targets(target)
    rows = slice(0, 300)  # a coreset's few rows
    w = np.random.default_rng(2).uniform(0.5, 3.0, 300)

    def fitted(data):
        est = cls(n_samples=50, n_warmup=50, n_chains=2, random_state=0)
        return est.fit(data, y[rows], sample_weight=w)

    dense = fitted(X[rows])
    for container in (sp.csr_matrix, sp.csc_array):
        sparse = fitted(container(X[rows]))
        np.testing.assert_array_equal(sparse.coef_samples_, dense.coef_samples_)
        np.testing.assert_array_equal(sparse.intercept_samples_, dense.intercept_samples_)
        # predictions on every row, sparse: a block of rows densified at a time
        Xs = container(X)
        np.testing.assert_allclose(sparse.predict(Xs), dense.predict(X), rtol=1e-12)
        np.testing.assert_allclose(
            sparse.log_predictive_density(Xs, y), dense.log_predictive_density(X, y), rtol=1e-12
        )
        if hasattr(dense, "predict_proba"):
            np.testing.assert_allclose(
                sparse.predict_proba(Xs), dense.predict_proba(X), rtol=1e-12, atol=1e-15
            )
        draws = sparse.sample_posterior_predictive(Xs, n_draws=5, random_state=0)
        assert draws.shape == (5, X.shape[0])


def test_bayesian_inference_data_from_sparse_training_rows():
    pytest.importorskip("arviz")
    rows = slice(0, 300)
    est = BayesianLogisticRegression(n_samples=50, n_warmup=50, n_chains=2, random_state=0)
    est.fit(sp.csr_matrix(X[rows]), Y[rows])
    idata = est.to_inference_data(sp.csc_matrix(X[rows]), Y[rows], random_state=0)
    np.testing.assert_array_equal(idata.constant_data["X"].values, X[rows])


# -- the compositions --------------------------------------------------------------------------
def _frame(n=2000, seed=0):
    """Two numeric columns and a category of 20 levels: one-hot, mostly zeros."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "a": rng.standard_normal(n),
            "b": rng.standard_normal(n),
            "c": rng.choice([f"level{k}" for k in range(20)], n),
        }
    )
    eta = df["a"] - 0.5 * df["b"] + 0.8 * (df["c"] < "level1") - 0.3
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-eta.to_numpy()))).astype(int)
    return df, y


def _columns(sparse_threshold):
    """The issue's ColumnTransformer: the default (sparse) OneHotEncoder."""
    return ColumnTransformer(
        [("num", StandardScaler(), ["a", "b"]), ("cat", OneHotEncoder(), ["c"])],
        sparse_threshold=sparse_threshold,
    )


def _bayes():
    return BayesianLogisticRegression(n_samples=100, n_warmup=100, n_chains=2, random_state=0)


def test_column_transformer_one_hot_coreset_bayesian_pipeline():
    df, y = _frame()
    assert sp.issparse(_columns(0.3).fit_transform(df))  # scikit-learn's default: sparse
    pipes = [
        make_pipeline(_columns(sparse_threshold), OMPCoreset(60, random_state=0), _bayes())
        for sparse_threshold in (0.3, 0.0)  # sparse, then dense output
    ]
    sparse, dense = (p.fit(df, y) for p in pipes)
    assert sp.issparse(sparse.X_coreset_) and not sp.issparse(dense.X_coreset_)
    np.testing.assert_array_equal(sparse.sample_indices_, dense.sample_indices_)
    np.testing.assert_array_equal(sparse.sample_weight_, dense.sample_weight_)
    final = sparse.steps[-1][1], dense.steps[-1][1]
    np.testing.assert_array_equal(final[0].coef_samples_, final[1].coef_samples_)
    np.testing.assert_allclose(sparse.predict_proba(df), dense.predict_proba(df), rtol=1e-12)
    assert sparse.score(df, y) > 0.6


@pytest.mark.parametrize("estimator", [_bayes, LogisticRegression], ids=["bayes", "sklearn"])
def test_column_transformer_before_coreset_classifier(estimator):
    df, y = _frame(seed=1)
    pipes = [
        sk_make_pipeline(
            _columns(sparse_threshold),
            CoresetClassifier(OMPCoreset(60), estimator(), random_state=0),
        )
        for sparse_threshold in (0.3, 0.0)
    ]
    sparse, dense = (p.fit(df, y) for p in pipes)
    meta = sparse[-1], dense[-1]
    assert sp.issparse(meta[0].X_coreset_)
    np.testing.assert_array_equal(meta[0].sample_indices_, meta[1].sample_indices_)
    np.testing.assert_allclose(sparse.predict_proba(df), dense.predict_proba(df), atol=1e-6)
