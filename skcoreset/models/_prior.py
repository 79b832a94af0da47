"""The default prior: weakly informative on the scale of the data.

A fixed N(0, 1) prior on raw-scale coefficients is informative, and wrong, as soon as features
or targets are far from unit scale (targets in the thousands: the coefficients are shrunk to
nothing). The default follows rstanarm's autoscaled priors: each coefficient gets a standard
deviation of 2.5 s_y / sd(x_k), where s_y is the model's scale of the response (sd(y) for the
Gaussian model, 1 on the logit and log scales: ``GLM.prior_level``); the intercept, which
carries the level of the response through the means of the (uncentred) features, gets
10 s_y + |level of y| + sum_k sd_k |mean(x_k)|.
"""

from dataclasses import dataclass

import numpy as np

from .._parallel_kernels import row_tasks, row_weights, sum_in_order
from .._warnings import renamed
from ._prior_kernels import moment_tasks

#: Prior standard deviation of a coefficient, in units of s_y / sd(x_k).
COEF_SCALE = 2.5
#: Prior standard deviation of the intercept, in units of s_y (before the level terms).
INTERCEPT_SCALE = 10.0


def default_prior_scale(model, X, y, sample_weight=None):
    """Prior standard deviations that follow the scale of the data (``prior_scale='auto'``).

    Parameters
    ----------
    model : GLM
        The model (its name and ``fit_intercept`` are used).
    X : ndarray of shape (n_samples, n_features)
        Features (a uniform sample of the rows is enough).
    y : ndarray of shape (n_samples,)
        Targets, coded for the model.
    sample_weight : ndarray of shape (n_samples,), default=None
        Weights of the rows.

    Returns
    -------
    prior_scale : ndarray of shape (n_features,) or (n_features + 1,)
        One standard deviation per coefficient, then the intercept's (if fitted), to four
        significant digits.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import default_prior_scale, get_model
    >>> X = np.array([[0.0, 100.0], [2.0, 300.0], [4.0, 200.0]])
    >>> default_prior_scale(get_model("logistic"), X, np.array([0.0, 1.0, 1.0]))
    array([ 1.531  ,  0.03062, 19.19   ])
    """
    return prior_from_moments(model, Moments.of(X, y, sample_weight))


class Moments:
    """Weighted sums of the features and targets, added block by block (one pass).

    The sums are taken about a shift (the first row seen) so that the variance of a column
    that is constant, or large and nearly constant, is not lost to cancellation.

    Parameters
    ----------
    n_features : int
        Columns of X.
    """

    def __init__(self, n_features):
        self.w = 0.0
        self.shift = None  # (x0, y0): the first row seen
        self.x = np.zeros(n_features)
        self.xx = np.zeros(n_features)
        self.y = 0.0
        self.yy = 0.0

    @classmethod
    def of(cls, X, y, sample_weight=None):
        """The moments of one block."""
        X = np.asarray(X, dtype=np.float64)
        moments = cls(X.shape[1])
        moments.add(X, y, sample_weight)
        return moments

    def add(self, X, y, sample_weight=None):
        """Add the rows of a block (returns self)."""
        # float32 rows as they are (the kernel subtracts the float64 shift in float64)
        X = np.asarray(X)
        X = np.ascontiguousarray(X, dtype=X.dtype if X.dtype == np.float32 else np.float64)
        y = np.ascontiguousarray(y, dtype=np.float64)
        if y.shape[0] == 0:
            return self
        if sample_weight is None:
            w = np.ones(y.shape[0])
        else:
            w = row_weights(sample_weight)
        if self.shift is None:
            self.shift = (X[0].astype(np.float64), float(y[0]))
        n, D = X.shape
        size, parts = row_tasks(n, (2 * D + 3,))
        moment_tasks.for_size(n)(X, y, w, self.shift[0], self.shift[1], size, parts)
        total = sum_in_order(parts)
        self.x += total[:D]
        self.xx += total[D : 2 * D]
        self.y += total[2 * D]
        self.yy += total[2 * D + 1]
        self.w += total[2 * D + 2]
        return self

    def __iadd__(self, other):
        if other.shift is None:
            return self
        if self.shift is None:
            self.__dict__.update(vars(other))
            return self
        # other's sums about its shift b, moved to ours a: sum w (v - a)^2 =
        # sum w (v - b)^2 + 2 (b - a) sum w (v - b) + W (b - a)^2
        bx = other.shift[0] - self.shift[0]
        by = other.shift[1] - self.shift[1]
        self.xx += other.xx + 2 * bx * other.x + other.w * bx * bx
        self.yy += other.yy + 2 * by * other.y + other.w * by * by
        self.x += other.x + other.w * bx
        self.y += other.y + other.w * by
        self.w += other.w
        return self

    def finite(self):
        """Whether every sum is finite (a non-finite value among the rows makes one not)."""
        return bool(
            np.isfinite(self.w)
            and np.isfinite(self.y)
            and np.isfinite(self.yy)
            and np.all(np.isfinite(self.x))
            and np.all(np.isfinite(self.xx))
        )

    def mean_and_sd(self):
        """Weighted means and standard deviations of the features and of y.

        A standard deviation whose squares overflowed (values beyond about 1e154) is NaN, and
        no warning is issued: the models that read y's (the Gaussian, the Student-t) refuse
        such targets, the others (the gamma's prior of its shape) fall back on a prior that
        does not follow it.
        """
        with np.errstate(over="ignore", invalid="ignore"):
            dx, dy = self.x / self.w, self.y / self.w
            sd_x = np.sqrt(np.maximum(self.xx / self.w - dx * dx, 0.0))
            var_y = self.yy / self.w - dy * dy
        sd_y = float(np.sqrt(max(var_y, 0.0))) if np.isfinite(var_y) else np.nan
        return self.shift[0] + dx, sd_x, self.shift[1] + dy, sd_y

    def varying(self):
        """Which features vary: a standard deviation above 1e-10 of the mean's size (below,
        rounding in the sums)."""
        mean, sd, _, _ = self.mean_and_sd()
        return sd > 1e-10 * np.maximum(np.abs(mean), 1e-300)

    def nonzero(self):
        """Which features are not zero in every row."""
        mean, sd, _, _ = self.mean_and_sd()
        return (sd > 0) | (mean != 0)


def prior_from_moments(model, moments):
    """:func:`default_prior_scale` from the data's :class:`Moments` (a model whose
    parameters are not one per column, a user's :class:`~skcoreset.models.CustomModel`, keeps
    its own ``prior_scale``)."""
    if not model.auto_prior:
        return np.asarray(model.prior_scale, dtype=np.float64)
    mean, sd, y_mean, y_sd = moments.mean_and_sd()
    # a constant column (its coefficient is not identified by the data): unit scale
    sd = np.where(moments.varying(), sd, 1.0)
    s_y, level = model.prior_level(y_mean, y_sd)
    coef = COEF_SCALE * s_y / sd
    if model.fit_intercept:
        coef = np.append(coef, INTERCEPT_SCALE * s_y + abs(level) + float(coef @ np.abs(mean)))
    # Four significant digits: a weakly informative scale needs no more, and rounding makes
    # it exactly the same whatever the order of the rows and the blocks they came in (sums
    # in another order differ in the last bits, which an MCMC chain would amplify).
    return _round_significant(coef, 4)


def _round_significant(x, digits):
    exponent = np.floor(np.log10(np.abs(x)))
    scale = 10.0 ** (digits - 1 - exponent)
    return np.round(x * scale) / scale


@dataclass(frozen=True)
class DataPrior:
    """The prior a coreset's posterior has: its model's, set from the full data.

    A coreset estimator computes it once from all rows (``prior_scale='auto'`` reads their
    moments) and hands it to the Bayesian estimator fitted on its weighted rows, whose
    'auto' prior would otherwise read the coreset's rows, and to the exports to
    probabilistic programming languages: one posterior wherever it is sampled.

    Parameters
    ----------
    model : GLM
        The model with its prior: ``prior_scale`` (one sd per design column, the intercept
        last, or one for all) and the data's scale applied (:meth:`GLM.with_data_scale`).
    y_mean : float
        Weighted mean of the full data's coded targets (0 when the prior does not follow the
        data).
    y_sd : float or None
        Their weighted standard deviation; None when ``prior_scale`` was given, and the
        extra parameter's prior does not follow the data either.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import DataPrior, get_model
    >>> prior = DataPrior(get_model("gaussian", prior_scale=np.array([2.5, 10.0])), 3.0, 2.0)
    >>> prior.prior_scale(2), prior.extra_prior()
    (array([ 2.5, 10. ]), (0.6931..., 3.0))
    """

    model: object
    y_mean: float = 0.0
    y_sd: float | None = None

    def prior_scale(self, n_columns):
        """One prior sd per design column (the intercept last), as ``prior_scale_``.

        Parameters
        ----------
        n_columns : int
            Columns of the design matrix.

        Returns
        -------
        prior_scale : ndarray of shape (n_columns,)
            The model's ``prior_scale``, broadcast.
        """
        scale = np.asarray(self.model.prior_scale, dtype=np.float64)
        return np.broadcast_to(scale, (n_columns,)).copy() if scale.ndim == 0 else scale.copy()

    def extra_prior(self):
        """The normal prior of the log of the model's extra parameter: ``(mean, sd)``.

        Returns
        -------
        mean, sd : float
            :meth:`GLM.extra_prior_at` at the full data's moments (the model's
            ``extra_prior`` for these data).
        """
        return self.model.extra_prior_at(self.y_mean, self.y_sd)

    def extra_log_prior(self):
        """:meth:`extra_prior`, by its name before 0.1 (removed in 0.2).

        Calling it gives a ``FutureWarning``.

        Returns
        -------
        mean, sd : float
            :meth:`extra_prior`'s.
        """
        renamed("extra_log_prior()", "extra_prior()")
        return self.extra_prior()

    def extra_priors(self, n_columns):
        """The model's :meth:`GLM.extra_priors` at the full data's moments.

        Parameters
        ----------
        n_columns : int
            Columns of the design matrix.

        Returns
        -------
        extras : tuple of (str, float, float)
            ``(name, mean, sd)`` of the normal prior of each extra parameter's log.
        """
        return self.model.extra_priors(n_columns, self.y_mean, self.y_sd)

    def matches(self, model, n_columns):
        """Whether this prior is one for ``model`` on a design of ``n_columns`` columns.

        Parameters
        ----------
        model : GLM
            The model of the estimator that would take the prior.
        n_columns : int
            Columns of its design matrix.

        Returns
        -------
        matches : bool
            The same kind of model, the same intercept, and one sd per column (or one for
            all).
        """
        scale = np.asarray(self.model.prior_scale)
        return (
            type(model) is type(self.model)
            and model.fit_intercept == self.model.fit_intercept
            and (scale.ndim == 0 or scale.shape == (n_columns,))
        )


def is_auto(prior_scale):
    """Whether a ``prior_scale`` parameter is 'auto' (it may be a number or an array)."""
    return isinstance(prior_scale, str) and prior_scale == "auto"


def checked_prior_scale(prior_scale, n_columns, n_params=None):
    """A given ``prior_scale`` as an array: a 0-d one for a number, or one sd per design
    column (the intercept last, as ``prior_scale_`` reports it) or per parameter
    (``n_params``, a model whose parameters are not one per column); a clear ValueError for
    another length, or a value that is not positive and finite."""
    scale = np.array(prior_scale, dtype=np.float64)  # a copy: the caller's array stays theirs
    if scale.ndim > 1 or (scale.ndim == 1 and scale.shape[0] not in (n_columns, n_params)):
        raise ValueError(
            f"prior_scale must be a number, 'auto', or one standard deviation per coefficient "
            f"with the intercept's last ({n_columns} here); got shape {scale.shape}."
        )
    if not np.all(np.isfinite(scale) & (scale > 0)):
        raise ValueError(f"prior_scale must be positive and finite; got {prior_scale!r}.")
    return scale
