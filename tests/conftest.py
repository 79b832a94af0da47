import pathlib

import numpy as np
import pytest

DATA = pathlib.Path(__file__).parent / "data"


def load(name):
    d = np.load(DATA / f"{name}.npz", allow_pickle=False)
    return d["X"], d["y"]


@pytest.fixture(scope="session")
def phishing():
    """Phishing (N = 11055, D = 10, labels 0/1)."""
    return load("phishing")


@pytest.fixture(scope="session")
def biketrips():
    """BikeTrips (N = 17379, D = 8, counts)."""
    return load("biketrips")


# Subsamples for the composition tests: real data, small enough for grid searches.
N_SUB = 2000


@pytest.fixture(scope="session")
def phish(phishing):
    """2000 rows of Phishing."""
    X, y = phishing
    idx = np.random.RandomState(0).choice(X.shape[0], N_SUB, replace=False)
    return X[idx], y[idx]


@pytest.fixture(scope="session")
def bikes(biketrips):
    """2000 rows of BikeTrips."""
    X, y = biketrips
    idx = np.random.RandomState(1).choice(X.shape[0], N_SUB, replace=False)
    return X[idx], y[idx]
