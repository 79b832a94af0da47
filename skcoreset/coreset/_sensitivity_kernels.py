"""Numba kernels of the sensitivity bound for logistic regression (Huggins et al. 2016, Lemma 3.1).

Notation: ``Z[n] = y_n * x_n`` (y in {-1, +1}, the intercept column included), ``s[n] >= 0`` the
sample weights, ``labels[n]`` the cluster of n, ``W_i`` the total weight of cluster i and
``Zbar_i`` its weighted mean.

The bound of point n on the ball ``||theta - theta0|| <= R`` is

    m_n = S / (s_n + sum_i W_i^(-n) exp(-max(0, c_in * a_in))),
    a_in = (Zbar_i - Z_n) . theta0 + R ||Zbar_i - Z_n||

with S = sum s, ``W_i^(-n) = W_i - s_n [n in G_i]`` and ``c_in = 1`` for the other clusters. For
n's own cluster the exact (leave-one-out) bound uses the mean of G_i without n,
``Zbar_i^(-n) = (W_i Zbar_i - s_n Z_n) / (W_i - s_n)``, and since

    Zbar_i^(-n) - Z_n = W_i / (W_i - s_n) * (Zbar_i - Z_n)

the leave-one-out exponent is the full-cluster one times ``c_in = W_i / (W_i - s_n)``: the exact
bound costs no more than the approximate one (``c_in = 1``, full-cluster mean), which is not a
guaranteed bound but differs from it only by O(1/|G_i|) in one exponent. With unit weights and
theta0 = 0 this is the paper's ``N / (1 + sum_i |G_i^(-n)| exp(-R ||Zbar_i^(-n) - Z_n||))``.
The derivation is in ``_sensitivity.py``.

All inputs are C-contiguous float64 (labels int64); the caller's arrays are never written.
"""

import math

import numpy as np
from numba import njit


@njit(cache=True)
def cluster_stats(Z, s, labels, n_clusters):
    """Total weight and weighted mean of each cluster, one pass over the data.

    Returns
    -------
    W : ndarray of shape (k,)
        Sum of ``s`` over each cluster (0 for an empty cluster).
    means : ndarray of shape (k, P)
        Weighted means (zeros for a cluster of zero weight).
    """
    N, P = Z.shape
    W = np.zeros(n_clusters)
    sums = np.zeros((n_clusters, P))
    for n in range(N):
        i = labels[n]
        sn = s[n]
        W[i] += sn
        for d in range(P):
            sums[i, d] += sn * Z[n, d]
    means = np.zeros((n_clusters, P))
    for i in range(n_clusters):
        if W[i] > 0.0:
            for d in range(P):
                means[i, d] = sums[i, d] / W[i]
    return W, means


@njit(cache=True)
def sensitivity_bound(Z, s, labels, W, means, theta0, radius, exact):
    """Per-point sensitivity bound ``m_n`` (Lemma 3.1, optionally on a ball centred at theta0).

    Parameters
    ----------
    Z : ndarray of shape (N, P)
        ``y_n * x_n`` rows, float64, C-contiguous.
    s : ndarray of shape (N,)
        Non-negative sample weights.
    labels : ndarray of shape (N,), int64
        Cluster of each point, in ``0 .. k-1``.
    W, means : ndarrays of shapes (k,) and (k, P)
        From :func:`cluster_stats`.
    theta0 : ndarray of shape (P,)
        Centre of the parameter ball (zeros for the paper's ball at the origin).
    radius : float
        Radius R of the ball.
    exact : bool
        Leave-one-out means for the own cluster (a guaranteed bound) or full-cluster means.

    Returns
    -------
    m : ndarray of shape (N,)
        The bound, normalised so that a uniform data set gives m_n = 1 (``m_n <= S / s_n``);
        zero for points of zero weight.
    """
    N, P = Z.shape
    k = W.shape[0]
    S = 0.0
    for n in range(N):
        S += s[n]
    m = np.zeros(N)
    for n in range(N):
        sn = s[n]
        if sn <= 0.0:
            continue
        own = labels[n]
        denom = sn
        for i in range(k):
            Wi = W[i]
            count = Wi - sn if i == own else Wi
            # A cluster holding only n (or only zero-weight points besides n) contributes nothing;
            # the relative threshold absorbs the rounding of the weight sums.
            if count <= 1e-12 * Wi or count <= 0.0:
                continue
            sq = 0.0
            shift = 0.0
            for d in range(P):
                diff = means[i, d] - Z[n, d]
                sq += diff * diff
                shift += diff * theta0[d]
            arg = shift + radius * math.sqrt(sq)
            if exact and i == own:
                arg *= Wi / count
            if arg < 0.0:
                # log phi is decreasing: a cluster mean with a larger margin than Z_n everywhere
                # on the ball only gives a ratio phi(Zbar.theta)/phi(Z_n.theta) >= 1.
                arg = 0.0
            denom += count * math.exp(-arg)
        m[n] = S / denom
    return m
