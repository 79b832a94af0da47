"""Models whose per-datum log-likelihood is any function of the whole parameter vector.

A :class:`~skcoreset.models.SingleIndexFamily` model reads ``theta`` through one linear
predictor ``x . theta``, which the fused numba kernels exploit. The multinomial model (K - 1
linear predictors), the Student-t model (its scale and degrees of freedom) and a user's
:class:`~skcoreset.models.CustomModel` do not: they give the per-datum log-likelihoods and
gradients of S parameter vectors at once,

    loglik_draws(thetas (S, P), Xd, y) -> (S, n),   grad_draws(thetas, Xd, y) -> (S, n, P),

and everything else - the weighted sums and the Hessian of the Laplace fit, the projections'
features, the sampler's target - is built from those two by this base class (the projections
read :meth:`GeneralModel.projection_features`, the sampler and the KL methods
:meth:`GeneralModel.weighted_loglik_chains`, the Laplace fit ``weighted_loglik`` and
``weighted_loglik_hessian``). A subclass may override any of the derived methods with a
faster one, as the built-ins do with their numba kernels.
"""

from dataclasses import dataclass

import numpy as np

from ._glm import GLM

#: Entries of a (draws x rows x parameters) gradient evaluated at once: blocks of rows keep
#: the temporaries near 32 MB whatever the data's size.
_BLOCK_ENTRIES = 1 << 22


def row_blocks(n_rows, entries_per_row, budget=None):
    """Slices of rows whose temporaries hold about ``budget`` entries each (None:
    ``_BLOCK_ENTRIES``)."""
    budget = _BLOCK_ENTRIES if budget is None else budget
    rows = max(1, budget // max(1, entries_per_row))
    return [slice(s, min(s + rows, n_rows)) for s in range(0, n_rows, rows)]


@dataclass(frozen=True, eq=False)
class GeneralModel(GLM):
    """Base class of the models given by per-datum log-likelihoods and gradients of draws.

    A subclass implements :meth:`loglik_draws`, :meth:`grad_draws` and :meth:`n_params`
    (and :meth:`encode_targets`); the weighted sums, the Laplace fit's Hessian (by central
    differences of the gradient, unless overridden), the projections' features and the
    sampler's target follow from them.

    Parameters
    ----------
    prior_scale : float or ndarray of shape (P,), default=1.0
        Standard deviation of the Gaussian prior N(0, diag(prior_scale^2)) on the parameters.
    fit_intercept : bool, default=True
        Whether the design matrix gets a trailing column of ones.
    extra : None
        Unused (the parameters of such a model are all in ``theta``).
    extra_prior : None
        Unused (no extra parameter).

    See Also
    --------
    MultinomialModel : A built-in model of this kind.
    CustomModel : A user's model of this kind, from two NumPy functions.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import GeneralModel, MultinomialModel
    >>> model = MultinomialModel(n_classes=3)
    >>> isinstance(model, GeneralModel), model.family is None
    (True, True)
    """

    family = None  # no single index: the kernels of the single-index models do not apply
    log_concave = False  # unless a subclass knows better (the multinomial model does)

    # -- what a subclass provides ----------------------------------------------------
    def loglik_draws(self, thetas, Xd, y):
        """Per-datum log-likelihoods at S parameter vectors.

        Parameters
        ----------
        thetas : ndarray of shape (S, P)
            Parameter vectors, one per row.
        Xd : ndarray of shape (n, Q)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (n,)
            Coded targets.

        Returns
        -------
        loglik : ndarray of shape (S, n)
            ``log p(y_n | x_n, theta_s)``.
        """
        raise NotImplementedError

    def grad_draws(self, thetas, Xd, y):
        """Per-datum gradients at S parameter vectors.

        Parameters
        ----------
        thetas : ndarray of shape (S, P)
            Parameter vectors, one per row.
        Xd : ndarray of shape (n, Q)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (n,)
            Coded targets.

        Returns
        -------
        grad : ndarray of shape (S, n, P)
            The gradient of ``log p(y_n | x_n, theta_s)`` in ``theta_s``.
        """
        raise NotImplementedError

    # -- derived ---------------------------------------------------------------------
    def initial_params(self, Xd, y, w):
        return np.zeros(self.n_params(Xd.shape[1]))

    def loglik(self, theta, Xd, y):
        return self.loglik_draws(np.atleast_2d(np.asarray(theta, dtype=np.float64)), Xd, y)[0]

    def loglik_grad_per_datum(self, theta, Xd, y):
        return self.grad_draws(np.atleast_2d(np.asarray(theta, dtype=np.float64)), Xd, y)[0]

    def weighted_loglik_chains(self, thetas, Xd, y, w):
        """Compute the weighted log-likelihood and its gradient at each of S parameters.

        The rows are taken in blocks of bounded memory.

        Parameters
        ----------
        thetas : ndarray of shape (S, P)
            Parameter vectors, one per row.
        Xd : ndarray of shape (n, Q)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (n,)
            Coded targets.
        w : ndarray of shape (n,)
            Weights of the rows.

        Returns
        -------
        ll : ndarray of shape (S,)
            ``sum_n w_n l_n(theta_s)``.
        grad : ndarray of shape (S, P)
            Its gradient.
        """
        thetas = np.ascontiguousarray(np.atleast_2d(thetas), dtype=np.float64)
        S, P = thetas.shape
        ll, grad = np.zeros(S), np.zeros((S, P))
        for sl in row_blocks(Xd.shape[0], S * P):
            ll += self.loglik_draws(thetas, Xd[sl], y[sl]) @ w[sl]
            grad += np.einsum("snp,n->sp", self.grad_draws(thetas, Xd[sl], y[sl]), w[sl])
        return ll, grad

    def weighted_loglik(self, theta, Xd, y, w):
        ll, grad = self.weighted_loglik_chains(theta, Xd, y, w)
        return float(ll[0]), grad[0]

    def weighted_loglik_grad_hessian(self, theta, Xd, y, w):
        # no single pass gives both here: the two, each as this model computes it
        ll, grad = self.weighted_loglik(theta, Xd, y, w)
        return ll, grad, self.weighted_loglik_hessian(theta, Xd, y, w)

    def weighted_loglik_hessian(self, theta, Xd, y, w):
        # central differences of the weighted gradient (all 2P points in one call of
        # grad_draws), symmetrised
        theta = np.asarray(theta, dtype=np.float64)
        P = theta.shape[0]
        h = 1e-5 * np.maximum(1.0, np.abs(theta))
        points = np.concatenate([theta + np.diag(h), theta - np.diag(h)])
        _, g = self.weighted_loglik_chains(points, Xd, y, w)
        H = -(g[:P] - g[P:]) / (2.0 * h[:, None])
        return 0.5 * (H + H.T)

    def row_spreads(self, theta, chol, Xd, y):
        """Return how much each row's log-likelihood varies under a Gaussian fit.

        To first order, the standard deviation of ``g_n . (theta' - theta)`` for ``theta'``
        drawn from ``N(theta, chol chol^T)``: ``|chol^T g_n|``, with ``g_n`` the row's
        gradient at ``theta`` (the keys of the coresets' pools and samples; a single-index
        model adds the curvature's term). In blocks of rows.

        Parameters
        ----------
        theta : ndarray of shape (P,)
            The fit's mean.
        chol : ndarray of shape (P, P)
            The lower Cholesky factor of its covariance.
        Xd : ndarray of shape (n, Q)
            Design matrix.
        y : ndarray of shape (n,)
            Coded targets.

        Returns
        -------
        spread : ndarray of shape (n,)
            Each row's spread.
        """
        out = np.empty(Xd.shape[0])
        for sl in row_blocks(Xd.shape[0], 2 * chol.shape[0]):
            z = self.loglik_grad_per_datum(theta, Xd[sl], y[sl]) @ chol
            out[sl] = np.sqrt(np.einsum("ij,ij->i", z, z))
        return out

    def second_order_sums(self, theta, chol, X, y, w, spread=True):
        """Return the weighted sums of the rows' gradients and curvatures, and their spreads.

        The data's second-order expansion at ``theta`` (``_taylor.data_summary``): ``G =
        sum_n w_n grad l_n(theta)`` and ``H = -sum_n w_n hess l_n(theta)``, and with
        ``spread`` each row's :meth:`row_spreads` under ``N(theta, chol chol^T)``. A model
        may override it with a faster pass (the built-ins' fused kernels).

        Parameters
        ----------
        theta : ndarray of shape (P,)
            The point.
        chol : ndarray of shape (P, P)
            The lower Cholesky factor of the fit's covariance.
        X : ndarray of shape (n, D)
            The rows as stored (float32 or float64; :meth:`design` makes their design).
        y : ndarray of shape (n,)
            Coded targets.
        w : ndarray of shape (n,)
            Positive weights.
        spread : bool, default=True
            Whether to return the spreads.

        Returns
        -------
        G : ndarray of shape (P,)
            The weighted sum of the rows' log-likelihood gradients.
        H : ndarray of shape (P, P)
            Minus the weighted sum of their Hessians.
        spreads : ndarray of shape (n,) or None
            Each row's :meth:`row_spreads` (None without ``spread``).
        """
        Xd = self.design(X)
        _, G = self.weighted_loglik(theta, Xd, y, w)
        H = self.weighted_loglik_hessian(theta, Xd, y, w)
        return G, H, self.row_spreads(theta, chol, Xd, y) if spread else None

    def loglik_matrix(self, Xd, y, thetas, out=None, extras=None):
        thetas = np.ascontiguousarray(np.atleast_2d(thetas), dtype=np.float64)
        if out is None:
            out = np.empty((Xd.shape[0], thetas.shape[0]))
        for sl in row_blocks(Xd.shape[0], thetas.shape[0]):
            out[sl] = self.loglik_draws(thetas, Xd[sl], y[sl]).T
        return out

    def projection_features(self, kind, Xd, y, thetas_t, coords, scale, out):
        """Fill ``out`` with the projection's features of the rows of ``Xd``.

        The rows' log-likelihoods at the draws, centred along the row (``'loglik'``), or
        their derivative in one coordinate per draw (``'fisher'``), times ``scale``: in blocks
        of rows from :meth:`loglik_draws` or :meth:`grad_draws` here; the built-in models of
        draws override it with fused kernels.

        Parameters
        ----------
        kind : {'loglik', 'fisher'}
            The features.
        Xd : ndarray of shape (n, Q)
            Design matrix.
        y : ndarray of shape (n,)
            Coded targets.
        thetas_t : ndarray of shape (P, J)
            The draws, one per column.
        coords : ndarray of int64 of shape (J,) or None
            The coordinate of each draw ('fisher').
        scale : float
            Factor of every feature.
        out : ndarray of shape (n, J)
            Float64 or float32; overwritten.

        Returns
        -------
        out : ndarray of shape (n, J)
            The same array, filled.
        """
        thetas = np.ascontiguousarray(np.asarray(thetas_t).T, dtype=np.float64)
        J, P = thetas.shape
        for sl in row_blocks(Xd.shape[0], J * (P if kind == "fisher" else 1)):
            if kind == "fisher":
                grad = self.grad_draws(thetas, Xd[sl], y[sl])  # (J, n, P)
                out[sl] = scale * grad[np.arange(J), :, coords].T
            else:
                ll = self.loglik_draws(thetas, Xd[sl], y[sl]).T
                out[sl] = scale * (ll - ll.mean(axis=1, keepdims=True))
        return out

    def mean_draws(self, thetas, Xd):
        """Compute the mean response of each row at S parameter vectors.

        Parameters
        ----------
        thetas : ndarray of shape (S, P)
            Parameter vectors, one per row.
        Xd : ndarray of shape (n, Q)
            Design matrix (from :meth:`design`).

        Returns
        -------
        mean : ndarray of shape (S, n)
            ``E[y_n | x_n, theta_s]``.
        """
        raise NotImplementedError(
            f"The {self.name!r} model defines no mean response (mean_draws): use its "
            "posterior draws or log_predictive_density."
        )

    def simulate_draws(self, thetas, Xd, random_state):
        """Draw one target per row at each of S parameter vectors.

        Parameters
        ----------
        thetas : ndarray of shape (S, P)
            Parameter vectors, one per row.
        Xd : ndarray of shape (n, Q)
            Design matrix (from :meth:`design`).
        random_state : numpy.random.RandomState
            The source of randomness.

        Returns
        -------
        y : ndarray of shape (S, n)
            Simulated targets, in the model's coding.
        """
        raise NotImplementedError(
            f"The {self.name!r} model defines no simulation (simulate_draws): posterior "
            "predictive draws need one."
        )

    def mean(self, eta):
        raise NotImplementedError(f"The {self.name} model has no single linear predictor.")

    def log_density(self, y, eta, extra=None):
        raise NotImplementedError(f"The {self.name} model has no single linear predictor.")
