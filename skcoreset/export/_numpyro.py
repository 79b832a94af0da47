"""The coreset posterior as a NumPyro model (``to_numpyro``): the observed site's
log-likelihoods scaled by the coreset weights (``handlers.scale`` in a plate over the rows), its
distribution the model's recipe (``numpyro_likelihood``). A multilevel coreset's group effects
(``spec.effects``) add the sites ``group_sd`` (half-Student-t, a folded Student-t),
``group_effects_raw`` (standard normal) and the deterministic
``group_effects = group_sd * group_effects_raw``."""

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
    effects = spec.effects
    if effects is not None:
        Z, index = jnp.asarray(effects.Z), jnp.asarray(effects.index)
        G, q = effects.n_groups, effects.n_effects
        # the half-Student-t: |t|, twice the Student-t's density on the positive half-line
        tau_prior = dist.FoldedDistribution(
            dist.StudentT(effects.tau_df, jnp.zeros(q), effects.tau_scale)
        ).to_event(1)
        raw_prior = dist.Normal(jnp.zeros((G, q)), 1.0).to_event(2)

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
        if effects is not None:  # non-centred: u = tau * v, v ~ N(0, 1)
            tau = numpyro.sample("group_sd", tau_prior)
            raw = numpyro.sample("group_effects_raw", raw_prior)
            u = numpyro.deterministic("group_effects", tau * raw)
            eta = eta + jnp.sum(Z * u[index], axis=1)
        with numpyro.plate("rows", X.shape[0]), handlers.scale(scale=w):
            # the model's recipe: the targets' distribution and the values it observes
            likelihood, y = spec.recipes.numpyro_likelihood(numpyro, jax, eta, spec.y, extras)
            numpyro.sample("y", likelihood, obs=y)

    return model
