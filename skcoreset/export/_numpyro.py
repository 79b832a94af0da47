"""The coreset posterior as a NumPyro model (``to_numpyro``): the observed site's
log-likelihoods scaled by the coreset weights (``handlers.scale`` in a plate over the rows)."""

import numpy as np

from ._spec import missing


def _likelihood(dist, jnp, likelihood, eta, extras):
    """NumPyro's distribution of the likelihood's name at the linear predictors."""
    if likelihood == "bernoulli_logit":
        return dist.Bernoulli(logits=eta)
    if likelihood == "poisson_log":
        return dist.Poisson(rate=jnp.exp(eta))
    if likelihood == "normal":
        (sigma,) = extras
        return dist.Normal(eta, sigma)
    if likelihood == "neg_binomial_2_log":
        # NumPyro's concentration is the size r = 1 / the library's dispersion
        (alpha,) = extras
        return dist.NegativeBinomial2(mean=jnp.exp(eta), concentration=1.0 / alpha)
    if likelihood == "gamma_log":
        (shape,) = extras
        return dist.Gamma(concentration=shape, rate=shape * jnp.exp(-eta))
    if likelihood == "categorical_logit":
        # the reference class's predictor is 0
        logits = jnp.concatenate([jnp.zeros((eta.shape[0], 1)), eta], axis=1)
        return dist.Categorical(logits=logits)
    if likelihood == "student_t":
        scale, df = extras
        return dist.StudentT(df=df, loc=eta, scale=scale)
    raise NotImplementedError(f"No NumPyro likelihood for {likelihood!r}.")


def build(spec):
    """The NumPyro model function of an :class:`~skcoreset.export.ExportSpec`.

    Parameters
    ----------
    spec : ExportSpec
        The coreset posterior.

    Returns
    -------
    model : callable
        A NumPyro model of no argument.
    """
    try:
        import jax.numpy as jnp
        import numpyro
        import numpyro.distributions as dist
        from numpyro import handlers
    except ImportError as exc:
        raise missing("numpyro", "numpyro", exc) from None
    multiclass = spec.n_classes is not None
    X, w = jnp.asarray(spec.X), jnp.asarray(spec.weight)
    y = jnp.asarray(spec.y.astype(np.int32) if spec.likelihood == "categorical_logit" else spec.y)
    coef_sd = jnp.asarray(spec.coef_sd)
    intercept_sd = None if spec.intercept_sd is None else jnp.asarray(spec.intercept_sd)

    def model():
        coef = numpyro.sample("coef", dist.Normal(0.0, coef_sd).to_event(coef_sd.ndim))
        eta = X @ (coef.T if multiclass else coef)
        if intercept_sd is not None:
            prior = dist.Normal(0.0, intercept_sd).to_event(intercept_sd.ndim)
            eta = eta + numpyro.sample("intercept", prior)
        # log-normal: sampled on the log scale, where its density (with the Jacobian) is the
        # normal prior of the log
        free = {
            e.name: numpyro.sample(e.name, dist.LogNormal(e.log_mean, e.log_sd))
            for e in spec.extras
        }
        extras = [free.get(name, spec.fixed.get(name)) for name in spec.extra_names()]
        with numpyro.plate("rows", X.shape[0]), handlers.scale(scale=w):
            numpyro.sample("y", _likelihood(dist, jnp, spec.likelihood, eta, extras), obs=y)

    return model
