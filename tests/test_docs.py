"""The documentation against the code: the API reference lists every public name."""

import importlib
import inspect
import pkgutil
import re
import runpy
import types
import warnings
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


# numpydoc checks not enforced: See Also sections, extended summaries, the name of a single
# returned value (scikit-learn names it too, e.g. ``self : object``), and examples on methods
# (classes and functions must have them).
NOT_ENFORCED = {"SA01", "ES01", "RT02"}
NOT_ENFORCED_ON_METHODS = {"EX01"}


def _documented_elsewhere():
    """The rule of doc/conf.py that leaves scikit-learn's inherited methods out of the docs."""
    return runpy.run_path(str(DOC / "conf.py"))["documented_elsewhere"]


def _docstring_home(klass, attr):
    """Where the docstring of ``klass.attr`` is written: an override without one inherits it."""
    for base in klass.__mro__:
        value = base.__dict__.get(attr)
        if getattr(getattr(value, "fget", value), "__doc__", None):
            return f"{base.__module__}.{base.__qualname__}.{attr}"
    return f"{klass.__module__}.{klass.__qualname__}.{attr}"


def _public_objects():
    """(qualified name, is a method) for every public class, its methods and every function."""
    elsewhere = _documented_elsewhere()
    found = []
    for name, module in sorted(SUBMODULES.items()):
        for item in module.__all__:
            obj = getattr(module, item)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue  # constants: documented by a comment, which numpydoc cannot validate
            found.append((f"skcoreset.{name}.{item}", False))
            if inspect.isclass(obj):
                for attr, value in inspect.getmembers(obj):
                    public = not attr.startswith("_") and not elsewhere(attr, value)
                    if public and (callable(value) or isinstance(value, property)):
                        found.append((_docstring_home(obj, attr), True))
    return sorted(set(found))


@pytest.mark.parametrize(("name", "is_method"), _public_objects(), ids=lambda v: str(v))
def test_public_docstring_is_valid_numpydoc(name, is_method):
    from numpydoc.validate import validate

    skip = NOT_ENFORCED | (NOT_ENFORCED_ON_METHODS if is_method else set())
    errors = [f"{code}: {message}" for code, message in validate(name)["errors"]]
    errors = [error for error in errors if error.split(":")[0] not in skip]
    assert not errors, f"{name}:\n" + "\n".join(errors)


def test_which_model_page_runs():
    """Every example of the user guide's "Which model?" page runs and says what it shows."""
    import doctest

    page = Path(__file__).resolve().parents[1] / "doc" / "which_model.rst"
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains' convergence notes are not the point
        result = doctest.testfile(str(page), module_relative=False, optionflags=flags)
    assert result.attempted > 20 and result.failed == 0
