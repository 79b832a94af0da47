"""The coreset posterior as a NumPyro model (``to_numpyro``): the observed site's
log-likelihoods scaled by the coreset weights (``handlers.scale`` in a plate over the rows), its
distribution the model's recipe (``numpyro_likelihood``)."""

from ._spec import missing


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
        import jax
        import jax.numpy as jnp
        import jax.scipy.special  # noqa: F401 (the recipes' jax.scipy)
        import numpyro
        import numpyro.distributions as dist
        from numpyro import handlers
    except ImportError as exc:
        raise missing("numpyro", "numpyro", exc) from None
    multiclass = spec.n_classes is not None
    X, w = jnp.asarray(spec.X), jnp.asarray(spec.weight)
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
            # the model's recipe: the targets' distribution and the values it observes
            likelihood, y = spec.recipes.numpyro_likelihood(numpyro, jax, eta, spec.y, extras)
            numpyro.sample("y", likelihood, obs=y)

    return model
