r"""
=====================================================================
A model of your own, registered: the complementary log-log link
=====================================================================

Whether an event happened at least once - a claim in a policy year, an infection in a
household - is a binary outcome whose probability rises the way a count's does: if events
come as a Poisson process of rate :math:`e^\eta`, the probability of at least one is
:math:`p = 1 - \exp(-e^\eta)`, the complementary log-log link. Unlike the logit, it is not
symmetric: :math:`p` approaches 1 far faster than it leaves 0. Its log-likelihood is

.. math:: \ell(\eta, y) = y \log\left(1 - e^{-e^\eta}\right) - (1 - y)\, e^\eta,
          \qquad \eta = x \cdot \beta.

The package has no such model, so we write one outside it - a
:class:`~skcoreset.models.SingleIndexFamily` of numba functions and a small
:class:`~skcoreset.models.GLM` subclass, with the model's recipes in the probabilistic
programming languages - and register it under a name with
:func:`skcoreset.models.register`. From then on ``model="cloglog"`` is a model of the
package like the built-in ones: every coreset estimator, ``BayesianGLM``, the compositions,
the command line (``skcoreset build --model cloglog``) and every export take it. This script
uses all of them:

* an OMP coreset against uniform subsamples of the same size;
* the posterior of ``BayesianGLM(model="cloglog")`` on the coreset (a pipeline) against the
  one on all rows;
* the coreset posterior in PyMC and NumPyro: the exported models' log densities are the
  library's, up to a constant;
* the coreset built on the command line, through its Python entry point.

Written with its test entries (a ``scipy.stats`` reference and a data generator), the model
also passes the test suite's model contract (``tests/test_model_contract.py``), which
``tests/test_examples.py`` runs on the class defined here.
"""

import math
import os
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import scipy.special
from numba import njit

from skcoreset import BayesianGLM, OMPCoreset, UniformCoreset
from skcoreset.cli import main
from skcoreset.coreset import CoresetQualityWarning
from skcoreset.models import GLM, BinaryLabels, SingleIndexFamily, get_model, register
from skcoreset.pipeline import make_pipeline

# ``SKCORESET_EXAMPLE_SCALE`` below 1 takes fewer rows and shorter chains (the documentation
# builds at 0.1, the tests run 0.3).
SCALE = float(os.environ.get("SKCORESET_EXAMPLE_SCALE", "1.0"))
N_ROWS = max(5000, int(20_000 * SCALE))
N_POINTS = 60
N_SAMPLES = max(300, int(1000 * SCALE))

# %%
# The likelihood, as numba functions of the linear predictor
# ----------------------------------------------------------
# ``terms`` returns the log-likelihood and its derivative in ``eta``, ``curvature`` minus its
# second derivative (non-negative: the log-likelihood is concave in ``eta``). With
# :math:`\mu = e^\eta`: :math:`d\ell/d\eta = \mu / (e^\mu - 1)` for an event, :math:`-\mu`
# otherwise. The logs of probabilities near 0 and 1 are taken without losing digits
# (``log1mexp``), as a library function would. The family checks these functions against
# their own differences when a fit starts (``check_gradient``, on by default).


@njit(cache=True, inline="always")
def log1mexp(mu):
    """``log(1 - exp(-mu))`` for ``mu > 0``, accurate at both ends (Maechler 2012)."""
    return math.log(-math.expm1(-mu)) if mu < math.log(2.0) else math.log1p(-math.exp(-mu))


@njit(cache=True, inline="always")
def cloglog_terms(eta, y, param):
    mu = math.exp(eta)
    if y == 1.0:
        return log1mexp(mu), mu / math.expm1(mu)
    return -mu, -mu


@njit(cache=True, inline="always")
def cloglog_curvature(eta, y, param):
    mu = math.exp(eta)
    if y == 0.0:
        return mu
    if mu < 1e-5:  # mu (mu e^mu - e^mu + 1) / (e^mu - 1)^2 cancels: its series
        return mu * (0.5 - mu / 6.0)
    em1 = math.expm1(mu)
    return mu * (mu * (em1 + 1.0) - em1) / (em1 * em1)


CLOGLOG = SingleIndexFamily("cloglog", cloglog_terms, cloglog_curvature)


@dataclass(frozen=True, eq=False)
class CloglogModel(GLM):
    """Binary outcomes with the complementary log-log link: ``p = 1 - exp(-exp(eta))``."""

    name = "cloglog"
    family = CLOGLOG
    labels = BinaryLabels  # any two class labels, coded as the logistic model codes them

    def encode_targets(self, y):
        return BinaryLabels.fit(y).encode(y)

    # what the Bayesian estimators predict and simulate
    def mean(self, eta):
        return -np.expm1(-np.exp(eta))

    def simulate(self, eta, random_state, extra=None):
        return (random_state.random_sample(np.shape(eta)) < self.mean(eta)).astype(np.intp)

    # the exports' recipes: the likelihood in each language, given its modules
    likelihood = "bernoulli_cloglog"

    def stan_likelihood(self, y):
        row = "bernoulli_lpmf(y[n] | inv_cloglog(eta[n]))"
        return "array[N] int<lower=0, upper=1>", y.astype(np.int64), row

    def pymc_loglik(self, pm, pt, eta, y, extras):
        mu = pt.exp(eta)
        return y * pt.log(-pt.expm1(-mu)) - (1.0 - y) * mu

    def numpyro_likelihood(self, numpyro, jax, eta, y, extras):
        # the Bernoulli of logits log p - log(1 - p) = log(1 - exp(-mu)) + mu
        jnp = jax.numpy
        mu = jnp.exp(eta)
        logits = jnp.log(-jnp.expm1(-mu)) + mu
        return numpyro.distributions.Bernoulli(logits=logits), jnp.asarray(y)

    # the test suite's entries: the log-likelihood in scipy.stats, and data drawn from it
    def reference_logpdf(self, stats, y, eta, extra):
        p = -np.expm1(-np.exp(eta))
        return stats.bernoulli.logpmf(y, p)

    def reference_data(self, n_samples, random_state):
        X = random_state.standard_normal((n_samples, 2))
        p = -np.expm1(-np.exp(X @ [0.8, -0.6] - 0.5))
        return X, (random_state.random_sample(n_samples) < p).astype(int)


register("cloglog", CloglogModel, targets="two classes, complementary log-log link")

# %%
# Data: the probability of at least one event
# -------------------------------------------
# Three features; events at rate :math:`e^\eta` per unit of exposure, the outcome whether
# there was at least one.
rng = np.random.default_rng(0)
X = rng.standard_normal((N_ROWS, 3))
beta, beta0 = np.array([0.7, -0.5, 0.3]), -0.8
y = (rng.random(N_ROWS) < -np.expm1(-np.exp(X @ beta + beta0))).astype(int)
print(f"{N_ROWS} rows, {y.mean():.1%} with an event")

# %%
# A coreset of the cloglog posterior, against uniform subsamples
# --------------------------------------------------------------
# ``laplace_kl_`` is the KL divergence of the coreset posterior's Laplace fit from the data's.
coreset = OMPCoreset(n_points=N_POINTS, model="cloglog", random_state=0).fit(X, y)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", CoresetQualityWarning)  # uniform ones warn, as they should
    uniform = [
        UniformCoreset(n_points=N_POINTS, model="cloglog", random_state=s).fit(X, y).laplace_kl_
        for s in range(5)
    ]
print(
    f"Laplace KL of {N_POINTS} points: OMP {coreset.laplace_kl_:.3g}, uniform "
    f"{np.median(uniform):.3g} (median of 5; best {min(uniform):.3g})"
)

# %%
# BayesianGLM on all rows, and behind the coreset in a pipeline
# -------------------------------------------------------------
# The pipeline's coreset reads its model from the final estimator (``model="auto"``), and
# hands it its full-data prior.


def draws(estimator):
    """MALA draws of (coefficients, intercept), pooled over the chains."""
    coef = estimator.coef_samples_.reshape(-1, X.shape[1])
    return np.column_stack([coef, estimator.intercept_samples_.reshape(-1)])


full = BayesianGLM(model="cloglog", n_samples=N_SAMPLES, random_state=0).fit(X, y)
posteriors = {"all rows": draws(full)}
for label, step in [
    (f"OMP coreset ({N_POINTS} points)", OMPCoreset(n_points=N_POINTS, random_state=0)),
    (f"uniform ({N_POINTS} points)", UniformCoreset(n_points=N_POINTS, random_state=0)),
]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoresetQualityWarning)
        pipe = make_pipeline(
            step, BayesianGLM(model="cloglog", n_samples=N_SAMPLES, random_state=0)
        ).fit(X, y)
    posteriors[label] = draws(pipe[-1])
mean, sd = posteriors["all rows"].mean(axis=0), posteriors["all rows"].std(axis=0)
params = ["x0", "x1", "x2", "intercept"]
print(f"{'':<22}" + "".join(f"{p:>10}" for p in params))
print(f"{'true':<22}" + "".join(f"{v:>10.3f}" for v in [*beta, beta0]))
print(f"{'all rows':<22}" + "".join(f"{v:>10.3f}" for v in mean))
z, sd_ratio = {}, {}
for label, d in list(posteriors.items())[1:]:
    # how far each posterior mean sits from the full one, in full-posterior sds
    z[label], sd_ratio[label] = (d.mean(axis=0) - mean) / sd, d.std(axis=0) / sd
    print(f"{label:<22}" + "".join(f"{v:>10.3f}" for v in z[label]))
print("(below the full posterior's means: each mean's distance from them, in sds)")

# %%
# The coreset posterior in PyMC and NumPyro
# -----------------------------------------
# The exports write the likelihood with the model's recipes and the coreset's prior. Their log
# densities differ from the library's unnormalised log posterior (``log_posterior``, with the
# coreset's prior ``prior_scale_``) by a constant: the priors' normalising constants.
import numpyro
import pymc
from numpyro.infer.util import potential_energy

numpyro.enable_x64()
X_m, y_m, w_m = coreset.get_coreset()[0], coreset.get_coreset()[1], coreset.sample_weight_
library = get_model("cloglog", prior_scale=coreset.prior_scale_)
Xd = library.design(X_m)
points = mean + 0.5 * sd * np.random.default_rng(1).standard_normal((4, len(mean)))
lib = np.array([library.log_posterior(t, Xd, library.encode_targets(y_m), w_m)[0] for t in points])

pymc_model = coreset.to_pymc()
logp = pymc_model.compile_logp()
pm_lp = np.array([logp({"coef": t[:-1], "intercept": t[-1]}) for t in points])
numpyro_model = coreset.to_numpyro()
np_lp = np.array(
    [-float(potential_energy(numpyro_model, (), {}, {"coef": t[:-1], "intercept": t[-1]}))
     for t in points]
)  # fmt: skip
export_gap = {
    "PyMC": np.ptp(pm_lp - lib) / np.abs(lib).max(),
    "NumPyro": np.ptp(np_lp - lib) / np.abs(lib).max(),
}
for language, gap in export_gap.items():
    print(f"{language}: log density - library's, spread over 4 points {gap:.1e} (relative)")
program, _ = coreset.to_stan()
print("Stan:", program.splitlines()[-3].strip())
print("PyMC", pymc.__version__, "free variables:", [rv.name for rv in pymc_model.free_RVs])

# %%
# The same coreset from the command line
# --------------------------------------
# ``skcoreset build --model cloglog`` in this process, where the model is registered (a
# shell's ``skcoreset`` command runs in a process of its own, which has not imported this
# script): :func:`skcoreset.cli.main` takes the command's arguments.
with tempfile.TemporaryDirectory() as tmp:
    data, out = Path(tmp) / "events.npz", Path(tmp) / "coreset.npz"
    np.savez(data, X=X, y=y)
    status = main(
        ["build", str(data), "--model", "cloglog", "--algorithm", "omp",
         "--n-points", str(N_POINTS), "--random-state", "0", "-o", str(out)]
    )  # fmt: skip
    rows = np.load(out)["row"]
cli_same = status == 0 and np.array_equal(rows, coreset.sample_indices_)
print(f"command line: status {status}, the estimator's coreset: {cli_same}")

results = {
    "laplace_kl": {"OMP": coreset.laplace_kl_, "uniform": uniform},
    "z": z,
    "sd_ratio": sd_ratio,
    "export_gap": export_gap,
    "cli_same": cli_same,
}

# %%
# The posterior marginals, and the link against the logit
# -------------------------------------------------------
fig, axes = plt.subplots(1, len(params) + 1, figsize=(15, 3))
for k, ax in enumerate(axes[:-1]):
    for label, d in posteriors.items():
        ax.hist(d[:, k], bins=40, density=True, histtype="step", lw=1.5, label=label)
    ax.set_title(params[k])
axes[0].legend(fontsize=7, loc="upper left")
eta = np.linspace(-4, 2, 200)
axes[-1].plot(eta, -np.expm1(-np.exp(eta)), label="cloglog")
axes[-1].plot(eta, scipy.special.expit(eta), "--", label="logit")
axes[-1].set_title("P(y = 1) against eta")
axes[-1].legend(fontsize=7)
fig.suptitle("A registered complementary log-log model: MALA posterior marginals")
fig.tight_layout()

if __name__ == "__main__":
    fig.savefig("register_cloglog.png", dpi=100)
