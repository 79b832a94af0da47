"""
========================================================
The coreset in a PyMC model: NUTS, MALA and all the data
========================================================

A coreset is a small weighted data set whose posterior is the full data's. Here an OMP
coreset of 100 of 4000 rows of Phishing (logistic regression, 10 features) goes into PyMC with
``coreset.to_pymc(X, y)``: a ``pymc.Model`` with the free variables ``coef`` and
``intercept``, the coreset's full-data prior, and the weighted log-likelihood as a
``pm.Potential``. We compare three posteriors:

* PyMC's NUTS on the exported coreset model;
* the library's own MALA on the same coreset (``CoresetClassifier``, which hands the
  coreset's prior to its ``BayesianLogisticRegression``);
* PyMC's NUTS on all 4000 rows, a plain PyMC model written by hand with the same prior.

The first two sample the same posterior, so they agree within Monte Carlo error; both sit on
the full-data posterior, at a fortieth of its rows.
"""

import os
import time

import arviz
import matplotlib.pyplot as plt
import numpy as np
import pymc as pm

from skcoreset import BayesianLogisticRegression, CoresetClassifier, OMPCoreset
from skcoreset.datasets import load_phishing

# ``SKCORESET_EXAMPLE_SCALE`` below 1 shortens the chains (the tests run it at 0.3).
SCALE = float(os.environ.get("SKCORESET_EXAMPLE_SCALE", "1.0"))
DRAWS = max(200, int(1000 * SCALE))

X, y = load_phishing(return_X_y=True)
rows = np.random.default_rng(0).choice(X.shape[0], 4000, replace=False)
X, y = X[rows], y[rows]

# %%
# The coreset, and the library's MALA on it
# -----------------------------------------
# ``CoresetClassifier`` fits the coreset on all rows, then MALA on its weighted rows; the
# estimator's 'auto' prior is the coreset's full-data prior (``prior_scale_``).

clf = CoresetClassifier(
    OMPCoreset(n_points=100, random_state=0),
    BayesianLogisticRegression(n_samples=2 * DRAWS, random_state=0),
).fit(X, y)
coreset, mala = clf.coreset_, clf.estimator_
print(f"coreset: {coreset.n_points_} points; prior sds {coreset.prior_scale_}")


def nuts(model):
    """NUTS draws of (coef, intercept), pooled over the chains, their effective sample
    sizes, and the seconds it took."""
    t0 = time.perf_counter()
    with model:
        idata = pm.sample(
            draws=DRAWS,
            tune=max(200, int(500 * SCALE)),
            chains=2,
            cores=1,
            random_seed=0,
            progressbar=False,
        )
    post = idata.posterior
    draws = np.concatenate([post["coef"].values, post["intercept"].values[..., None]], axis=-1)
    ess = np.array([arviz.ess(draws[:, :, k]) for k in range(draws.shape[-1])])
    return draws.reshape(-1, draws.shape[-1]), ess, time.perf_counter() - t0


# %%
# NUTS on the exported coreset model
# ----------------------------------

coreset_draws, coreset_ess, coreset_time = nuts(coreset.to_pymc(X, y))

# %%
# NUTS on all rows, with the same prior
# -------------------------------------
# A plain PyMC logistic regression: the coreset's ``prior_scale_`` holds one sd per
# coefficient, the intercept's last.

with pm.Model() as full_model:
    coef = pm.Normal("coef", 0.0, sigma=coreset.prior_scale_[:-1])
    intercept = pm.Normal("intercept", 0.0, sigma=coreset.prior_scale_[-1])
    pm.Bernoulli("y", logit_p=pm.math.dot(X, coef) + intercept, observed=y)
full_draws, _, full_time = nuts(full_model)

mala_draws = np.column_stack(
    [mala.coef_samples_.reshape(-1, X.shape[1]), mala.intercept_samples_.ravel()]
)

# %%
# The three posteriors
# --------------------
# Posterior means, in units of the full-data posterior sd, and sd ratios.

names = [f"coef[{k}]" for k in range(X.shape[1])] + ["intercept"]
full_mean, full_sd = full_draws.mean(0), full_draws.std(0)
results = {}
for label, draws in [
    ("NUTS on the coreset (PyMC)", coreset_draws),
    ("MALA on the coreset", mala_draws),
]:
    z = (draws.mean(0) - full_mean) / full_sd
    results[label] = {"z": z, "sd_ratio": draws.std(0) / full_sd}
    ratio = results[label]["sd_ratio"]
    print(
        f"{label:<28} |z| max {np.abs(z).max():.2f}, sd ratio {ratio.min():.2f}-{ratio.max():.2f}"
    )
# the two coreset samplers against each other, in units of their Monte Carlo error
gap = (coreset_draws.mean(0) - mala_draws.mean(0)) / np.sqrt(
    coreset_draws.var(0) / coreset_ess + mala_draws.var(0) / mala.ess_
)
results["NUTS - MALA"] = {"z": gap}
print(f"NUTS - MALA on the coreset, in Monte Carlo errors: |z| max {np.abs(gap).max():.2f}")
print(
    f"seconds: NUTS on {coreset.n_points_} points {coreset_time:.0f}, on 4000 rows {full_time:.0f}"
)

fig, axes = plt.subplots(1, 3, figsize=(10, 3))
for ax, k in zip(axes, [0, 5, X.shape[1]]):
    bins = np.linspace(*np.percentile(full_draws[:, k], [0.1, 99.9]), 40)
    ax.hist(
        full_draws[:, k], bins, density=True, histtype="step", color="k", label="NUTS, all rows"
    )
    ax.hist(coreset_draws[:, k], bins, density=True, histtype="step", label="NUTS, coreset")
    ax.hist(mala_draws[:, k], bins, density=True, histtype="step", ls="--", label="MALA, coreset")
    ax.set_title(names[k])
axes[0].legend(fontsize=7)
fig.tight_layout()

if __name__ == "__main__":
    fig.savefig("pymc_export.png", dpi=100)
