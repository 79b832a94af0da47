"""What a model writes for the exports and for the test suite, besides its own maths.

* Its recipes in the probabilistic programming languages (:mod:`skcoreset.export`): the Stan
  statement of a row's log-likelihood, the PyMC expression, the NumPyro distribution and the
  Bambi family. Each recipe is a function of the language's modules, passed in by the export
  that calls it, so that no model imports a language.
* Its reference for the test suite (``tests/test_model_contract.py``): the log-likelihood
  written with ``scipy.stats`` (the module passed in) from the textbook formulas, and data
  to fit it on.

:class:`ModelRecipes` holds them with their defaults (a model without an export, or without
a reference, says so); :class:`~skcoreset.models.GLM` inherits it, and each model overrides
what it has.
"""

import numpy as np


def no_export_error(model, what):
    """The error of a model that has no recipe for the export ``what``."""
    return NotImplementedError(
        f"The {model.name!r} model has no export to {what}: a model writes its likelihood in "
        "the probabilistic programming languages with its recipes (its 'likelihood' name and "
        "stan_likelihood, pymc_loglik, numpyro_likelihood; doc/models.md), as the built-in "
        "ones do. Sample it with the library's own Bayesian estimators "
        "(BayesianGLM(model=...))."
    )


class ModelRecipes:
    """The exports' recipes and the test suite's reference of a model (a base of ``GLM``).

    The recipes write one row's log-likelihood at its linear predictor ``eta`` (a vector of
    rows; rows by predictors for a model of several predictors) and the extra parameters
    ``extras`` (the values, or the languages' variables, in the order of the model's
    ``extra_priors``: its free extra parameters, then the fixed ones); ``y`` holds the
    targets in the model's coding.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import get_model
    >>> y_type, y, row = get_model("poisson").stan_likelihood(np.array([0.0, 3.0]))
    >>> y_type, y, row
    ('array[N] int<lower=0>', array([0, 3]), 'poisson_log_lpmf(y[n] | eta[n])')
    """

    #: Whether each row has a vector of linear predictors (the multinomial model's, one per
    #: non-reference class), exported as a matrix whatever its length.
    vector_predictor = False

    #: The relative accuracy of an export's log density, by language, where the language's
    #: own functions lose digits (the test suite's tolerance; float64 rounding elsewhere).
    export_rtol = {}

    # -- the exports -------------------------------------------------------------------
    def stan_likelihood(self, y):
        """The likelihood in Stan: the targets' type and values, and a row's statement.

        Parameters
        ----------
        y : ndarray of shape (M,)
            The coded targets.

        Returns
        -------
        y_type : str
            The declaration of ``y`` in the data block (``'vector[N]'``,
            ``'array[N] int<lower=0>'``, ...).
        y_data : ndarray of shape (M,)
            The targets as Stan reads them (integers for a discrete likelihood).
        row : str
            The log-likelihood of row ``n``, an expression of ``y[n]`` and ``eta[n]``, with
            ``{0}``, ``{1}``, ... where the extra parameters' names go (``str.format``).

        Raises
        ------
        NotImplementedError
            If the model has no Stan recipe.
        """
        raise no_export_error(self, "Stan")

    def pymc_loglik(self, pm, pt, eta, y, extras):
        """The rows' log-likelihoods in PyMC.

        Parameters
        ----------
        pm : module
            ``pymc``.
        pt : module
            ``pytensor.tensor``.
        eta : TensorVariable of shape (M,) or (M, K - 1)
            The linear predictors.
        y : ndarray of shape (M,)
            The coded targets.
        extras : list
            The extra parameters: random variables, or numbers when fixed.

        Returns
        -------
        loglik : TensorVariable of shape (M,)
            Each row's log-likelihood.

        Raises
        ------
        NotImplementedError
            If the model has no PyMC recipe.
        """
        raise no_export_error(self, "PyMC")

    def numpyro_likelihood(self, numpyro, jax, eta, y, extras):
        """The targets' distribution in NumPyro, and the values it observes.

        Parameters
        ----------
        numpyro : module
            ``numpyro`` (its ``distributions``).
        jax : module
            ``jax`` (``jax.numpy``, ``jax.scipy``).
        eta : jax.Array of shape (M,) or (M, K - 1)
            The linear predictors.
        y : ndarray of shape (M,)
            The coded targets.
        extras : list
            The extra parameters: sampled values, or numbers when fixed.

        Returns
        -------
        distribution : numpyro.distributions.Distribution
            The distribution of the M targets (batch shape (M,)).
        observed : jax.Array of shape (M,)
            The targets as it reads them.

        Raises
        ------
        NotImplementedError
            If the model has no NumPyro recipe.
        """
        raise no_export_error(self, "NumPyro")

    def bambi_family(self, y):
        """The likelihood in Bambi, where Bambi's weighted response gives the library's.

        Parameters
        ----------
        y : ndarray of shape (M,)
            The coded targets.

        Returns
        -------
        family : str
            Bambi's family.
        link : str
            The link of its mean.
        extras : tuple of (str, bool)
            Bambi's name of each extra parameter and whether it is the reciprocal of the
            library's.

        Raises
        ------
        NotImplementedError
            If Bambi cannot write this model's weighted likelihood.
        """
        raise NotImplementedError(
            f"The {self.name!r} model has no Bambi export: Bambi's weighted response "
            "(weighted(y, w)) gives the library's likelihood for the poisson, gaussian and "
            "negative_binomial models only (it takes no categories, and its weighted "
            "Bernoulli, gamma and Student-t are not built right). Use to_pymc or to_numpyro."
        )

    # -- the test suite's reference ----------------------------------------------------
    def reference_logpdf(self, stats, y, eta, extra):
        """Each target's log density from ``scipy.stats``, for a single-index model.

        Written from the likelihood's textbook form, independently of the numba family: the
        test suite checks the family, its derivatives, the sampler and the exports against it
        (``tests/test_model_contract.py``).

        Parameters
        ----------
        stats : module
            ``scipy.stats``.
        y : ndarray
            Coded targets, broadcast against ``eta``.
        eta : ndarray
            Linear predictors.
        extra : float or ndarray
            The extra parameter, broadcast likewise (unused without one).

        Returns
        -------
        logpdf : ndarray
            ``log p(y | eta, extra)``, of the broadcast shape.

        Raises
        ------
        NotImplementedError
            If the model has no reference (a model registered without one fails the test
            suite's contract).
        """
        raise NotImplementedError(
            f"The {self.name!r} model has no reference log density (reference_logpdf, or "
            "reference_loglik for a model of draws): the test suite checks every registered "
            "model against one."
        )

    def reference_loglik(self, stats, thetas, Xd, y):
        """Each row's log-likelihood at parameter draws, from ``scipy.stats``.

        ``thetas`` are the posterior's parameters as the sampler draws them: the
        coefficients (intercept last), then the log of a free extra parameter. A model of
        draws writes its own; a single-index model's is :meth:`reference_logpdf` at
        ``eta = Xd @ coefficients``.

        Parameters
        ----------
        stats : module
            ``scipy.stats``.
        thetas : ndarray of shape (S, P)
            Parameter draws.
        Xd : ndarray of shape (n, Q)
            Design matrix.
        y : ndarray of shape (n,)
            Coded targets.

        Returns
        -------
        loglik : ndarray of shape (S, n)
            ``log p(y_i | x_i, theta_s)``.
        """
        thetas = np.atleast_2d(np.asarray(thetas, dtype=np.float64))
        P = self.n_params(Xd.shape[1])
        eta = thetas[:, :P] @ Xd.T
        extra = np.exp(thetas[:, P:]) if self.n_extra else self.extra_value
        return self.reference_logpdf(stats, y[None, :], eta, extra)

    def reference_data(self, n_samples, random_state):
        """Data of this model for the test suite: features and targets as a user has them.

        Parameters
        ----------
        n_samples : int
            The number of rows.
        random_state : numpy.random.RandomState
            The source of randomness.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
            Features (a few, of unit scale).
        y : ndarray of shape (n_samples,)
            Targets drawn from the model (class labels as the user passes them).

        Raises
        ------
        NotImplementedError
            If the model has no data generator (a model registered without one fails the
            test suite's contract).
        """
        raise NotImplementedError(
            f"The {self.name!r} model has no reference data (reference_data): the test suite "
            "checks every registered model on data drawn from it."
        )
