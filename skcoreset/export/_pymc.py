"""The coreset posterior as a PyMC model (``to_pymc``): priors as random variables, the
weighted log-likelihood as a ``pm.Potential``."""

import numpy as np

from ._spec import missing


def _loglik(pm, pt, likelihood, eta, y, extras):
    """Each row's log-likelihood, PyMC's distribution of the likelihood's name."""
    if likelihood == "bernoulli_logit":
        return pm.logp(pm.Bernoulli.dist(logit_p=eta), y)
    if likelihood == "poisson_log":
        if not np.all(y == np.round(y)):
            # rates: the library's density (PyMC's Poisson would floor them)
            return y * eta - pt.exp(eta) - pt.gammaln(y + 1.0)
        return pm.logp(pm.Poisson.dist(mu=pt.exp(eta)), y)
    if likelihood == "normal":
        (sigma,) = extras
        return pm.logp(pm.Normal.dist(mu=eta, sigma=sigma), y)
    if likelihood == "neg_binomial_2_log":
        # PyMC's alpha is the size r = 1 / the library's dispersion
        (alpha,) = extras
        return pm.logp(pm.NegativeBinomial.dist(mu=pt.exp(eta), alpha=1.0 / alpha), y)
    if likelihood == "gamma_log":
        (shape,) = extras
        return pm.logp(pm.Gamma.dist(alpha=shape, beta=shape * pt.exp(-eta)), y)
    if likelihood == "categorical_logit":
        # the reference class's predictor is 0
        logits = pt.concatenate([pt.zeros((eta.shape[0], 1)), eta], axis=1)
        return pm.logp(pm.Categorical.dist(logit_p=logits), y)
    if likelihood == "student_t":
        scale, df = extras
        return pm.logp(pm.StudentT.dist(nu=df, mu=eta, sigma=scale), y)
    raise NotImplementedError(f"No PyMC likelihood for {likelihood!r}.")


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
    y = spec.y.astype(np.int64) if spec.likelihood == "categorical_logit" else spec.y
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
        loglik = _loglik(pm, pt, spec.likelihood, eta, y, extras)
        pm.Potential("weighted_loglik", pt.sum(spec.weight * loglik))
    return model
