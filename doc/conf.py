"""Sphinx configuration: numpydoc API pages, sphinx-gallery examples, MyST notes, pydata theme.

The build needs no network and does not run the examples by default, so
``sphinx-build -W -b html doc doc/_build/html`` works offline. Set
``SKCORESET_DOC_PLOT_GALLERY=1`` to execute the gallery (a few minutes) and
``SKCORESET_DOC_INTERSPHINX=1`` to link scikit-learn, NumPy and Python names to their online
documentation (this fetches their inventories).
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
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
templates_path = ["_templates"]
autosummary_generate = True
numpydoc_show_class_members = False
html_theme = "pydata_sphinx_theme"
# Headings of the Markdown design notes get anchors, so the user guide can link their sections.
myst_heading_anchors = 3


def _env_flag(name):
    return os.environ.get(name, "0").lower() in ("1", "true", "yes")


sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
}
# sphinx-gallery's own option (``-D plot_gallery=1`` on the command line overrides it).
plot_gallery = str(_env_flag("SKCORESET_DOC_PLOT_GALLERY"))

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


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
