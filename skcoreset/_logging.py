"""Reports of long phases: the ``skcoreset`` logger, and printing with ``verbose``.

Every long phase (Laplace fit, projection, selection, merge, MALA warm-up) is reported through
the standard :mod:`logging` module under the ``skcoreset`` logger (configure it like any
library logger), and printed to standard output when the estimator's ``verbose`` is high
enough, as scikit-learn's estimators print: the phases of a whole fit are INFO and print with
``verbose >= 1``; the phases repeated for every block of a large fit are DEBUG and print with
``verbose >= 2``.
"""

import logging
import time
from contextlib import contextmanager

logger = logging.getLogger("skcoreset")

# the verbose level from which a report of each logging level is printed
_PRINT_FROM = {logging.INFO: 1, logging.DEBUG: 2}


def report(estimator, message, *args, level=logging.INFO):
    """Log ``message % args`` and print it when ``estimator.verbose`` is high enough."""
    logger.log(level, message, *args)
    if getattr(estimator, "verbose", 0) >= _PRINT_FROM.get(level, 1):
        print(f"[{type(estimator).__name__}] " + (message % args if args else message))


@contextmanager
def phase(estimator, name, level=logging.INFO):
    """Report the start and the duration of a phase of a fit."""
    report(estimator, "%s ...", name, level=level)
    start = time.perf_counter()
    yield
    report(estimator, "%s done in %.2f s", name, time.perf_counter() - start, level=level)
