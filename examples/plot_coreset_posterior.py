"""
=====================================================
The coreset posterior against the full posterior
=====================================================

MCMC on 100 weighted points instead of 11 055: fit ``BayesianLogisticRegression`` (MALA) on
all of Phishing, on an OMP coreset of 100 points and on a uniform subsample of 100 points
(weights N / M), and compare the marginal posteriors of a few coefficients. The OMP coreset
posterior sits on top of the full one, at a fiftieth of the sampling time; the uniform
subsample's posterior is several standard deviations away.
"""

import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from skcoreset import BayesianLogisticRegression, OMPCoreset, UniformCoreset
from skcoreset.datasets import load_phishing
from skcoreset.metrics import polynomial_mmd

X, y = load_phishing(return_X_y=True)
# The first fit in a new environment compiles the sampler's kernels: a short fit does that
# here, so that the times below are sampling times.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)  # too short to converge, on purpose
    BayesianLogisticRegression(n_samples=100, random_state=0).fit(X[:500], y[:500])


def posterior(X, y, sample_weight=None):
    """MALA draws of (coefficients, intercept), pooled over the chains."""
    est = BayesianLogisticRegression(n_samples=1000, random_state=0)
    t0 = time.perf_counter()
    est.fit(X, y, sample_weight=sample_weight)
    draws = np.concatenate([est.coef_samples_, est.intercept_samples_[..., None]], axis=-1)
    return draws.reshape(-1, draws.shape[-1]), time.perf_counter() - t0


full, t_full = posterior(X, y)
fits = {"full data (N = 11 055)": (full, t_full)}
for name, coreset in [
    ("OMP coreset (M = 100)", OMPCoreset(n_points=100, random_state=0)),
    ("uniform (M = 100)", UniformCoreset(n_points=100, random_state=0)),
]:
    coreset.fit(X, y)
    idx = coreset.sample_indices_
    fits[name] = posterior(X[idx], y[idx], coreset.sample_weight_)

# Squared MMD (unbiased, polynomial kernel) to the full posterior's draws; values near zero,
# even slightly negative, mean "indistinguishable".
for name, (draws, seconds) in fits.items():
    mmd = "" if draws is full else f"   MMD^2 to full {polynomial_mmd(draws, full):10.3g}"
    print(f"{name:<24} MALA {seconds:5.2f} s{mmd}")

coords = [0, 1, 2, 10]
fig, axes = plt.subplots(1, len(coords), figsize=(12, 3.4))
for ax, k in zip(axes, coords):
    for name, (draws, seconds) in fits.items():
        # the full posterior wide and pale, so that a coreset's on top of it stays visible
        style = dict(lw=4, color="k", alpha=0.3) if draws is full else dict(lw=1.5)
        label = f"{name}: MALA {seconds:.2f} s"
        ax.hist(draws[:, k], bins=40, density=True, histtype="step", label=label, **style)
    ax.set_title("intercept" if k == X.shape[1] else f"coefficient {k}")
fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=9)
fig.suptitle("Phishing: MALA posterior marginals")
fig.tight_layout(rect=(0, 0.08, 1, 1))

if __name__ == "__main__":
    fig.savefig("coreset_posterior.png", dpi=100)
