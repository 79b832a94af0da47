"""The phases of a coreset fit are reported: logged under 'skcoreset', printed with verbose."""

import logging

import pytest

from skcoreset.coreset import (
    FrankWolfeCoreset,
    GIGACoreset,
    IHTCoreset,
    ImportanceCoreset,
    OMPCoreset,
    SensitivityCoreset,
    UniformCoreset,
)
from skcoreset.datasets import make_logistic_regression


@pytest.fixture(scope="module")
def data():
    return make_logistic_regression(n_samples=1500, n_features=3, random_state=0)


def _messages(caplog, level):
    return [r.getMessage() for r in caplog.records if r.name == "skcoreset" and r.levelno == level]


HILBERT = [
    UniformCoreset,
    ImportanceCoreset,
    FrankWolfeCoreset,
    GIGACoreset,
    IHTCoreset,
    OMPCoreset,
]


@pytest.mark.parametrize("cls", HILBERT, ids=lambda c: c.__name__)
def test_hilbert_fit_logs_its_phases(cls, data, caplog):
    X, y = data
    with caplog.at_level(logging.INFO, logger="skcoreset"):
        cls(n_points=30, random_state=0).fit(X, y)
    info = _messages(caplog, logging.INFO)
    for phase in ("Laplace fit", "projection of 1500 rows", f"selection: {cls.__name__}"):
        started = [m for m in info if m.startswith(phase) and m.endswith("...")]
        finished = [m for m in info if m.startswith(phase) and " done in " in m]
        assert started and finished, (phase, info)
    assert info[-1].startswith("coreset of ")


def test_block_and_merge_phases_are_debug(data, caplog):
    X, y = data
    # pools of 60 candidates: each block of 300 rows is cut to its pool, and pools merge
    est = GIGACoreset(n_points=30, block_size=300, n_candidates=60, random_state=0)
    with caplog.at_level(logging.DEBUG, logger="skcoreset"):
        est.fit(X, y)
    debug = _messages(caplog, logging.DEBUG)
    info = _messages(caplog, logging.INFO)
    assert sum(m.startswith("second-order sums of 300 rows ...") for m in debug) == 5
    assert any(m.startswith("merge: reduction of") for m in debug)
    # the whole-fit phases stay INFO: the Laplace fit and the final selection
    assert any(m.startswith("Laplace fit") for m in info)
    assert any(m.startswith("selection: GIGACoreset") for m in info)
    assert not any(m.startswith("second-order sums") for m in info)


def test_sensitivity_fit_logs_its_phases(data, caplog):
    X, y = data
    with caplog.at_level(logging.INFO, logger="skcoreset"):
        SensitivityCoreset(n_points=30, center="laplace", random_state=0).fit(X, y)
    info = _messages(caplog, logging.INFO)
    for phase in ("k-means", "Laplace fit (the centre of the bound)", "sensitivity bounds"):
        assert any(m.startswith(phase) and " done in " in m for m in info), (phase, info)


@pytest.mark.parametrize("verbose", [0, 1, 2])
def test_verbose_prints_by_level(verbose, data, capsys):
    X, y = data
    GIGACoreset(n_points=30, block_size=500, random_state=0, verbose=verbose).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert all(line.startswith("[GIGACoreset] ") for line in lines)
    laplace = any("Laplace fit" in line for line in lines)
    per_block = any("second-order sums of 500 rows" in line for line in lines)
    assert (laplace, per_block) == (verbose >= 1, verbose >= 2)
