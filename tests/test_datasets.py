import numpy as np
import pytest

from skcoreset.datasets import (
    load_phishing,
    make_linear_regression,
    make_logistic_regression,
    make_poisson_regression,
)
from skcoreset.models import get_model, laplace_approximation


def test_load_phishing():
    data = load_phishing()
    assert data.data.shape == (11055, 10) and data.target.shape == (11055,)
    assert set(np.unique(data.target)) == {0, 1}
    assert data.n_train == 9950 and "CC BY" in data.DESCR
    X, y = load_phishing(return_X_y=True)
    np.testing.assert_array_equal(X, data.data)
    assert np.mean(y) == pytest.approx(0.557, abs=0.001)


def test_load_phishing_as_frame():
    pytest.importorskip("pandas")
    X, y = load_phishing(return_X_y=True, as_frame=True)
    assert list(X.columns) == [f"pc{i}" for i in range(10)] and y.name == "legitimate"


@pytest.mark.parametrize(
    "make, name",
    [
        (make_logistic_regression, "logistic"),
        (make_poisson_regression, "poisson"),
        (make_linear_regression, "gaussian"),
    ],
)
def test_generators_recover_their_parameters(make, name):
    # With N = 20000 the MAP is within a few posterior sds of the truth.
    X, y, coef = make(20000, 4, intercept=0.5, return_coef=True, random_state=0)
    lap = laplace_approximation(get_model(name, prior_scale=10.0), X, y)
    truth = np.r_[coef, 0.5]
    if lap.n_extra:  # the noise scale is fitted too (its log last): the generator's 1.0
        truth = np.r_[truth, 0.0]
    z = (lap.mean - truth) / np.sqrt(np.diag(lap.cov))
    assert np.all(np.abs(z) < 4), z
    X2, y2 = make(20000, 4, intercept=0.5, random_state=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)


def test_generator_checks_coef_shape():
    with pytest.raises(ValueError, match="coef"):
        make_logistic_regression(10, 3, coef=[1.0, 2.0])
