"""Loader of the bundled Phishing data set."""

from importlib import resources

import numpy as np
from sklearn.utils import Bunch

DESCR = """Phishing websites (UCI), Campbell & Broderick's 10-dimensional preprocessing.

N = 11055 rows, 10 real features, binary target (1 = legitimate site, 55.7 %). The first
9950 rows are the training part of the split used in the Bayesian coreset papers (GIGA, IHT).
Licence: CC BY 4.0 (UCI). See skcoreset/datasets/data/README.md for the exact source.
"""


def load_phishing(*, return_X_y=False, as_frame=False):
    """Load the Phishing data set of the Bayesian coreset papers (binary classification).

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(X, y)`` instead of a Bunch.
    as_frame : bool, default=False
        Return pandas objects (requires pandas).

    Returns
    -------
    data : Bunch
        ``data`` (11055, 10), ``target`` (11055,) in {0, 1}, ``feature_names``,
        ``n_train`` (rows of the papers' training split), ``DESCR``, ``frame`` when
        ``as_frame``.
    (X, y) : tuple
        The features and the labels, if ``return_X_y``.

    Examples
    --------
    >>> from skcoreset.datasets import load_phishing
    >>> X, y = load_phishing(return_X_y=True)
    >>> X.shape
    (11055, 10)
    """
    with resources.files("skcoreset.datasets").joinpath("data/phishing.npz").open("rb") as f:
        npz = np.load(f, allow_pickle=False)
        X, y = npz["X"], npz["y"].astype(np.int64)
        n_train = int(npz["n_train"])
    feature_names = [f"pc{i}" for i in range(X.shape[1])]
    frame = None
    if as_frame:
        import pandas as pd

        X = pd.DataFrame(X, columns=feature_names)
        y = pd.Series(y, name="legitimate")
        frame = pd.concat([X, y], axis=1)
    if return_X_y:
        return X, y
    return Bunch(
        data=X, target=y, feature_names=feature_names, n_train=n_train, frame=frame, DESCR=DESCR
    )
