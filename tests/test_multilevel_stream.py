"""Multilevel coresets built block by block (``partial_fit(groups=)``) and from dask
collections: the coreset posterior against the full data's, groups first seen late, bounded
rows per group, a bad block leaving the stream as it was, dask equal to the stream of its
chunks."""

import numpy as np
import pytest

from skcoreset import GIGACoreset, OMPCoreset
from skcoreset.models import Multilevel
from skcoreset.models import _multilevel_laplace as multilevel_laplace
from skcoreset.models._multilevel_laplace import fit_laplace
from tests.oracles.multilevel_oracle import laplace_moments


def uneven(n=40000, n_groups=30, seed=0):
    """Logistic rows, string labels, in groups of very different sizes."""
    rng = np.random.default_rng(seed)
    p = np.exp(0.8 * rng.standard_normal(n_groups))
    g = rng.choice(n_groups, n, p=p / p.sum())
    X = rng.standard_normal((n, 3))
    u = rng.normal(0, 0.7, n_groups)
    eta = X @ [0.6, -0.4, 0.2] - 0.3 + u[g]
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-eta)), "yes", "no")
    return X, y, np.array([f"g{k:02d}" for k in range(n_groups)])[g]


def blocks(n, size):
    return [slice(b, min(b + size, n)) for b in range(0, n, size)]


def test_stream_posterior_matches_the_full_data_posterior(monkeypatch):
    """Rows in blocks of 4000, a third of the groups first seen after the first block: the
    coreset's Laplace posterior (the full data's priors) against the full data's, every
    parameter's mean within 0.25 of its sd and sds within 15 % (as a fit's coreset, tested in
    test_multilevel.py); each group's kept rows stay bounded, all along the stream."""
    X, y, g = uneven()
    late = np.isin(g, np.unique(g)[::3])
    order = np.r_[np.flatnonzero(~late)[:4000], np.flatnonzero(late), np.flatnonzero(~late)[4000:]]
    X, y, g = X[order], y[order], g[order]
    X0, y0, g0 = X.copy(), y.copy(), g.copy()
    spec = Multilevel("logistic")
    cs = OMPCoreset(model=spec, random_state=0)
    for part in blocks(len(y), 4000):
        cs.partial_fit(X[part], y[part], groups=g[part])
        kept = max(len(r) for r in cs._stream.rows if r is not None)
        assert kept <= 2 * cs._stream.cap
    for a, b in [(X, X0), (y, y0), (g, g0)]:
        np.testing.assert_array_equal(a, b)  # the caller's arrays untouched
    assert cs.n_samples_seen_ == len(y)
    assert cs.n_points_ < 0.1 * len(y)
    np.testing.assert_array_equal(cs.groups_, np.unique(g))
    np.testing.assert_array_equal(cs.classes_, ["no", "yes"])
    Xm, ym, params = cs.get_coreset()
    np.testing.assert_array_equal(Xm, X[cs.sample_indices_])
    np.testing.assert_array_equal(ym, y[cs.sample_indices_])
    np.testing.assert_array_equal(params["groups"], g[cs.sample_indices_])
    assert set(params["groups"]) == set(g)  # every group keeps rows
    # the weights of each group sum to about its rows (the likelihood's scale)
    for label in np.unique(g)[:5]:
        ratio = params["sample_weight"][params["groups"] == label].sum() / np.sum(g == label)
        assert abs(ratio - 1) < 0.1

    monkeypatch.setattr(multilevel_laplace, "SEARCH_ROWS_PER_GROUP", 10**9)
    labels, codes = np.unique(g, return_inverse=True)
    yy = (y == "yes").astype(float)
    full = spec.posterior(X, yy, codes, len(labels), np.ones(len(y)))
    ref = fit_laplace(full, "centred")
    rows = cs.sample_indices_
    coreset = spec.posterior(
        X[rows], yy[rows], codes[rows], len(labels), cs.sample_weight_,
        data_scale=full.data_scale,
    )  # fmt: skip
    (m1, s1), (m0, s0) = laplace_moments(fit_laplace(coreset, "centred")), laplace_moments(ref)
    assert np.max(np.abs(m1 - m0) / s0) < 0.25
    np.testing.assert_allclose(s1 / s0, 1, atol=0.15)
    # the coreset's own Laplace fit has the priors of every row seen
    np.testing.assert_allclose(cs.laplace_.posterior.data_scale[0], full.data_scale[0])


def test_stream_is_reproducible_and_a_bad_block_changes_nothing():
    X, y, g = uneven(n=12000, n_groups=12, seed=1)
    parts = blocks(len(y), 3000)
    spec = Multilevel("logistic")
    a, b = (GIGACoreset(model=spec, random_state=3) for _ in range(2))
    for i, part in enumerate(parts):
        a.partial_fit(X[part], y[part], groups=g[part])
        if i == 1:  # a block with NaN, then one with a new class label: refused, named
            bad = X[part].copy()
            bad[5, 1] = np.nan
            with pytest.raises(ValueError, match="In call 1 of partial_fit.*NaN"):
                b.partial_fit(bad, y[part], groups=g[part])
            with pytest.raises(ValueError, match="In call 1 of partial_fit"):
                b.partial_fit(X[part], np.where(y[part] == "yes", "maybe", "no"), groups=g[part])
        b.partial_fit(X[part], y[part], groups=g[part])
    # a block of zero weights adds rows to count, nothing to the coreset
    zero = parts[0]
    b.partial_fit(X[zero], y[zero], groups=g[zero], sample_weight=np.zeros(3000))
    assert b.n_samples_seen_ == a.n_samples_seen_ + 3000
    np.testing.assert_array_equal(a.sample_indices_, b.sample_indices_)
    np.testing.assert_array_equal(a.sample_weight_, b.sample_weight_)
    np.testing.assert_array_equal(a.sample_groups_, b.sample_groups_)


def test_first_block_with_one_class_needs_classes():
    X, y, g = uneven(n=6000, n_groups=8, seed=2)
    order = np.argsort(y, kind="stable")  # every "no" first
    X, y, g = X[order], y[order], g[order]
    spec = Multilevel("logistic")
    with pytest.raises(ValueError, match="In call 0 of partial_fit.*one class"):
        OMPCoreset(model=spec).partial_fit(X[:1000], y[:1000], groups=g[:1000])
    cs = OMPCoreset(model=spec, random_state=0)
    for part in blocks(len(y), 2000):
        cs.partial_fit(X[part], y[part], groups=g[part], classes=["no", "yes"])
    assert set(cs.get_coreset()[1]) == {"no", "yes"}


def test_dask_fit_is_the_stream_of_its_chunks():
    da = pytest.importorskip("dask.array")
    X, y, g = uneven(n=9000, n_groups=10, seed=4)
    y[:3000] = "no"  # the first chunk holds one class: the labels are read first
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    spec = Multilevel("logistic")
    chunks = 3000
    lazy = OMPCoreset(model=spec, random_state=5).fit(
        da.from_array(X, chunks=(chunks, 3)),
        da.from_array(y, chunks=chunks),
        groups=da.from_array(g, chunks=chunks),
        sample_weight=da.from_array(w, chunks=chunks),
    )
    stream = OMPCoreset(model=spec, random_state=5)
    for part in blocks(len(y), chunks):
        stream.partial_fit(
            X[part], y[part], groups=g[part], sample_weight=w[part], classes=["no", "yes"]
        )
    np.testing.assert_array_equal(lazy.sample_indices_, stream.sample_indices_)
    np.testing.assert_allclose(lazy.sample_weight_, stream.sample_weight_)
    np.testing.assert_array_equal(lazy.sample_groups_, g[lazy.sample_indices_])
    assert not hasattr(lazy, "_stream")  # a fit: partial_fit does not continue it
    with pytest.raises(ValueError, match="begins with partial_fit"):
        lazy.partial_fit(X[:100], y[:100], groups=g[:100])


def test_student_t_stream_posterior_matches_the_full_data_posterior(monkeypatch):
    """A Student-t base (heavy-tailed noise, t with 4 df and scale 0.5; two extra
    parameters), a third of the groups first seen after the first block: the coreset's
    Laplace posterior, log scale and log df included, within 0.25 sd of the full data's and
    its sds within 15 % (as the logistic stream's)."""
    rng = np.random.default_rng(3)
    n, n_groups = 12000, 15
    g = rng.integers(0, n_groups, n)
    X = rng.standard_normal((n, 2))
    y = X @ [0.5, -0.3] + 1.0 + rng.normal(0, 0.6, n_groups)[g] + 0.5 * rng.standard_t(4.0, n)
    late = g % 3 == 0
    order = np.r_[np.flatnonzero(~late)[:3000], np.flatnonzero(late), np.flatnonzero(~late)[3000:]]
    X, y, g = X[order], y[order], g[order]
    spec = Multilevel("student_t")
    cs = OMPCoreset(model=spec, random_state=0)
    for part in blocks(n, 3000):
        cs.partial_fit(X[part], y[part], groups=g[part])
    assert cs.n_points_ < 0.25 * n
    assert cs._stream.extra.shape == (cs._stream.beta.shape[0], 2)  # each draw's scale, df

    def student_summary(lap):
        d = lap.draws(4000, np.random.default_rng(0))
        tau, u = lap.posterior.effects(d)
        D = lap.posterior.D
        nat = np.concatenate([d[:, : D + 2], np.log(tau), u[..., 0]], axis=1)
        return nat.mean(0), nat.std(0)

    monkeypatch.setattr(multilevel_laplace, "SEARCH_ROWS_PER_GROUP", 10**9)
    full = spec.posterior(X, y, g, n_groups, np.ones(n))
    rows = cs.sample_indices_
    coreset = spec.posterior(
        X[rows], y[rows], g[rows], n_groups, cs.sample_weight_, data_scale=full.data_scale
    )
    (m1, s1), (m0, s0) = (
        student_summary(fit_laplace(coreset, "centred")),
        student_summary(fit_laplace(full, "centred")),
    )
    assert np.max(np.abs(m1 - m0) / s0) < 0.25
    np.testing.assert_allclose(s1 / s0, 1, atol=0.15)
