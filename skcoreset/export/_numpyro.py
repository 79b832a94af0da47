"""The coreset posterior as a NumPyro model (``to_numpyro``): the observed site's
log-likelihoods scaled by the coreset weights (``handlers.scale`` in a plate over the rows)."""

import numpy as np

from ._spec import missing


def _likelihood(dist, jnp, likelihood, eta, extras, rates=False):
    """NumPyro's distribution of the likelihood's name at the linear predictors (``rates``:
    Poisson targets that are not all integers)."""
    if likelihood == "bernoulli_logit":
        return dist.Bernoulli(logits=eta)
    if likelihood == "poisson_log":
        if rates:  # NumPyro's Poisson gives -inf off the integers: the library's density
            return _poisson_rates(dist)(eta)
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


def _poisson_rates(dist):
    """The Poisson density of the library on non-negative reals, ``y eta - exp(eta) -
    lgamma(y + 1)``, as a NumPyro distribution of log rate ``eta`` (its draws are counts)."""
    import jax
    import jax.numpy as jnp
    from numpyro.distributions import constraints

    class PoissonRate(dist.Distribution):
        arg_constraints = {"log_rate": constraints.real}
        support = constraints.nonnegative

        def __init__(self, log_rate, *, validate_args=None):
            self.log_rate = log_rate
            super().__init__(jnp.shape(log_rate), validate_args=validate_args)

        def sample(self, key, sample_shape=()):
            return dist.Poisson(jnp.exp(self.log_rate)).sample(key, sample_shape)

        def log_prob(self, value):
            eta = self.log_rate
            return value * eta - jnp.exp(eta) - jax.scipy.special.gammaln(value + 1.0)

    return PoissonRate


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
            likelihood = _likelihood(dist, jnp, spec.likelihood, eta, extras, spec.rates)
            numpyro.sample("y", likelihood, obs=y)

    return model
