"""Hilbert coreset estimators: Laplace fit -> random projection -> weights (array API).

Each estimator is a thin wrapper: ``_HilbertCoreset`` does the statistics (model, Laplace fit,
projection) and the subclass names one function of :mod:`skcoreset.hilbert` and its options.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .. import hilbert
from ..models import laplace_approximation
from ..projection import PROJECTIONS, project
from ._base import BaseCoreset

_COMMON_DOC = """
    Parameters
    ----------
    n_points : int, default=100
        Requested coreset size M: the number of distinct points with nonzero weight. The
        fitted size ``n_points_`` may be smaller when a stop rule fires first.
    model : {'auto', 'logistic', 'poisson', 'gaussian'}, default='auto'
        Likelihood. 'auto' infers it from ``y``: two values -> logistic, non-negative
        integers -> Poisson, otherwise Gaussian-linear. Inside the composition tools it is
        taken from the estimator the coreset feeds.
    projection : {'loglik', 'fisher'}, default='loglik'
        Random features of the per-datum log-likelihoods (doc/algorithms.md, section 1).
    n_projections : int, default=500
        Dimension J of the projection.
    prior_scale : float, default=1.0
        Standard deviation of the N(0, prior_scale^2 I) prior used by the Laplace fit.
    fit_intercept : bool, default=True
        Whether the likelihood has an intercept.
    laplace_subsample : int or None, default=None
        Fit the Laplace approximation on a random subsample of this many rows (weights scaled
        up to the full data) - enough for the projection and much faster for large N.
    dtype : {'float64', 'float32'}, default='float64'
        Storage of the (N, J) projection matrix, the largest allocation of a fit.
    progress : bool, default=False
        Show a tqdm progress bar of the construction (needs the optional tqdm).
    random_state : int, RandomState instance or None, default=None
        Seeds the projection and any random choice of the algorithm.
"""

_COMMON_ATTRS = """
    Attributes
    ----------
    sample_indices_ : ndarray of shape (M,)
        Sorted indices of the selected rows (M = ``n_points_``, the fitted size).
    sample_weight_ : ndarray of shape (M,)
        Their positive weights.
    hilbert_error_ : float
        Relative error ||Phi w - y|| / ||y|| in the projection space.
    model_ : str
        The resolved likelihood.
    laplace_ : LaplaceApproximation
        The fit the projection was drawn from.
    n_iter_ : int
        Iterations of the algorithm.
    stop_reason_ : str
        Which rule ended the construction ('size_reached', 'numerical_limit', ...).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.
"""


class _HilbertCoreset(BaseCoreset):
    """Shared statistics of the Hilbert coreset estimators."""

    _parameter_constraints: dict = {
        **BaseCoreset._parameter_constraints,
        "projection": [StrOptions(set(PROJECTIONS))],
        "n_projections": [Interval(Integral, 1, None, closed="left")],
        "laplace_subsample": [Interval(Integral, 1, None, closed="left"), None],
        "dtype": [StrOptions({"float64", "float32"})],
        "progress": ["boolean"],
    }

    def __init__(
        self,
        n_points=100,
        *,
        model="auto",
        projection="loglik",
        n_projections=500,
        prior_scale=1.0,
        fit_intercept=True,
        laplace_subsample=None,
        dtype="float64",
        progress=False,
        random_state=None,
    ):
        self.n_points = n_points
        self.model = model
        self.projection = projection
        self.n_projections = n_projections
        self.prior_scale = prior_scale
        self.fit_intercept = fit_intercept
        self.laplace_subsample = laplace_subsample
        self.dtype = dtype
        self.progress = progress
        self.random_state = random_state

    def _fit_coreset(self, X, y, sample_weight, model, random_state):
        # Rows of zero weight carry no likelihood: no algorithm may pick them.
        kept = np.flatnonzero(sample_weight > 0)
        if self.n_points > len(kept):
            raise ValueError(
                f"n_points={self.n_points} is larger than the number of samples "
                f"with positive sample_weight (n_samples={len(kept)})."
            )
        if len(kept) < len(y):
            X, y, sample_weight = X[kept], y[kept], sample_weight[kept]
        w, info = self._weights(
            self._vectors(X, y, sample_weight, model, random_state), random_state
        )
        self.n_iter_ = int(info.get("n_iter", 0))
        self.stop_reason_ = info.get("stop_reason", "size_reached")
        if self.projection is not None:
            self.hilbert_error_ = float(info["error"])
        idx = np.flatnonzero(w)
        # The vectors were scaled by the user's weights: a data point's weight is the product.
        return kept[idx], w[idx] * sample_weight[idx]

    def _vectors(self, X, y, sample_weight, model, random_state):
        """The (N, J) projection: Laplace fit, then random features."""
        Xd = model.design(X)
        self.laplace_ = laplace_approximation(
            model,
            Xd,
            y,
            sample_weight,
            design=True,
            subsample=self.laplace_subsample,
            random_state=random_state,
        )
        return project(
            self.laplace_.model,
            Xd,
            y,
            self.laplace_,
            projection=self.projection,
            n_projections=self.n_projections,
            dtype=np.dtype(self.dtype),
            sample_weight=sample_weight,
            random_state=random_state,
        )

    def _weights(self, vectors, random_state):
        raise NotImplementedError


class UniformCoreset(_HilbertCoreset):
    __doc__ = (
        """Uniform subsampling: M distinct points, each weighted N / M.

    The baseline every other method must beat. The projection is only computed to report
    ``hilbert_error_`` (set ``projection=None`` to skip it).
"""
        + _COMMON_DOC.replace(
            "projection : {'loglik', 'fisher'}, default='loglik'\n        Random features",
            "projection : {'loglik', 'fisher'} or None, default='loglik'\n        None skips "
            "the projection and ``hilbert_error_``. Otherwise the random features",
        )
        + """    replace : bool, default=False
        Draw with replacement (the formula of the papers: weights (N / M) count_n, possibly
        fewer than M distinct points) instead of M distinct points.
"""
        + _COMMON_ATTRS
    )

    _parameter_constraints: dict = {
        **_HilbertCoreset._parameter_constraints,
        "projection": [StrOptions(set(PROJECTIONS)), None],
        "replace": ["boolean"],
    }

    def __init__(
        self,
        n_points=100,
        *,
        model="auto",
        projection="loglik",
        n_projections=500,
        prior_scale=1.0,
        fit_intercept=True,
        laplace_subsample=None,
        dtype="float64",
        replace=False,
        progress=False,
        random_state=None,
    ):
        super().__init__(
            n_points,
            model=model,
            projection=projection,
            n_projections=n_projections,
            prior_scale=prior_scale,
            fit_intercept=fit_intercept,
            laplace_subsample=laplace_subsample,
            dtype=dtype,
            progress=progress,
            random_state=random_state,
        )
        self.replace = replace

    def _vectors(self, X, y, sample_weight, model, random_state):
        if self.projection is None:
            # Only the data's weights matter to the draw; no error is reported.
            return sample_weight[:, None]
        return super()._vectors(X, y, sample_weight, model, random_state)

    def _weights(self, vectors, random_state):
        return hilbert.uniform(
            vectors,
            self.n_points,
            replace=self.replace,
            random_state=random_state,
            return_info=True,
        )


class ImportanceCoreset(_HilbertCoreset):
    __doc__ = (
        """Hilbert importance sampling: draws proportional to the projection norms.

    p_n = ||v_n|| / sum_m ||v_m||; M draws with replacement; w_n = count_n / (M p_n).
"""
        + _COMMON_DOC
        + _COMMON_ATTRS
    )

    def _weights(self, vectors, random_state):
        return hilbert.importance(
            vectors, self.n_points, random_state=random_state, return_info=True
        )


class FrankWolfeCoreset(_HilbertCoreset):
    __doc__ = (
        """Hilbert coreset by Frank-Wolfe on the scaled simplex (Campbell & Broderick 2019).

    Iterates until the support reaches ``n_points`` or no step improves the fit.
"""
        + _COMMON_DOC
        + """    max_iter : int or None, default=None
        Iteration cap (None: the array function's default).
"""
        + _COMMON_ATTRS
    )

    _parameter_constraints: dict = {
        **_HilbertCoreset._parameter_constraints,
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        n_points=100,
        *,
        model="auto",
        projection="loglik",
        n_projections=500,
        prior_scale=1.0,
        fit_intercept=True,
        laplace_subsample=None,
        dtype="float64",
        max_iter=None,
        progress=False,
        random_state=None,
    ):
        super().__init__(
            n_points,
            model=model,
            projection=projection,
            n_projections=n_projections,
            prior_scale=prior_scale,
            fit_intercept=fit_intercept,
            laplace_subsample=laplace_subsample,
            dtype=dtype,
            progress=progress,
            random_state=random_state,
        )
        self.max_iter = max_iter

    def _weights(self, vectors, random_state):
        return hilbert.frank_wolfe(
            vectors, self.n_points, max_iter=self.max_iter, progress=self.progress, return_info=True
        )


class GIGACoreset(FrankWolfeCoreset):
    __doc__ = (
        """Greedy iterative geodesic ascent (Campbell & Broderick 2018).

    Climbs along great circles of the unit sphere toward the normalised target, then rescales
    optimally; its error falls geometrically with the size. Iterates until the support
    reaches ``n_points`` or the numerical limit stops it (see ``stop_reason_``).
"""
        + _COMMON_DOC
        + """    max_iter : int or None, default=None
        Iteration cap (None: the array function's default).
"""
        + _COMMON_ATTRS
    )

    def _weights(self, vectors, random_state):
        return hilbert.giga(
            vectors, self.n_points, max_iter=self.max_iter, progress=self.progress, return_info=True
        )


class IHTCoreset(_HilbertCoreset):
    __doc__ = (
        """Accelerated iterative hard thresholding: A-IHT, or A-IHT II with ``debias=True``.

    Projected gradient on ||y - Phi w||^2 over k-sparse non-negative w with momentum (Zhang,
    Khanna, Kyrillidis, Koyejo 2021).
"""
        + _COMMON_DOC
        + """    debias : bool, default=False
        A-IHT II: a de-biasing gradient step on the support after each thresholding.
    max_iter : int, default=300
        Iteration cap.
    batch_fraction : float in (0, 1] or None, default=None
        Stochastic variant: each gradient from a random fraction of the points.
"""
        + _COMMON_ATTRS
    )

    _parameter_constraints: dict = {
        **_HilbertCoreset._parameter_constraints,
        "debias": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "batch_fraction": [Interval(Real, 0, 1, closed="right"), None],
    }

    def __init__(
        self,
        n_points=100,
        *,
        model="auto",
        projection="loglik",
        n_projections=500,
        prior_scale=1.0,
        fit_intercept=True,
        laplace_subsample=None,
        dtype="float64",
        debias=False,
        max_iter=300,
        batch_fraction=None,
        progress=False,
        random_state=None,
    ):
        super().__init__(
            n_points,
            model=model,
            projection=projection,
            n_projections=n_projections,
            prior_scale=prior_scale,
            fit_intercept=fit_intercept,
            laplace_subsample=laplace_subsample,
            dtype=dtype,
            progress=progress,
            random_state=random_state,
        )
        self.debias = debias
        self.max_iter = max_iter
        self.batch_fraction = batch_fraction

    def _weights(self, vectors, random_state):
        return hilbert.iht(
            vectors,
            self.n_points,
            debias=self.debias,
            max_iter=self.max_iter,
            batch_fraction=self.batch_fraction,
            random_state=random_state,
            progress=self.progress,
            return_info=True,
        )


class OMPCoreset(_HilbertCoreset):
    __doc__ = (
        """Non-negative orthogonal matching pursuit.

    Adds the point most aligned with the residual, then re-solves non-negative least squares
    on the support (incrementally). Strong on logistic posteriors.
"""
        + _COMMON_DOC
        + _COMMON_ATTRS
    )

    def _weights(self, vectors, random_state):
        return hilbert.omp(vectors, self.n_points, progress=self.progress, return_info=True)
