"""What every export writes: the weighted rows, the likelihood's name and the priors.

The coreset posterior is

    N(coef | 0, coef_sd^2) N(intercept | 0, intercept_sd^2) prod_e LogNormal(e | mean_e, sd_e^2)
        * prod_n p(y_n | eta_n, extras)^{w_n},          eta_n = x_n . coef + intercept,

one linear predictor per non-reference class for the multinomial model (class 0 the
reference, its predictor 0). :func:`export_spec` reads it from the model: the likelihood's name
(``model.likelihood``), the prior sds of the coefficients and intercepts
(``model.prior_precision``, the design's layout: one block of columns per predictor, the
intercept last) and the extra parameters with the normal priors of their logs
(``model.extra_priors``), which a language samples as log-normal variables on the log scale
(the density of the log is then exactly the normal prior the library's MALA samples). The
likelihood itself each language takes from the model's recipes (``stan_likelihood``,
``pymc_loglik``, ``numpyro_likelihood``, ``bambi_family``): nothing here knows one model from
another.

A multilevel coreset (``model=Multilevel(...)``, fitted with ``groups=``) adds its group
effects to each row's predictor, ``eta_n = x_n . coef + intercept + z_n . u_{g(n)}`` with
``z_n = (1, x_n[slopes])``, and their priors,

    tau_k ~ HalfStudentT(3, tau_scale),    u_gk = tau_k v_gk,    v_gk ~ N(0, 1),

the effects written non-centred (:class:`GroupEffects`, read from the coreset's multilevel
posterior by :func:`multilevel_export_spec`): the posterior of the library's multilevel fit
and sampler, on the coreset's weighted rows.

A coreset of groups (many small groups) also weights whole groups: a group of weight
``W_g != 1`` enters not by its rows but by ``W_g`` times its marginal log-likelihood, its effect
integrated out,

    m_g = log int exp(f_g(u)) du,
    f_g(u) = sum_{i in g} w_i log p(y_i | eta0_i + z_i . u, extra) + log N(u | 0, diag tau^2),

with ``eta0_i = x_i . coef + intercept`` (:class:`GroupMarginalTerms`). The library integrates
by adaptive Gauss-Hermite quadrature, its nodes at each group's conditional mode at every step;
a language cannot re-find the modes cheaply at every step, so the exports write a Gauss-Hermite
rule on FIXED nodes: per group, a centre ``c_g`` and a scale ``s_g`` (the conditional mode of
``u_g`` and ``1 / sqrt(-f_g'')`` there), both taken at the coreset's Laplace mean
(``laplace_.mean``), and the 20 nodes ``x_k`` and weights ``a_k`` of ``hermgauss(20)``:

    m_g ~= log sum_k a_k exp(x_k^2 + f_g(c_g + sqrt(2) s_g x_k)) + log(sqrt(2) s_g).

The nodes being fixed, the rule is a smooth function of the parameters. Measured on 3000
groups of 4 rows: at draws of the coreset posterior's Laplace fit it is within 1e-13 of the
integral a group (logistic) and 2e-9 (Poisson), more accurate than the library's adaptive
11 nodes (1e-8 and 1e-6); away from them the nodes no longer follow the group's conditional
posterior, and the error grows: with the group sd 1.5 times the Laplace mean's, 1e-5 a group;
twice, 1e-3 a group (a whole log density off by some 0.3 to 0.6 here); three times, 0.05. The
exports write a random intercept only (a ``ValueError`` for random slopes,
:func:`export_quadrature`).

The effects of these groups are not parameters of the exported models, and groups a coreset of
groups left out (``left_out_indices_``) are not in them at all. Their effects follow from their
rows, given each draw of the shared parameters: the library draws them so
(:class:`~skcoreset.linear_model.BayesianMultilevelRegression` for the groups it integrates
out, and its ``recover_groups`` for the left-out groups).
"""

from dataclasses import dataclass

import numpy as np

from ..models._multilevel import TAU_DF
from ..models._multilevel_likelihood import check_integrates_groups, extra_names
from ..models._multilevel_marginal import GroupMarginals
from ..models._recipes import no_export_error

#: Gauss-Hermite nodes of the exports' fixed quadrature of a group's marginal, by the number
#: of effects per group: a random intercept only (:func:`export_quadrature`).
EXPORT_NODES = {1: 20}


@dataclass(frozen=True)
class ExtraParameter:
    """A positive parameter besides the coefficients, log-normal a priori.

    Parameters
    ----------
    name : str
        Its name in the exported models (the Bayesian estimators' attribute: ``noise_scale``,
        ``alpha``, ``shape``, ``scale``, ``df``).
    log_mean : float
        The prior mean of its log.
    log_sd : float
        The prior sd of its log.

    Examples
    --------
    >>> from skcoreset.export import ExtraParameter
    >>> from skcoreset.models import get_model
    >>> name, mean, sd = get_model("negative_binomial").extra_priors(3, 4.0, 2.0)[0]
    >>> ExtraParameter(name, mean, sd)
    ExtraParameter(name='alpha', log_mean=0.0, log_sd=2.5)
    """

    name: str
    log_mean: float
    log_sd: float


@dataclass(frozen=True)
class ExportSpec:
    """The coreset posterior as the exports to probabilistic programming languages write it.

    Parameters
    ----------
    likelihood : str
        The likelihood's name (``model.likelihood``): 'bernoulli_logit', 'poisson_log',
        'normal', 'neg_binomial_2_log', 'gamma_log', 'categorical_logit', 'student_t'.
    X : ndarray of shape (M, D)
        The coreset's rows (no intercept column).
    y : ndarray of shape (M,)
        Their targets in the library's coding (class codes 0, ..., K - 1).
    weight : ndarray of shape (M,)
        The coreset weights: the exponents of the rows' likelihoods.
    coef_sd : ndarray of shape (D,) or (K - 1, D)
        Prior sd of each coefficient (one row per non-reference class).
    intercept_sd : float, ndarray of shape (K - 1,) or None
        Prior sd of the intercept(s); None without an intercept.
    extras : tuple of ExtraParameter
        The free extra parameters, in the likelihood's order (the Student-t's scale, then
        its degrees of freedom).
    fixed : dict
        Extra parameters fixed by the model (its ``extra`` given): name -> value.
    feature_names : list of str
        The features' names (``feature_names_in_``, else ``x0, x1, ...``).
    model : str
        The model's name.
    recipes : GLM
        The model, whose recipes write the likelihood in each language.
    effects : GroupEffects or None, default=None
        The group effects of a multilevel coreset posterior (their design, each row's group
        and their priors), added to each row's predictor; None without groups. The rows here
        are then those that enter row by row (a coreset of groups' weighted groups are
        ``effects.marginal``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.export import export_spec
    >>> from skcoreset.models import get_model
    >>> model = get_model("gaussian", prior_scale=np.array([2.5, 10.0]))
    >>> spec = export_spec(model, np.ones((3, 1)), np.arange(3.0), np.ones(3), y_sd=1.0)
    >>> spec.likelihood, spec.coef_sd, spec.intercept_sd, spec.extras
    ('normal', array([2.5]), 10.0, (ExtraParameter(name='noise_scale', log_mean=0.0, log_sd=3.0),))
    """

    likelihood: str
    X: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    coef_sd: np.ndarray
    intercept_sd: object
    extras: tuple
    fixed: dict
    feature_names: list
    model: str
    recipes: object
    effects: object = None

    @property
    def n_classes(self):
        """K for a model of K - 1 predictors (the multinomial's; coefficients (K - 1, D)).

        None for a model of one linear predictor.
        """
        return self.coef_sd.shape[0] + 1 if self.coef_sd.ndim == 2 else None

    def extra_names(self):
        """The names of the extra parameters, free and fixed, in the likelihood's order.

        Returns
        -------
        names : list of str
            The free ones' (:attr:`extras`), then the fixed ones' (:attr:`fixed`).
        """
        return [e.name for e in self.extras] + list(self.fixed)


def export_spec(model, X, y, weight, *, y_mean=0.0, y_sd=None, feature_names=None, what="a PPL"):
    """The coreset posterior of ``model`` on weighted rows, as the exports write it.

    Parameters
    ----------
    model : GLM
        The model with its prior (``prior_scale`` set: the coreset's ``_data_prior.model``).
    X : ndarray of shape (M, D)
        The rows.
    y : ndarray of shape (M,)
        Their coded targets.
    weight : ndarray of shape (M,)
        Their weights.
    y_mean : float, default=0.0
        Weighted mean of the full data's coded targets (the extra parameters' priors).
    y_sd : float or None, default=None
        Their weighted standard deviation (None: the priors do not follow the data).
    feature_names : list of str, default=None
        The features' names (None: ``x0, x1, ...``).
    what : str, default='a PPL'
        The export's name, for the error of a model without one.

    Returns
    -------
    spec : ExportSpec
        The description.

    Raises
    ------
    NotImplementedError
        If the model has no export (no ``likelihood``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.export import export_spec
    >>> from skcoreset.models import MultinomialModel
    >>> model = MultinomialModel(prior_scale=np.array([2.5, 10.0]), n_classes=3)
    >>> spec = export_spec(model, np.ones((4, 1)), [0, 1, 2, 1], np.ones(4))
    >>> spec.likelihood, spec.n_classes, spec.coef_sd.shape, spec.intercept_sd
    ('categorical_logit', 3, (2, 1), array([10., 10.]))
    """
    if getattr(model, "likelihood", None) is None:
        raise no_export_error(model, what)
    X = np.array(X, dtype=np.float64, ndmin=2)
    D = X.shape[1]
    Q = D + int(model.fit_intercept)
    k = model.n_predictors
    sd = 1.0 / np.sqrt(model.prior_precision(model.n_params(Q)))
    block = sd[: k * Q].reshape(k, Q)
    coef_sd, intercept_sd = block[:, :D], (block[:, D] if model.fit_intercept else None)
    if not model.vector_predictor:
        coef_sd = coef_sd[0]
        intercept_sd = None if intercept_sd is None else float(intercept_sd[0])
    extras = tuple(ExtraParameter(*e) for e in model.extra_priors(Q, y_mean, y_sd))
    fixed = {}
    if model.has_extra and model.extra is not None:
        fixed[model.extra_name] = float(model.extra)
    names = [f"x{j}" for j in range(D)] if feature_names is None else list(map(str, feature_names))
    return ExportSpec(
        likelihood=model.likelihood,
        X=X,
        y=np.array(y, dtype=np.float64),
        weight=np.array(weight, dtype=np.float64),
        coef_sd=np.ascontiguousarray(coef_sd),
        intercept_sd=intercept_sd,
        extras=extras,
        fixed=fixed,
        feature_names=names,
        model=model.name,
        recipes=model,
    )


@dataclass(frozen=True)
class GroupEffects:
    """The group effects of a multilevel coreset posterior, as the exports write them.

    Row ``n`` adds ``z_n . u_{g(n)}`` to its predictor, ``z_n = (1, x_n[slopes])`` (a random
    intercept, then the random slopes); the effects are written non-centred,
    ``u_gk = tau_k v_gk`` with ``v_gk ~ N(0, 1)`` and ``tau_k ~ HalfStudentT(df, scale)``:
    the library's ``u_gk ~ N(0, tau_k^2)``. The groups with effects are those whose rows
    enter row by row; a coreset of groups' weighted groups enter by their marginals
    (``marginal``), their effects integrated out.

    Parameters
    ----------
    Z : ndarray of shape (M, q)
        The rows' effects design: a column of ones, then the slopes' columns.
    index : ndarray of shape (M,)
        Each row's group, an index into ``labels`` (0-based).
    labels : ndarray of shape (G,)
        The labels of the groups entered row by row, sorted (all the coreset estimator's
        ``groups_`` but for a coreset of groups).
    names : list of str
        The effects' names: ``'intercept'``, then each slope's feature name.
    tau_df : float
        Degrees of freedom of the half-Student-t prior on each group sd (3).
    tau_scale : float
        Its scale (the multilevel posterior's ``tau_scale``).
    marginal : GroupMarginalTerms or None, default=None
        The groups entering by their weighted marginal log-likelihoods (a coreset of
        groups); None: none.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.export._spec import GroupEffects
    >>> effects = GroupEffects(np.ones((3, 1)), np.array([0, 1, 1]), np.array(["a", "b"]),
    ...                        ["intercept"], 3.0, 2.5)
    >>> effects.n_groups, effects.n_effects
    (2, 1)
    """

    Z: np.ndarray
    index: np.ndarray
    labels: np.ndarray
    names: list
    tau_df: float
    tau_scale: float
    marginal: object = None

    @property
    def n_groups(self):
        """G, the number of groups with effects (those entered row by row)."""
        return self.labels.shape[0]

    @property
    def n_effects(self):
        """q, the effects per group (the intercept, then one per slope)."""
        return self.Z.shape[1]


@dataclass(frozen=True)
class GroupMarginalTerms:
    """Groups entering by weighted marginal log-likelihoods, as the exports write them.

    Group ``g`` adds ``group_weight[g] * m_g`` to the log density, ``m_g`` by Gauss-Hermite
    quadrature on fixed nodes ``u_gk = centre[g] + sqrt(2) scale[g] @ nodes[k]`` (module
    notes; written for ``q`` effects, exported for ``q = 1``):

        f_gk = sum_{i in g} w_i log p(y_i | eta0_i + z_i . u_gk, extra)
               - sum_j (u_gkj^2 / (2 tau_j^2) + log tau_j) - q log(2 pi) / 2,
        m_g = logsumexp_k (f_gk + log_node_weight[g, k]).

    The nodes being data, every language writes the same few array operations: the rows'
    predictors at the nodes are ``eta0_i + node_offset[i, k]``.

    Parameters
    ----------
    X : ndarray of shape (M, D)
        The rows of these groups.
    y : ndarray of shape (M,)
        Their coded targets.
    weight : ndarray of shape (M,)
        The rows' own weights ``w_i`` inside their group's likelihood.
    Z : ndarray of shape (M, q)
        Their effects design.
    index : ndarray of shape (M,)
        Each row's group, an index into ``labels``.
    labels : ndarray of shape (G,)
        The groups' labels, sorted.
    group_weight : ndarray of shape (G,)
        Each group's weight ``W_g``.
    centre : ndarray of shape (G, q)
        The nodes' centres: each group's conditional mode of ``u_g``.
    scale : ndarray of shape (G, q, q)
        The nodes' scales: lower Cholesky factors of the conditional covariances (inverse
        curvatures) there.
    nodes : ndarray of shape (K, q)
        The Gauss-Hermite nodes (a tensor grid for ``q > 1``).
    log_weights : ndarray of shape (K,)
        Their log weights.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.export._spec import GroupMarginalTerms
    >>> x, a = np.polynomial.hermite.hermgauss(20)
    >>> terms = GroupMarginalTerms(np.zeros((2, 1)), np.zeros(2), np.ones(2), np.ones((2, 1)),
    ...                            np.array([0, 0]), np.array(["a"]), np.array([3.0]),
    ...                            np.zeros((1, 1)), np.ones((1, 1, 1)), x[:, None], np.log(a))
    >>> terms.n_groups, terms.n_nodes, terms.node_offset.shape, terms.node_sq.shape
    (1, 20, (2, 20), (1, 20, 1))
    """

    X: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    Z: np.ndarray
    index: np.ndarray
    labels: np.ndarray
    group_weight: np.ndarray
    centre: np.ndarray
    scale: np.ndarray
    nodes: np.ndarray
    log_weights: np.ndarray

    @property
    def n_groups(self):
        """The number of groups entering by their marginals."""
        return self.labels.shape[0]

    @property
    def n_nodes(self):
        """K, the quadrature's points per group."""
        return self.nodes.shape[0]

    @property
    def points(self):
        """The nodes ``u_gk`` (G, K, q)."""
        return self.centre[:, None, :] + np.sqrt(2.0) * np.einsum(
            "gpq,kq->gkp", self.scale, self.nodes
        )

    @property
    def node_offset(self):
        """``z_i . u_{g(i)k}`` (M, K): what the nodes add to each row's predictor."""
        return np.einsum("nq,nkq->nk", self.Z, self.points[self.index])

    @property
    def node_sq(self):
        """``u_gkj^2`` (G, K, q), for the effects' normal prior at the nodes."""
        return self.points**2

    @property
    def log_node_weight(self):
        """``log a_k + |x_k|^2 + log det(sqrt(2) L_g)`` (G, K): the rule's log weights over
        the Gaussian weight, with the nodes' Jacobian."""
        q = self.nodes.shape[1]
        log_jac = 0.5 * q * np.log(2.0) + np.log(np.diagonal(self.scale, 0, 1, 2)).sum(axis=1)
        return (self.log_weights + np.sum(self.nodes**2, axis=1))[None, :] + log_jac[:, None]

    def log_marginals(self, eta0, loglik, tau):
        """Each group's ``m_g`` (G,) by this rule, in NumPy (a reference for the exports).

        ``eta0``: the rows' predictors without effects (M,); ``loglik(eta, y)``: the rows'
        log-likelihoods of flat arrays; ``tau``: the group sds (q,).
        """
        K = self.n_nodes
        eta = eta0[:, None] + self.node_offset
        ll = loglik(eta.ravel(), np.repeat(self.y, K)).reshape(eta.shape)
        f = np.zeros((self.n_groups, K))
        np.add.at(f, self.index, self.weight[:, None] * ll)
        tau = np.asarray(tau, dtype=np.float64)
        f -= (
            self.node_sq @ (0.5 / tau**2) + np.sum(np.log(tau)) + 0.5 * tau.size * np.log(2 * np.pi)
        )
        t = f + self.log_node_weight
        top = t.max(axis=1, keepdims=True)
        return top[:, 0] + np.log(np.exp(t - top).sum(axis=1))


def export_quadrature(q):
    """``(nodes (K, q), log_weights (K,))``: the exports' Gauss-Hermite rule for ``q`` effects
    per group (:data:`EXPORT_NODES`); a ``ValueError`` for random slopes.

    Random slopes are refused: a slope's sd is weakly identified by small groups, and across
    its posterior the conditional spread of the effects follows it, away from any fixed nodes
    (measured, a tensor grid of 12^2 fixed nodes on 300 logistic groups of 4 rows: the
    weighted marginals off by 2 to 12 at draws of the Laplace fit whose slope sd is a fifth or
    three times the mean's).
    """
    if q not in EXPORT_NODES:
        raise ValueError(
            f"The exports write a coreset of groups' weighted marginals for a random intercept "
            f"only; this model has {q} effects per group (random slopes), whose sds small "
            "groups identify too weakly for a quadrature on fixed nodes. Sample it with "
            "BayesianMultilevelRegression (fit on the coreset with group_weight), or build a "
            "coreset that keeps the groups' rows."
        )
    x, a = np.polynomial.hermite.hermgauss(EXPORT_NODES[q])
    return x[:, None], np.log(a)


def multilevel_export_spec(
    posterior,
    X,
    y,
    weight,
    index,
    labels,
    *,
    group_weight=None,
    centre=None,
    feature_names=None,
    what="a PPL",
):
    """The multilevel coreset posterior on weighted rows, as the exports write it.

    The priors are the multilevel posterior's (the one the coreset was built for: the
    coreset estimator's ``laplace_.posterior``): the coefficients' sds ``prior_scale`` (the
    intercept last), the log-normal prior of each extra parameter (``extra_priors``, the
    normal priors of their logs: the Student-t's scale, then its degrees of freedom), the
    group sds' half-Student-t(3, ``tau_scale``); the likelihood is
    the base model's, written with its recipes.

    Rows of a group of weight 1 enter row by row, their group's effect explicit (the groups
    with effects are those that have such rows); a group of weight ``W_g != 1`` (a coreset of
    groups) enters by ``W_g`` times its marginal log-likelihood, by a Gauss-Hermite rule whose
    nodes sit at the group's conditional mode and scale at the shared parameters of
    ``centre`` (module notes). As in the library's posterior
    (``Multilevel.posterior(..., group_weight=...)``).

    Parameters
    ----------
    posterior : MultilevelPosterior
        The multilevel posterior of the data the coreset was built from (only its model and
        priors are read, not its rows).
    X : ndarray of shape (M, D)
        The coreset's rows.
    y : ndarray of shape (M,)
        Their targets in the base model's coding.
    weight : ndarray of shape (M,)
        Their weights.
    index : ndarray of shape (M,)
        Each row's group, an index into ``labels``.
    labels : ndarray of shape (G,)
        The group labels, sorted.
    group_weight : ndarray of shape (M,) or None, default=None
        Each row's group's weight (the coreset's ``sample_group_weight_``); None: all 1.
    centre : ndarray or None, default=None
        A parameter vector of ``posterior`` (its Laplace mean, ``laplace_.mean``) whose
        coefficients, extra parameter and group sds centre the marginals' nodes; needed when
        a group's weight is not 1.
    feature_names : list of str, default=None
        The features' names (None: ``x0, x1, ...``).
    what : str, default='a PPL'
        The export's name, for the error of a model without one.

    Returns
    -------
    spec : ExportSpec
        The description, its ``effects`` set (and ``effects.marginal`` for weighted groups);
        its rows those that enter row by row.

    Raises
    ------
    NotImplementedError
        If the base model has no export (no ``likelihood``).
    ValueError
        If groups enter by their marginals and ``centre`` is None, or the model has random
        slopes (:func:`export_quadrature`).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.export._spec import multilevel_export_spec
    >>> from skcoreset.models import Multilevel
    >>> rng = np.random.RandomState(0)
    >>> X, y, codes = rng.standard_normal((40, 2)), rng.poisson(2.0, 40), np.arange(40) % 4
    >>> posterior = Multilevel("poisson", slopes=[1]).posterior(X, y, codes, 4, np.ones(40))
    >>> spec = multilevel_export_spec(posterior, X, y, np.ones(40), codes, np.arange(4))
    >>> spec.effects.names, spec.effects.n_groups, spec.effects.tau_scale
    (['intercept', 'x1'], 4, 2.5)
    >>> gw = np.where(codes < 2, 1.0, 7.5)  # groups 2 and 3: weighted marginals
    >>> posterior = Multilevel("poisson").posterior(X, y, codes, 4, np.ones(40))
    >>> spec = multilevel_export_spec(posterior, X, y, np.ones(40), codes, np.arange(4),
    ...                               group_weight=gw, centre=np.zeros(posterior.n_params))
    >>> spec.X.shape, spec.effects.labels, spec.effects.marginal.labels
    ((20, 2), array([0, 1]), array([2, 3]))
    >>> spec.effects.marginal.group_weight, spec.effects.marginal.n_nodes
    (array([7.5, 7.5]), 20)
    """
    base = posterior.base
    if getattr(base, "likelihood", None) is None:
        raise no_export_error(base, what)
    X = np.array(X, dtype=np.float64, ndmin=2)
    y = np.array(y, dtype=np.float64)
    weight = np.array(weight, dtype=np.float64)
    index = np.asarray(index, dtype=np.intp)
    labels = np.asarray(labels)
    D = X.shape[1]
    scale = np.asarray(posterior.prior_scale, dtype=np.float64)
    if scale.shape[0] != D + int(base.fit_intercept):
        raise ValueError(
            f"The rows have {D} features; the multilevel posterior's model has "
            f"{scale.shape[0] - int(base.fit_intercept)}."
        )
    # the free extra parameters (the Student-t's scale, then its degrees of freedom): each
    # log-normal, the normal prior of its log
    extras = tuple(
        ExtraParameter(name, float(m), float(sd))
        for name, (m, sd) in zip(extra_names(base), posterior.extra_priors)
    )
    fixed = {}
    if base.has_extra and base.extra is not None:
        fixed[base.extra_name] = float(base.extra)
    names = [f"x{j}" for j in range(D)] if feature_names is None else list(map(str, feature_names))
    Z = posterior.spec.effects_design(X)
    gw = np.ones(X.shape[0]) if group_weight is None else np.asarray(group_weight, float)
    marginal = gw != 1.0  # as the library's posterior splits them
    explicit = ~marginal
    # the groups with effects: those with rows entered row by row
    used, local = np.unique(index[explicit], return_inverse=True)
    terms = None
    if marginal.any():
        terms = _marginal_terms(
            posterior,
            X[marginal],
            y[marginal],
            weight[marginal],
            Z[marginal],
            index[marginal],
            labels,
            gw[marginal],
            centre,
        )
    effects = GroupEffects(
        Z=Z[explicit],
        index=local.astype(np.intp),
        labels=labels[used],
        names=["intercept"] + [names[j] for j in posterior.spec.slopes],
        tau_df=float(TAU_DF),
        tau_scale=float(posterior.tau_scale),
        marginal=terms,
    )
    return ExportSpec(
        likelihood=base.likelihood,
        X=X[explicit],
        y=y[explicit],
        weight=weight[explicit],
        coef_sd=np.ascontiguousarray(scale[:D]),
        intercept_sd=float(scale[D]) if base.fit_intercept else None,
        extras=extras,
        fixed=fixed,
        feature_names=names,
        model=posterior.spec.name,
        recipes=base,
        effects=effects,
    )


def _marginal_terms(posterior, X, y, w, Z, index, labels, gw, centre):
    """The :class:`GroupMarginalTerms` of the rows of the groups of weight other than 1:
    their nodes at each group's conditional mode and curvature at the shared parameters of
    ``centre`` (a parameter vector of ``posterior``), found as the library finds them."""
    check_integrates_groups(posterior.base)
    nodes, log_weights = export_quadrature(Z.shape[1])
    if centre is None:
        raise ValueError(
            "Groups of weight other than 1 (a coreset of groups) enter by their marginals, "
            "whose quadrature needs centre= (the shared parameters to centre its nodes at)."
        )
    used, local = np.unique(index, return_inverse=True)
    G = used.shape[0]
    weights = np.zeros(G)
    weights[local] = gw
    base = posterior.base
    beta, s, log_tau = posterior.split(np.asarray(centre, dtype=np.float64))[:3]
    Xd = base.design(X)
    marginals = GroupMarginals(base, posterior.E, Xd, Z, y, w, local, G, weights)
    u_hat, F = marginals.modes(Xd @ beta, posterior.model_at(s), np.exp(log_tau))
    if not (np.all(np.isfinite(u_hat)) and np.all(np.isfinite(F))):
        raise ValueError("The groups' conditional modes at centre= are not finite.")
    L = np.linalg.cholesky(np.linalg.inv(F))
    return GroupMarginalTerms(
        X=X,
        y=y,
        weight=w,
        Z=Z,
        index=local.astype(np.intp),
        labels=labels[used],
        group_weight=weights,
        centre=u_hat,
        scale=L,
        nodes=nodes,
        log_weights=log_weights,
    )


def missing(package, extra, exc):
    """The ImportError of an export whose language is not installed, naming the extra."""
    return ImportError(
        f"This export needs {package}, which is not installed: pip install "
        f"'skcoreset[{extra}]' (or pip install {package})."
    ).with_traceback(exc.__traceback__)
