"""The warnings of the coreset estimators: a fit that completes but may not do what is asked."""


class CoresetSizeWarning(UserWarning):
    """A coreset size that cannot do what is asked of it.

    More points than the data has (the coreset is the whole data set), or fewer than the
    model's parameters (the coreset posterior is the prior's in the directions its points
    leave free, whatever the algorithm).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skcoreset.coreset import CoresetSizeWarning, UniformCoreset
    >>> X, y = np.random.default_rng(0).standard_normal((20, 2)), np.arange(20) % 2
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     coreset = UniformCoreset(n_points=50, projection=None).fit(X, y)
    >>> [w.category.__name__ for w in caught], coreset.n_points_
    (['CoresetSizeWarning'], 20)
    """


class CoresetQualityWarning(UserWarning):
    """A coreset whose posterior may be off in a way its construction cannot see.

    Issued by the KL methods (:class:`QuasiNewtonCoreset`, :class:`SparseVICoreset`,
    :class:`CoresetMCMC`) when their optimised weights end further from the data's Laplace
    fit than their start (the start is then kept); when the kept coreset's Laplace fit is at
    least 10 times as wide (in standard deviations) as the data's in some direction, or has
    no proper mode (its points leave a direction to the prior: separable, or too few points
    to identify every parameter); and on a model whose extra parameter is estimated (the
    Gaussian noise scale, the negative binomial dispersion, the gamma shape) when they
    estimate the full data's log-likelihood from a pool of its rows: the control variate
    that corrects that estimate is a Taylor expansion in the coefficients, and the coreset
    posterior of the extra parameter is the pool's. Measured on 20 000 rows (pools of
    10 000) at 100 points: 1-2 posterior sds from the full one, the coefficients within 0.12.
    With every row in the pool (``n_candidates`` at least the number of rows) the sums are
    exact; the Hilbert methods (:class:`OMPCoreset`, the default) draw it in their
    projections and keep its posterior.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skcoreset.coreset import CoresetQualityWarning, QuasiNewtonCoreset
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((3000, 2))
    >>> y = X @ [1.0, -0.5] + rng.standard_normal(3000)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     coreset = QuasiNewtonCoreset(
    ...         n_points=20, n_candidates=1000, model="gaussian", random_state=0
    ...     ).fit(X, y)
    >>> [w.category.__name__ for w in caught]
    ['CoresetQualityWarning']
    """


class CoresetCoverageWarning(UserWarning):
    """A coreset whose points leave a feature of the data unmeasured.

    A feature that varies in the data (with an intercept; without one, that is not zero in
    every row) but is constant over the coreset's points (zero, without an intercept): the
    coreset's log-likelihood says nothing about its coefficient, whose coreset posterior is
    then the prior's, however close the rest. Rare categories of one-hot features are the
    usual cause. Issued when the data's moments are known, which the default
    ``prior_scale='auto'`` measures.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skcoreset.coreset import CoresetCoverageWarning, UniformCoreset
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([rng.standard_normal(1000), np.arange(1000) == 0])
    >>> y = rng.integers(0, 2, 1000)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     coreset = UniformCoreset(n_points=20, projection=None, random_state=0).fit(X, y)
    >>> [w.category.__name__ for w in caught]
    ['CoresetCoverageWarning']
    """
