"""Split R-hat and bulk ESS (Vehtari et al. 2021)."""

import numpy as np
import pytest
import scipy.special
import scipy.stats

from skcoreset.sampler import diagnostics, ess_bulk, rank_normalize, split_rhat


def _ar1(rng, n_chains, n_draws, rho, n_params=1):
    """Stationary AR(1) chains with unit marginal variance."""
    x = np.empty((n_chains, n_draws, n_params))
    x[:, 0] = rng.standard_normal((n_chains, n_params))
    innov = np.sqrt(1 - rho**2)
    for t in range(1, n_draws):
        x[:, t] = rho * x[:, t - 1] + innov * rng.standard_normal((n_chains, n_params))
    return x


def test_iid_draws():
    rng = np.random.default_rng(0)
    draws = rng.standard_normal((4, 1000, 3))
    rhat = split_rhat(draws)
    ess = ess_bulk(draws)
    assert rhat.shape == ess.shape == (3,)
    assert np.all(rhat < 1.01)
    # Independent draws: ESS ~ 4000 up to sampling noise (sd of the estimate ~ 5%).
    assert np.all(np.abs(ess / 4000 - 1) < 0.2)


def test_ar1_ess_matches_theory():
    # Integrated autocorrelation time of AR(1): (1 + rho) / (1 - rho) = 3 for rho = 0.5.
    rng = np.random.default_rng(1)
    draws = _ar1(rng, 4, 4000, 0.5, n_params=2)
    ess = ess_bulk(draws)
    assert np.all(np.abs(ess / (16000 / 3) - 1) < 0.15)


def test_disagreeing_chains_flagged():
    rng = np.random.default_rng(2)
    draws = rng.standard_normal((4, 500, 1))
    draws[0] += 1.0  # one chain in the wrong place
    assert split_rhat(draws)[0] > 1.05
    # A trend within each chain is caught by the split.
    trend = rng.standard_normal((2, 500)) + np.linspace(0, 3, 500)
    assert split_rhat(trend)[0] > 1.05


def test_rank_invariance_and_2d_input():
    rng = np.random.default_rng(3)
    draws = _ar1(rng, 3, 400, 0.3)
    np.testing.assert_allclose(split_rhat(np.exp(draws)), split_rhat(draws))
    np.testing.assert_allclose(ess_bulk(np.exp(draws)), ess_bulk(draws))
    np.testing.assert_allclose(split_rhat(draws[:, :, 0]), split_rhat(draws))


def test_constant_parameter():
    draws = np.ones((2, 10, 1))
    assert np.isnan(split_rhat(draws)[0])
    assert ess_bulk(draws)[0] == 20


@pytest.mark.parametrize("bad", [np.zeros((2, 3, 1)), np.zeros(10), np.zeros((1, 2, 3, 4))])
def test_bad_shapes(bad):
    with pytest.raises(ValueError):
        split_rhat(bad)
    with pytest.raises(ValueError):
        ess_bulk(bad)


def test_matches_arviz():
    az = pytest.importorskip("arviz")
    rng = np.random.default_rng(4)
    draws = _ar1(rng, 4, 301, 0.7, n_params=3)  # odd length: the split drops the middle draw
    draws[1] += 0.2
    draws[..., 2] = np.exp(draws[..., 2])  # skewed
    for p in range(3):
        ds = az.convert_to_dataset(draws[:, :, p])
        assert split_rhat(draws)[p] == pytest.approx(
            float(az.rhat(ds, method="rank")["x"]), rel=1e-10
        )
        assert ess_bulk(draws)[p] == pytest.approx(float(az.ess(ds, method="bulk")["x"]), rel=1e-10)


def test_rank_normalize_with_ties_is_scipys_and_diagnostics_agree():
    """The sort-once ranks equal scipy's average ranks through ndtri, with the ties of
    rejected MALA steps (every other draw repeated) and of rounded values; diagnostics()
    gives split_rhat's and ess_bulk's values."""
    rng = np.random.default_rng(7)
    draws = rng.standard_normal((3, 200, 4))
    draws[:, 1::2] = draws[:, ::2]
    draws[..., 2] = np.round(draws[..., 2], 1)
    flat = draws.reshape(-1, 4)
    ranks = scipy.stats.rankdata(flat, method="average", axis=0)
    ref = scipy.special.ndtri((ranks - 3.0 / 8.0) / (flat.shape[0] + 0.25))
    np.testing.assert_array_equal(rank_normalize(draws).reshape(-1, 4), ref)
    rhat, ess = diagnostics(draws)
    np.testing.assert_array_equal(rhat, split_rhat(draws))
    np.testing.assert_array_equal(ess, ess_bulk(draws))


def _oracle_split_scores(draws):
    """scipy's average ranks through ndtri, of the split chains and of |x - median|."""
    half = draws.shape[1] // 2
    split = np.concatenate([draws[:, :half], draws[:, draws.shape[1] - half :]], axis=0)
    flat = split.reshape(-1, split.shape[2])
    folded = np.abs(flat - np.median(flat, axis=0))

    def scores(a):
        ranks = scipy.stats.rankdata(a, method="average", axis=0)
        return scipy.special.ndtri((ranks - 3.0 / 8.0) / (a.shape[0] + 0.25))

    return scores(flat), scores(folded)


@pytest.mark.parametrize("n_draws", [200, 201])
def test_folded_scores_merge_equals_a_sort(n_draws):
    """The folded draws' ranks, merged from the draws' one sort, equal scipy's ranks of
    |x - median|: with repeated (rejected) draws, with draws rounded so that values on both
    sides of the median fold onto each other, and with draws equal to the median."""
    from skcoreset.sampler._diagnostics import _split_scores

    rng = np.random.default_rng(11)
    draws = rng.standard_normal((3, n_draws, 4))
    draws[:, 1::2] = draws[:, :-1:2]
    draws[..., 1] = np.round(draws[..., 1], 1)  # ties across the median: -0.3 and 0.3 around 0
    draws[..., 2] = np.round(draws[..., 2])  # a few values, many draws at the median
    draws[..., 3] = np.exp(draws[..., 3])
    bulk, folded = _split_scores(draws)
    ref_bulk, ref_folded = _oracle_split_scores(draws)
    # (P, 2C, S // 2) against (2C * S // 2, P), the half chains in the same order
    np.testing.assert_array_equal(bulk.reshape(4, -1).T, ref_bulk)
    np.testing.assert_array_equal(folded.reshape(4, -1).T, ref_folded)


def test_bucket_argsort_sorts_or_declines():
    """The bucket sort's order sorts each row it accepts; it declines exactly the rows it
    says it does (a non-finite or empty range, crowded buckets), and NumPy then sorts those:
    the ranks through either path are scipy's."""
    from skcoreset.sampler._diagnostics import _split_scores
    from skcoreset.sampler._diagnostics_kernels import bucket_argsort

    rng = np.random.default_rng(13)
    n = 2000
    rows = {
        "normal": rng.standard_normal(n),
        "ties": np.repeat(rng.standard_normal(n // 4), 4),  # rejected steps
        "rounded": np.round(rng.standard_normal(n), 1),  # a few values, buckets empty between
        "shifted": 1e6 + 1e-6 * rng.standard_normal(n),  # a narrow range far from 0
        "uniform": rng.random(n),
        "cauchy": rng.standard_cauchy(n),  # the range is the tails': crowded buckets
        "outlier": np.r_[rng.standard_normal(n - 1), 1e9],
        "bunched": np.r_[rng.random(n - 10), np.full(10, 50.0)],  # 40 buckets of ~50 draws
        "constant": np.full(n, 0.5),
        "nan": np.r_[rng.standard_normal(n - 1), np.nan],
        "inf": np.r_[rng.standard_normal(n - 1), -np.inf],
        "huge": np.r_[rng.standard_normal(n - 2), -1e308, 1e308],  # the range overflows
    }
    columns = np.array(list(rows.values()))
    order = np.empty(columns.shape, dtype=np.intp)
    declined = np.empty(len(rows), dtype=np.bool_)
    bucket_argsort(columns, order, declined)
    expect_declined = {"cauchy", "outlier", "bunched", "constant", "nan", "inf", "huge"}
    # "bunched" passes the pairs' bound (64 n) and fails on the insertion's moves (8 n, about
    # half its pairs in random order); "cauchy" and "outlier" fail on the bound
    x = rows["bunched"]
    counts = np.bincount(((x - x.min()) * ((n - 1) / np.ptp(x))).astype(np.int64), minlength=n)
    assert 16 * n < (counts * (counts - 1) // 2).sum() < 64 * n
    assert {name for name, d in zip(rows, declined) if d} == expect_declined
    for p, name in enumerate(rows):
        if not declined[p]:
            np.testing.assert_array_equal(np.sort(order[p]), np.arange(n), err_msg=name)
            np.testing.assert_array_equal(columns[p, order[p]], np.sort(columns[p]), err_msg=name)
    # through the diagnostics (finite rows: both paths), against scipy's ranks
    finite = [name for name in rows if name not in ("nan", "inf", "huge")]
    draws = np.array([rows[name] for name in finite]).T.reshape(4, n // 4, len(finite))
    bulk, folded = _split_scores(draws)
    ref_bulk, ref_folded = _oracle_split_scores(draws)
    np.testing.assert_array_equal(bulk.reshape(len(finite), -1).T, ref_bulk)
    np.testing.assert_array_equal(folded.reshape(len(finite), -1).T, ref_folded)


def test_matches_arviz_on_tied_draws():
    """Rejected MALA steps repeat draws; R-hat and ESS stay ArviZ's to 1e-10."""
    az = pytest.importorskip("arviz")
    rng = np.random.default_rng(12)
    draws = _ar1(rng, 4, 400, 0.6, n_params=2)
    reject = rng.random(draws.shape[:2]) < 0.4
    for t in range(1, draws.shape[1]):
        draws[reject[:, t], t] = draws[reject[:, t], t - 1]
    draws[..., 1] = np.round(draws[..., 1], 1)
    rhat, ess = diagnostics(draws)
    for p in range(2):
        ds = az.convert_to_dataset(draws[:, :, p])
        assert rhat[p] == pytest.approx(float(az.rhat(ds, method="rank")["x"]), rel=1e-10)
        assert ess[p] == pytest.approx(float(az.ess(ds, method="bulk")["x"]), rel=1e-10)


def test_diagnostics_on_threads_are_each_parameters_own():
    """From _THREADED_DRAWS draws the parameters go to threads in ranges: each parameter's
    R-hat and ESS are those of its draws alone (a constant one's NaN and full ESS included),
    the same bits on one thread as on two."""
    import numba

    from skcoreset.sampler import _diagnostics

    rng = np.random.default_rng(13)
    draws = _ar1(rng, 4, 1000, 0.6, n_params=13)
    draws[:, 1::3] = draws[:, :-1:3]
    draws[..., 5] = 2.0
    assert draws.size >= _diagnostics._THREADED_DRAWS
    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = diagnostics(draws)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = diagnostics(draws)
    finally:
        numba.set_num_threads(previous)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    alone = np.array([diagnostics(draws[:, :, [p]]) for p in range(13)])[..., 0].T
    np.testing.assert_array_equal(one[0], alone[0])
    np.testing.assert_array_equal(one[1], alone[1])
    assert np.isnan(one[0][5]) and one[1][5] == 4000
