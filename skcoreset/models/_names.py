"""The model registry: what ``model=`` accepts besides 'auto', and where each model lives.

A module of its own, free of imports, so that the command line can build its help without
loading the models (numba, SciPy, scikit-learn). A built-in model is one file in this package
(its :class:`~skcoreset.models.SingleIndexFamily` and its :class:`~skcoreset.models.GLM`
subclass) and one line of :data:`MODELS`; a user's model is one call of
:func:`skcoreset.models.register`, which adds its line here while the program runs.

The built-in classes are imported at the package's edge only, as the lazy attributes of
``skcoreset.models`` (``models/__init__.py`` lists them from :data:`MODELS`): no module of
the package imports a model by its name.
"""

#: model name -> (module, class, the targets it takes: the command line's help). The
#: built-ins' modules are of this package; a registered model's module is its own.
MODELS = {
    "logistic": ("_logistic", "LogisticModel", "two classes"),
    "poisson": ("_poisson", "PoissonModel", "non-negative counts"),
    "gaussian": ("_gaussian", "GaussianModel", "real values"),
    "negative_binomial": ("_negative_binomial", "NegativeBinomialModel", "overdispersed counts"),
    "gamma": ("_gamma", "GammaModel", "positive values"),
    "multinomial": ("_multinomial", "MultinomialModel", "two or more classes"),
    "student_t": ("_student_t", "StudentTModel", "real values with outliers"),
}

#: The names of the package's own models (a registration cannot replace them).
BUILT_IN = frozenset(MODELS)

#: model name -> class, of the models registered while the program runs.
REGISTERED = {}


class ModelNames:
    """The registered names, read when used: a model registered later is among them.

    A tuple's face (iteration, ``in``, ``len``, indexing, equality with a tuple) over the
    current registry, optionally led by fixed names (``ModelNames("auto")``: what the
    ``model=`` parameters accept). The parameter checks, the command line's choices and the
    compositions hold one and see every registration made before they read it.

    Parameters
    ----------
    *fixed : str
        Names that lead the registered ones.

    Examples
    --------
    >>> from skcoreset.models._names import ModelNames
    >>> names = ModelNames("auto")
    >>> names[0], "poisson" in names, "probit" in names
    ('auto', True, False)
    """

    __slots__ = ("_fixed",)

    def __init__(self, *fixed):
        self._fixed = fixed

    def __iter__(self):
        return iter((*self._fixed, *MODELS))

    def __len__(self):
        return len(self._fixed) + len(MODELS)

    def __contains__(self, name):
        return name in self._fixed or (isinstance(name, str) and name in MODELS)

    def __getitem__(self, index):
        return tuple(self)[index]

    def __eq__(self, other):
        if isinstance(other, ModelNames | tuple):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # it changes with the registry

    def __rsub__(self, other):
        # scikit-learn's StrOptions checks its deprecated options with `set() - options`
        return set(other) - set(self)

    def __repr__(self):
        return repr(tuple(self))


#: The names the ``model=`` parameters accept (besides 'auto'), registered models included.
MODEL_NAMES = ModelNames()
