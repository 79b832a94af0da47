"""The registry of coreset algorithms against everything that lists them: every coreset
estimator of the package is registered, exported, buildable from the command line and on the
API page, and what the registry says of a class agrees with the class."""

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import skcoreset
from skcoreset import coreset, linear_model
from skcoreset.cli import make_parser
from skcoreset.cli._algorithms import make_coreset
from skcoreset.coreset import BaseCoreset
from skcoreset.coreset._registry import ALGORITHMS, BY_NAME, ESTIMATORS, RECOMMENDED

API = Path(__file__).resolve().parents[1] / "doc" / "api.rst"


def _coreset_classes():
    """Every public coreset estimator class defined in skcoreset.coreset, found by walking
    its modules (not read from the registry)."""
    for module in pkgutil.iter_modules(coreset.__path__):
        importlib.import_module(f"skcoreset.coreset.{module.name}")
    found, todo = set(), [BaseCoreset]
    while todo:
        for cls in todo.pop().__subclasses__():
            todo.append(cls)
            if cls.__module__.startswith("skcoreset.coreset.") and not cls.__name__.startswith("_"):
                found.add(cls)
    return sorted(found, key=lambda c: c.__name__)


CLASSES = _coreset_classes()


def _api_coreset_section():
    """The estimator entries of the API page's "Coreset estimators" block, in order."""
    text = API.read_text(encoding="utf-8")
    section = text[text.index("Coreset estimators\n") :]
    block = section[: section.index("\nArray API")]
    return re.findall(r"^ {3}coreset\.(\w+)\s*$", block, flags=re.MULTILINE)


def _build_choices():
    commands = next(a for a in make_parser()._actions if a.dest == "command").choices
    return next(a for a in commands["build"]._actions if a.dest == "algorithm").choices


def test_the_classes_were_found():
    assert len(CLASSES) >= 10
    assert coreset.OMPCoreset in CLASSES and BaseCoreset not in CLASSES


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_coreset_estimator_is_registered_exported_on_the_cli_and_documented(cls):
    name = cls.__name__
    assert ESTIMATORS.get(name) == cls.__module__.rsplit(".", 1)[1], "not in the registry"
    assert getattr(coreset, name) is cls and name in coreset.__all__
    assert getattr(skcoreset, name) is cls and name in skcoreset.__all__
    built = [a.name for a in ALGORITHMS if type(make_coreset(a.name, 5, model="logistic")) is cls]
    assert built and set(built) <= set(_build_choices()), "no --algorithm builds it"
    assert name in _api_coreset_section(), "doc/api.rst does not list it"


def test_the_registry_holds_only_those_classes():
    assert set(ESTIMATORS) == {c.__name__ for c in CLASSES}
    assert all(algorithm.cls in CLASSES for algorithm in ALGORITHMS)


def test_exports_are_the_registry_and_the_shared_names():
    shared = {"BaseCoreset", "quality_target", "sensitivity_coreset_size"}
    shared |= {n for n in coreset.__all__ if n.endswith("Warning")}
    assert set(coreset.__all__) == set(ESTIMATORS) | shared
    top = {n for n in skcoreset.__all__ if n[0].isupper()}
    assert top == set(ESTIMATORS) | set(linear_model.__all__) | {
        "CoresetClassifier",
        "CoresetRegressor",
    }


def test_the_api_page_lists_the_estimators_in_the_registry_order():
    listed = [n for n in _api_coreset_section() if n in ESTIMATORS]
    assert listed == list(ESTIMATORS)


def test_the_command_line_offers_every_algorithm_and_describes_it():
    assert list(_build_choices()) == [a.name for a in ALGORITHMS]
    commands = next(a for a in make_parser()._actions if a.dest == "command").choices
    text = commands["build"].format_help()
    for algorithm in ALGORITHMS:
        line = rf"^  {re.escape(algorithm.name)} +{re.escape(algorithm.description)}"
        assert re.search(line, text, flags=re.MULTILINE)


def test_names_and_labels_are_unique():
    assert len(BY_NAME) == len(ALGORITHMS)
    assert len({a.label for a in ALGORITHMS}) == len(ALGORITHMS)
    # an algorithm is a class with its fixed parameters: no two alike
    assert len({(a.estimator, tuple(sorted(a.params.items()))) for a in ALGORITHMS}) == len(
        ALGORITHMS
    )


@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=lambda a: a.name)
def test_what_the_registry_says_agrees_with_the_class(algorithm):
    params = algorithm.make(5).get_params()
    for key, value in algorithm.params.items():
        assert params[key] == value
    # the command line refuses --n-projections where the class has no projection
    assert algorithm.projected == ("n_projections" in params)
    # a class for one model takes no model=, and its description says which model it is for
    own = algorithm.model
    assert ("model" in params) == (own is None)
    said = re.findall(r"(\w+) model only", algorithm.description)
    assert said == ([] if own is None else [own])


def test_the_recommended_algorithm_is_the_meta_estimators_default():
    from sklearn.linear_model import LogisticRegression

    from skcoreset.compose import CoresetClassifier
    from skcoreset.datasets import make_logistic_regression

    X, y = make_logistic_regression(n_samples=300, n_features=2, random_state=0)
    fitted = CoresetClassifier(estimator=LogisticRegression(), random_state=0).fit(X, y)
    recommended = BY_NAME[RECOMMENDED]
    assert type(fitted.coreset_) is recommended.cls and not recommended.params
