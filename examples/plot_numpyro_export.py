r"""
===========================================================
The coreset in a NumPyro model: counts and their dispersion
===========================================================

Overdispersed counts call for the negative binomial likelihood (mean
:math:`\mu = \exp(x \cdot \beta + \beta_0)`, variance :math:`\mu + \alpha \mu^2`). An OMP
coreset of 100 of 3000 simulated rows goes into NumPyro with ``coreset.to_numpyro()``: a model
function whose sample sites are ``coef``, ``intercept`` and the dispersion ``alpha``, with the
coreset's full-data prior, and whose observed site's log-likelihoods are scaled by the coreset
weights (``numpyro.handlers.scale``). We compare three posteriors:

* NumPyro's NUTS on the exported coreset model;
* the library's own MALA on the same coreset (``CoresetRegressor``, which hands the
  coreset's prior to its ``BayesianNegativeBinomialRegression``);
* NumPyro's NUTS on all 3000 rows, a plain NumPyro model written by hand with the same
  prior.

The coreset's two samplers agree within Monte Carlo error, the dispersion included, and sit
on the full-data posterior.
"""

import os

import arviz
import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS

from skcoreset import BayesianNegativeBinomialRegression, CoresetRegressor, OMPCoreset
from skcoreset.models import get_model

numpyro.enable_x64()  # double precision, as the library's

# ``SKCORESET_EXAMPLE_SCALE`` below 1 shortens the chains (the tests run it at 0.3).
SCALE = float(os.environ.get("SKCORESET_EXAMPLE_SCALE", "1.0"))
DRAWS = max(200, int(1000 * SCALE))

rng = np.random.default_rng(0)
X = rng.standard_normal((3000, 4))
mu = np.exp(X @ [0.5, -0.3, 0.2, 0.1] + 1.0)
y = rng.negative_binomial(2.0, 2.0 / (2.0 + mu)).astype(float)  # alpha = 1 / 2

# %%
# The coreset, and the library's MALA on it
# -----------------------------------------

reg = CoresetRegressor(
    OMPCoreset(n_points=100, random_state=0),
    BayesianNegativeBinomialRegression(n_samples=2 * DRAWS, random_state=0),
).fit(X, y)
coreset, mala = reg.coreset_, reg.estimator_
print(f"coreset: {coreset.n_points_} points, model {coreset.model_}")


def nuts(model):
    """NUTS draws of (coef, intercept, alpha) pooled over the chains, and their ESS."""
    mcmc = MCMC(
        NUTS(model),
        num_warmup=max(200, int(500 * SCALE)),
        num_samples=DRAWS,
        num_chains=2,
        chain_method="vectorized",  # one compilation for both chains
        progress_bar=False,
    )
    mcmc.run(jax.random.PRNGKey(0))
    s = mcmc.get_samples(group_by_chain=True)
    draws = np.concatenate(
        [
            np.asarray(s["coef"]),
            np.asarray(s["intercept"])[..., None],
            np.asarray(s["alpha"])[..., None],
        ],
        axis=-1,
    )
    ess = np.array([arviz.ess(draws[:, :, k]) for k in range(draws.shape[-1])])
    return draws.reshape(-1, draws.shape[-1]), ess


# %%
# NUTS on the exported coreset model
# ----------------------------------

coreset_draws, coreset_ess = nuts(coreset.to_numpyro())

# %%
# NUTS on all rows, with the same prior
# -------------------------------------
# The coreset's ``prior_scale_`` (one sd per coefficient, the intercept's last) and the
# model's prior of ``log alpha``, N(0, 2.5^2). NumPyro's ``NegativeBinomial2`` takes the size
# ``1 / alpha``.

scale = coreset.prior_scale_
log_mean, log_sd = get_model("negative_binomial").extra_prior_at(y.mean(), y.std())


def full_model():
    coef = numpyro.sample("coef", dist.Normal(0.0, scale[:-1]).to_event(1))
    intercept = numpyro.sample("intercept", dist.Normal(0.0, scale[-1]))
    alpha = numpyro.sample("alpha", dist.LogNormal(log_mean, log_sd))
    mean = jnp.exp(X @ coef + intercept)
    numpyro.sample("y", dist.NegativeBinomial2(mean, 1.0 / alpha), obs=y)


full_draws, _ = nuts(full_model)

mala_draws = np.column_stack(
    [
        mala.coef_samples_.reshape(-1, X.shape[1]),
        mala.intercept_samples_.ravel(),
        mala.alpha_samples_.ravel(),
    ]
)
# MALA's ESS of alpha is that of its log, the sampled coordinate (the same to first order)
mala_ess = mala.ess_

# %%
# The three posteriors
# --------------------
# Posterior means, in units of the full-data posterior sd, and sd ratios.

names = [f"coef[{k}]" for k in range(X.shape[1])] + ["intercept", "alpha"]
full_mean, full_sd = full_draws.mean(0), full_draws.std(0)
results = {}
for label, draws in [("NUTS on the coreset", coreset_draws), ("MALA on the coreset", mala_draws)]:
    z = (draws.mean(0) - full_mean) / full_sd
    results[label] = {"z": z, "sd_ratio": draws.std(0) / full_sd}
    ratio = results[label]["sd_ratio"]
    print(
        f"{label:<20} |z| max {np.abs(z).max():.2f}, sd ratio {ratio.min():.2f}-{ratio.max():.2f}"
    )
gap = (coreset_draws.mean(0) - mala_draws.mean(0)) / np.sqrt(
    coreset_draws.var(0) / coreset_ess + mala_draws.var(0) / mala_ess
)
results["NUTS - MALA"] = {"z": gap}
print(f"NUTS - MALA on the coreset, in Monte Carlo errors: |z| max {np.abs(gap).max():.2f}")

fig, axes = plt.subplots(1, 3, figsize=(10, 3))
for ax, k in zip(axes, [0, X.shape[1], X.shape[1] + 1]):
    bins = np.linspace(*np.percentile(full_draws[:, k], [0.1, 99.9]), 40)
    ax.hist(full_draws[:, k], bins, density=True, histtype="step", color="k", label="NUTS, all")
    ax.hist(coreset_draws[:, k], bins, density=True, histtype="step", label="NUTS, coreset")
    ax.hist(mala_draws[:, k], bins, density=True, histtype="step", ls="--", label="MALA, coreset")
    ax.set_title(names[k])
axes[0].legend(fontsize=7)
fig.tight_layout()

if __name__ == "__main__":
    fig.savefig("numpyro_export.png", dpi=100)
