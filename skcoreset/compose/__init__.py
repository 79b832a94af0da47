"""Composition: estimators fitted on a weighted coreset.

:class:`CoresetClassifier` and :class:`CoresetRegressor` build a coreset during ``fit`` and
fit their estimator on it; they are ordinary scikit-learn estimators (stock pipelines, grid
search over ``coreset__n_points``, cloning, pickling). For the flat
``make_pipeline(scaler, coreset, estimator)`` shape see :mod:`skcoreset.pipeline`, whose
:class:`Pipeline` is defined here in ``_pipeline.py``.
"""

from ._base import infer_model
from ._coreset_estimator import CoresetClassifier, CoresetRegressor

__all__ = ["CoresetClassifier", "CoresetRegressor", "infer_model"]
