"""The coreset posterior as a PyMC model (``to_pymc``): priors as random variables, the
weighted log-likelihood (the model's recipe, ``pymc_loglik``) as a ``pm.Potential``. A multilevel
coreset's group effects (``spec.effects``) add ``group_sd`` (``pm.HalfStudentT``, dims
``effect``), ``group_effects_raw`` (standard normal, dims ``group`` x ``effect``) and the
deterministic ``group_effects = group_sd * group_effects_raw``."""

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
    if effects is not None:
        coords["group"] = effects.labels.tolist()
        coords["effect"] = list(effects.names)
    with pm.Model(coords=coords) as model:
        coef = pm.Normal("coef", mu=0.0, sigma=spec.coef_sd, dims=coef_dims)
        eta = pt.dot(spec.X, coef.T if multiclass else coef)
        if spec.intercept_sd is not None:
            dims = "class" if multiclass else None
            sd = _f64(spec.intercept_sd)
            intercept = pm.Normal("intercept", mu=0.0, sigma=sd, dims=dims)
            eta = eta + intercept
        # log-normal: sampled on the log scale, where its density (with the Jacobian) is the
        # normal prior of the log
        free = {
            e.name: pm.LogNormal(e.name, mu=_f64(e.log_mean), sigma=_f64(e.log_sd))
            for e in spec.extras
        }
        extras = [free[n] if n in free else _f64(spec.fixed[n]) for n in spec.extra_names()]
        if effects is not None:  # non-centred: u = tau * v, v ~ N(0, 1)
            tau = pm.HalfStudentT(
                "group_sd", nu=_f64(effects.tau_df), sigma=_f64(effects.tau_scale), dims="effect"
            )
            raw = pm.Normal(
                "group_effects_raw", mu=_f64(0.0), sigma=_f64(1.0), dims=("group", "effect")
            )
            u = pm.Deterministic("group_effects", tau * raw, dims=("group", "effect"))
            eta = eta + pt.sum(effects.Z * u[effects.index], axis=1)
        loglik = spec.recipes.pymc_loglik(pm, pt, eta, spec.y, extras)  # the model's recipe
        pm.Potential("weighted_loglik", pt.sum(spec.weight * loglik))
    return model
