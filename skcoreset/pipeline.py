"""Pipelines with coreset steps: the flat ``make_pipeline(scaler, coreset, estimator)`` shape.

The coreset step runs only during ``fit``; the steps after it are fitted on the selected rows
with the coreset weights as ``sample_weight``; prediction uses every row. The implementation
lives in :mod:`skcoreset.compose` beside the meta-estimators it shares code with.
"""

from .compose._pipeline import Pipeline, make_pipeline

__all__ = ["Pipeline", "make_pipeline"]
