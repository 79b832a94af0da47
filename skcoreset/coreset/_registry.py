"""The coreset algorithms, one entry each: the list that the package's exports, the command
line's choices and help, the estimator checks and the API reference are read from (or, for
the API page, checked against).

A module free of heavy imports, as ``models._names`` is for the models, so that ``import
skcoreset`` and the command line's ``--help`` do not load scikit-learn, SciPy and numba: an
entry names its class, which is imported when it is used. What a class says of itself is not
written here again: whether an algorithm works on a random projection is whether its class
takes ``projection``, and the one model it is for, if any, is its class's
``__skcoreset_model__`` (a description that names that model is checked against it in
``tests/test_registry.py``). Adding an algorithm is its class and one entry here.
"""

import importlib


class Algorithm:
    """A coreset algorithm: an estimator of :mod:`skcoreset.coreset` with fixed parameters.

    A plain class, not a dataclass: :mod:`dataclasses` would import :mod:`inspect`, which
    alone would multiply the time ``import skcoreset`` takes.

    Parameters
    ----------
    name : str
        Its name on the command line.
    label : str
        Its name in tables and plots.
    estimator : str
        The class.
    module : str
        The module of :mod:`skcoreset.coreset` that defines the class.
    description : str
        One line for the command line's help.
    params : dict, default=None
        Parameters the algorithm fixes (A-IHT II is ``IHTCoreset(debias=True)``).
    """

    __slots__ = ("name", "label", "estimator", "module", "description", "params")

    def __init__(self, name, label, estimator, module, description, params=None):
        self.name = name
        self.label = label
        self.estimator = estimator
        self.module = module
        self.description = description
        self.params = dict(params or {})

    def __repr__(self):
        return f"Algorithm({self.name!r}: {self.estimator}(**{self.params!r}))"

    @property
    def cls(self):
        """The estimator class (imported on first use)."""
        module = importlib.import_module(f".{self.module}", __package__)
        return getattr(module, self.estimator)

    @property
    def projected(self):
        """Whether it works on a random projection (and reports ``hilbert_error_``): whether
        its class takes ``projection``."""
        import inspect  # here, not at import time (see the class's docstring)

        return "projection" in inspect.signature(self.cls).parameters

    @property
    def model(self):
        """The one model its class is for (``__skcoreset_model__``), or None for any model."""
        return getattr(self.cls, "__skcoreset_model__", None)

    def make(self, n_points, **params):
        """The unfitted estimator of ``n_points`` points with the fixed parameters and
        ``params``."""
        return self.cls(n_points, **self.params, **params)


#: Every algorithm, in the order of the command line's help and the demo's table.
ALGORITHMS = (
    Algorithm(
        "uniform",
        "uniform",
        "UniformCoreset",
        "_hilbert",
        "uniform subsampling, weights N/M (the baseline)",
    ),
    Algorithm(
        "importance",
        "importance",
        "ImportanceCoreset",
        "_hilbert",
        "Hilbert importance sampling (draws proportional to projection norms)",
    ),
    Algorithm(
        "frank-wolfe",
        "Frank-Wolfe",
        "FrankWolfeCoreset",
        "_hilbert",
        "Frank-Wolfe on the projected log-likelihood (Campbell & Broderick 2019)",
    ),
    Algorithm(
        "giga",
        "GIGA",
        "GIGACoreset",
        "_hilbert",
        "greedy iterative geodesic ascent (Campbell & Broderick 2018)",
    ),
    Algorithm(
        "a-iht",
        "A-IHT",
        "IHTCoreset",
        "_hilbert",
        "accelerated iterative hard thresholding (Zhang et al. 2021)",
    ),
    Algorithm(
        "a-iht-ii",
        "A-IHT II",
        "IHTCoreset",
        "_hilbert",
        "A-IHT with a de-biasing step (Zhang et al. 2021)",
        {"debias": True},
    ),
    Algorithm(
        "omp",
        "OMP",
        "OMPCoreset",
        "_hilbert",
        "non-negative orthogonal matching pursuit",
    ),
    Algorithm(
        "sensitivity",
        "sensitivity",
        "SensitivityCoreset",
        "_sensitivity",
        "sensitivity sampling (Huggins et al. 2016; logistic model only)",
    ),
    Algorithm(
        "qnc",
        "QNC",
        "QuasiNewtonCoreset",
        "_kl_coreset",
        "quasi-Newton steps on the KL, from the OMP coreset (Naik et al. 2022)",
    ),
    Algorithm(
        "sparse-vi",
        "SparseVI",
        "SparseVICoreset",
        "_kl_coreset",
        "greedy sparse variational coreset (Campbell & Beronov 2019)",
    ),
    Algorithm(
        "coreset-mcmc",
        "Coreset MCMC",
        "CoresetMCMC",
        "_kl_coreset",
        "weights learned by MCMC chains on the coreset (Chen & Campbell 2024)",
    ),
)

#: The algorithms by name.
BY_NAME = {algorithm.name: algorithm for algorithm in ALGORITHMS}

#: The recommended algorithm: the smallest error for a given size on GLM posteriors (see the
#: user guide's "Choosing an algorithm"), and the one the meta-estimators build when given no
#: coreset (data in memory, often small, where OMP is the faster).
RECOMMENDED = "omp"

#: The command line's default: the faster way to the same posterior on the large files it is
#: for (ahead of OMP from a few 10^5 rows, tied at 10^5; measured: benchmarks/README.md,
#: Thresholds).
COMMAND_LINE_DEFAULT = "qnc"

#: Every estimator class, in the order of :data:`ALGORITHMS`: class name -> its module.
ESTIMATORS = {algorithm.estimator: algorithm.module for algorithm in ALGORITHMS}
