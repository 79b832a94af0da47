"""The structure of the package, pinned: it reads like the pipeline and nothing runs back up.

Layers, lowest first (a module may import its own layer and those below, never above):

0. private utilities: ``_progress``, ``_logging``, ``_stats``, ``_warnings``,
   ``_sklearn_compat``, ``_lazy``, ``_threads``, ``_parallel_kernels``
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
    "_stats": 0,
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


# -- imports made when code runs, not when the module is imported ------------------------------
#: Optional dependencies: imported by the feature that needs them, where it runs.
OPTIONAL = {
    "arviz",
    "bambi",
    "dask",
    "distributed",
    "jax",
    "matplotlib",
    "numpyro",
    "pandas",
    "pymc",
    "pytensor",
    "tqdm",
}

#: Every other import inside a function, with its reason. The package's own modules are
#: imported at the top of the modules that use them; lazily only at the public edge: the
#: packages' PEP 562 attributes (``_lazy.lazy_attributes``: ``skcoreset``, ``models`` - the
#: built-in model classes, listed by the registry ``models/_names.py`` -, ``coreset``,
#: ``export``) and the places below.
LAZY = {
    ("coreset/_registry.py", "inspect"): "the algorithm registry, read by the command line's "
    "help, imports nothing at import time",
}

#: The modules that import by a name held in a string (``importlib.import_module``).
IMPORT_BY_NAME = {
    "_lazy.py": "the packages' PEP 562 attributes: the public edge",
    "cli/_main.py": "a command's module, imported when it runs (--help stays fast)",
    "cli/_errors.py": "an optional dependency named by the command that needs it",
    "coreset/_registry.py": "an algorithm's estimator class, imported on first use (the "
    "registry is read by the command line's help)",
}


def _run_time_imports(path):
    """``(kind, name)`` of a file's imports inside functions (or classes' bodies), and of its
    calls of ``importlib.import_module``."""
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in top:
            found += [("import", name) for name in _imports_of(node, path)]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module":
            found.append(("import_module", None))
    return found


def _imports_of(node, path):
    """The absolute names one import statement imports (the module, for a relative one)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not node.level:
        return [node.module]
    package = list(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    return [".".join(package[: len(package) - node.level + 1] + [node.module or ""]).rstrip(".")]


def test_lazy_imports_are_the_listed_ones():
    """No hidden import: inside a function, only an optional dependency or a listed import;
    no module imports by a name held in a string but the listed ones (before issue 47,
    models/_glm.py imported every model module so, each of which imports _glm: a loop no
    picture of the imports showed)."""
    unlisted = []
    for path in _modules():
        rel = str(path.relative_to(PACKAGE))
        for kind, name in _run_time_imports(path):
            if kind == "import_module":
                ok = rel in IMPORT_BY_NAME
            else:
                ok = name.split(".")[0] in OPTIONAL or (rel, name) in LAZY
            if not ok:
                unlisted.append(f"{rel}: {name or 'importlib.import_module'}")
    assert not unlisted, f"imports at run time, not listed in tests/test_layering.py: {unlisted}"
    listed = {(str(p.relative_to(PACKAGE)), n) for p in _modules() for _, n in _run_time_imports(p)}
    assert set(LAZY) <= listed, "a listed lazy import is gone: take it off the list"
