"""MCMC for weighted GLM posteriors: preconditioned MALA in numba, and its diagnostics.

The sampler runs all chains inside one compiled call per chunk of steps; the posterior is the
Gaussian prior times the *weighted* likelihood ``prod_n p(y_n | x_n, theta)^{w_n}``, which is
how a coreset is used.
"""

from .._warnings import renamed
from ._diagnostics import diagnostics, ess_bulk, rank_normalize, split_rhat
from ._mala import (
    EXTRA_PRIOR,
    TARGET_ACCEPT,
    MALAResult,
    default_step_size,
    sample_mala,
)

__all__ = [
    "EXTRA_PRIOR",
    "TARGET_ACCEPT",
    "MALAResult",
    "default_step_size",
    "diagnostics",
    "ess_bulk",
    "rank_normalize",
    "sample_mala",
    "split_rhat",
]


def __getattr__(name):
    # EXTRA_PRIOR's name before 0.1, until 0.2 (PEP 562: a FutureWarning when read)
    if name == "EXTRA_LOG_PRIOR":
        return renamed("EXTRA_LOG_PRIOR", "EXTRA_PRIOR", EXTRA_PRIOR)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
