"""Warnings that point at the caller's line, however many library frames lie between.

A fixed ``stacklevel`` is right for one call path only: a Bayesian GLM's convergence warning
is raised three frames below ``fit`` when the user calls ``fit``, and more when a pipeline,
a meta-estimator or a grid search calls it. :func:`warn` walks up to the first frame outside
skcoreset, scikit-learn, imbalanced-learn and joblib (which runs the fits of a
cross-validation), and contextlib (whose frame wraps a method decorated with one of the
package's context managers), so the warning names the user's file and line.
"""

import sys
import warnings

_LIBRARIES = ("skcoreset", "sklearn", "imblearn", "joblib", "contextlib")


def _is_library(frame):
    module = str(frame.f_globals.get("__name__", ""))
    return any(module == name or module.startswith(name + ".") for name in _LIBRARIES)


def caller_stacklevel():
    """The ``stacklevel`` that makes a ``warnings.warn`` issued by the *calling* function
    point at the first frame outside the libraries (the last frame if there is none)."""
    frame = sys._getframe(1)  # the function that will call warnings.warn: stacklevel 1
    level = 1
    while frame.f_back is not None and _is_library(frame):
        frame = frame.f_back
        level += 1
    return level


def warn(message, category=UserWarning):
    """``warnings.warn(message, category)`` attributed to the caller's line."""
    warnings.warn(message, category, stacklevel=caller_stacklevel())


def renamed(old, new, value=None, given=None):
    """A ``FutureWarning`` for a name given by its old spelling; returns the value.

    scikit-learn's convention: the old name works for a release, with a warning that says
    what to write instead (a name renamed in 0.1 goes in 0.2).

    Parameters
    ----------
    old, new : str
        The old and new spellings, as a caller writes them (``'noise_scale='``).
    value : object, default=None
        What was passed under the old name.
    given : object, default=None
        What was passed under the new one: both given is an error.

    Returns
    -------
    value : object
        ``value``, to use under the new name.
    """
    if given is not None:
        raise TypeError(f"Pass {new} only: {old} is its old name.")
    warn(f"{old} was renamed {new} in 0.1 and will be removed in 0.2: use {new}.", FutureWarning)
    return value
