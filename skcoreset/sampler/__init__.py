"""MCMC for weighted GLM posteriors: preconditioned MALA in numba, and its diagnostics.

The sampler runs all chains inside one compiled call per chunk of steps; the posterior is the
Gaussian prior times the *weighted* likelihood ``prod_n p(y_n | x_n, theta)^{w_n}``, which is
how a coreset is used.
"""

from ._diagnostics import diagnostics, ess_bulk, rank_normalize, split_rhat
from ._mala import (
    EXTRA_LOG_PRIOR,
    TARGET_ACCEPT,
    MALAResult,
    default_step_size,
    sample_mala,
)

__all__ = [
    "EXTRA_LOG_PRIOR",
    "TARGET_ACCEPT",
    "MALAResult",
    "default_step_size",
    "diagnostics",
    "ess_bulk",
    "rank_normalize",
    "sample_mala",
    "split_rhat",
]
