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
    """A coreset whose posterior is further from the data's than the sampler can tell apart.

    Every coreset estimator reports ``laplace_kl_``, the KL divergence of the Laplace fit of
    its weighted posterior to the data's (every parameter: the coefficients and a free extra
    parameter's log), and warns when it is above the target P (P + 3) / 80 000 nats for P
    parameters, a fifth of the Monte Carlo error of the default sampler's 4 000 draws
    (``coreset._quality.quality_target``): what MCMC on the coreset samples may then sit
    visibly off the full posterior. The message gives the figure and the remedy: more points
    for a fixed ``n_points``; for ``n_points='auto'``, the bound it stopped at; in a stream, a
    first call unlike the rest. The KL methods (:class:`QuasiNewtonCoreset`,
    :class:`SparseVICoreset`, :class:`CoresetMCMC`) also warn when their optimised weights
    end further from the data's Laplace fit than their start (the start is then kept), and
    when the kept coreset's Laplace fit is at least 10 times as wide (in standard deviations)
    as the data's in some direction, or has no proper mode (its points leave a direction to
    the prior).

    Examples
    --------
    >>> import warnings
    >>> from skcoreset.coreset import CoresetQualityWarning, UniformCoreset
    >>> from skcoreset.datasets import load_phishing
    >>> X, y = load_phishing(return_X_y=True)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     coreset = UniformCoreset(n_points=30, projection=None, random_state=0).fit(X, y)
    >>> [w.category.__name__ for w in caught], coreset.laplace_kl_ > 1.0
    (['CoresetQualityWarning'], True)
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
    ['CoresetQualityWarning', 'CoresetCoverageWarning']
    """
