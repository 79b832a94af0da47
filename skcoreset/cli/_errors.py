"""User errors of the command line, and the optional dependencies it imports on demand.

A :class:`CommandError` is a mistake of the user (a missing file, an unknown column, a bad
size): the command line prints its message as one line and exits with status 1, without a
traceback. Anything else that escapes is a bug and keeps its traceback.
"""

import importlib

#: What to install for the optional dependencies of the command line.
INSTALL_HINT = "pip install 'skcoreset[cli]'"


class CommandError(Exception):
    """A user error: its message is printed as one line, and the command exits with 1."""


def optional_import(module, purpose):
    """Import ``module``, or raise a :class:`CommandError` saying what needs it.

    Parameters
    ----------
    module : str
        The module to import, e.g. ``"pandas"`` or ``"pyarrow.parquet"``.
    purpose : str
        What needs it, e.g. ``"reading .csv files"``.

    Returns
    -------
    module : module
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0]
        raise CommandError(f"{purpose} needs {package}: {INSTALL_HINT}") from None
