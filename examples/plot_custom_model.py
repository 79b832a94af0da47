r"""
============================================================
A model of your own: Weibull survival times with censoring
============================================================

The NAFLD cohort (12 588 people followed for up to 20 years, 8 % of them died) is a survival
data set: each row has a follow-up time and whether it ended in death or was censored. No
built-in model fits it, so we write one: a Weibull proportional-hazards likelihood with right
censoring,

.. math:: \ell(\eta, t, d) = d \, (\log k + (k - 1) \log t + \eta) - t^k e^\eta,

where :math:`d` is 1 for a death and 0 for a censored time, :math:`k` the Weibull shape and
:math:`\eta = x \cdot \beta` the log hazard ratio. It depends on the coefficients through
:math:`\eta` only, so four numba functions in a :class:`~skcoreset.models.SingleIndexFamily`
describe it, and a small :class:`~skcoreset.models.GLM` subclass says how targets are coded (the
time signed by the event: ``+t`` for a death, ``-t`` for a censored time) and how the shape is
estimated. The model object then goes wherever a built-in name goes:
``OMPCoreset(model=Weibull())`` builds a coreset on it, ``BayesianGLM(model=Weibull())`` samples
its posterior, shape included.

MALA on 300 weighted points gives the posterior of MALA on all 12 588 rows; a uniform
subsample of 300 points does not.
"""

import math
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import scipy.optimize
from numba import njit

from skcoreset import BayesianGLM, OMPCoreset, UniformCoreset
from skcoreset.models import GLM, SingleIndexFamily, laplace_from_blocks

HERE = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
DATA_DIR = Path(os.environ.get("SKCORESET_DATA_DIR", HERE.parent / "tests" / "data"))
# ``SKCORESET_EXAMPLE_SCALE`` below 1 shortens the chains (the tests run it at 0.3).
SCALE = float(os.environ.get("SKCORESET_EXAMPLE_SCALE", "1.0"))
N_POINTS = 300

# %%
# The likelihood, as numba functions of (eta, signed time, shape)
# ----------------------------------------------------------------
# ``terms`` returns the log-likelihood less its parts free of ``eta`` and its derivative in
# ``eta``; ``offset`` is the part free of ``eta``; ``curvature`` minus the second derivative;
# ``dlog_extra`` the derivative in ``log k``, so that MALA can sample the shape.


@njit(cache=True, inline="always")
def weibull_terms(eta, y, k):
    death = 1.0 if y > 0.0 else 0.0
    cum_hazard = abs(y) ** k * math.exp(eta)
    return death * eta - cum_hazard, death - cum_hazard


@njit(cache=True, inline="always")
def weibull_curvature(eta, y, k):
    return abs(y) ** k * math.exp(eta)


@njit(cache=True, inline="always")
def weibull_offset(y, k):
    return math.log(k) + (k - 1.0) * math.log(y) if y > 0.0 else 0.0


@njit(cache=True, inline="always")
def weibull_dlog_shape(eta, y, k):
    log_t = math.log(abs(y))
    death = 1.0 if y > 0.0 else 0.0
    return death * (1.0 + k * log_t) - k * log_t * abs(y) ** k * math.exp(eta)


WEIBULL = SingleIndexFamily(
    "weibull_censored",
    weibull_terms,
    weibull_curvature,
    offset=weibull_offset,
    dlog_extra=weibull_dlog_shape,
)


@dataclass(frozen=True, eq=False)
class Weibull(GLM):
    """Weibull proportional hazards, right-censored; targets ``+t`` (death), ``-t`` (censored)."""

    name = "weibull"
    family = WEIBULL
    has_extra = True  # the shape, estimated for the Laplace fit and sampled by MALA
    extra_name = "shape"

    def encode_targets(self, y):
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)) or np.any(y == 0):
            raise ValueError("Weibull targets are signed times: +t (event), -t (censored), t > 0.")
        return y

    def estimate_extra_blocks(self, blocks):
        """The shape that maximises the profile log posterior (a Laplace fit per shape)."""

        def minus_profile(log_k):
            model = replace(self, extra=float(np.exp(log_k)))
            mode = laplace_from_blocks(model, blocks).mean
            return -sum(model.weighted_loglik(mode, Xd, y, w)[0] for Xd, y, w in blocks())

        res = scipy.optimize.minimize_scalar(minus_profile, bounds=(-3.0, 3.0), method="bounded")
        return float(np.exp(res.x))


# %%
# The data: standardised age, sex and BMI; the time in years, signed by the event
# -------------------------------------------------------------------------------
data = np.load(DATA_DIR / "nafld1.npz", allow_pickle=False)
names = list(data["feature_names"])
X = (data["X"] - data["X"].mean(axis=0)) / data["X"].std(axis=0)
y = np.where(data["event"] == 1, 1.0, -1.0) * data["y"] / 365.25
print(f"{X.shape[0]} people, {int(data['event'].sum())} deaths, features {names}")

# %%
# Three posteriors: all rows, an OMP coreset, a uniform subsample
# ---------------------------------------------------------------
n_samples = max(200, int(1000 * SCALE))


def posterior(X, y, sample_weight=None):
    """MALA draws of (coefficients, intercept, log shape), pooled over the chains."""
    est = BayesianGLM(model=Weibull(), n_samples=n_samples, random_state=0)
    t0 = time.perf_counter()
    est.fit(X, y, sample_weight=sample_weight)
    draws = np.column_stack(
        [
            est.coef_samples_.reshape(-1, X.shape[1]),
            est.intercept_samples_.reshape(-1),
            np.log(est.shape_samples_.reshape(-1)),
        ]
    )
    return draws, time.perf_counter() - t0


full, t_full = posterior(X, y)
fits = {f"all rows (N = {X.shape[0]})": (full, t_full)}
for label, coreset in [
    (f"OMP coreset (M = {N_POINTS})", OMPCoreset(model=Weibull(), n_points=N_POINTS)),
    (f"uniform (M = {N_POINTS})", UniformCoreset(model=Weibull(), n_points=N_POINTS)),
]:
    coreset.set_params(random_state=0).fit(X, y)
    idx = coreset.sample_indices_
    fits[label] = posterior(X[idx], y[idx], coreset.sample_weight_)

params = [*names, "intercept", "log shape"]
mean, sd = full.mean(axis=0), full.std(axis=0)
results = {}
print(f"\n{'':<24}" + "".join(f"{p:>11}" for p in params) + "   MALA s")
for label, (draws, seconds) in fits.items():
    # how far each posterior mean sits from the full one, in full-posterior sds
    z = (draws.mean(axis=0) - mean) / sd
    results[label] = {"z": z, "sd_ratio": draws.std(axis=0) / sd}
    row = "".join(f"{v:>11.3f}" for v in (draws.mean(axis=0) if draws is full else z))
    print(f"{label:<24}{row}{seconds:8.2f}")
print("(first row: posterior means; below: their distance from it, in posterior sds)")

# %%
# The marginals
# -------------
fig, axes = plt.subplots(1, len(params), figsize=(14, 3))
for ax, k in zip(axes, range(len(params))):
    for label, (draws, _) in fits.items():
        ax.hist(draws[:, k], bins=40, density=True, histtype="step", lw=1.5, label=label)
    ax.set_title(params[k])
axes[0].legend(fontsize=7, loc="upper left")
fig.suptitle("NAFLD survival, Weibull with censoring: MALA posterior marginals")
fig.tight_layout()

if __name__ == "__main__":
    fig.savefig("custom_model.png", dpi=100)
