"""Reports of long phases: the ``skcoreset`` logger, and printing with ``verbose``.

Every long phase (Laplace fit, projection, selection, MALA warm-up) is reported through the
standard :mod:`logging` module under the ``skcoreset`` logger (INFO level; configure it like
any library logger), and printed to standard output when the estimator's ``verbose`` is
positive, as scikit-learn's estimators print.
"""

import logging
import time
from contextlib import contextmanager

logger = logging.getLogger("skcoreset")


def report(estimator, message, *args):
    """Log ``message % args`` and print it when ``estimator.verbose`` is positive."""
    logger.info(message, *args)
    if getattr(estimator, "verbose", 0):
        print(f"[{type(estimator).__name__}] " + (message % args if args else message))


@contextmanager
def phase(estimator, name):
    """Report the start and the duration of a phase of a fit."""
    report(estimator, "%s ...", name)
    start = time.perf_counter()
    yield
    report(estimator, "%s done in %.2f s", name, time.perf_counter() - start)
