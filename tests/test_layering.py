"""The structure of the package, pinned: it reads like the pipeline and nothing runs back up.

Layers, lowest first (a module may import its own layer and those below, never above):

0. private utilities: ``_progress``, ``_logging``, ``_warnings``, ``_sklearn_compat``,
   ``_lazy``, ``_threads``, ``_parallel_kernels``
1. data and models: ``datasets``, ``models``
2. what works on projected vectors or on a model: ``projection``, ``hilbert``, ``sampler``,
   ``metrics``, ``export`` (the model in probabilistic programming languages)
3. estimators: ``coreset``, ``linear_model``
4. composition: ``compose``
5. faces: ``pipeline``, the command line (``cli``), the package root

numba kernel modules (``*_kernels.py``) import only numpy, numba, the standard library and
other kernels, no kernel is numba-parallel (threads come from ``_parallel_kernels``), and
private scikit-learn names are imported in ``_sklearn_compat`` only.
"""

import ast
import pathlib
import sys

import pytest

PACKAGE = pathlib.Path(__file__).parents[1] / "skcoreset"

LAYERS = {
    "_progress": 0,
    "_logging": 0,
    "_warnings": 0,
    "_sklearn_compat": 0,
    "_lazy": 0,
    "_threads": 0,
    "_parallel_kernels": 0,
    "datasets": 1,
    "models": 1,
    "projection": 2,
    "hilbert": 2,
    "sampler": 2,
    "metrics": 2,
    "export": 2,
    "coreset": 3,
    "linear_model": 3,
    "compose": 4,
    "pipeline": 5,
}
TOP = 5  # the command line, __init__, __main__ and anything new default to the top


def _modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _unit(path):
    """The top-level unit of the package a file belongs to (subpackage or module name)."""
    rel = path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py")


def _imports(path):
    """(absolute module name, level) of every import of a file, relative ones resolved."""
    tree = ast.parse(path.read_text())
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    package = list(rel.parts[:-1]) if path.name != "__init__.py" else list(rel.parts[:-1])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
                if node.module is None:
                    found += [f"{name}.{alias.name}" for alias in node.names]
                    continue
                found.append(name)
            else:
                found.append(node.module)
    return found


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_import_runs_back_up(path):
    own = LAYERS.get(_unit(path), TOP)
    for name in _imports(path):
        parts = name.split(".")
        if parts[0] != "skcoreset" or len(parts) < 2:
            continue
        target = LAYERS.get(parts[1], TOP)
        assert target <= own, f"{path.name} (layer {own}) imports {name} (layer {target})"


@pytest.mark.parametrize(
    "path",
    [p for p in _modules() if p.name.endswith("_kernels.py")],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_kernel_modules_import_only_numpy_numba_and_the_standard_library(path):
    for name in _imports(path):
        top = name.split(".")[0]
        # the standard library (e.g. the threads that run row tasks) besides numba and NumPy
        ok = top in {"numpy", "numba"} | sys.stdlib_module_names or name.endswith("_kernels")
        assert ok, f"{path.name} imports {name}"


def _compiled_functions():
    """``{(path, name): (function node, parallel?)}`` of the package's ``@njit`` functions
    (parallel: ``parallel=True``)."""
    found = {}
    for path in _modules():
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.FunctionDef):
                continue
            for deco in node.decorator_list:
                call = deco if isinstance(deco, ast.Call) else None
                name = getattr(call.func if call else deco, "id", None)
                if name != "njit":
                    continue
                kw = {k.arg: k.value for k in call.keywords} if call else {}
                parallel = getattr(kw.get("parallel"), "value", False) is True
                found[(path, node.name)] = (node, parallel)
    return found


def test_no_numba_parallel_build():
    """Threads come from ``_parallel_kernels.RowTaskKernel`` (one build, run on Python threads),
    never from numba's ``parallel=True``: its builds compile in about twice the time, and numba
    0.60 (the oldest supported) crashes running, from its cache, a compiled function that
    calls a parallel one (numba issue 8578)."""
    functions = _compiled_functions()
    assert len(functions) > 20, "few compiled functions found: the scan is broken"
    parallel = [f"{path.name}: {name}" for (path, name), (_, par) in functions.items() if par]
    assert not parallel, parallel
    assert not [path.name for path in _modules() if "prange" in path.read_text()]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_private_sklearn_names_only_through_the_compat_module(path):
    if path.name == "_sklearn_compat.py":
        return
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sklearn"):
            private_module = any(p.startswith("_") for p in node.module.split("."))
            private_names = [a.name for a in node.names if a.name.startswith("_")]
            assert not private_module and not private_names, (
                f"{path.name}: from {node.module} import {[a.name for a in node.names]}"
            )


def test_the_layers_are_those_of_the_tree():
    """Every subpackage has a layer: a new one must be placed deliberately."""
    units = {_unit(p) for p in _modules()} - {"__init__", "__main__"}
    unplaced = {u for u in units if u not in LAYERS and u != "cli"}
    assert not unplaced, f"place these in LAYERS: {sorted(unplaced)}"


def test_import_skcoreset_imports_no_ppl():
    """The languages of the exports are heavy: importing the package, or an estimator with
    the export methods, imports none of them."""
    import subprocess
    import sys

    code = (
        "import sys, skcoreset; from skcoreset.coreset import OMPCoreset; "
        "print(sorted(m for m in ('pymc', 'pytensor', 'numpyro', 'jax', 'bambi', 'cmdstanpy') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
