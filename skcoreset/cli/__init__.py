"""The command line: ``skcoreset demo`` (every algorithm on the bundled data) and
``skcoreset build`` (the coreset of a data file, written as rows and weights).

Modules: ``_main`` (arguments, subcommands, errors), ``_demo`` and ``_build`` (the two
commands, imported when they run), ``_demo_settings`` (the demo's scale and columns, for the
help), ``_tables`` (reading data files in chunks, writing coresets), ``_algorithms`` (the
algorithms of the registry ``skcoreset.coreset._registry``, checked for the command line) and
``_errors`` (user errors, optional dependencies).
"""

from ._main import main, make_parser

__all__ = ["main", "make_parser"]
