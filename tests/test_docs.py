"""The documentation against the code: the API reference lists every public name."""

import importlib
import pkgutil
import re
import types
from pathlib import Path

import pytest

import skcoreset

DOC = Path(__file__).resolve().parent.parent / "doc"


def _api_entries():
    """The ``subpackage.name`` entries of the autosummary blocks of doc/api.rst."""
    text = (DOC / "api.rst").read_text(encoding="utf-8")
    return set(re.findall(r"^ {3}([a-z][a-z_]*\.[A-Za-z_]\w*)\s*$", text, flags=re.MULTILINE))


def _public_submodules():
    """Every public subpackage or module directly under ``skcoreset``."""
    names = [m.name for m in pkgutil.iter_modules(skcoreset.__path__) if not m.name.startswith("_")]
    return {name: importlib.import_module(f"skcoreset.{name}") for name in names}


SUBMODULES = _public_submodules()


@pytest.mark.parametrize("name", sorted(SUBMODULES))
def test_api_reference_lists_all_of_a_subpackage(name):
    module = SUBMODULES[name]
    assert hasattr(module, "__all__"), f"skcoreset.{name} has no __all__"
    missing = sorted({f"{name}.{item}" for item in module.__all__} - _api_entries())
    assert not missing, f"doc/api.rst does not list {missing}"


def test_api_reference_lists_only_public_names():
    stale = sorted(
        entry
        for entry in _api_entries()
        if entry.split(".")[1] not in getattr(SUBMODULES.get(entry.split(".")[0]), "__all__", ())
    )
    assert not stale, f"doc/api.rst lists names outside the __all__ lists: {stale}"


def test_api_reference_covers_the_top_level_names():
    # The top level re-exports the estimators; each must be documented under its subpackage.
    documented = {
        id(getattr(SUBMODULES[entry.split(".")[0]], entry.split(".")[1]))
        for entry in _api_entries()
        if entry.split(".")[0] in SUBMODULES
    }
    exported = [
        name
        for name in skcoreset.__all__
        if name != "__version__" and not isinstance(getattr(skcoreset, name), types.ModuleType)
    ]
    assert exported
    undocumented = [name for name in exported if id(getattr(skcoreset, name)) not in documented]
    assert not undocumented, f"doc/api.rst does not document {undocumented}"
