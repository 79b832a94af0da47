"""The model registry: what ``model=`` accepts besides 'auto', and where each model lives.

A module of its own, free of imports, so that the command line can build its help without
loading the models (numba, SciPy, scikit-learn). Adding a model is one file in this package
(its :class:`~skcoreset.models.SingleIndexFamily` and its :class:`~skcoreset.models.GLM`
subclass) and one line here.
"""

#: model name -> (module of this package, class, the targets it takes: the command line's help)
MODELS = {
    "logistic": ("_logistic", "LogisticModel", "two classes"),
    "poisson": ("_poisson", "PoissonModel", "non-negative counts"),
    "gaussian": ("_gaussian", "GaussianModel", "real values"),
    "negative_binomial": ("_negative_binomial", "NegativeBinomialModel", "overdispersed counts"),
    "gamma": ("_gamma", "GammaModel", "positive values"),
    "multinomial": ("_multinomial", "MultinomialModel", "two or more classes"),
    "student_t": ("_student_t", "StudentTModel", "real values with outliers"),
}

#: The names the ``model=`` parameters accept (besides 'auto').
MODEL_NAMES = tuple(MODELS)
