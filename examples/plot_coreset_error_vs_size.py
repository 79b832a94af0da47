r"""
==========================================================
Coreset error against size: GIGA, OMP, IHT and the others
==========================================================

Build coresets of the bundled Phishing data (logistic regression) with every Hilbert method
and plot the relative error of the weighted log-likelihood in the projection space against
the coreset size. The optimising methods (GIGA, OMP, A-IHT II) fall far below uniform and
importance sampling, whose error shrinks only like :math:`1 / \sqrt{M}`.
"""

import os

import matplotlib.pyplot as plt
import numpy as np

from skcoreset import hilbert
from skcoreset.datasets import load_phishing
from skcoreset.models import get_model, laplace_approximation
from skcoreset.projection import project

X, y = load_phishing(return_X_y=True)
# ``SKCORESET_EXAMPLE_SCALE`` below 1 keeps a random part of the rows (the sizes stay).
SCALE = float(os.environ.get("SKCORESET_EXAMPLE_SCALE", "1.0"))
if SCALE < 1:
    rows = np.random.default_rng(0).choice(len(y), max(2000, int(SCALE * len(y))), replace=False)
    X, y = X[rows], y[rows]
model = get_model("logistic")
Xd = model.design(X)
laplace = laplace_approximation(model, Xd, y, design=True)
# One projection shared by all methods, so that the errors are comparable.
vectors = project(model, Xd, y, laplace, n_projections=500, random_state=0)

sizes = [10, 20, 50, 100, 200]
methods = {
    "uniform": lambda M: hilbert.uniform(vectors, M, random_state=0, return_info=True),
    "importance": lambda M: hilbert.importance(vectors, M, random_state=0, return_info=True),
    "Frank-Wolfe": lambda M: hilbert.frank_wolfe(vectors, M, return_info=True),
    "GIGA": lambda M: hilbert.giga(vectors, M, return_info=True),
    "A-IHT II": lambda M: hilbert.iht(vectors, M, debias=True, return_info=True),
    "OMP": lambda M: hilbert.omp(vectors, M, return_info=True),
}

fig, ax = plt.subplots(figsize=(6, 4))
for name, build in methods.items():
    errors = [build(M)[1]["error"] for M in sizes]
    ax.plot(sizes, errors, marker="o", label=name)
    print(f"{name:<12}" + " ".join(f"{e:9.2e}" for e in errors))
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("coreset size M")
ax.set_ylabel("relative error ||Phi w - y|| / ||y||")
ax.set_title(f"Phishing ({len(y)} rows), logistic likelihood, J = 500")
ax.legend()
fig.tight_layout()

if __name__ == "__main__":
    fig.savefig("coreset_error_vs_size.png", dpi=100)
