"""The export methods of every fitted coreset estimator (a base of ``BaseCoreset``).

Imports nothing heavy: each language is imported by its export's ``build`` when it is called.
"""

import numpy as np
from scipy.sparse import issparse
from sklearn.utils import check_array, check_random_state
from sklearn.utils.validation import check_is_fitted

from .._sklearn_compat import _safe_indexing
from ..models._grouped_data import validate_grouped
from ..models._multilevel_likelihood import extra_names
from ..models._multilevel_marginal import recover_effects
from . import _bambi, _numpyro, _pymc, _stan
from ._spec import export_spec, multilevel_export_spec


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

    A multilevel coreset (``model=Multilevel(...)``, fitted with ``groups=``) exports its
    multilevel posterior on the weighted coreset rows, the library's (its Laplace fit's and
    :class:`~skcoreset.linear_model.BayesianMultilevelRegression`'s on the same rows):

        eta_n = x_n . coef + intercept + z_n . group_effects[g(n)],  z_n = (1, x_n[slopes]),
        sum_n w_n log p(y_n | eta_n, extra),  coef ~ N(0, prior_scale_^2) (intercept last),
        log(extra) ~ N(m, sd^2),  group_sd_k ~ HalfStudentT(3, tau_scale),
        group_effects[g, k] = group_sd_k * group_effects_raw[g, k],  group_effects_raw ~ N(0, 1),

    with ``g(n)`` the row's group among the groups with rows in the coreset (all of
    ``groups_``, sorted, but for a coreset of groups; the rows' labels are
    ``sample_groups_``) and the priors those of ``laplace_.posterior`` (``prior_scale``,
    ``extra_prior``, ``tau_scale``). The effects are written non-centred: the free variables
    ``group_sd`` (q,) and ``group_effects_raw`` (G, q), and ``group_effects`` (G, q)
    deterministic, the effects ``'intercept'`` then each random slope's feature.
    ``to_pymc``, ``to_numpyro`` and ``to_stan`` write it; ``to_bambi`` refuses it (a
    ``ValueError``: Bambi's group-specific terms are not known to give it).

    A coreset of groups (data of many small groups: ``n_groups_marginal_ > 0``) weights whole
    groups: a group of weight ``W_g != 1`` (``sample_group_weight_``) enters, as in the
    library's posterior, not by its rows but by ``W_g`` times its marginal log-likelihood
    ``m_g`` (its effect integrated out; the rows' own weights inside it), a potential term of
    the exported model (``numpyro.factor`` and ``pm.Potential`` ``group_marginals``, Stan's
    ``target +=``). The library integrates with nodes that follow each group's conditional
    mode; the exports write Gauss-Hermite quadrature of 20 FIXED nodes a group, at its
    conditional mode and scale at the Laplace mean (``laplace_.mean``): within 1e-9 of the
    integral a group where the posterior is, less accurate far from the Laplace mean (the
    group sd twice its mean's: some 1e-3 a group; see :mod:`skcoreset.export._spec`). Only a
    random intercept is exported so (random slopes: a ``ValueError``). These groups' effects
    are not variables of the exported model, and the groups the coreset left out
    (``left_out_indices_``) have no term at all: both groups' effects follow from their rows
    given each draw of the shared parameters, as the library draws them
    (:class:`~skcoreset.linear_model.BayesianMultilevelRegression` fitted with
    ``group_weight``, and its ``recover_groups`` for the left-out groups).

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

    def _export_spec(self, X, y, what, groups=None):
        """The :class:`~skcoreset.export.ExportSpec` of the fitted coreset.

        ``X, y``: the data the coreset was fitted on (its rows are taken by
        ``sample_indices_``), or both None for the rows the estimator kept
        (:meth:`get_coreset`, which works after ``partial_fit`` too). ``groups``: the data's
        group labels, for a multilevel coreset (checked; None: its ``sample_groups_``).
        """
        check_is_fitted(self, "sample_indices_")
        if (X is None) != (y is None):
            raise ValueError(
                f"{what} takes both X and y (the data the coreset was fitted on), or neither "
                "(the coreset's own rows)."
            )
        if hasattr(self, "sample_groups_"):  # a multilevel fit (a refit drops it)
            return self._multilevel_export_spec(X, y, groups, what)
        if groups is not None:
            raise ValueError(
                "groups= is for a multilevel coreset (model=Multilevel(...), fitted with "
                "groups=); this coreset has no groups."
            )
        prior = self._data_prior
        node = self._coreset_node
        if X is None:
            rows, coded = node.X, node.y
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

    def _multilevel_export_spec(self, X, y, groups, what):
        """The :class:`~skcoreset.export.ExportSpec` of a multilevel coreset: its rows with
        their groups (indices into ``groups_``) and the priors of its multilevel posterior
        (``laplace_.posterior``, whose own rows are the data's, not read here)."""
        posterior = self.laplace_.posterior
        base = posterior.base
        node = self._coreset_node  # its targets as validated, not coded
        if X is None:
            if groups is not None:
                raise ValueError(
                    f"{what} takes groups with X and y (the data the coreset was fitted on); "
                    "without them the coreset's own rows and sample_groups_ are used."
                )
            rows, targets, all_targets = node.X, node.y, node.y
        else:
            rows, targets = self._rows_at_indices(X, y)
            all_targets = y
            if not (np.array_equal(rows, node.X) and np.array_equal(targets, node.y)):
                raise ValueError(
                    "The rows of X and y at sample_indices_ are not the coreset's: pass the "
                    "data the coreset was fitted on, or X=None and y=None for its own rows."
                )
            if groups is not None:
                groups = np.asarray(groups.to_numpy() if hasattr(groups, "to_numpy") else groups)
                if groups.ndim != 1 or groups.shape[0] != len(y):
                    raise ValueError(f"groups must hold one label per row of X ({len(y)}).")
                if not np.array_equal(groups[self.sample_indices_], self.sample_groups_):
                    raise ValueError(
                        "The groups at sample_indices_ are not the coreset's (sample_groups_): "
                        "pass the groups the coreset was fitted with."
                    )
        if base.labels is not None:  # class labels: coded as the fit coded the data's
            try:
                coded = base.labels.fit(np.asarray(all_targets)).encode(targets)
            except ValueError as exc:
                raise ValueError(
                    f"{exc} The coreset's rows alone do not give the classes' coding: pass X "
                    "and y, the data it was fitted on."
                ) from None
        else:
            coded = base.encode_targets(targets)
        labels = self.groups_
        index = np.minimum(np.searchsorted(labels, self.sample_groups_), labels.shape[0] - 1)
        if not np.array_equal(labels[index], self.sample_groups_):  # labels sorted, all kept
            raise ValueError("sample_groups_ holds a label not in groups_; please report this.")
        return multilevel_export_spec(
            posterior,
            rows,
            coded,
            self.sample_weight_,
            index,
            labels,
            group_weight=getattr(self, "sample_group_weight_", None),
            centre=self.laplace_.mean,  # the marginals' nodes: at the Laplace fit's mean
            feature_names=getattr(self, "feature_names_in_", None),
            what=what,
        )

    def _rows_at_indices(self, X, y):
        """The rows of the caller's ``(X, y)`` at ``sample_indices_``: dense float64 rows
        of the fitted number of features, and their targets as given."""
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
        return rows, np.asarray(_safe_indexing(y, idx))

    def _export_rows(self, X, y, model):
        """The coreset's rows of the caller's ``(X, y)``, checked to be the fitted ones, and
        their targets in the model's coding."""
        rows, targets = self._rows_at_indices(X, y)
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

    def to_pymc(self, X=None, y=None, groups=None):
        """The coreset posterior as a PyMC model.

        The weighted log-likelihood enters as ``pm.Potential("weighted_loglik", ...)``, the
        sum of each row's log-likelihood times its weight; the priors are the coreset's
        (``prior_scale_`` and the extra parameters' log-normal priors). NUTS on it
        (``pm.sample``) samples the posterior that the library's MALA samples on the same
        coreset.

        For a multilevel coreset it is the multilevel coreset posterior (see the class
        notes): ``group_sd`` is ``pm.HalfStudentT(nu=3, sigma=tau_scale)`` (dims
        ``effect``), ``group_effects_raw`` standard normal and ``group_effects`` a
        ``pm.Deterministic`` (dims ``group`` x ``effect``); the coordinates ``group`` are
        the groups with rows entered row by row (``groups_`` but for a coreset of groups;
        none, and no ``group_effects_raw``, when no group is) and ``effect``
        ``'intercept'`` then the random slopes' features. A coreset of groups' weighted
        marginals are ``pm.Potential("group_marginals", ...)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            The data the coreset was fitted on (its rows at ``sample_indices_`` are used,
            checked to be the coreset's); None with ``y=None``: the coreset's own rows
            (:meth:`get_coreset`).
        y : array-like of shape (n_samples,), default=None
            Their targets (class labels are coded 0, ..., K - 1 as the library codes them).
        groups : array-like of shape (n_samples,), default=None
            A multilevel coreset's data's group labels, checked at ``sample_indices_``
            against ``sample_groups_``; None: ``sample_groups_``. Only for a multilevel
            coreset.

        Returns
        -------
        model : pymc.Model
            Free variables ``coef`` (dims ``feature``, or ``class`` x ``feature`` for the
            multinomial model, whose ``class`` coordinate lists the non-reference classes),
            ``intercept`` and the model's extra parameters (see the class notes); for a
            multilevel coreset ``group_sd`` and ``group_effects_raw`` too.

        Raises
        ------
        ImportError
            If PyMC is not installed (``pip install 'skcoreset[pymc]'``).
        NotImplementedError
            If the coreset's model has no export (a user's model).
        ValueError
            If ``X``, ``y`` or ``groups`` are not the data the coreset was fitted on, or
            ``groups`` is given for a coreset without groups.

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
        return _pymc.build(self._export_spec(X, y, "PyMC", groups), self._class_labels())

    def recover_group_effects(self, draws, X, y, groups, sample_weight=None, random_state=None):
        """Draw the effects of the groups a multilevel export has no variables for.

        A coreset of groups exports the groups it weights by their marginals (effects
        integrated out) and leaves other groups out; given an external sampler's draws of
        the shared parameters, each such group's effect is drawn from its own rows,
        ``p(u_g | draw, y_g)``, one per draw (an independence Metropolis-Hastings step per
        draw, as :meth:`BayesianMultilevelRegression.recover_groups
        <skcoreset.linear_model.BayesianMultilevelRegression.recover_groups>` does).

        Parameters
        ----------
        draws : mapping
            The exported model's draws (``mcmc.get_samples()``, or arrays of an InferenceData
            posterior): ``coef`` (..., n_features), ``intercept`` (...) with an intercept,
            the extra parameters by their names (``noise_scale``, ``alpha``, ``shape``,
            ``scale`` and ``df``) where the model has them, and ``group_sd`` (...,
            n_effects); the leading axes (chains, draws) are flattened in order.
        X : array-like of shape (n_samples, n_features)
            The data the coreset was fitted on (every call's rows, in order, after
            ``partial_fit``).
        y : array-like of shape (n_samples,)
            Its targets.
        groups : array-like of shape (n_samples,)
            Its groups.
        sample_weight : array-like of shape (n_samples,), default=None
            Its weights, as fitted.
        random_state : int, RandomState instance or None, default=None
            Seeds the draws.

        Returns
        -------
        labels : ndarray of shape (n_recovered,)
            The groups recovered (sorted): those weighted by their marginals and those left
            out.
        effects : ndarray of shape (n_draws, n_recovered, n_effects)
            Their effects at each draw (the intercept's, then each random slope's).
        """
        check_is_fitted(self, "multilevel_")
        spec, post = self.multilevel_, self.laplace_.posterior
        data = validate_grouped(
            self, spec, X, y, groups, sample_weight, self.fit_intercept, reset=False,
            classes=self._multilevel_classes,
        )  # fmt: skip
        if self.sample_indices_.shape[0] and self.sample_indices_.max() >= data.X.shape[0]:
            raise ValueError("X has fewer rows than the coreset was fitted on.")
        marginal = self.sample_group_weight_ != 1
        rows = np.concatenate([self.left_out_indices_, self.sample_indices_[marginal]])
        w = np.concatenate([data.w[self.left_out_indices_], self.sample_weight_[marginal]])
        labels, local = np.unique(data.labels[data.codes[rows]], return_inverse=True)
        thetas = _shared_draws(draws, post, self.n_features_in_)
        effects = recover_effects(
            post.base, post.E, post.base.design(data.X[rows]), spec.effects_design(data.X[rows]),
            data.y[rows], w, local, labels.shape[0], thetas, check_random_state(random_state),
        )  # fmt: skip
        return labels, effects

    def to_numpyro(self, X=None, y=None, groups=None):
        """The coreset posterior as a NumPyro model function.

        A function of no argument whose sample sites are ``coef``, ``intercept`` and the
        model's extra parameters, and the observed ``y``, each row's log-likelihood scaled
        by its weight (``numpyro.handlers.scale`` in a plate over the rows). NUTS on it
        (``numpyro.infer.MCMC(NUTS(model), ...)``) samples the posterior that the library's
        MALA samples on the same coreset. The arrays are JAX's default precision: call
        ``numpyro.enable_x64()`` first for float64.

        For a multilevel coreset it is the multilevel coreset posterior (see the class
        notes): the sites ``group_sd`` (shape (q,), a half-Student-t(3, ``tau_scale``),
        written as a folded Student-t) and ``group_effects_raw`` (shape (G, q), standard
        normal) come before ``y``, and ``group_effects = group_sd * group_effects_raw`` is a
        deterministic site (rows: the groups with rows entered row by row, ``groups_`` but
        for a coreset of groups; no such sites, and no ``y``, when no group is). A coreset
        of groups' weighted marginals are ``numpyro.factor("group_marginals", ...)``, last.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            The data the coreset was fitted on, or None (with ``y=None``) for the coreset's
            own rows.
        y : array-like of shape (n_samples,), default=None
            Their targets.
        groups : array-like of shape (n_samples,), default=None
            A multilevel coreset's data's group labels, checked at ``sample_indices_``
            against ``sample_groups_``; None: ``sample_groups_``. Only for a multilevel
            coreset.

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
        ValueError
            If ``X``, ``y`` or ``groups`` are not the data the coreset was fitted on, or
            ``groups`` is given for a coreset without groups.

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
        return _numpyro.build(self._export_spec(X, y, "NumPyro", groups))

    def to_stan(self, X=None, y=None, groups=None):
        """The coreset posterior as a Stan program and its data.

        Each row's log-likelihood enters the target times its weight
        (``target += w[n] * ..._lpmf(y[n] | ...)``); the priors are the coreset's, written
        with ``_lpdf`` so that the log density is the normalised one that PyMC and NumPyro
        compute. Compile and sample it with CmdStanPy or PyStan, e.g.
        ``cmdstanpy.CmdStanModel(stan_file=path).sample(data=data)``.

        For a multilevel coreset it is the multilevel coreset posterior (see the class
        notes): the parameters ``vector<lower=0>[Q] group_sd``, with
        ``student_t_lpdf(group_sd | group_sd_df, 0, group_sd_scale) + Q * log2()`` (the
        half-Student-t, normalised), and ``matrix[G, Q] group_effects_raw`` (``std_normal``);
        the transformed parameters ``group_effects``
        (``diag_post_multiply(group_effects_raw, group_sd)``); each row's predictor adds
        ``rows_dot_product(Z, group_effects[group])``. A coreset of groups' weighted
        marginals add data (``X_marginal``, ``y_marginal``, ``w_marginal``,
        ``group_marginal``, ``group_weight``, and the fixed nodes' ``node_offset``,
        ``node_sq``, ``log_node_weight``) and a block of the model that adds
        ``group_weight[g] * log_sum_exp(f[g])`` per group (``N`` and ``G``, the rows and
        groups entered row by row, may then be 0).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            The data the coreset was fitted on, or None (with ``y=None``) for the coreset's
            own rows.
        y : array-like of shape (n_samples,), default=None
            Their targets (class codes are 1, ..., K in Stan, class 1 the reference).
        groups : array-like of shape (n_samples,), default=None
            A multilevel coreset's data's group labels, checked at ``sample_indices_``
            against ``sample_groups_``; None: ``sample_groups_``. Only for a multilevel
            coreset.

        Returns
        -------
        program : str
            The Stan program (parameters ``coef``, ``intercept`` and the model's extra
            parameters; ``group_sd`` and ``group_effects_raw`` for a multilevel coreset).
        data : dict
            Its data: ``N``, ``D``, ``X``, ``y``, ``w``, the prior sds ``coef_sd`` and
            ``intercept_sd``, and each extra parameter's ``<name>_log_mean`` and
            ``<name>_log_sd``; for a multilevel coreset ``G`` (the groups entered row by
            row: ``groups_`` but for a coreset of groups), ``Q`` (effects per group),
            ``group`` (each row's, 1-based into those groups), ``Z`` (N, Q: ones, then the
            random slopes' columns), ``group_sd_df`` (3) and ``group_sd_scale``; for a
            coreset of groups ``N_marginal``, ``G_marginal``, ``K_nodes`` and the arrays
            of its weighted marginals (above).

        Raises
        ------
        NotImplementedError
            If the coreset's model has no export (a user's model).
        ValueError
            If ``X``, ``y`` or ``groups`` are not the data the coreset was fitted on, or
            ``groups`` is given for a coreset without groups.

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
        return _stan.build(self._export_spec(X, y, "Stan", groups))

    def to_bambi(self, X=None, y=None, groups=None):
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
        groups : array-like of shape (n_samples,), default=None
            Unused but checked: a multilevel coreset has no Bambi export.

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
        ValueError
            For a multilevel coreset: Bambi writes group effects (``(1 + x0 | group)``) with
            its own parameterisation and hyperpriors, and weights the response rightly for
            three families only, so no Bambi model is known to be the multilevel coreset
            posterior; use :meth:`to_pymc`, :meth:`to_numpyro` or :meth:`to_stan`, which
            write it exactly.

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
        return _bambi.build(self._export_spec(X, y, "Bambi", groups))

    def _class_labels(self):
        """The class labels of a classification coreset (None for numeric targets)."""
        labels = self._labels
        return None if labels is None else list(labels.classes)


def _shared_draws(draws, post, n_features):
    """``[beta, log extra, log tau]`` (S, K) of an exported multilevel model's draws."""

    def column(name, width):
        if name not in draws:
            raise ValueError(f"draws has no {name!r}: the exported model's draws are needed.")
        a = np.asarray(draws[name], dtype=np.float64)
        return a.reshape(-1, width) if width else a.reshape(-1, 1)

    parts = [column("coef", n_features)]
    if post.D > n_features:
        parts.append(column("intercept", 0))
    parts += [np.log(column(name, 0)) for name in extra_names(post.base)]
    parts.append(np.log(column("group_sd", post.q)))
    if len({p.shape[0] for p in parts}) != 1:
        raise ValueError(
            f"The draws' parameters have different numbers of draws: {[p.shape[0] for p in parts]}."
        )
    return np.concatenate(parts, axis=1)
