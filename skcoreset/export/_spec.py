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
"""

from dataclasses import dataclass

import numpy as np

from ..models._multilevel import TAU_DF
from ..models._recipes import no_export_error


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
        and their priors), added to each row's predictor; None without groups.

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
    the library's ``u_gk ~ N(0, tau_k^2)``.

    Parameters
    ----------
    Z : ndarray of shape (M, q)
        The coreset rows' effects design: a column of ones, then the slopes' columns.
    index : ndarray of shape (M,)
        Each row's group, an index into ``labels`` (0-based).
    labels : ndarray of shape (G,)
        The group labels, sorted (the coreset estimator's ``groups_``).
    names : list of str
        The effects' names: ``'intercept'``, then each slope's feature name.
    tau_df : float
        Degrees of freedom of the half-Student-t prior on each group sd (3).
    tau_scale : float
        Its scale (the multilevel posterior's ``tau_scale``).

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

    @property
    def n_groups(self):
        """G, the number of groups (every group of the data, as in the library's posterior)."""
        return self.labels.shape[0]

    @property
    def n_effects(self):
        """q, the effects per group (the intercept, then one per slope)."""
        return self.Z.shape[1]


def multilevel_export_spec(
    posterior, X, y, weight, index, labels, *, feature_names=None, what="a PPL"
):
    """The multilevel coreset posterior on weighted rows, as the exports write it.

    The priors are the multilevel posterior's (the one the coreset was built for: the
    coreset estimator's ``laplace_.posterior``): the coefficients' sds ``prior_scale`` (the
    intercept last), the log-normal prior of the extra parameter (``extra_prior``, the normal
    prior of its log), the group sds' half-Student-t(3, ``tau_scale``); the likelihood is
    the base model's, written with its recipes.

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
    feature_names : list of str, default=None
        The features' names (None: ``x0, x1, ...``).
    what : str, default='a PPL'
        The export's name, for the error of a model without one.

    Returns
    -------
    spec : ExportSpec
        The description, its ``effects`` set.

    Raises
    ------
    NotImplementedError
        If the base model has no export (no ``likelihood``).

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
    """
    base = posterior.base
    if getattr(base, "likelihood", None) is None:
        raise no_export_error(base, what)
    X = np.array(X, dtype=np.float64, ndmin=2)
    D = X.shape[1]
    scale = np.asarray(posterior.prior_scale, dtype=np.float64)
    if scale.shape[0] != D + int(base.fit_intercept):
        raise ValueError(
            f"The rows have {D} features; the multilevel posterior's model has "
            f"{scale.shape[0] - int(base.fit_intercept)}."
        )
    extras = ()
    if posterior.E:  # a free extra parameter: log-normal, the normal prior of its log
        extras = (ExtraParameter(base.extra_name, *map(float, posterior.extra_prior)),)
    fixed = {}
    if base.has_extra and base.extra is not None:
        fixed[base.extra_name] = float(base.extra)
    names = [f"x{j}" for j in range(D)] if feature_names is None else list(map(str, feature_names))
    effects = GroupEffects(
        Z=posterior.spec.effects_design(X),
        index=np.asarray(index, dtype=np.intp),
        labels=np.asarray(labels),
        names=["intercept"] + [names[j] for j in posterior.spec.slopes],
        tau_df=float(TAU_DF),
        tau_scale=float(posterior.tau_scale),
    )
    return ExportSpec(
        likelihood=base.likelihood,
        X=X,
        y=np.array(y, dtype=np.float64),
        weight=np.array(weight, dtype=np.float64),
        coef_sd=np.ascontiguousarray(scale[:D]),
        intercept_sd=float(scale[D]) if base.fit_intercept else None,
        extras=extras,
        fixed=fixed,
        feature_names=names,
        model=posterior.spec.name,
        recipes=base,
        effects=effects,
    )


def missing(package, extra, exc):
    """The ImportError of an export whose language is not installed, naming the extra."""
    return ImportError(
        f"This export needs {package}, which is not installed: pip install "
        f"'skcoreset[{extra}]' (or pip install {package})."
    ).with_traceback(exc.__traceback__)
