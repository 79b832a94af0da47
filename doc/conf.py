"""Sphinx configuration: numpydoc API pages, sphinx-gallery examples, MyST notes, pydata theme.

The build needs no network: ``sphinx-build -W -b html doc doc/_build/html`` works offline. It
runs the gallery, so that every example page shows its output and figures, at the reduced scale
``SKCORESET_EXAMPLE_SCALE=0.1`` (each example maps it onto its own sizes, chains and seeds; the
scale a user runs an example at directly is 1, unless the variable says otherwise). Set
``SKCORESET_DOC_PLOT_GALLERY=0`` to skip the examples (their pages then have no output or
figures, the index no figure) and ``SKCORESET_DOC_INTERSPHINX=1`` to link scikit-learn, NumPy
and Python names to their online documentation (this fetches their inventories).
"""

import os

project = "skcoreset"
author = "skcoreset developers"
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    "sphinx.ext.mathjax",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
templates_path = ["_templates"]
autosummary_generate = True
numpydoc_show_class_members = False
html_theme = "pydata_sphinx_theme"
# Headings of the Markdown design notes get anchors, so the user guide can link their sections.
myst_heading_anchors = 3
# $...$ and $$...$$ in the Markdown notes are math, as :math: and .. math:: are in reST.
myst_enable_extensions = ["dollarmath"]


def _env_flag(name, default="0"):
    return os.environ.get(name, default).lower() in ("1", "true", "yes")


sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
}
# sphinx-gallery's own option (``-D plot_gallery=0`` on the command line overrides it).
plot_gallery = str(_env_flag("SKCORESET_DOC_PLOT_GALLERY", default="1"))
# The examples' scale in the build: each runs in seconds and still shows its finding.
EXAMPLE_SCALE = "0.1"

if _env_flag("SKCORESET_DOC_INTERSPHINX"):
    extensions.append("sphinx.ext.intersphinx")
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "numpy": ("https://numpy.org/doc/stable", None),
        "sklearn": ("https://scikit-learn.org/stable", None),
    }


def documented_elsewhere(name, obj):
    """Whether a class member is defined outside skcoreset, so documented elsewhere.

    Methods inherited from scikit-learn (``get_params``, ``score``, ``set_output``, ...) or
    Python (an exception's ``with_traceback``) and scikit-learn's generated metadata-routing
    ``set_*_request`` methods are left out of the API pages (and out of the docstring
    validation in ``tests/test_docs.py``, which reads this function).
    """
    if name.startswith("set_") and name.endswith("_request"):
        return True
    # a property's home is its getter's module
    module = getattr(getattr(obj, "fget", obj), "__module__", None) or ""
    return not (module == "skcoreset" or module.startswith("skcoreset."))


def _skip_member(app, what, name, obj, skip, options):
    return True if documented_elsewhere(name, obj) else None


def _allow_missing_figures(app, config):
    # The index shows an example's figure, which only a run of the gallery makes.
    if str(config.plot_gallery).lower() in ("0", "false", "no"):
        config.suppress_warnings = [*config.suppress_warnings, "image.not_readable"]


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("config-inited", _allow_missing_figures)
    # The examples run in this process and read the variable; set here, not at import, so
    # that tests/test_docs.py, which reads this file, leaves the environment alone.
    os.environ.setdefault("SKCORESET_EXAMPLE_SCALE", EXAMPLE_SCALE)
