"""The coreset posterior as a PyMC model (``to_pymc``): priors as random variables, the
weighted log-likelihood (the model's recipe, ``pymc_loglik``) as a ``pm.Potential``. A multilevel
coreset's group effects (``spec.effects``) add ``group_sd`` (``pm.HalfStudentT``, dims
``effect``), ``group_effects_raw`` (standard normal, dims ``group`` x ``effect``) and the
deterministic ``group_effects = group_sd * group_effects_raw`` (for the groups entered row by row;
none when no group is). The weighted marginals of a coreset of groups
(``spec.effects.marginal``) are the ``pm.Potential`` ``group_marginals``: ``sum_g W_g m_g``, each
``m_g`` by the fixed-node Gauss-Hermite rule of
:class:`~skcoreset.export._spec.GroupMarginalTerms`; their effects are not variables."""

import numpy as np

from ._spec import missing


def _f64(value):
    """A number as a float64 array: PyTensor would make a float32 constant of a Python float
    that float32 holds exactly (3.0), and compute in float32 what only it enters (1 / 3.0 off
    by 1e-8)."""
    return np.asarray(value, dtype=np.float64)


def build(spec, classes=None):
    """The PyMC model of an :class:`~skcoreset.export.ExportSpec`.

    Parameters
    ----------
    spec : ExportSpec
        The coreset posterior.
    classes : list or None, default=None
        The class labels (the multinomial model's ``class`` coordinate: all but the first).

    Returns
    -------
    model : pymc.Model
        The model.
    """
    try:
        import pymc as pm
        import pytensor.tensor as pt
    except ImportError as exc:
        raise missing("pymc", "pymc", exc) from None
    multiclass = spec.n_classes is not None
    coords = {"feature": spec.feature_names}
    coef_dims = "feature"
    if multiclass:
        labels = classes[1:] if classes is not None else list(range(1, spec.n_classes))
        coords["class"] = [str(c) for c in labels]
        coef_dims = ("class", "feature")
    effects = spec.effects
    marginal = None if effects is None else effects.marginal
    if effects is not None:
        if effects.n_groups:
            coords["group"] = effects.labels.tolist()
        coords["effect"] = list(effects.names)
    with pm.Model(coords=coords) as model:
        coef = pm.Normal("coef", mu=0.0, sigma=spec.coef_sd, dims=coef_dims)
        eta = pt.dot(spec.X, coef.T if multiclass else coef)
        eta0 = None if marginal is None else pt.dot(marginal.X, coef)
        if spec.intercept_sd is not None:
            dims = "class" if multiclass else None
            sd = _f64(spec.intercept_sd)
            intercept = pm.Normal("intercept", mu=0.0, sigma=sd, dims=dims)
            eta = eta + intercept
            eta0 = None if marginal is None else eta0 + intercept
        # log-normal: sampled on the log scale, where its density (with the Jacobian) is the
        # normal prior of the log
        free = {
            e.name: pm.LogNormal(e.name, mu=_f64(e.log_mean), sigma=_f64(e.log_sd))
            for e in spec.extras
        }
        extras = [free[n] if n in free else _f64(spec.fixed[n]) for n in spec.extra_names()]
        if effects is not None:
            tau = pm.HalfStudentT(
                "group_sd", nu=_f64(effects.tau_df), sigma=_f64(effects.tau_scale), dims="effect"
            )
        if effects is not None and effects.n_groups:  # non-centred: u = tau * v, v ~ N(0, 1)
            raw = pm.Normal(
                "group_effects_raw", mu=_f64(0.0), sigma=_f64(1.0), dims=("group", "effect")
            )
            u = pm.Deterministic("group_effects", tau * raw, dims=("group", "effect"))
            eta = eta + pt.sum(effects.Z * u[effects.index], axis=1)
        if spec.X.shape[0]:
            loglik = spec.recipes.pymc_loglik(pm, pt, eta, spec.y, extras)  # the model's recipe
            pm.Potential("weighted_loglik", pt.sum(spec.weight * loglik))
        if marginal is not None:
            pm.Potential("group_marginals", _marginals(pm, pt, spec, marginal, eta0, tau, extras))
    return model


def _marginals(pm, pt, spec, marginal, eta0, tau, extras):
    """``sum_g W_g m_g``: each group's marginal by the fixed-node Gauss-Hermite rule."""
    K = marginal.n_nodes
    # f_gk: the rows' weighted log-likelihoods at the nodes, summed per group (rows of a
    # group add up: inc_subtensor accumulates repeated indices), and the effects' prior there
    eta_nodes = (eta0[:, None] + marginal.node_offset).reshape((-1,))
    ll = spec.recipes.pymc_loglik(pm, pt, eta_nodes, np.repeat(marginal.y, K), extras)
    rows = marginal.weight[:, None] * ll.reshape((-1, K))
    f = pt.inc_subtensor(pt.zeros((marginal.n_groups, K))[marginal.index], rows)
    q = marginal.nodes.shape[1]
    f = f - pt.dot(marginal.node_sq, 0.5 / tau**2) - pt.sum(pt.log(tau))
    f = f - _f64(0.5 * q * np.log(2 * np.pi))
    m = pm.math.logsumexp(f + marginal.log_node_weight, axis=1)
    return pt.sum(marginal.group_weight * m)
