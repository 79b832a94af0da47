"""
=====================================================
Choosing the coreset size with a grid search
=====================================================

A Bayesian coreset replaces the N rows of a data set by M weighted rows. The smaller M, the
cheaper every later step (MCMC on the coreset costs O(M) per step instead of O(N)), and the
further the coreset posterior drifts from the full-data posterior. This example tunes M with
:class:`~sklearn.model_selection.GridSearchCV` on the Phishing data, in the flat pipeline shape
``StandardScaler -> GIGACoreset -> estimator`` of :mod:`skcoreset.pipeline`, and scores each
size twice:

* **predictive accuracy** on the validation fold (coreset steps are skipped at predict time,
  so every validation row is scored);
* **posterior fidelity**: minus the KL divergence between the Laplace fit of the weighted
  coreset and the Laplace fit of the whole training fold
  (:func:`skcoreset.metrics.make_fidelity_scorer`).

Accuracy saturates at about a hundred points (under 1 % of the rows), while the KL keeps
falling with M: the size to choose depends on whether you need predictions or the posterior
itself. The search refits the smallest size whose accuracy is within a tolerance of the best
(:func:`skcoreset.metrics.smallest_within`).
"""

# %%
# The data and the pipeline
# -------------------------
# The coreset's likelihood is taken from the final estimator (a classifier: logistic).
import sys
import time

from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler

from skcoreset.coreset import GIGACoreset
from skcoreset.datasets import load_phishing
from skcoreset.metrics import make_fidelity_scorer, plot_coreset_size, smallest_within
from skcoreset.pipeline import make_pipeline

X, y = load_phishing(return_X_y=True)
pipe = make_pipeline(
    StandardScaler(),
    GIGACoreset(n_projections=100, random_state=0),
    # A weighted maximum-likelihood fit keeps the example fast; the Bayesian
    # skcoreset.linear_model.BayesianLogisticRegression is used the same way.
    LogisticRegression(),
)
pipe  # noqa: B018 (the gallery displays the pipeline)

# %%
# The grid search over the coreset size
# -------------------------------------
# The grid key is ``<step name>__n_points``. A larger coreset rarely scores worse, so
# ``refit="accuracy"`` would refit whichever large size wins by noise. The rule
# :func:`~skcoreset.metrics.smallest_within` refits instead the *smallest* coreset whose mean
# accuracy is within 0.005 of the best.
scoring = {"accuracy": "accuracy", "fidelity (-KL)": make_fidelity_scorer("kl")}
search = GridSearchCV(
    pipe,
    {"gigacoreset__n_points": [5, 10, 20, 50, 100, 200, 500]},
    cv=3,
    scoring=scoring,
    refit=smallest_within(0.005, metric="accuracy"),
)
start = time.perf_counter()
search.fit(X, y)
print(f"grid search: {time.perf_counter() - start:.1f} s")
accuracy = search.cv_results_["mean_test_accuracy"]
sizes = search.cv_results_["param_gigacoreset__n_points"]
print(f"best accuracy {accuracy.max():.4f} at M = {sizes[accuracy.argmax()]}")
chosen = search.best_params_["gigacoreset__n_points"]
print(f"smallest size within 0.005 of it: M = {chosen}")
for m, acc, fid in zip(sizes, accuracy, search.cv_results_["mean_test_fidelity (-KL)"]):
    print(f"M = {m:4d}   accuracy = {acc:.4f}   KL = {-fid:8.3f}")

# %%
# The trade-off
# -------------
# Accuracy (left axis) against KL fidelity (right axis, dashed), mean +- one standard
# deviation over the folds; the dotted line marks the size the rule refitted.
ax = plot_coreset_size(search)
ax.axvline(chosen, color="grey", linestyle=":")
ax.figure.tight_layout()

if __name__ == "__main__" and "__file__" in globals() and "sphinx_gallery" not in sys.modules:
    # Run as a script (not under sphinx-gallery): save the figure next to the example.
    import pathlib

    out = pathlib.Path(__file__).with_suffix(".png")
    ax.figure.savefig(out, dpi=100)
    print(f"saved {out}")
