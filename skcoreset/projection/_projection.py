"""Random projections of the per-datum log-likelihoods into R^J (doc/algorithms.md section 1).

Both draw J parameters from a cheap posterior approximation (the Laplace fit):

* ``'loglik'``: v_n = J^(-1/2) (l_n(theta_j) - mean_i l_n(theta_i))_j, the L2(pi_hat) norm;
* ``'fisher'``: v_n = sqrt(P/J) (d l_n(theta_j) / d theta_{d_j})_j with random coordinates d_j,
  an unbiased estimate of the weighted Fisher information inner product.

The (N, J) output is the largest allocation of a coreset fit; it is filled block by block so
that no other (N, J) temporary exists, and may be stored in float32.
"""

import numpy as np
import scipy.stats
from sklearn.utils import check_consistent_length, check_random_state

from .._parallel_kernels import in_ranges, row_weights, sum_in_order, wide_row_tasks
from ..models._general import row_blocks
from ..models._glm_kernels import loglik_matrix
from ._projection_kernels import add_rows, feature_stats, fisher_features

#: How many values of an estimated extra parameter the draws share (see :meth:`Projection.draw`).
_EXTRA_LEVELS = 16

#: The feature maps ``project`` accepts (see doc/algorithms.md, section 1).
PROJECTIONS = ("loglik", "fisher")

#: Entries (rows x J) up to which the log-likelihood features' sums and norms are taken from
#: the features themselves (``loglik_matrix``, which every fit compiles, in slices of
#: ``_SLICE_ENTRIES``): the fused kernel that stores none compiles noticeably slower on a
#: fresh install and is barely faster, so only larger blocks use it (measured:
#: benchmarks/README.md, Thresholds).
_STORED_SUMMARY_ENTRIES = 2**24
_SLICE_ENTRIES = 2**17  # 1 MB of features a slice, in L2


class Projection:
    """The J parameter draws of a projection, fixed once and applied to any block of rows.

    Every block of a fit is projected with the same draws, so that the vectors of all blocks
    live in one space and their sums add up. Build it with :meth:`draw`.

    Parameters
    ----------
    model : GLM
        The model, with its extra parameter resolved.
    kind : {'loglik', 'fisher'}
        The features.
    thetas_t : ndarray of shape (P, J)
        The parameter draws, one per column.
    coords : ndarray of int64 of shape (J,) or None
        The random coordinates of the Fisher features (P, the number of coefficients, is the
        log of the extra parameter when it is drawn).
    dtype : numpy dtype
        Storage of the vectors (float64 or float32).
    extras : ndarray of shape (J,) or None, default=None
        The extra parameter of each draw, when the Laplace fit has it free (``n_extra``):
        the vectors then see how each datum's log-likelihood moves with it, and a coreset
        keeps its posterior too. None: the model's own for every draw.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import get_model, laplace_approximation
    >>> from skcoreset.projection import Projection
    >>> rng = np.random.default_rng(0)
    >>> model = get_model("logistic")
    >>> Xd = model.design(rng.standard_normal((100, 2)))
    >>> y = (rng.random(100) < 0.5).astype(float)
    >>> lap = laplace_approximation(model, Xd, y, design=True)
    >>> proj = Projection.draw(lap, n_projections=50, random_state=0)
    >>> proj.transform(Xd, y).shape
    (100, 50)
    """

    def __init__(self, model, kind, thetas_t, coords, dtype, extras=None):
        self.model = model
        self.kind = kind
        self.thetas_t = thetas_t
        self.coords = coords
        self.dtype = np.dtype(dtype)
        self.extras = extras

    def _fisher_scale(self, n_coef):
        # sqrt(Q / J) for Q coordinates to choose from: an unbiased inner product
        return np.sqrt((n_coef + (self.extras is not None)) / self.n_projections)

    @property
    def n_projections(self):
        """J, the dimension of the vectors."""
        return self.thetas_t.shape[1]

    @classmethod
    def draw(
        cls, laplace, *, projection="loglik", n_projections=500, dtype=np.float64, random_state=None
    ):
        """Draw the J parameters (and the Fisher coordinates) from a Laplace fit.

        Parameters
        ----------
        laplace : LaplaceApproximation
            The distribution the parameters are drawn from; its model is used.
        projection : {'loglik', 'fisher'}, default='loglik'
            The features.
        n_projections : int, default=500
            J.
        dtype : {np.float64, np.float32}, default=np.float64
            Storage of the vectors.
        random_state : int, RandomState or None
            Seeds the draws.

        Returns
        -------
        projection : Projection
        """
        if projection not in PROJECTIONS:
            raise ValueError(f"projection must be one of {PROJECTIONS}, got {projection!r}.")
        dtype = np.dtype(dtype)
        if dtype not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64, got {dtype}.")
        rng = check_random_state(random_state)
        J = int(n_projections)
        if not laplace.n_extra:
            thetas_t = np.ascontiguousarray(laplace.sample(J, random_state=rng).T)
            coords = None
            if projection == "fisher":
                coords = rng.randint(0, thetas_t.shape[0], size=J).astype(np.int64)
            return cls(laplace.model, projection, thetas_t, coords, dtype)
        thetas_t, extras = _joint_draws(laplace, J, rng)
        coords = None
        if projection == "fisher":
            coords = rng.randint(0, thetas_t.shape[0] + 1, size=J).astype(np.int64)
        return cls(laplace.model, projection, thetas_t, coords, dtype, extras)

    def joint_draws(self):
        """Return the draws as the posterior's parameters.

        Returns
        -------
        thetas : ndarray of shape (J, P)
            One draw per row: the coefficients, then the log of the extra parameter when it
            is drawn.
        """
        thetas = self.thetas_t.T
        if self.extras is None:
            return np.ascontiguousarray(thetas)
        return np.column_stack([thetas, np.log(self.extras)])

    def transform(self, Xd, y, sample_weight=None):
        """Compute the (n, J) vectors of the rows of a design matrix (scaled by their weights).

        Parameters
        ----------
        Xd : ndarray of shape (n, P)
            Design matrix, C-contiguous float64 (intercept column included).
        y : ndarray of shape (n,)
            Coded targets.
        sample_weight : ndarray of shape (n,), default=None
            Each row is scaled by its weight, so the rows sum to the projection of the
            weighted log-likelihood.

        Returns
        -------
        vectors : ndarray of shape (n, J)
            One row per row of ``Xd``, in the projection's ``dtype``.
        """
        # the kernels do not bounds-check: mismatched lengths must fail here, not read garbage
        check_consistent_length(Xd, y, sample_weight)
        if self.model.n_params(Xd.shape[1]) != self.thetas_t.shape[0]:
            raise ValueError(
                f"The design matrix has {Xd.shape[1]} columns; the draws have "
                f"{self.thetas_t.shape[0]} parameters."
            )
        N, P = Xd.shape
        J = self.n_projections
        out = np.empty((N, J), dtype=self.dtype)
        model = self.model
        extras = self.extras
        if model.family is None:  # a model of draws: its own features
            model.projection_features(
                self.kind, Xd, y, self.thetas_t, self.coords, self._general_scale(), out
            )
        elif self.kind == "fisher":
            scale = self._fisher_scale(P)
            fisher_features.for_size(N * J)(
                model.family,
                Xd,
                self.thetas_t,
                y,
                model.extra_value,
                extras,
                self.coords,
                scale,
                out,
            )
        else:
            scale = 1.0 / np.sqrt(J)
            loglik_matrix.for_size(N * J)(
                model.family, Xd, self.thetas_t, y, model.extra_value, extras, scale, True, out
            )
        if sample_weight is not None:
            sw = np.asarray(sample_weight)
            if not np.all(sw == 1.0):
                out *= sw[:, None].astype(self.dtype, copy=False)
        return out

    def _general_features(self, Xd, y):
        """The float64 features (n, J) of a few rows of a model of draws."""
        out = np.empty((Xd.shape[0], self.n_projections))
        return self.model.projection_features(
            self.kind, Xd, y, self.thetas_t, self.coords, self._general_scale(), out
        )

    def _general_scale(self):
        """The features' factor for a model of draws (its P coordinates to choose from)."""
        if self.kind == "fisher":
            return self._fisher_scale(self.thetas_t.shape[0])
        return 1.0 / np.sqrt(self.n_projections)

    def summarize(self, Xd, y, sample_weight=None):
        """The sum of the rows' vectors and their norms, without storing the vectors.

        One pass over the rows in float64: what a block contributes to the target of the
        whole data, and the norms that weigh its rows as candidates.

        Parameters
        ----------
        Xd : ndarray of shape (n, P)
            Design matrix, C-contiguous float64 (intercept column included).
        y : ndarray of shape (n,)
            Coded targets.
        sample_weight : ndarray of shape (n,), default=None
            Weights of the rows (each vector is scaled by its weight).

        Returns
        -------
        total : ndarray of shape (J,)
            ``sum_n w_n v_n``.
        norms : ndarray of shape (n,)
            ``w_n ||v_n||``.
        """
        check_consistent_length(Xd, y, sample_weight)
        n, P = Xd.shape
        J = self.n_projections
        w = np.ones(n) if sample_weight is None else row_weights(sample_weight)
        if self.model.family is None:
            total, norms = np.zeros(J), np.empty(n)
            for sl in row_blocks(n, J * (P if self.kind == "fisher" else 1)):
                v = self._general_features(Xd[sl], y[sl])
                total += w[sl] @ v
                norms[sl] = w[sl] * np.linalg.norm(v, axis=1)
            return total, norms
        size, sums = wide_row_tasks(n, (J,))  # each row is J log-likelihoods
        norms = np.empty(n)
        fisher = self.kind == "fisher"
        scale = self._fisher_scale(P) if fisher else 1.0 / np.sqrt(J)
        model = self.model
        if not fisher and n * J <= _STORED_SUMMARY_ENTRIES:
            self._summarize_stored(Xd, y, w, scale, size, sums, norms)
            return sum_in_order(sums), norms
        feature_stats.for_size(n * J)(
            model.family,
            Xd,
            self.thetas_t,
            y,
            w,
            model.extra_value,
            self.extras,
            self.coords if fisher else None,
            scale,
            size,
            sums,
            norms,
        )
        return sum_in_order(sums), norms

    def _summarize_stored(self, Xd, y, w, scale, size, sums, norms):
        """:func:`feature_stats` of the log-likelihood features from the features: each task's
        rows in slices, evaluated and summed in order (the same sums and norms), the tasks on
        the fit's threads."""
        n, J = Xd.shape[0], self.n_projections
        step = max(1, _SLICE_ENTRIES // J)
        model = self.model

        def run(c0, c1):
            buf = np.empty((min(step, n), J))
            for c in range(c0, c1):
                for a in range(c * size, min(n, (c + 1) * size), step):
                    b = min(a + step, (c + 1) * size, n)
                    V = buf[: b - a]
                    loglik_matrix.serial(
                        model.family, Xd[a:b], self.thetas_t, y[a:b], model.extra_value,
                        self.extras, scale, True, V,
                    )  # fmt: skip
                    V *= w[a:b, None]
                    add_rows(V, sums[c], norms[a:b])

        in_ranges(run, sums.shape[0])


def _joint_draws(laplace, J, rng):
    """``(thetas_t, extras)``: J draws of a joint Laplace fit of the coefficients and the log
    extra parameter (``n_extra``). The log extra parameter takes one of ``_EXTRA_LEVELS``
    quantiles of its marginal at random, the coefficients are drawn from their conditional
    given it: a joint draw (of the fit's mean and covariance) whose extra parameter is
    stratified, so that the rows' constants
    are computed once a level, not once a draw (with every draw its own, the negative
    binomial's lgamma made its projection far slower than the logistic one; measured:
    benchmarks/README.md, Thresholds)."""
    P = laplace.mean.shape[0] - 1
    mean, cov = laplace.mean, laplace.cov
    var_s = cov[P, P]
    slope = cov[:P, P] / var_s  # E[coef | s] = mean + slope (s - mean_s)
    cond = cov[:P, :P] - np.outer(slope, cov[:P, P])
    cond = 0.5 * (cond + cond.T)
    chol = np.linalg.cholesky(cond + 1e-12 * np.diag(np.diag(cond)))
    z = rng.standard_normal((J, P))
    quantiles = scipy.stats.norm.ppf((np.arange(_EXTRA_LEVELS) + 0.5) / _EXTRA_LEVELS)
    # scaled to unit variance: the midpoints' own is 0.93, which would narrow the extra
    # parameter's spread, and the coreset's reach in it, by 3.5%
    levels = np.sqrt(var_s) * quantiles / np.sqrt(np.mean(quantiles**2))  # s - mean_s
    shift = levels[rng.randint(0, _EXTRA_LEVELS, size=J)]
    thetas = mean[:P] + shift[:, None] * slope + z @ chol.T
    return np.ascontiguousarray(thetas.T), np.exp(mean[P] + shift)


def project(
    model,
    Xd,
    y,
    laplace,
    *,
    projection="loglik",
    n_projections=500,
    dtype=np.float64,
    sample_weight=None,
    random_state=None,
):
    """Project every datum's log-likelihood into R^J.

    Parameters
    ----------
    model : GLM
        The model (its extra parameter resolved, e.g. ``laplace.model``).
    Xd : ndarray of shape (N, P)
        Design matrix, C-contiguous float64 (intercept column included).
    y : ndarray of shape (N,)
        Coded targets.
    laplace : LaplaceApproximation
        The distribution the parameters are drawn from.
    projection : {'loglik', 'fisher'}, default='loglik'
        The features (see the module notes).
    n_projections : int, default=500
        J, the dimension of the projection.
    dtype : {np.float64, np.float32}, default=np.float64
        Storage of the output; float32 halves the memory of large problems.
    sample_weight : ndarray of shape (N,), default=None
        Each row is scaled by its weight, so the rows sum to the projection of the weighted
        log-likelihood.
    random_state : int, RandomState or None
        Seeds the parameter draws.

    Returns
    -------
    vectors : ndarray of shape (N, J)
        One row per datum.

    Examples
    --------
    >>> from skcoreset.datasets import load_phishing
    >>> from skcoreset.models import get_model, laplace_approximation
    >>> from skcoreset.projection import project
    >>> X, y = load_phishing(return_X_y=True)
    >>> model = get_model("logistic")
    >>> Xd = model.design(X)
    >>> lap = laplace_approximation(model, Xd, y, design=True)
    >>> project(lap.model, Xd, y, lap, n_projections=50, random_state=0).shape
    (11055, 50)
    """
    check_consistent_length(Xd, y, sample_weight)
    draws = Projection.draw(
        laplace,
        projection=projection,
        n_projections=n_projections,
        dtype=dtype,
        random_state=random_state,
    )
    draws.model = model
    return draws.transform(Xd, y, sample_weight)
