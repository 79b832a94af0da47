"""Hilbert coresets on arrays: the low-level API behind the coreset estimators.

Every function takes an (N, J) matrix whose rows are the vectors v_n (doc/algorithms.md
section 1; float64 or float32 storage, never modified) and returns a float64 weight vector w
of length N with w >= 0 and at most ``n_points`` nonzeros, such that Phi w = sum_n w_n v_n
approximates the target y (default: the sum of the rows).  With ``return_info=True`` they
return ``(w, info)``; ``info`` has at least ``n_iter``, ``stop_reason``, ``error`` (the
relative Hilbert error ||Phi w - y|| / ||y||) and ``n_support``.

Functions
---------
uniform, importance
    Sampling baselines.
frank_wolfe, giga
    Greedy geometric methods (Campbell & Broderick).
iht
    A-IHT and A-IHT II (Zhang et al.), optionally stochastic.
omp
    Non-negative orthogonal matching pursuit.
"""

from ._greedy import frank_wolfe, giga
from ._iht import iht
from ._omp import omp
from ._sampling import importance, uniform

__all__ = ["frank_wolfe", "giga", "importance", "iht", "omp", "uniform"]
