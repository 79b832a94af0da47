"""Who may call a coreset's ``fit_resample``: not imbalanced-learn, which would drop the weights."""

import sys


def check_resample_caller(resampler=None):
    """Refuse a call of ``fit_resample`` by imbalanced-learn, which would drop the weights.

    imbalanced-learn's samplers return ``(X, y)``, and its :class:`imblearn.pipeline.Pipeline`
    (like its other callers of ``fit_resample``) unpacks exactly two values. A coreset returns
    ``(X, y, {"sample_weight": w})``: there it fails with "too many values to unpack", and a
    wrapper returning two values would silently fit the next steps on unweighted rows. Called
    first thing in a coreset's ``fit_resample``, this raises a TypeError that says what to use
    instead when the caller's code lives in the ``imblearn`` package.

    The caller is the first frame above ``fit_resample`` (frames of methods named
    ``fit_resample`` are skipped, so a subclass may extend it through ``super()``); only the
    direct caller counts, so a coreset used inside code that imbalanced-learn calls (e.g. the
    fit of :class:`~skcoreset.compose.CoresetClassifier` as the last step of an imblearn
    pipeline) is not affected.

    Parameters
    ----------
    resampler : object, default=None
        The coreset, named in the message.

    Raises
    ------
    TypeError
        When the caller is imbalanced-learn.
    """
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_name == "fit_resample":
        frame = frame.f_back
    module = "" if frame is None else str(frame.f_globals.get("__name__", ""))
    if module != "imblearn" and not module.startswith("imblearn."):
        return
    name = "a coreset" if resampler is None else type(resampler).__name__
    raise TypeError(
        f"{name}.fit_resample was called by imbalanced-learn ({module}), which expects (X, y) "
        "back; a coreset returns (X, y, {'sample_weight': w}) and its weights would be lost. "
        "Use skcoreset.pipeline.make_pipeline instead (it accepts imbalanced-learn samplers "
        "before the coreset), or make CoresetClassifier(coreset, estimator) (CoresetRegressor "
        "for a regressor) the last step of the imbalanced-learn pipeline."
    )
