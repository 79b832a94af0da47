"""Doctests of the exports to probabilistic programming languages need the language: they
are skipped where it is not installed (the tests of tests/test_export.py skip likewise)."""

import importlib.util

import pytest

#: a doctest whose name ends so -> the modules it needs
_NEEDS = {".to_pymc": ("pymc",), ".to_numpyro": ("numpyro", "jax")}


def pytest_collection_modifyitems(config, items):
    for item in items:
        for suffix, modules in _NEEDS.items():
            absent = [m for m in modules if importlib.util.find_spec(m) is None]
            if item.name.endswith(suffix) and absent:
                item.add_marker(pytest.mark.skip(reason=f"needs {', '.join(absent)}"))
