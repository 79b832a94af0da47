"""The KL methods at a few points more than the parameters, on real logistic data (issue 27).

ijcnn1 (a 30 000-row sample of it, 23 parameters), 30 points: with its OMP start drawn from
one projection, QuasiNewtonCoreset and CoresetMCMC landed 7 200 - 11 300 nats (Laplace KL)
from the data's posterior at seeds 2 and 3, where OMPCoreset's median over four seeds was
3 200 and a uniform subsample's 190 000; from the best of four projections, 112 - 308. Since
OMPCoreset's pool is drawn by the rows' spreads and projected from the data's fit (issue 54),
its own median is 117: the KL methods are held within three times it. Each
KL here is the test's own: Newton's method in NumPy for the Laplace fits of the coreset and
of all rows, under the prior the estimator reports, and the Gaussian KL in closed form.
"""

import pathlib
import warnings

import numpy as np
import pytest

from skcoreset.coreset import CoresetMCMC, OMPCoreset, QuasiNewtonCoreset, SparseVICoreset
from tests.oracles.laplace_oracle import gaussian_kl, logistic_laplace

DATA = pathlib.Path(__file__).parent / "data" / "ijcnn1.npz"


@pytest.fixture(scope="module")
def ijcnn1():
    data = np.load(DATA)
    X, y = data["X"], data["y"]
    return X, y, np.column_stack([X, np.ones(len(y))])


def _kl(est, X, y, Xd):
    prior_sd = np.broadcast_to(est.prior_scale_, (Xd.shape[1],))
    full = logistic_laplace(Xd, y, np.ones(len(y)), prior_sd)
    idx = est.sample_indices_
    core = logistic_laplace(Xd[idx], y[idx], est.sample_weight_, prior_sd)
    return gaussian_kl(*core, *full)


@pytest.fixture(scope="module")
def omp_median(ijcnn1):
    X, y, Xd = ijcnn1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.median(
            [_kl(OMPCoreset(30, random_state=s).fit(X, y), X, y, Xd) for s in range(4)]
        )


@pytest.mark.parametrize("cls", [QuasiNewtonCoreset, CoresetMCMC, SparseVICoreset])
def test_no_seed_far_worse_than_omp(cls, ijcnn1, omp_median):
    """The two seeds that failed, each within three times OMPCoreset's median over four
    seeds (the start is OMP's, from the best of several projections; they were 25 to 100
    times it), and the KL the estimator reports the test's own."""
    X, y, Xd = ijcnn1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = [cls(30, random_state=s).fit(X, y) for s in (2, 3)]
    kls = [_kl(est, X, y, Xd) for est in fits]
    assert max(kls) < 3 * omp_median, (kls, omp_median)
    for est, kl in zip(fits, kls):
        np.testing.assert_allclose(est.laplace_kl_, kl, rtol=1e-3)
