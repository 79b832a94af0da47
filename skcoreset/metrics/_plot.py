"""Plot the result of a grid search over the coreset size."""

import numpy as np

from ._scorer import SmallestWithin, size_param


def plot_coreset_size(grid_search, *, param=None, metrics=None, ax=None, logx=True):
    """Plot cross-validated scores against the coreset size from a fitted ``GridSearchCV``.

    The first metric (the refit metric, or the single score) is drawn on ``ax``; the others
    (e.g. a fidelity scorer from :func:`make_fidelity_scorer`) on a twin y-axis. Each line is
    the mean over the folds with a band of +- one standard deviation. When other parameters
    vary too, one line per combination of them is drawn.

    Parameters
    ----------
    grid_search : fitted GridSearchCV or RandomizedSearchCV
        Its ``cv_results_`` must have a ``param_<...>n_points`` column.
    param : str, default=None
        The size parameter (e.g. 'gigacoreset__n_points'); None finds the one ending in
        'n_points'.
    metrics : list of str, default=None
        Scorer names to plot (the keys of a ``scoring`` dict, or 'score'); None: all of them,
        the refit one first (the metric of a :func:`smallest_within` rule).
    ax : matplotlib Axes, default=None
        Axes to draw on; None creates a figure.
    logx : bool, default=True
        Logarithmic size axis.

    Returns
    -------
    ax : matplotlib Axes
        The axes of the first metric. The other metrics share a twin y-axis (find it in
        ``ax.figure.axes``).

    Raises
    ------
    ImportError
        If matplotlib is not installed.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import GridSearchCV
    >>> from skcoreset.compose import CoresetClassifier
    >>> from skcoreset.coreset import UniformCoreset
    >>> from skcoreset.datasets import make_logistic_regression
    >>> from skcoreset.metrics import plot_coreset_size
    >>> X, y = make_logistic_regression(n_samples=300, n_features=3, random_state=0)
    >>> clf = CoresetClassifier(UniformCoreset(projection=None), LogisticRegression())
    >>> search = GridSearchCV(clf, {"coreset__n_points": [30, 100]}, cv=3).fit(X, y)
    >>> ax = plot_coreset_size(search)
    >>> len(ax.lines) >= 1
    True
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "plot_coreset_size needs matplotlib; install it with `pip install matplotlib`."
        ) from exc
    results = getattr(grid_search, "cv_results_", None)
    if results is None:
        raise ValueError("grid_search must be a fitted GridSearchCV (it has no cv_results_).")
    params = results["params"]
    param = size_param(params[0]) if param is None else param
    if f"param_{param}" not in results:
        raise ValueError(f"cv_results_ has no column param_{param}.")
    names = [k[len("mean_test_") :] for k in results if k.startswith("mean_test_")]
    if metrics is None:
        refit = getattr(grid_search, "refit", None)
        refit = refit.metric if isinstance(refit, SmallestWithin) else refit
        metrics = sorted(names, key=lambda n: (n != refit, names.index(n)))
    else:
        missing = [m for m in metrics if m not in names]
        if missing:
            raise ValueError(f"Unknown metric(s) {missing}; cv_results_ has {names}.")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))

    sizes = np.array([p[param] for p in params], dtype=float)
    groups = {}
    for i, p in enumerate(params):
        key = tuple(sorted((k, repr(v)) for k, v in p.items() if k != param))
        groups.setdefault(key, []).append(i)

    axes = [ax] + [ax.twinx() for _ in metrics[1:2]]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    lines = []
    c = 0
    for m_i, metric in enumerate(metrics):
        target = axes[min(m_i, len(axes) - 1)]
        mean = np.asarray(results[f"mean_test_{metric}"], dtype=float)
        std = np.asarray(results[f"std_test_{metric}"], dtype=float)
        for key, rows in groups.items():
            rows = np.array(rows)[np.argsort(sizes[rows])]
            label = (
                metric
                if not key or len(groups) == 1
                else f"{metric} ({', '.join(f'{k}={v}' for k, v in key)})"
            )
            color = colors[c % len(colors)]
            c += 1
            (line,) = target.plot(
                sizes[rows],
                mean[rows],
                marker="o",
                color=color,
                label=label,
                linestyle="-" if m_i == 0 else "--",
            )
            target.fill_between(
                sizes[rows], mean[rows] - std[rows], mean[rows] + std[rows], color=color, alpha=0.2
            )
            lines.append(line)
        target.set_ylabel(metric if m_i < 2 else target.get_ylabel())
    if len(metrics) > 2:
        axes[-1].set_ylabel(", ".join(metrics[1:]))
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(f"coreset size ({param})")
    ax.legend(lines, [ln.get_label() for ln in lines], loc="best")
    ax.set_title("Cross-validated scores against coreset size")
    return ax
