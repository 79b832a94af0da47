"""The blocks' helpers: the uniform sample of rows that starts the Laplace fit of large data."""

import numpy as np
import pytest

from skcoreset.coreset._blocks import sample_rows


def test_sample_rows_is_uniform_without_replacement():
    # every row is in a sample of 10 of 50 with probability 1/5: over 20 000 seeded samples,
    # each count is Binomial(20 000, 1/5) (sd 57); 5 sd over the 50 counts fails by chance
    # with probability 3e-5. Each sample is sorted and without repeats.
    rs = np.random.RandomState(0)
    counts = np.zeros(50)
    pairs = 0
    for _ in range(20_000):
        rows = sample_rows(50, 10, rs)
        assert rows.shape == (10,) and np.all(np.diff(rows) > 0)
        counts[rows] += 1
        pairs += 0 in rows and 1 in rows
    assert np.max(np.abs(counts - 4000)) < 5 * np.sqrt(20_000 * 0.2 * 0.8)
    # a pair of rows is in the same sample with probability (10 * 9) / (50 * 49)
    p = 90 / 2450
    assert abs(pairs - 20_000 * p) < 5 * np.sqrt(20_000 * p * (1 - p))


@pytest.mark.parametrize("n, size", [(10**6, 10_000), (7, 7), (7, 0)])
def test_sample_rows_follows_random_state(n, size):
    one = sample_rows(n, size, np.random.RandomState(3))
    np.testing.assert_array_equal(one, sample_rows(n, size, 3))
    assert one.shape == (size,) and np.unique(one).shape == (size,)
    assert size == 0 or 0 <= one.min() and one.max() < n
    if size and size < n:
        assert not np.array_equal(one, sample_rows(n, size, 4))
