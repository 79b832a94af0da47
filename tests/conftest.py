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


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: needs --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
