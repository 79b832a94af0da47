"""The model registry: what ``model=`` accepts besides 'auto', and where each model lives.

A module of its own, free of imports, so that the command line can build its help without
loading the models (numba, SciPy, scikit-learn). Adding a model is one file in this package
(its :class:`~skcoreset.models.SingleIndexFamily` and its :class:`~skcoreset.models.GLM`
subclass) and one line here.
"""

#: model name -> (module of this package, class)
MODELS = {
    "logistic": ("_logistic", "LogisticModel"),
    "poisson": ("_poisson", "PoissonModel"),
    "gaussian": ("_gaussian", "GaussianModel"),
    "negative_binomial": ("_negative_binomial", "NegativeBinomialModel"),
    "gamma": ("_gamma", "GammaModel"),
}

#: The names the ``model=`` parameters accept (besides 'auto').
MODEL_NAMES = tuple(MODELS)
