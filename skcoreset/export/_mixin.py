"""The export methods of every fitted coreset estimator (a base of ``BaseCoreset``).

Imports nothing heavy: each language is imported by its export's ``build`` when it is called.
"""

import numpy as np
from scipy.sparse import issparse
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted

from .._sklearn_compat import _safe_indexing
from . import _bambi, _numpyro, _pymc, _stan
from ._spec import export_spec


class PPLExportMixin:
    """``to_pymc``, ``to_numpyro``, ``to_stan`` and ``to_bambi`` of a fitted coreset estimator.

    Each writes the coreset posterior - the weighted coreset rows, the library's likelihood
    and the coreset's full-data prior (``prior_scale_``, and the priors of the model's extra
    parameters) - in a probabilistic programming language, so that its sampler targets the
    posterior that the library's MALA samples on the same coreset
    (:class:`~skcoreset.linear_model.BayesianLogisticRegression` and the others fitted with
    ``sample_weight=sample_weight_``, whose 'auto' prior a composition sets to the same).

    The free variables are named as the Bayesian estimators' attributes: ``coef`` (shape
    (D,), or (K - 1, D) for the multinomial model, class 0 the reference), ``intercept``
    (with ``fit_intercept``), and the model's extra parameters (``noise_scale`` for the
    Gaussian model, ``alpha`` the negative binomial dispersion, ``shape`` the gamma shape,
    ``scale`` and ``df`` the Student-t's), each log-normal a priori.

    Examples
    --------
    >>> from skcoreset.coreset import OMPCoreset
    >>> from skcoreset.datasets import make_linear_regression
    >>> from skcoreset.export import PPLExportMixin
    >>> X, y = make_linear_regression(n_samples=500, n_features=2, random_state=0)
    >>> coreset = OMPCoreset(n_points=50, random_state=0).fit(X, y)
    >>> isinstance(coreset, PPLExportMixin)
    True
    >>> program, data = coreset.to_stan(X, y)
    >>> for line in program.splitlines():
    ...     if "noise_scale |" in line or "noise_scale)" in line:
    ...         print(line.strip())
    target += lognormal_lpdf(noise_scale | noise_scale_log_mean, noise_scale_log_sd);
    target += w[n] * normal_lpdf(y[n] | eta[n], noise_scale);
    """

    def _export_spec(self, X, y, what):
        """The :class:`~skcoreset.export.ExportSpec` of the fitted coreset.

        ``X, y``: the data the coreset was fitted on (its rows are taken by
        ``sample_indices_``), or both None for the rows the estimator kept
        (:meth:`get_coreset`, which works after ``partial_fit`` too).
        """
        check_is_fitted(self, "sample_indices_")
        prior = self._data_prior
        node = self._coreset_node
        if X is None and y is None:
            rows, coded = node.X, node.y
        elif X is None or y is None:
            raise ValueError(
                f"{what} takes both X and y (the data the coreset was fitted on), or neither "
                "(the coreset's own rows)."
            )
        else:
            rows, coded = self._export_rows(X, y, prior.model)
        return export_spec(
            prior.model,
            rows,
            coded,
            self.sample_weight_,
            y_mean=prior.y_mean,
            y_sd=prior.y_sd,
            feature_names=getattr(self, "feature_names_in_", None),
            what=what,
        )

    def _export_rows(self, X, y, model):
        """The coreset's rows of the caller's ``(X, y)``, checked to be the fitted ones, and
        their targets in the model's coding."""
        n = X.shape[0] if hasattr(X, "shape") else len(X)  # sparse X has no len()
        if len(y) != n:
            raise ValueError(f"X has {n} rows and y {len(y)} targets.")
        idx = self.sample_indices_
        if idx.shape[0] and idx.max() >= n:
            raise ValueError(
                f"X has {n} rows, but the coreset holds row {idx.max()}: pass the data the "
                "coreset was fitted on (every call's rows, in order, after partial_fit)."
            )
        rows = check_array(
            _safe_indexing(X, idx), accept_sparse="csr", dtype=np.float64, estimator=self
        )
        if issparse(rows):
            rows = rows.toarray()  # the coreset's rows only
        if rows.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {rows.shape[1]} features; the coreset was fitted on {self.n_features_in_}."
            )
        targets = np.asarray(_safe_indexing(y, idx))
        labels = self._labels
        coded = labels.encode(targets) if labels is not None else model.encode_targets(targets)
        if not (
            np.array_equal(rows, self._coreset_node.X)
            and np.array_equal(coded, self._coreset_node.y)
        ):
            raise ValueError(
                "The rows of X and y at sample_indices_ are not the coreset's: pass the data "
                "the coreset was fitted on, or X=None and y=None for its own rows."
            )
        return rows, coded

    def to_pymc(self, X=None, y=None):
        """The coreset posterior as a PyMC model.

        The weighted log-likelihood enters as ``pm.Potential("weighted_loglik", ...)``, the
        sum of each row's log-likelihood times its weight; the priors are the coreset's
        (``prior_scale_`` and the extra parameters' log-normal priors). NUTS on it
        (``pm.sample``) samples the posterior that the library's MALA samples on the same
        coreset.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            The data the coreset was fitted on (its rows at ``sample_indices_`` are used,
            checked to be the coreset's); None with ``y=None``: the coreset's own rows
            (:meth:`get_coreset`).
        y : array-like of shape (n_samples,), default=None
            Their targets (class labels are coded 0, ..., K - 1 as the library codes them).

        Returns
        -------
        model : pymc.Model
            Free variables ``coef`` (dims ``feature``, or ``class`` x ``feature`` for the
            multinomial model, whose ``class`` coordinate lists the non-reference classes),
            ``intercept`` and the model's extra parameters (see the class notes).

        Raises
        ------
        ImportError
            If PyMC is not installed (``pip install 'skcoreset[pymc]'``).
        NotImplementedError
            If the coreset's model has no export (a user's model).

        Examples
        --------
        >>> from skcoreset.coreset import OMPCoreset
        >>> from skcoreset.datasets import make_logistic_regression
        >>> X, y = make_logistic_regression(n_samples=500, n_features=2, random_state=0)
        >>> coreset = OMPCoreset(n_points=50, random_state=0).fit(X, y)
        >>> model = coreset.to_pymc(X, y)
        >>> sorted(rv.name for rv in model.free_RVs)
        ['coef', 'intercept']
        """
        return _pymc.build(self._export_spec(X, y, "PyMC"), self._class_labels())

    def to_numpyro(self, X=None, y=None):
        """The coreset posterior as a NumPyro model function.

        A function of no argument whose sample sites are ``coef``, ``intercept`` and the
        model's extra parameters, and the observed ``y``, each row's log-likelihood scaled
        by its weight (``numpyro.handlers.scale`` in a plate over the rows). NUTS on it
        (``numpyro.infer.MCMC(NUTS(model), ...)``) samples the posterior that the library's
        MALA samples on the same coreset. The arrays are JAX's default precision: call
        ``numpyro.enable_x64()`` first for float64.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            The data the coreset was fitted on, or None (with ``y=None``) for the coreset's
            own rows.
        y : array-like of shape (n_samples,), default=None
            Their targets.

        Returns
        -------
        model : callable
            ``model()``, a NumPyro model.

        Raises
        ------
        ImportError
            If NumPyro is not installed (``pip install 'skcoreset[numpyro]'``).
        NotImplementedError
            If the coreset's model has no export (a user's model).

        Examples
        --------
        >>> import numpyro
        >>> from skcoreset.coreset import OMPCoreset
        >>> from skcoreset.datasets import make_linear_regression
        >>> X, y = make_linear_regression(n_samples=500, n_features=2, random_state=0)
        >>> coreset = OMPCoreset(n_points=50, random_state=0).fit(X, y)
        >>> model = coreset.to_numpyro()
        >>> trace = numpyro.handlers.trace(numpyro.handlers.seed(model, 0)).get_trace()
        >>> [name for name, site in trace.items() if site["type"] == "sample"]
        ['coef', 'intercept', 'noise_scale', 'y']
        """
        return _numpyro.build(self._export_spec(X, y, "NumPyro"))

    def to_stan(self, X=None, y=None):
        """The coreset posterior as a Stan program and its data.

        Each row's log-likelihood enters the target times its weight
        (``target += w[n] * ..._lpmf(y[n] | ...)``); the priors are the coreset's, written
        with ``_lpdf`` so that the log density is the normalised one that PyMC and NumPyro
        compute. Compile and sample it with CmdStanPy or PyStan, e.g.
        ``cmdstanpy.CmdStanModel(stan_file=path).sample(data=data)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            The data the coreset was fitted on, or None (with ``y=None``) for the coreset's
            own rows.
        y : array-like of shape (n_samples,), default=None
            Their targets (class codes are 1, ..., K in Stan, class 1 the reference).

        Returns
        -------
        program : str
            The Stan program (parameters ``coef``, ``intercept`` and the model's extra
            parameters).
        data : dict
            Its data: ``N``, ``D``, ``X``, ``y``, ``w``, the prior sds ``coef_sd`` and
            ``intercept_sd``, and each extra parameter's ``<name>_log_mean`` and
            ``<name>_log_sd``.

        Raises
        ------
        NotImplementedError
            If the coreset's model has no export (a user's model).

        Examples
        --------
        >>> from skcoreset.coreset import OMPCoreset
        >>> from skcoreset.datasets import make_logistic_regression
        >>> X, y = make_logistic_regression(n_samples=500, n_features=2, random_state=0)
        >>> coreset = OMPCoreset(n_points=50, random_state=0).fit(X, y)
        >>> program, data = coreset.to_stan()
        >>> print(program.splitlines()[-3])
            target += w[n] * bernoulli_logit_lpmf(y[n] | eta[n]);
        >>> data["X"].shape == (coreset.n_points_, 2), data["coef_sd"]
        (True, array([2.568, 2.5  ]))
        """
        return _stan.build(self._export_spec(X, y, "Stan"))

    def to_bambi(self, X=None, y=None):
        """The coreset posterior as Bambi's inputs: a data frame, a formula and priors.

        The formula weights the response (``weighted(y, w) ~ x0 + x1 ...``, the weights a
        column of the data frame), the priors are the coreset's, and the predictors are not
        centred (``center_predictors=False``: the intercept's prior is that of the
        uncentred intercept). :meth:`BambiExport.model` builds the ``bambi.Model``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            The data the coreset was fitted on, or None (with ``y=None``) for the coreset's
            own rows.
        y : array-like of shape (n_samples,), default=None
            Their targets.

        Returns
        -------
        export : BambiExport
            ``data`` (a pandas DataFrame), ``formula``, ``family``, ``link``, ``priors`` and
            the other arguments of ``bambi.Model``.

        Raises
        ------
        ImportError
            If pandas is not installed.
        NotImplementedError
            If the coreset's model has no Bambi export: Bambi's weighted response gives the
            library's likelihood for the poisson, gaussian and negative_binomial models only.

        Examples
        --------
        >>> from skcoreset.coreset import OMPCoreset
        >>> from skcoreset.datasets import make_poisson_regression
        >>> X, y = make_poisson_regression(n_samples=500, n_features=2, random_state=0)
        >>> coreset = OMPCoreset(n_points=50, model="poisson", random_state=0).fit(X, y)
        >>> export = coreset.to_bambi()
        >>> export.formula, export.family, export.link
        ('weighted(y, w) ~ 1 + x0 + x1', 'poisson', 'log')
        >>> list(export.data.columns)
        ['x0', 'x1', 'y', 'w']
        """
        return _bambi.build(self._export_spec(X, y, "Bambi"))

    def _class_labels(self):
        """The class labels of a classification coreset (None for numeric targets)."""
        labels = self._labels
        return None if labels is None else list(labels.classes)
