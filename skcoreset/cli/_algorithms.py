"""The coreset algorithms by their command-line names, as estimators of :mod:`skcoreset.coreset`."""

import importlib

from ._errors import CommandError

#: name -> (label in tables, estimator of :mod:`skcoreset.coreset`, fixed parameters). The
#: estimators are named, and imported only to build one (the help and --version stay fast).
#: The Hilbert methods all take a random projection of the log-likelihood; sensitivity
#: sampling is for logistic models; the KL methods optimise the weights with draws from the
#: coreset posterior.
ALGORITHMS = {
    "uniform": ("uniform", "UniformCoreset", {}),
    "importance": ("importance", "ImportanceCoreset", {}),
    "frank-wolfe": ("Frank-Wolfe", "FrankWolfeCoreset", {}),
    "giga": ("GIGA", "GIGACoreset", {}),
    "a-iht": ("A-IHT", "IHTCoreset", {}),
    "a-iht-ii": ("A-IHT II", "IHTCoreset", {"debias": True}),
    "omp": ("OMP", "OMPCoreset", {}),
    "sensitivity": ("sensitivity", "SensitivityCoreset", {}),
    "qnc": ("QNC", "QuasiNewtonCoreset", {}),
    "sparse-vi": ("SparseVI", "SparseVICoreset", {}),
    "coreset-mcmc": ("Coreset MCMC", "CoresetMCMC", {}),
}

#: The algorithms that work on a random projection (and report ``hilbert_error_``).
_PROJECTED = {"uniform", "importance", "frank-wolfe", "giga", "a-iht", "a-iht-ii", "omp"}

#: One line per algorithm, for ``--help``.
DESCRIPTIONS = {
    "uniform": "uniform subsampling, weights N/M (the baseline)",
    "importance": "Hilbert importance sampling (draws proportional to projection norms)",
    "frank-wolfe": "Frank-Wolfe on the projected log-likelihood (Campbell & Broderick 2019)",
    "giga": "greedy iterative geodesic ascent (Campbell & Broderick 2018)",
    "a-iht": "accelerated iterative hard thresholding (Zhang et al. 2021)",
    "a-iht-ii": "A-IHT with a de-biasing step (Zhang et al. 2021)",
    "omp": "non-negative orthogonal matching pursuit",
    "sensitivity": "sensitivity sampling (Huggins et al. 2016; logistic model only)",
    "qnc": "quasi-Newton steps on the KL, from the OMP coreset (Naik et al. 2022)",
    "sparse-vi": "greedy sparse variational coreset (Campbell & Beronov 2019)",
    "coreset-mcmc": "weights learned by MCMC chains on the coreset (Chen & Campbell 2024)",
}


def label(name):
    """How tables and plots name the algorithm ``name``."""
    return ALGORITHMS[name][0]


def is_hilbert(name):
    """Whether ``name`` works on a random projection (and reports ``hilbert_error_``)."""
    return name in _PROJECTED


def make_coreset(name, n_points, *, model, **options):
    """The unfitted estimator of the algorithm ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`ALGORITHMS`.
    n_points : int
        The coreset size.
    model : str
        The likelihood: a name of ``skcoreset.models.MODEL_NAMES``.
    **options
        Estimator parameters; those set to None are left at the estimator's default, and
        ``n_projections`` is refused for sensitivity sampling, which has no projection.

    Returns
    -------
    estimator : BaseCoreset
    """
    text, estimator, fixed = ALGORITHMS[name]
    cls = getattr(importlib.import_module("..coreset", __package__), estimator)
    params = {key: value for key, value in options.items() if value is not None}
    if name == "sensitivity" and model != "logistic":
        raise CommandError(
            f"sensitivity sampling is for the logistic model only, not {model!r}; "
            "choose another --algorithm"
        )
    if not is_hilbert(name) and "n_projections" in params:
        raise CommandError(f"--n-projections does not apply to {text}, which has no projection")
    if name != "sensitivity":
        params["model"] = model
    return cls(n_points, **fixed, **params)
