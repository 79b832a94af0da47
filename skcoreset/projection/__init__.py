"""Random projections of per-datum log-likelihoods (log-likelihood and Fisher features)."""

from ._projection import PROJECTIONS, Projection, project

__all__ = ["PROJECTIONS", "Projection", "project"]
