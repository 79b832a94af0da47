"""The bundled Phishing data and synthetic generators for the three likelihoods."""

from ._base import load_phishing
from ._synthetic import (
    make_linear_regression,
    make_logistic_regression,
    make_poisson_regression,
)

__all__ = [
    "load_phishing",
    "make_linear_regression",
    "make_logistic_regression",
    "make_poisson_regression",
]
