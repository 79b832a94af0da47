"""Bounded-memory construction: blocks, the merge tree, partial_fit, inputs on disk."""

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from skcoreset.coreset import (
    CoresetQualityWarning,
    GIGACoreset,
    IHTCoreset,
    OMPCoreset,
    SensitivityCoreset,
    UniformCoreset,
)
from skcoreset.coreset._merge_reduce import MergeTree, Node
from skcoreset.datasets import make_logistic_regression
from skcoreset.metrics import coreset_laplace_kl

N, D = 6000, 5


@pytest.fixture(scope="module")
def data():
    return make_logistic_regression(N, D, random_state=0)


def _kl(X, y, est):
    return coreset_laplace_kl(X, y, est.sample_indices_, est.sample_weight_, model="logistic")


# -- the tree ---------------------------------------------------------------------------------
def _leaf(b, size=3):
    idx = np.arange(b * size, (b + 1) * size)
    return Node(idx, np.ones(size), np.zeros((size, 1)), np.zeros(size), summary=np.ones(1))


def _keep_first(node, key, n=3):
    """A reduction that keeps the first n rows and scales their weights to the total."""
    w = node.weights[:n] * node.weights.sum() / node.weights[:n].sum()
    return Node(node.indices[:n], w, node.X[:n], node.y[:n], summary=node.summary)


@pytest.mark.parametrize("n_blocks", [1, 2, 5, 64, 100])
def test_tree_holds_a_binary_counter_of_coresets(n_blocks):
    tree = MergeTree(n_points=3)
    most = 0
    for b in range(n_blocks):
        tree.push(_leaf(b), _keep_first)
        held = tree.held()
        most = max(most, len(held))
        # the held coresets are the binary digits of the number of blocks
        assert len(held) == bin(b + 1).count("1")
        assert sum(n.weights.sum() for n in held) == pytest.approx(3 * (b + 1))
    assert most <= int(np.log2(n_blocks)) + 1
    result = tree.result(_keep_first)
    assert len(result) == 3 and result.weights.sum() == pytest.approx(3 * n_blocks)
    np.testing.assert_array_equal(result.summary, [n_blocks])  # exact summaries add up


def test_union_of_small_coresets_is_kept_whole():
    tree = MergeTree(n_points=10)
    for b in range(3):
        tree.push(_leaf(b), _keep_first)
    np.testing.assert_array_equal(np.sort(tree.result(_keep_first).indices), np.arange(9))


# -- merged coresets approximate the data as well as one coreset of all rows ----------------
@pytest.mark.parametrize("n_candidates", [None, 600], ids=["reduce-every-node", "pools"])
@pytest.mark.parametrize(
    "make",
    [
        lambda **k: OMPCoreset(50, n_projections=200, **k),
        lambda **k: GIGACoreset(50, n_projections=200, **k),
        lambda **k: IHTCoreset(50, debias=True, n_projections=200, **k),
    ],
    ids=["omp", "giga", "iht2"],
)
def test_hilbert_merged_coresets_are_as_good_as_one(data, make, n_candidates):
    """Six blocks, reduced by the algorithm at every merge or pooled into 600 candidates,
    against one run of the algorithm on all rows."""
    X, y = data
    single = make(random_state=0, n_candidates=None).fit(X, y)
    merged = make(random_state=0, n_candidates=n_candidates, block_size=1000).fit(X, y)
    assert merged.n_points_ <= 50
    assert merged.sample_indices_.max() >= 1000  # global row numbers, from every block
    # hilbert_error_ is measured against the exact projected sum of all rows
    assert merged.hilbert_error_ <= 2.0 * single.hilbert_error_ + 0.02
    assert _kl(X, y, merged) <= 3.0 * _kl(X, y, single) + 0.05


@pytest.mark.parametrize(
    "make",
    [
        lambda **k: UniformCoreset(100, projection=None, **k),
        lambda **k: SensitivityCoreset(100, **k),
    ],
    ids=["uniform", "sensitivity"],
)
def test_sampling_merged_coresets_are_as_good_as_one(data, make):
    """Random coresets: compare average KLs over seeds (merging must not degrade them)."""
    X, y = data
    single = [_kl(X, y, make(random_state=s).fit(X, y)) for s in range(6)]
    merged = [_kl(X, y, make(random_state=s, block_size=1000).fit(X, y)) for s in range(6)]
    assert np.mean(merged) <= 2.0 * np.mean(single)


def test_weights_keep_the_total(data):
    """Uniform weights sum to N through every merge of equal blocks (equal weights)."""
    X, y = data
    est = UniformCoreset(100, projection=None, block_size=750, random_state=0).fit(X, y)
    assert est.sample_weight_.sum() == pytest.approx(N)


def test_fit_is_reproducible_and_rows_match(data):
    X, y = data
    a = OMPCoreset(30, n_projections=100, block_size=1500, random_state=3).fit(X, y)
    b = OMPCoreset(30, n_projections=100, block_size=1500, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.sample_indices_, b.sample_indices_)
    np.testing.assert_array_equal(a.sample_weight_, b.sample_weight_)
    Xm, ym, params = a.get_coreset()
    np.testing.assert_array_equal(Xm, X[a.sample_indices_])
    np.testing.assert_array_equal(ym, y[a.sample_indices_])
    np.testing.assert_array_equal(params["sample_weight"], a.sample_weight_)


# -- partial_fit ------------------------------------------------------------------------------
def test_partial_fit_over_64_blocks_holds_few_coresets(data):
    X, y = data
    est = OMPCoreset(20, n_projections=50, random_state=0)
    bounds = np.linspace(0, N, 65).astype(int)
    for a, b in zip(bounds[:-1], bounds[1:]):
        est.partial_fit(X[a:b], y[a:b])
        assert len(est._construction.tree.held()) <= int(np.log2(64)) + 1
        assert est.n_samples_seen_ == b
        assert est.sample_indices_.max() < b  # rows counted across all blocks seen
        Xm, ym, _ = est.get_coreset()
        np.testing.assert_array_equal(Xm, X[est.sample_indices_])
    assert len(est._construction.tree.held()) == 1  # 64 = one binary digit
    assert _kl(X, y, est) < _kl(X, y, UniformCoreset(20, projection=None, random_state=0).fit(X, y))


def test_partial_fit_bad_block_leaves_the_coreset_intact(data):
    X, y = data
    est = GIGACoreset(20, n_projections=50, random_state=0)
    est.partial_fit(X[:2000], y[:2000])
    est.partial_fit(X[2000:4000], y[2000:4000])
    before = (est.sample_indices_.copy(), est.sample_weight_.copy(), est.n_samples_seen_)
    bad_X = X[4000:].copy()
    bad_X[17, 2] = np.nan
    cases = [
        (bad_X, y[4000:], "call 2 of partial_fit.*block 2 \\(rows 4000 to 5999\\).*NaN"),
        (X[4000:], np.where(y[4000:] == 1, 2, 0), "call 2.*not among the classes"),
        (X[4000:, :3], y[4000:], "call 2.*3 features"),
    ]
    for Xb, yb, match in cases:
        with pytest.raises(ValueError, match=match):
            est.partial_fit(Xb, yb)
        np.testing.assert_array_equal(est.sample_indices_, before[0])
        np.testing.assert_array_equal(est.sample_weight_, before[1])
        assert est.n_samples_seen_ == before[2]
    est.partial_fit(X[4000:], y[4000:])  # the stream goes on
    assert est.n_samples_seen_ == N


def test_partial_fit_classes_and_string_labels():
    X, y = make_logistic_regression(3000, 3, random_state=1)
    labels = np.array(["ham", "spam"])[y]
    est = UniformCoreset(50, n_projections=20, random_state=0)
    with pytest.raises(ValueError, match="one class only"):
        est.partial_fit(X[:10][y[:10] == 0], labels[:10][y[:10] == 0])
    est = UniformCoreset(50, n_projections=20, random_state=0)
    first = y == 0
    est.partial_fit(X[first][:100], labels[first][:100], classes=["ham", "spam"])
    est.partial_fit(X[1000:], labels[1000:])
    _, ym, _ = est.get_coreset()
    assert set(ym) <= {"ham", "spam"} and est.model_ == "logistic"


def test_fit_error_names_the_block(data):
    X, y = data
    X = X.copy()
    X[2500, 0] = np.inf
    with pytest.raises(ValueError, match="block 2 \\(rows 2000 to 2999\\) of X.*infinity"):
        OMPCoreset(20, n_projections=30, block_size=1000, random_state=0).fit(X, y)


def test_progress_bar_counts_blocks(data, capsys):
    pytest.importorskip("tqdm")
    X, y = data
    OMPCoreset(20, n_projections=30, block_size=1000, progress=True).fit(X, y)
    assert "block" in capsys.readouterr().err


# -- data on disk -----------------------------------------------------------------------------
def test_memmap_is_read_block_by_block(tmp_path):
    """Peak memory stays far below the file's size (measured, in a fresh process)."""
    script = textwrap.dedent(
        f"""
        import resource, numpy as np
        from skcoreset.coreset import UniformCoreset
        n, d = 2_000_000, 20
        X = np.lib.format.open_memmap({str(tmp_path / "X.npy")!r}, mode="w+",
                                      dtype=np.float32, shape=(n, d))
        rng = np.random.default_rng(0)
        for a in range(0, n, 500_000):
            X[a:a + 500_000] = rng.standard_normal((500_000, d), dtype=np.float32)
        X.flush(); del X
        y = (np.arange(n) % 2).astype(np.int8)
        X = np.load({str(tmp_path / "X.npy")!r}, mmap_mode="r")
        start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        est = UniformCoreset(100, projection=None, block_size=100_000, random_state=0).fit(X, y)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert est.sample_indices_.max() > n // 2
        print((peak - start) / 1024, X.nbytes / 2**20)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    grown_mb, file_mb = map(float, out.stdout.split())
    assert file_mb > 150
    assert grown_mb < 0.25 * file_mb, (grown_mb, file_mb)


def test_pandas_and_list_inputs_match_arrays(data):
    pd = pytest.importorskip("pandas")
    X, y = data
    ref = OMPCoreset(20, n_projections=30, block_size=2000, random_state=0).fit(X, y)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(D)])
    est = OMPCoreset(20, n_projections=30, block_size=2000, random_state=0).fit(df, y)
    np.testing.assert_array_equal(est.sample_indices_, ref.sample_indices_)
    assert list(est.feature_names_in_) == list(df.columns)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", CoresetQualityWarning)  # 20 points: not the subject
        est = OMPCoreset(20, n_projections=30, block_size=2000, random_state=0)
        est.fit(X[:3000].tolist(), y[:3000].tolist())
    assert est.n_points_ == 20


@pytest.mark.parametrize("store", ["hdf5", "zarr"])
def test_datasets_on_disk_are_read_block_by_block(data, store, tmp_path):
    """An h5py or zarr dataset passed as X is sliced block by block (never converted whole),
    its pilot's sample read as sorted rows, and gives the coreset of the same array in
    memory."""
    X, y = data
    reads = []
    if store == "hdf5":
        h5py = pytest.importorskip("h5py")
        f = h5py.File(tmp_path / "X.h5", "w")
        f["X"] = X
        dataset = f["X"]
    else:
        zarr = pytest.importorskip("zarr")
        f = None
        dataset = zarr.open_array(
            str(tmp_path / "X.zarr"), mode="w", shape=X.shape, dtype=X.dtype, chunks=(500, 4)
        )
        dataset[:] = X

    class Spy:
        """The dataset, recording the rows of every read."""

        shape, ndim, dtype = dataset.shape, dataset.ndim, dataset.dtype

        def __getitem__(self, key):
            reads.append(key)
            return dataset[key]

    try:
        est = OMPCoreset(20, n_projections=50, block_size=1000, random_state=0)
        on_disk = est.fit(Spy(), y)
        in_memory = OMPCoreset(20, n_projections=50, block_size=1000, random_state=0).fit(X, y)
    finally:
        if f is not None:
            f.close()
    np.testing.assert_array_equal(on_disk.sample_indices_, in_memory.sample_indices_)
    np.testing.assert_allclose(on_disk.sample_weight_, in_memory.sample_weight_, rtol=1e-12)
    # every read is a slice of at most one block of rows, or the sorted rows of the pilot
    slices = [k for k in reads if isinstance(k, slice)]
    rows = [np.asarray(k) for k in reads if not isinstance(k, slice)]
    assert slices and max(k.stop - k.start for k in slices) <= 1000
    assert all(r.ndim == 1 and np.all(np.diff(r) > 0) and r.shape[0] < X.shape[0] for r in rows)
