"""The coreset posterior as a NumPyro model (``to_numpyro``): the observed site's
log-likelihoods scaled by the coreset weights (``handlers.scale`` in a plate over the rows), its
distribution the model's recipe (``numpyro_likelihood``). A multilevel coreset's group effects
(``spec.effects``) add the sites ``group_sd`` (half-Student-t, a folded Student-t),
``group_effects_raw`` (standard normal) and the deterministic
``group_effects = group_sd * group_effects_raw`` (for the groups entered row by row; none when
no group is). The weighted marginals of a coreset of groups (``spec.effects.marginal``) are the
factor ``group_marginals``: ``sum_g W_g m_g``, each ``m_g`` by the fixed-node Gauss-Hermite rule
of :class:`~skcoreset.export._spec.GroupMarginalTerms`; their effects are not sites."""

import numpy as np

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
    marginal = None if effects is None else effects.marginal
    if effects is not None:
        Z, index = jnp.asarray(effects.Z), jnp.asarray(effects.index)
        G, q = effects.n_groups, effects.n_effects
        # the half-Student-t: |t|, twice the Student-t's density on the positive half-line
        tau_prior = dist.FoldedDistribution(
            dist.StudentT(effects.tau_df, jnp.zeros(q), effects.tau_scale)
        ).to_event(1)
        raw_prior = dist.Normal(jnp.zeros((G, q)), 1.0).to_event(2)
    if marginal is not None:  # the fixed nodes' arrays (GroupMarginalTerms)
        K = marginal.n_nodes
        m_X, m_w = jnp.asarray(marginal.X), jnp.asarray(marginal.weight)[:, None]
        m_index, m_G = jnp.asarray(marginal.index), marginal.n_groups
        m_offset, m_sq = jnp.asarray(marginal.node_offset), jnp.asarray(marginal.node_sq)
        m_log_weight = jnp.asarray(marginal.log_node_weight)
        m_y = np.repeat(marginal.y, K)  # each row's target at its K nodes
        m_group_weight = jnp.asarray(marginal.group_weight)

    def model():
        coef = numpyro.sample("coef", dist.Normal(0.0, coef_sd).to_event(coef_sd.ndim))
        eta = X @ (coef.T if multiclass else coef)
        eta0 = None if marginal is None else m_X @ coef
        if intercept_sd is not None:
            prior = dist.Normal(0.0, intercept_sd).to_event(intercept_sd.ndim)
            intercept = numpyro.sample("intercept", prior)
            eta = eta + intercept
            eta0 = None if marginal is None else eta0 + intercept
        # log-normal: sampled on the log scale, where its density (with the Jacobian) is the
        # normal prior of the log
        free = {
            e.name: numpyro.sample(e.name, dist.LogNormal(e.log_mean, e.log_sd))
            for e in spec.extras
        }
        extras = [free.get(name, spec.fixed.get(name)) for name in spec.extra_names()]
        if effects is not None:
            tau = numpyro.sample("group_sd", tau_prior)
        if effects is not None and G:  # non-centred: u = tau * v, v ~ N(0, 1)
            raw = numpyro.sample("group_effects_raw", raw_prior)
            u = numpyro.deterministic("group_effects", tau * raw)
            eta = eta + jnp.sum(Z * u[index], axis=1)
        if X.shape[0]:
            with numpyro.plate("rows", X.shape[0]), handlers.scale(scale=w):
                # the model's recipe: the targets' distribution and the values it observes
                likelihood, y = spec.recipes.numpyro_likelihood(numpyro, jax, eta, spec.y, extras)
                numpyro.sample("y", likelihood, obs=y)
        if marginal is not None:
            # f_gk: the rows' weighted log-likelihoods at the nodes, summed per group, and
            # the effects' normal prior there
            eta_nodes = (eta0[:, None] + m_offset).reshape(-1)
            likelihood, y_nodes = spec.recipes.numpyro_likelihood(
                numpyro, jax, eta_nodes, m_y, extras
            )
            ll = likelihood.log_prob(y_nodes).reshape(-1, K)
            f = jax.ops.segment_sum(m_w * ll, m_index, num_segments=m_G)
            f = f - m_sq @ (0.5 / tau**2) - jnp.sum(jnp.log(tau)) - 0.5 * q * np.log(2 * np.pi)
            m = jax.scipy.special.logsumexp(f + m_log_weight, axis=1)
            numpyro.factor("group_marginals", jnp.sum(m_group_weight * m))

    return model
