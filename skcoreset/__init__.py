"""skcoreset: Bayesian coresets for scikit-learn.

The subpackages in layers, lowest first; a module imports its own layer and those below,
never above (``tests/test_layering.py``): ``datasets`` (data) and ``models`` (likelihoods,
Laplace fits) -> ``projection`` (random features), ``hilbert`` (weight algorithms on arrays),
``sampler`` (MCMC on a weighted posterior), ``metrics`` and ``export`` (a model in the
probabilistic programming languages) -> ``coreset`` (estimators that select a weighted subset)
and ``linear_model`` (Bayesian estimators that sample the ``sampler``'s posterior, of a
coreset or of all rows) -> ``compose`` -> ``pipeline`` and the command line.

The subpackages and the estimators below are imported on first use (PEP 562), so that
``import skcoreset`` and the command line's ``--help`` and ``--version`` do not wait for
scikit-learn, SciPy and numba.
"""

from ._lazy import lazy_attributes
from .coreset._registry import ESTIMATORS as _CORESETS

__version__ = "0.1.0.dev0"

_SUBPACKAGES = (
    "compose",
    "coreset",
    "datasets",
    "hilbert",
    "linear_model",
    "metrics",
    "models",
    "pipeline",
    "projection",
    "sampler",
)

#: public name -> the subpackage it comes from (the coreset estimators from their registry)
_ESTIMATORS = {
    **dict.fromkeys(_CORESETS, "coreset"),
    "BayesianGLM": "linear_model",
    "BayesianGammaRegression": "linear_model",
    "BayesianLinearRegression": "linear_model",
    "BayesianLogisticRegression": "linear_model",
    "BayesianMultilevelRegression": "linear_model",
    "BayesianNegativeBinomialRegression": "linear_model",
    "BayesianPoissonRegression": "linear_model",
    "BayesianStudentTRegression": "linear_model",
    "CoresetClassifier": "compose",
    "CoresetRegressor": "compose",
}

__all__ = sorted(_ESTIMATORS) + ["__version__"] + list(_SUBPACKAGES)


__getattr__, __dir__ = lazy_attributes(__name__, globals(), _ESTIMATORS, _SUBPACKAGES)
