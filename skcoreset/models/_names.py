"""The model names: what ``model=`` accepts besides 'auto', and the command line's choices.

A module of its own, free of imports, so that the command line can build its help without
loading the models (numba, SciPy, scikit-learn).
"""

#: The names the ``model=`` parameters accept (besides 'auto').
MODEL_NAMES = ("logistic", "poisson", "gaussian")
