"""
======================================================================
IHT paper (2/2): radial-basis regression of house prices in a pipeline
======================================================================

The second experiment of Zhang, Khanna, Kyrillidis & Koyejo (2021) (after Campbell & Beronov
2019): Bayesian linear regression of log house prices on radial-basis functions of latitude
and longitude, at several length scales, with coresets of up to 300 of N = 1000 sales (UK
land-registry prices in the paper). The posterior is Gaussian for a fixed noise scale, so the
KL divergence between the coreset and the full posterior is exact.

Here the California housing data (median house value of 20 640 census blocks, with latitude
and longitude) stand in for the UK data, and the experiment is a scikit-learn pipeline:
``RBFFeatures -> StandardScaler -> coreset -> BayesianLinearRegression``
(:func:`skcoreset.pipeline.make_pipeline`). The radial-basis step and the scaler see every
row; the coreset keeps M weighted rows; MALA samples the posterior from those M rows only.
"""

# %%
# A radial-basis transformer
# --------------------------
# Gaussian bumps :math:`\exp(-\|x - c\|^2 / (2 s^2))` at k-means centres :math:`c` of (latitude,
# longitude), one set of bumps per length scale :math:`s` (in degrees). The paper used 50 random
# centres at each of six scales from 0.2 to 2 degrees plus a near-constant bump; 20 k-means
# centres at four scales (80 features) keep MALA fast here.
import os
import sys
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted, validate_data

from skcoreset.coreset import GIGACoreset, IHTCoreset, UniformCoreset
from skcoreset.linear_model import BayesianLinearRegression
from skcoreset.metrics import coreset_laplace, coreset_laplace_kl
from skcoreset.pipeline import make_pipeline


class RBFFeatures(TransformerMixin, BaseEstimator):
    """Gaussian radial-basis features at k-means centres, at several length scales."""

    def __init__(self, n_centers=20, length_scales=(0.25, 0.5, 1.0, 2.0), random_state=None):
        self.n_centers = n_centers
        self.length_scales = length_scales
        self.random_state = random_state

    def fit(self, X, y=None):
        X = validate_data(self, X)
        kmeans = KMeans(self.n_centers, n_init=3, random_state=self.random_state).fit(X)
        self.centers_ = kmeans.cluster_centers_
        return self

    def transform(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        sq_dist = ((X[:, None, :] - self.centers_[None, :, :]) ** 2).sum(axis=-1)
        return np.hstack([np.exp(-sq_dist / (2.0 * s**2)) for s in self.length_scales])


# %%
# Data, target and prior
# ----------------------
# 2000 training and 1000 test blocks drawn at random (the paper: 1000 sales). The target
# is the *standardised log* price (mean 0, sd 1), the features are standardised by the
# pipeline. ``BayesianLinearRegression`` puts a fixed N(0, prior_scale^2) prior on the raw
# coefficients (and the intercept); with standardised features and target, ``prior_scale=1``
# says "a one-sd change of a feature moves the log price by at most about one sd", a weak but
# proper prior on the scale of the problem. The noise scale is fixed at its full-data
# estimate (residual sd of the full-data fit) for both the full and the coreset posteriors:
# the posteriors are then exactly Gaussian and the KL exact.
HERE = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
DATA_DIR = Path(os.environ.get("SKCORESET_DATA_DIR", HERE.parent / "tests" / "data"))
SCALE = float(os.environ.get("SKCORESET_EXAMPLE_SCALE", "1.0"))
N_TRAIN = max(400, int(2000 * SCALE))
N_TEST = max(200, int(1000 * SCALE))
N_CENTERS = max(5, int(20 * SCALE))
SIZES = [int(round(f * N_TRAIN)) for f in (0.01, 0.025, 0.05, 0.1, 0.2)]
PRIOR_SCALE = 1.0

data = np.load(DATA_DIR / "california_housing.npz", allow_pickle=False)
names = list(data["feature_names"])
lat_lon = data["X"][:, [names.index("latitude"), names.index("longitude")]]
log_price = np.log(data["y"])
rows = np.random.RandomState(0).permutation(len(log_price))[: N_TRAIN + N_TEST]
X, y = lat_lon[rows], log_price[rows]
y = (y - y[:N_TRAIN].mean()) / y[:N_TRAIN].std()
X_train, y_train, X_test, y_test = X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]

features = make_pipeline(RBFFeatures(N_CENTERS, random_state=0), StandardScaler()).fit(X_train)
Z_train = features.transform(X_train)
# the full-data fit (the one-point "coreset" fitted beside it is not used)
full_fit, _ = coreset_laplace(
    Z_train, y_train, [0], [1.0], model="gaussian", prior_scale=PRIOR_SCALE
)
NOISE = full_fit.model.extra
print(f"{Z_train.shape[1]} radial-basis features; full-data noise sd {NOISE:.3f} (target sd 1)")

# %%
# The pipeline, and its fidelity against the coreset size
# -------------------------------------------------------
# One pipeline per method; ``set_params(<coreset>__n_points=M)`` sets the size. The
# coreset's likelihood (Gaussian-linear) is taken from the final estimator. For every fit,
# the fidelity is the exact KL between the full and the coreset posteriors of the
# coefficients (:func:`skcoreset.metrics.coreset_laplace_kl` on the pipeline's
# ``sample_indices_`` / ``sample_weight_``), and the predictive RMSE on the test blocks comes
# from the MALA draws.
coresets = {
    "uniform": UniformCoreset(projection=None, random_state=0),
    "GIGA": GIGACoreset(random_state=0),
    "A-IHT II": IHTCoreset(debias=True, random_state=0),
}


def make(coreset):
    return make_pipeline(
        RBFFeatures(N_CENTERS, random_state=0),
        StandardScaler(),
        coreset,
        BayesianLinearRegression(
            prior_scale=PRIOR_SCALE,
            noise_scale=NOISE,
            n_samples=500,
            n_warmup=300,
            n_chains=2,
            random_state=0,
        ),
    )


results = {}
for name, coreset in coresets.items():
    pipe = make(coreset)
    step = pipe.steps[2][0]
    kl, rmse, points = [], [], []
    for M in SIZES:
        with warnings.catch_warnings():
            # short chains: R-hat warnings on the smallest coresets do not change the picture
            warnings.simplefilter("ignore", ConvergenceWarning)
            pipe.set_params(**{f"{step}__n_points": M}).fit(X_train, y_train)
        kl.append(
            coreset_laplace_kl(
                pipe[:2].transform(X_train),  # the coreset's input: the fitted features
                y_train,
                pipe.sample_indices_,
                pipe.sample_weight_,
                model="gaussian",
                prior_scale=PRIOR_SCALE,
            )
        )
        rmse.append(float(np.sqrt(np.mean((pipe.predict(X_test) - y_test) ** 2))))
        points.append(len(pipe.sample_indices_))
    results[name] = {"kl": np.array(kl), "rmse": np.array(rmse), "points": np.array(points)}
    results[name]["pipeline"] = pipe  # fitted at the largest size

full_pipe = make("passthrough")
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    full_pipe.fit(X_train, y_train)
full_rmse = float(np.sqrt(np.mean((full_pipe.predict(X_test) - y_test) ** 2)))

# %%
# Results beside the paper
# ------------------------
# :math:`\mathrm{KL}(\pi \,\|\, \pi_w)` (full posterior first) and test RMSE (standardised log
# price) of the pipeline's posterior mean. The paper shows its results as figures only, with no
# numbers in the text.
print(f"N = {N_TRAIN} training, {N_TEST} test blocks; full-data test RMSE {full_rmse:.3f}")
print("      M |    KL uniform      GIGA  A-IHT II |  RMSE uniform   GIGA  A-IHT II")
for k, M in enumerate(SIZES):
    kls = [results[n]["kl"][k] for n in coresets]
    rms = [results[n]["rmse"][k] for n in coresets]
    print(
        f"{M:7d} | {kls[0]:13.3g} {kls[1]:9.3g} {kls[2]:9.3g} |"
        f" {rms[0]:13.3f} {rms[1]:6.3f} {rms[2]:9.3f}"
    )
print("paper (UK prices, N = 1000, M <= 300): KL not reported as numbers (figures only)")

# %%
# The figure
# ----------
# Left: fidelity against the size. Right: the posterior-mean surface of the GIGA pipeline at
# the largest size, with its coreset (marker area proportional to the weight).
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4.5))
for name in coresets:
    ax0.plot(results[name]["points"], results[name]["kl"], marker="o", label=name)
ax0.set_xscale("log")
ax0.set_yscale("log")
ax0.set_xlabel("coreset size (points)")
ax0.set_ylabel("KL(full posterior || coreset posterior)")
ax0.legend()
giga = results["GIGA"]["pipeline"]
lat = np.linspace(X[:, 0].min(), X[:, 0].max(), 80)
lon = np.linspace(X[:, 1].min(), X[:, 1].max(), 80)
grid = np.array([[a, b] for a in lat for b in lon])
surface = giga.predict(grid).reshape(len(lat), len(lon))
mesh = ax1.pcolormesh(lon, lat, surface, cmap="viridis", shading="auto", vmin=-2.5, vmax=2.5)
core = X_train[giga.sample_indices_]
ax1.scatter(
    core[:, 1],
    core[:, 0],
    s=200 * giga.sample_weight_ / giga.sample_weight_.max(),
    facecolors="none",
    edgecolors="w",
    lw=0.8,
)
ax1.set_xlabel("longitude")
ax1.set_ylabel("latitude")
ax1.set_title(f"GIGA pipeline, M = {len(core)}: posterior mean of the log price (sd units)")
fig.colorbar(mesh, ax=ax1)
fig.tight_layout()

if __name__ == "__main__" and "__file__" in globals() and "sphinx_gallery" not in sys.modules:
    fig.savefig(os.path.splitext(__file__)[0] + ".png", dpi=100)
