"""Optional tqdm progress bars: long fits show one when asked, nothing otherwise."""

from ._warnings import warn


class ProgressBar:
    """A tqdm bar when ``enabled`` and tqdm is installed; otherwise every call does nothing.

    ``advance_to(k)`` sets the count (e.g. the coreset's current support), ``update(n)`` adds.
    """

    def __init__(self, total, enabled, desc, unit="it"):
        self._bar = None
        if not enabled:
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:
            warn("progress=True needs tqdm (pip install tqdm); no progress bar is shown.")
            return
        self._bar = tqdm(total=total, desc=desc, unit=unit, leave=False)

    def update(self, n=1):
        if self._bar is not None:
            self._bar.update(n)

    def advance_to(self, count):
        if self._bar is not None and count > self._bar.n:
            self._bar.update(count - self._bar.n)

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
