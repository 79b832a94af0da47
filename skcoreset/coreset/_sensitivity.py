"""Sensitivity-based coresets for logistic regression (Huggins, Campbell & Broderick 2016).

Derivation of the bound (the ball centred at theta0; the paper's ball is theta0 = 0)
------------------------------------------------------------------------------------
Write phi(s) = log(1 + exp(-s)), Z_n = y_n x_n (y in {-1, +1}, the intercept a column of ones of
x), s_n >= 0 the sample weights, S = sum_n s_n and the weighted log-likelihood
-sum_n s_n phi(Z_n . theta). The (normalised, per unit of weight) sensitivity of point n on
Theta = {||theta - theta0|| <= R} is

    sigma_n = sup_Theta S phi(Z_n.theta) / sum_m s_m phi(Z_m.theta)
            = sup_Theta S / (s_n + sum_{m != n} s_m phi(Z_m.theta) / phi(Z_n.theta)).

Two facts about phi:
(i)  phi is convex, so for every cluster G_i with the weight W_i^(-n) and weighted mean
     Zbar_i^(-n) of G_i \\ {n}:
         sum_{m in G_i \\ n} s_m phi(Z_m.theta) >= W_i^(-n) phi(Zbar_i^(-n).theta)   (Jensen);
(ii) log phi is decreasing with slope in (-1, 0) (phi'/phi = -t/((1+t) log(1+t)) with t = e^-s,
     and t/(1+t) <= log(1+t)), so phi(a)/phi(b) >= exp(-max(0, a - b)).
With a - b = (Zbar_i^(-n) - Z_n).theta and theta = theta0 + u, ||u|| <= R,

    max_Theta (Zbar_i^(-n) - Z_n).theta = (Zbar_i^(-n) - Z_n).theta0 + R ||Zbar_i^(-n) - Z_n||,

hence  sigma_n <= m_n = S / (s_n + sum_i W_i^(-n) exp(-max(0, (Zbar_i^(-n) - Z_n).theta0
                                                            + R ||Zbar_i^(-n) - Z_n||))).

With unit weights and theta0 = 0 this is Lemma 3.1 of the paper. The shift (Zbar - Z_n).theta0 is
what the centred ball gains: a point whose margin Z_n.theta0 at the centre exceeds its clusters'
gets a small bound, a misclassified one a large bound; at the same R the origin ball instead
needs R large enough to reach the posterior at all. The weights enter as multiplicities: for
integer s the bound is that of the data set with row n repeated s_n times, with all copies of n
left out of their cluster, and it is invariant to rescaling s.

Sampling: p_n = s_n m_n / sum_m s_m m_m, K ~ Multinomial(M, p), w_n = s_n K_n / (M p_n), so that
E[sum_n w_n phi(Z_n.theta)] = sum_n s_n phi(Z_n.theta) for every theta. The mean sensitivity
mbar = sum_n s_n m_n / S is the paper's mean for unit weights; Algorithm 1's size is
M = ceil(c mbar / eps^2 ((P + 1) log mbar + log(1 / delta))) with P the parameter dimension.
"""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits

from .._logging import phase
from .._sklearn_compat import Interval, StrOptions
from .._warnings import warn
from ..models import laplace_approximation
from . import _sensitivity_kernels as kernels
from ._base import BaseCoreset, CoresetSizeWarning
from ._merge_reduce import Node

# Rows of the Laplace fit that centres the ball: the centre only needs to be near the MAP.
_LAPLACE_SUBSAMPLE = 20_000


def sensitivity_coreset_size(epsilon, delta, n_features, mean_sensitivity, c=4.0):
    """Coreset size of Algorithm 1 of Huggins, Campbell & Broderick (2016).

    ``M = ceil(c * mbar / epsilon^2 * ((D + 1) * log(mbar) + log(1 / delta)))``: with M draws of
    sensitivity sampling the coreset log-likelihood is within a factor (1 +- epsilon) of the
    full one on the whole parameter ball, with probability at least 1 - delta.

    Parameters
    ----------
    epsilon : float
        Relative error, > 0.
    delta : float
        Failure probability, in (0, 1).
    n_features : int
        Dimension D of the parameter (count the intercept if there is one).
    mean_sensitivity : float
        Mean sensitivity bound mbar (>= 1 for any valid bound), e.g.
        ``SensitivityCoreset.mean_sensitivity_``.
    c : float, default=4.0
        The constant of the bound (4 in the authors' code).

    Returns
    -------
    n_draws : int
        The number of draws M (the number of distinct points is at most M).

    Examples
    --------
    >>> from skcoreset.coreset import sensitivity_coreset_size
    >>> sensitivity_coreset_size(0.1, 0.05, 11, 2.0)
    9051
    """
    for name, value in (
        ("epsilon", epsilon),
        ("delta", delta),
        ("mean_sensitivity", mean_sensitivity),
        ("c", c),
    ):
        if isinstance(value, bool) or not isinstance(value, Real) or not np.isfinite(value):
            raise TypeError(f"{name} must be a finite real number, got {value!r}.")
    if epsilon <= 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}.")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}.")
    if isinstance(n_features, bool) or not isinstance(n_features, Integral) or n_features < 1:
        raise ValueError(f"n_features must be a positive integer, got {n_features!r}.")
    # Every valid bound has mean >= 1 (the sensitivities of any theta sum to N); allow rounding.
    if mean_sensitivity < 1.0 - 1e-9:
        raise ValueError(
            f"mean_sensitivity must be >= 1 (a sensitivity bound's mean), got {mean_sensitivity!r}."
        )
    if c <= 0:
        raise ValueError(f"c must be > 0, got {c!r}.")
    mbar = max(float(mean_sensitivity), 1.0)
    size = c * mbar / epsilon**2 * ((n_features + 1) * math.log(mbar) + math.log(1.0 / delta))
    return max(int(math.ceil(size)), 1)


def _default_kmeans_subsample(n_samples, n_clusters):
    # The authors' min(1000 k, 2.5 % of N), but never fewer than 50 points per cluster: on small
    # data sets 2.5 % is a handful of points (then the whole data set is clustered).
    paper = min(1000 * n_clusters, math.ceil(0.025 * n_samples))
    return min(n_samples, max(paper, 50 * n_clusters))


class SensitivityCoreset(BaseCoreset):
    """Sensitivity-sampling coreset for Bayesian logistic regression.

    Importance sampling of data points with probabilities proportional to an upper bound on
    their sensitivity (their largest relative contribution to the log-likelihood over a ball of
    parameters), computed from a k-means clustering of the vectors ``Z_n = y_n x_n`` (Huggins,
    Campbell & Broderick 2016, Lemma 3.1 and Algorithm 1). The derivation of the bound, also for
    a ball centred at the Laplace mean and for sample weights, is in the module docstring.

    Parameters
    ----------
    n_points : int, 'auto' or None, default='auto'
        Number of importance draws M (with replacement). Repeated draws are merged into one row,
        so the coreset has ``n_points_ <= n_points`` distinct points. ``None``: size the coreset
        from ``epsilon`` and ``delta`` with :func:`sensitivity_coreset_size`.
        'auto': enough points to pin down the posterior's mean and covariance,
        (P + 1)(P + 2) / 2 for P parameters (features plus intercept), between 100 and
        500.
    n_clusters : int, default=4
        Number k of k-means clusters of the ``Z_n``.
    radius : float or None, default=None
        Radius R of the parameter ball. ``None``: ``radius_scale / sqrt(inertia)``, with
        ``inertia`` the k-means mean squared distance of a point to its centre (on the k-means
        subsample, weighted by ``sample_weight``).
    radius_scale : float, default=3.0
        The factor a of the radius heuristic.
    center : {'origin', 'laplace'}, default='origin'
        Centre of the ball: the origin (the paper) or the mean of a Laplace approximation of the
        posterior (fitted on at most 20 000 rows), which tightens the bound for well-fitted
        points.
    exact : bool, default=True
        Leave-one-out cluster means (a guaranteed bound) or full-cluster means (the common
        approximation; it differs by a factor ``|G| / (|G| - 1)`` in one exponent and costs the same
        here).
    kmeans_subsample : int or None, default=None
        Points used to fit k-means (all points are then assigned). ``None``:
        ``min(1000 k, ceil(0.025 N))``, but at least ``min(N, 50 k)``.
    epsilon, delta : float or None, default=None
        Target relative error and failure probability of Algorithm 1's size bound; both are
        needed when ``n_points=None`` and neither is allowed otherwise. If the bound exceeds
        the number of points with positive weight, a :class:`CoresetSizeWarning` is issued and
        the coreset is the whole data set with its own weights (an exact coreset, smaller than
        the required sample); ``n_draws_`` is then 0.
    prior_scale : float, default=1.0
        Prior standard deviation of the Laplace fit (``center='laplace'`` only).
    fit_intercept : bool, default=True
        Whether ``x_n`` gets a trailing column of ones (the intercept is then part of the
        parameter, the ball and the clustering).
    block_size : int or 'auto', default='auto'
        Rows per block: each block gets its own sensitivity coreset and the block coresets
        are merged (merge-reduce), so memory stays bounded. 'auto' makes a block about
        128 MB (about 500 000 rows of 10 features).
    progress : bool, default=False
        Show a tqdm progress bar of the blocks (needs the optional tqdm).
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means subsample and initialisation, the Laplace subsample and the draws.
    verbose : int, default=0
        Print the phases of the fit (k-means, Laplace fit, sensitivity bounds, draws) with
        their durations when positive; 2 also prints the phases of every block and merge of a
        large fit. They are always logged to the ``skcoreset`` logger (INFO, and DEBUG for the
        per-block phases).

    Attributes
    ----------
    sample_indices_ : ndarray of shape (M,)
        Sorted indices of the distinct selected rows.
    sample_weight_ : ndarray of shape (M,)
        Their weights ``s_n K_n / (M p_n)`` (duplicates merged).
    n_points_ : int
        Number of distinct selected rows.
    n_draws_ : int
        Number of importance draws M (0 if the whole data set was returned).
    laplace_ : LaplaceApproximation
        The data's Laplace fit, which ``laplace_kl_`` measures against.
    laplace_kl_ : float
        The coreset's quality: the KL divergence, in nats, of the Laplace fit of its
        posterior to the data's (``laplace_``), every parameter included (a free extra
        parameter's log too), under the data's prior; 0 when every row is kept, inf when
        its posterior has no proper Laplace fit. Above P (P + 3) / 80 000 for P parameters,
        a fifth of the default sampler's Monte Carlo error, the fit warns
        (:class:`CoresetQualityWarning`).
    sensitivities_ : ndarray of shape (n_samples,)
        The bound m_n of every row, normalised so that uniform data give 1 (0 for zero
        weight). For a fit in several blocks this and the other attributes of the bound
        (``labels_``, ``cluster_centers_``, ...) describe the last reduction, whose rows are
        the merged block coresets.
    mean_sensitivity_ : float
        Weighted mean ``sum s_n m_n / sum s_n`` (the paper's mbar).
    radius_ : float
        The radius R used.
    center_ : ndarray of shape (n_params,)
        The centre theta0 of the ball (zeros for ``center='origin'``).
    cluster_centers_ : ndarray of shape (n_clusters, n_params)
        Weighted means of the ``Z_n`` of each cluster after assigning all points (the k-means
        centre for a cluster left empty).
    cluster_sizes_ : ndarray of shape (n_clusters,)
        Total sample weight in each cluster (the number of points without weights).
    labels_ : ndarray of shape (n_samples,)
        Cluster of every row (``KMeans.predict`` of the k-means fitted on the subsample;
        -1 for rows of zero weight).
    size_bound_ : int or None
        Algorithm 1's size when sized by ``(epsilon, delta)``, else None.
    model_ : str
        Always ``'logistic'``.
    n_features_in_ : int
        Number of features seen in fit.

    Notes
    -----
    Cost: k-means on the subsample, then O(N k D) for the assignment and the bound. The
    approximation guarantee holds uniformly on the ball; the posterior may well put mass outside
    it, so the practical quality is that of a well-targeted importance sampler. With the origin
    ball and the radius heuristic the mean sensitivity stays roughly constant as N grows (the
    paper's finding); with ``center='laplace'`` it grows with N (measured: 155, 646, 1579 at
    N = 10^3, 10^4, 10^5 on the paper's Mixture data), because points misfitted at the centre keep
    bounds near S / s_n, while the sampling concentrates on exactly those points.

    References
    ----------
    J. Huggins, T. Campbell and T. Broderick. Coresets for scalable Bayesian logistic regression.
    NeurIPS 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.coreset import SensitivityCoreset
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> y = (X[:, 0] + rng.logistic(size=2000) > 0).astype(float)
    >>> cs = SensitivityCoreset(n_points=200, random_state=0).fit(X, y)
    >>> cs.n_points_ <= 200, cs.sensitivities_.shape
    (True, (2000,))
    """

    # The bound is specific to the logistic likelihood.
    __skcoreset_model__ = "logistic"

    _parameter_constraints: dict = {
        **{k: v for k, v in BaseCoreset._parameter_constraints.items() if k != "model"},
        # None: the size follows from (epsilon, delta)
        "n_points": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}), None],
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "radius": [Interval(Real, 0, None, closed="left"), None],
        "radius_scale": [Interval(Real, 0, None, closed="neither")],
        "center": [StrOptions({"origin", "laplace"})],
        "exact": ["boolean"],
        "kmeans_subsample": [Interval(Integral, 1, None, closed="left"), None],
        "epsilon": [Interval(Real, 0, None, closed="neither"), None],
        "delta": [Interval(Real, 0, 1, closed="neither"), None],
    }

    def __init__(
        self,
        n_points="auto",
        *,
        n_clusters=4,
        radius=None,
        radius_scale=3.0,
        center="origin",
        exact=True,
        kmeans_subsample=None,
        epsilon=None,
        delta=None,
        prior_scale="auto",
        fit_intercept=True,
        block_size="auto",
        progress=False,
        random_state=None,
        verbose=0,
    ):
        self.n_points = n_points
        self.n_clusters = n_clusters
        self.radius = radius
        self.radius_scale = radius_scale
        self.center = center
        self.exact = exact
        self.kmeans_subsample = kmeans_subsample
        self.epsilon = epsilon
        self.delta = delta
        self.prior_scale = prior_scale
        self.fit_intercept = fit_intercept
        self.block_size = block_size
        self.progress = progress
        self.random_state = random_state
        self.verbose = verbose

    def _check_params(self):
        # n_points=None sizes the coreset by the (epsilon, delta) bound instead.
        sized_by_bound = self.n_points is None
        if sized_by_bound and (self.epsilon is None or self.delta is None):
            raise ValueError("n_points=None needs both epsilon and delta to size the coreset.")
        if not sized_by_bound and (self.epsilon is not None or self.delta is not None):
            raise ValueError(
                "Give either n_points or (epsilon, delta), not both: set n_points=None to size "
                "the coreset by epsilon and delta."
            )

    def _reduce(self, node, context, random_state):
        idx, weights, bound = self._sample(
            node.X, node.y, node.weights, context.model, random_state
        )
        # the bound's attributes describe the last reduction: they travel with its coreset
        bound["rows"] = node.indices
        return Node(node.indices[idx], weights, node.X[idx], node.y[idx], info=bound)

    def _finish(self, node, context):
        bound = _last_bound(node.info)
        if bound is None:  # every row kept (no bound was computed)
            return {"n_draws_": 0, "size_bound_": None}
        rows = bound.pop("rows")
        if self._single_block:
            # One block: the per-row attributes cover every row of the data.
            n = self.n_samples_seen_
            m = np.zeros(n)
            m[rows] = bound["sensitivities_"]
            labels = np.full(n, -1, dtype=bound["labels_"].dtype)
            labels[rows] = bound["labels_"]
            bound["sensitivities_"], bound["labels_"] = m, labels
        return bound

    def _sample(self, X, y, sample_weight, model, random_state):
        """``(indices, weights, bound)``: the sensitivity bounds of the rows, then the draws;
        ``bound`` holds the fitted attributes that describe them."""
        s = np.ascontiguousarray(sample_weight, dtype=np.float64)
        positive = np.flatnonzero(s > 0)
        if self.n_clusters > positive.shape[0]:
            raise ValueError(
                f"n_clusters={self.n_clusters} is larger than the number of samples with positive "
                f"weight ({positive.shape[0]})."
            )
        # Z_n = y_n x_n with y in {-1, +1}; design() may return X itself, so never scale in place.
        Z = np.ascontiguousarray(model.design(X) * (2.0 * y - 1.0)[:, None])
        level = self._block_level()
        with phase(self, f"k-means: {self.n_clusters} clusters of {len(positive)} rows", level):
            km, sub, labels = self._cluster(Z, s, positive, random_state)
        W, means = kernels.cluster_stats(Z, s, labels, km.n_clusters)
        radius = self._radius(km, Z, s, sub)
        theta0 = self._center(X, y, s, model, random_state, Z.shape[1])
        with phase(self, f"sensitivity bounds of {len(positive)} rows", level):
            m = kernels.sensitivity_bound(Z, s, labels, W, means, theta0, radius, bool(self.exact))
        if not np.all(np.isfinite(m)):
            raise ValueError(
                "The sensitivity bounds are not finite (the distances between "
                "points overflowed); check the scale of X, e.g. standardise it."
            )
        mbar = float((s * m).sum() / s.sum())
        centers = means.copy()
        empty = W <= 0
        centers[empty] = km.cluster_centers_[empty]
        n_draws, size_bound = self._n_draws(mbar, Z.shape[1], positive.shape[0])
        bound = {
            "sensitivities_": m,
            "mean_sensitivity_": mbar,
            "radius_": radius,
            "center_": theta0,
            "cluster_centers_": centers,
            "cluster_sizes_": W,
            "labels_": labels,
            "n_draws_": n_draws,
            "size_bound_": size_bound,
        }
        if n_draws == 0:
            return positive, s[positive], bound
        return *self._draw(s, m, n_draws, random_state), bound

    def _cluster(self, Z, s, positive, rng):
        """k-means++ on a subsample of the positive-weight points, then every point assigned."""
        n_pos = positive.shape[0]
        k = int(self.n_clusters)
        if self.kmeans_subsample is None:
            n_sub = _default_kmeans_subsample(n_pos, k)
        else:
            n_sub = min(int(self.kmeans_subsample), n_pos)
            if n_sub < k:
                raise ValueError(
                    f"kmeans_subsample={self.kmeans_subsample} must be at least n_clusters={k}."
                )
        sub = (
            positive if n_sub >= n_pos else np.sort(rng.choice(positive, size=n_sub, replace=False))
        )
        km = KMeans(n_clusters=k, init="k-means++", n_init=3, random_state=rng)
        # One thread: the problem is tiny (<= 1000 k points to fit, O(N k D) to assign) and
        # OpenMP barriers made it many times slower on a loaded machine (measured:
        # benchmarks/README.md, Thresholds).
        with threadpool_limits(limits=1, user_api="openmp"):
            km.fit(Z[sub], sample_weight=s[sub])
            labels = np.ascontiguousarray(km.predict(Z), dtype=np.int64)
        return km, sub, labels

    def _radius(self, km, Z, s, sub):
        """R: given, or ``radius_scale / sqrt(mean squared distance to the k-means centres)``."""
        if self.radius is not None:
            return float(self.radius)
        mean_sq = km.inertia_ / s[sub].sum()
        if not mean_sq > 0:
            # Every subsampled point sits on its centre (at most k distinct points): fall back
            # to the spread around the overall mean, or 1 if all points coincide.
            zs = Z[sub]
            centred = zs - np.average(zs, axis=0, weights=s[sub])
            mean_sq = float(np.average(np.sum(centred**2, axis=1), weights=s[sub]))
            if not mean_sq > 0:
                mean_sq = 1.0
        return float(self.radius_scale) / math.sqrt(mean_sq)

    def _center(self, X, y, s, model, rng, n_params):
        """theta0: the origin, or the mean of a Laplace fit on at most 20 000 rows."""
        if self.center != "laplace":
            return np.zeros(n_params)
        sub_la = _LAPLACE_SUBSAMPLE if X.shape[0] > _LAPLACE_SUBSAMPLE else None
        with phase(self, "Laplace fit (the centre of the bound)", self._block_level()):
            approx = laplace_approximation(model, X, y, s, subsample=sub_la, random_state=rng)
        return np.ascontiguousarray(approx.mean, dtype=np.float64)

    def _n_draws(self, mbar, n_params, n_pos):
        """``(M, size_bound)``: ``n_points`` draws, or Algorithm 1's bound (M = 0: the bound
        covers the whole data, which is kept)."""
        if self.n_points is not None:
            return int(self._target_size), None
        bound = sensitivity_coreset_size(self.epsilon, self.delta, n_params, mbar)
        if bound >= n_pos:
            warn(
                f"The (epsilon={self.epsilon}, delta={self.delta}) bound asks for {bound} "
                f"draws, not fewer than the {n_pos} points with positive weight: returning the "
                "whole data set (an exact coreset).",
                CoresetSizeWarning,
            )
            return 0, bound
        return bound, bound

    @staticmethod
    def _draw(s, m, n_draws, rng):
        """Multinomial draws with p_n proportional to s_n m_n; weights s_n K_n / (M p_n)."""
        sm = s * m
        sum_sm = sm.sum()
        counts = rng.multinomial(n_draws, sm / sum_sm)
        idx = np.flatnonzero(counts)
        # w_n = s_n K_n / (M p_n) = K_n sum(s m) / (M m_n): no division by a small s_n.
        weights = counts[idx] * (sum_sm / (n_draws * m[idx]))
        return idx, weights


def _last_bound(info):
    """The attributes of the last reduction under a node (a copy), or None: a union of
    coresets small enough to keep whole reports its parts', the last one's reduction."""
    if info is None:
        return None
    if "union_of" in info:
        for part in reversed(info["union_of"]):
            bound = _last_bound(part)
            if bound is not None:
                return bound
        return None
    return dict(info) if "rows" in info else None
