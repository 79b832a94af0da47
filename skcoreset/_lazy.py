"""Names of a package imported on first use (PEP 562), so that importing the package does not
wait for scikit-learn, SciPy and numba."""

import importlib


def lazy_attributes(package, namespace, defined_in, modules=()):
    """``(__getattr__, __dir__)`` for a package.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    namespace : dict
        Its ``globals()``, which holds ``__all__``; a name, once imported, is stored there, so
        that later lookups skip ``__getattr__``.
    defined_in : dict
        Public name -> the module, relative to the package, that defines it.
    modules : tuple of str, default=()
        Submodules imported on first use under their own name.
    """

    def __getattr__(name):
        if name in modules:
            return importlib.import_module(f".{name}", package)
        if name in defined_in:
            value = getattr(importlib.import_module(f".{defined_in[name]}", package), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(namespace) | set(namespace["__all__"]))

    return __getattr__, __dir__
