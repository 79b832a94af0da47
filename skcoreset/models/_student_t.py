"""Student-t linear regression: the Gaussian-linear model with heavy tails, for outliers.

``y = x . beta + sigma * t_nu``: location ``x . beta``, scale ``sigma`` and degrees of freedom
``nu``, all three sampled. The parameters are ``theta = (beta, log sigma - c_sigma,
log nu - c_nu)`` (P = Q + 2 for Q design columns), centred on their priors' means so that
the prior stays N(0, diag(prior_scale^2)) as for every model:

* ``log sigma ~ N(log sd(y), 3^2)`` when the prior follows the data (N(0, 3^2) with a numeric
  ``prior_scale``), as the Gaussian model's noise scale;
* ``log nu ~ N(2.725, 0.803^2)``, the log-normal with the mean and variance of ``log nu``
  under brms's default ``nu ~ gamma(2, 0.1)`` (Juarez & Steel 2010): median 15, 95% within
  3.1 - 74.

The coefficients' prior is the Gaussian model's (2.5 sd(y) / sd(x_k)), as brms and rstanarm
scale theirs.
"""

from dataclasses import dataclass, replace

import numpy as np
import scipy.special

from .._parallel_kernels import row_tasks, row_weights, summed_gradient_hessian
from . import _student_t_kernels as kernels
from ._general import GeneralModel
from ._targets import MAX_SQUARED_TARGET, check_target_scale, numeric_targets

#: Why y must stay below MAX_SQUARED_TARGET, and what to do.
_SCALE = (
    "it squares the residuals (and the 'auto' prior the targets' spread), which overflow "
    "float64 past about 1e154",
    "Rescale y (divide it by a power of ten, or standardise it): the coefficients and the "
    "scale follow it.",
)

#: Prior of log nu: mean and sd of log nu under nu ~ Gamma(2, rate 0.1) (digamma(2) - log 0.1,
#: sqrt(trigamma(2))).
LOG_DF_PRIOR = (float(scipy.special.digamma(2.0) - np.log(0.1)), float(np.sqrt(np.pi**2 / 6 - 1)))
#: Prior sd of log sigma (the Gaussian model's noise scale's).
LOG_SCALE_SD = 3.0


def _c(a):
    return np.ascontiguousarray(a, dtype=np.float64)


@dataclass(frozen=True, eq=False)
class StudentTModel(GeneralModel):
    """Student-t likelihood around a linear predictor; its scale and degrees of freedom sampled.

    Parameters
    ----------
    prior_scale : float or ndarray, default=1.0
        Standard deviation of the Gaussian prior of the coefficients: one for all or one per
        design column (the intercept last). The two extra parameters have priors of their own
        (module notes), unless all P = Q + 2 are given.
    fit_intercept : bool, default=True
        Whether the design matrix gets a trailing column of ones.
    extra : None
        Unused (the scale is a parameter, sampled).
    extra_prior : None
        Unused (the scale's and the degrees of freedom's priors are in ``prior_scale``'s
        last two entries' place: module notes).
    log_scale_centre : float, default=0.0
        The prior mean of ``log sigma`` (``log sd(y)`` when set from the data by
        :meth:`with_data_scale`).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import StudentTModel
    >>> model = StudentTModel()
    >>> Xd = model.design(np.array([[0.5], [-1.0]]))
    >>> model.n_params(Xd.shape[1])
    4
    >>> theta = np.array([0.0, 0.0, 0.0, np.log(1e8) - model.df_centre])  # nu = 1e8: normal
    >>> model.loglik(theta, Xd, np.array([0.0, 1.0])).round(4)
    array([-0.9189, -1.4189])
    """

    log_scale_centre: float = 0.0

    name = "student_t"
    likelihood = "student_t"
    extra_name = "scale"
    learns_scale = True
    log_concave = False
    df_centre = LOG_DF_PRIOR[0]

    def n_params(self, n_columns):
        return int(n_columns) + 2

    def encode_targets(self, y):
        return check_target_scale(numeric_targets(y), MAX_SQUARED_TARGET, "Student-t", *_SCALE)

    def prior_level(self, y_mean, y_sd):
        # the Gaussian model's: the response's own scale, the intercept at its mean
        return (y_sd or max(abs(y_mean), 1.0)), y_mean

    def with_data_scale(self, y_mean, y_sd):
        return replace(self, log_scale_centre=float(np.log(y_sd)) if y_sd else 0.0)

    def prior_precision(self, n_params):
        scale = np.broadcast_to(np.asarray(self.prior_scale, dtype=np.float64), (n_params - 2,))
        if np.ndim(self.prior_scale) == 1 and np.shape(self.prior_scale)[0] == n_params:
            scale = np.asarray(self.prior_scale, dtype=np.float64)
        else:
            scale = np.concatenate([scale, [LOG_SCALE_SD, LOG_DF_PRIOR[1]]])
        return 1.0 / scale**2

    def extra_priors(self, n_columns, y_mean, y_sd):
        # the scale and the degrees of freedom: the last two parameters, log sigma and log
        # nu centred on their prior means
        sd = 1.0 / np.sqrt(self.prior_precision(self.n_params(n_columns))[-2:])
        return (
            ("scale", float(self.log_scale_centre), float(sd[0])),
            ("df", float(self.df_centre), float(sd[1])),
        )

    def initial_params(self, Xd, y, w):
        # Least squares with its residual scale, or a start robust to the outliers the model
        # is for, whichever has the higher log posterior: from least squares alone, an
        # outlier of 1e10 put the start in the basin of a fit of the outlier (sigma near
        # 1e9), whose Hessian Newton could not use, and the fit failed as "numerically
        # singular"; where least squares does well (no outlier), it stays the start
        top = w.max(initial=0.0)
        if not top > 0:  # no weighted row (an empty coreset): the prior's centre
            return np.zeros(self.n_params(Xd.shape[1]))
        w_rel = w / top  # the starts read relative weights (1e300 would overflow)
        beta = _weighted_lstsq(Xd, y, w_rel)
        ls = np.concatenate([beta, [np.log(_rms(y - Xd @ beta, w_rel)), 0.0]])
        robust = self._robust_start(Xd, y, w_rel)
        ls[-2] -= self.log_scale_centre
        with np.errstate(all="ignore"):
            ll, _ = self.weighted_loglik_chains(np.vstack([ls, robust]), Xd, y, w)
            lp = ll - 0.5 * np.vstack([ls, robust]) ** 2 @ self.prior_precision(ls.shape[0])
        return robust if lp[1] > lp[0] or not np.isfinite(lp[0]) else ls

    def _robust_start(self, Xd, y, w):
        """Iteratively reweighted steps of the Student-t fit at nu = 3 (EM's weights (nu + 1)
        / (nu + z^2)) from a least-absolute-deviations fit and the residuals' MAD; nu = 15
        (the prior's centre)."""
        beta = _weighted_lstsq(Xd, y, w)
        r = y - Xd @ beta
        if not _rms(r, w) > 1e-9 * max(_rms(y, w), 1e-300):
            # zero residuals: the likelihood grows without bound as the scale shrinks
            raise ValueError(
                "The targets are an exact linear function of the features on these rows: "
                "the Student-t model's scale has no positive mode (its posterior collapses "
                "to 0). Use more rows, or a model that fixes the scale."
            )
        # least absolute deviations by reweighting (each row's pull bounded), from the
        # deviations from the median: least squares' residuals are the outliers' pull,
        # spread over every row
        ls_scale = _rms(r, w)
        r = y - _weighted_median(y, w)
        # below this the residuals are rounding error (an outlier would set the residuals'
        # root mean square)
        floor = 1e-9 * (_weighted_mad(r, w) or ls_scale)
        for _ in range(30):
            cut = max(1e-9 * _weighted_mad(r, w), 1e-300)
            beta = _weighted_lstsq(Xd, y, w / np.maximum(np.abs(r), cut))
            r = y - Xd @ beta
        for _ in range(20):  # the Student-t fit at nu = 3, by EM's reweighting
            s = max(_weighted_mad(r, w), floor, 1e-300)
            beta = _weighted_lstsq(Xd, y, w * 4.0 / (3.0 + (r / s) ** 2))
            r = y - Xd @ beta
        s = max(_weighted_mad(r, w), floor)
        return np.concatenate([beta, [np.log(s) - self.log_scale_centre, 0.0]])

    def split(self, thetas):
        """Split parameter vectors into coefficients, scales and degrees of freedom.

        Parameters
        ----------
        thetas : ndarray of shape (S, P)
            Parameter vectors, one per row.

        Returns
        -------
        beta : ndarray of shape (S, Q)
            The coefficients (intercept last).
        sigma : ndarray of shape (S,)
            The scales.
        nu : ndarray of shape (S,)
            The degrees of freedom.
        """
        thetas = np.atleast_2d(thetas)
        with np.errstate(over="ignore"):  # a far point of a search: inf, rejected downstream
            sigma = np.exp(thetas[:, -2] + self.log_scale_centre)
            nu = np.exp(thetas[:, -1] + self.df_centre)
        return thetas[:, :-2], sigma, nu

    def _constants(self, sigma, nu):
        """Each draw's log density constant and the row-free part of its derivative in log
        nu, (S, 1) each: the kernels' (accurate however large nu, where the differences of
        lgamma and digamma cancel; _student_t_kernels.SERIES_NU)."""
        consts = kernels.draw_constants(_c(sigma.ravel()), _c(nu.ravel()))
        return consts[3][:, None], consts[4][:, None]

    def loglik_draws(self, thetas, Xd, y):
        beta, sigma, nu = self.split(thetas)
        return self.location_loglik(beta @ Xd.T, y[None, :], sigma[:, None], nu[:, None])

    def _scores(self, thetas, Xd, y):
        """Derivatives of each row's log-likelihood in its location, log sigma and log nu."""
        beta, sigma, nu = self.split(np.atleast_2d(thetas))
        return self.location_scores(beta @ Xd.T, y[None, :], sigma[:, None], nu[:, None])

    # -- the likelihood as a function of the location: the multilevel model's base -----
    def _location_terms(self, eta, y, sigma, nu):
        """``sigma``, ``nu`` as arrays, ``z = (y - eta) / sigma``, ``z^2``, ``nu + z^2``, and
        the log density's constant and the row-free part of its derivative in log nu
        (:meth:`_constants`, of the shape of ``sigma``)."""
        sigma, nu = np.asarray(sigma, dtype=np.float64), np.asarray(nu, dtype=np.float64)
        const, dnu0 = (c.reshape(np.shape(sigma)) for c in self._constants(sigma, nu))
        z = (y - eta) / sigma
        z2 = z * z
        return sigma, nu, z, z2, nu + z2, const, dnu0

    def location_loglik(self, eta, y, sigma, nu):
        """Return each target's log density as a function of its location.

        ``log t_nu((y - eta) / sigma) - log sigma``: the likelihood of a model whose location
        is any linear predictor (the multilevel model's, with group effects).

        Parameters
        ----------
        eta : ndarray
            Locations.
        y : ndarray
            Targets, broadcast against ``eta``.
        sigma : float or ndarray
            Scales, broadcast against ``eta``.
        nu : float or ndarray
            Degrees of freedom, of the shape of ``sigma``.

        Returns
        -------
        loglik : ndarray
            The log densities, of the broadcast shape.
        """
        sigma, nu, z, z2, q, const, _ = self._location_terms(eta, y, sigma, nu)
        return const - 0.5 * (nu + 1) * np.log1p(z2 / nu)

    def location_scores(self, eta, y, sigma, nu):
        """Return the log density's derivatives in the location, log scale and log df.

        Parameters
        ----------
        eta : ndarray
            Locations.
        y : ndarray
            Targets, broadcast against ``eta``.
        sigma : float or ndarray
            Scales, broadcast against ``eta``.
        nu : float or ndarray
            Degrees of freedom, of the shape of ``sigma``.

        Returns
        -------
        d_eta, d_log_sigma, d_log_nu : ndarray
            ``dl/deta``, ``dl/dlog sigma`` and ``dl/dlog nu``, of the broadcast shape.
        """
        sigma, nu, z, z2, q, _, dnu0 = self._location_terms(eta, y, sigma, nu)
        d_eta = (nu + 1) * z / (sigma * q)
        d_log_sigma = (nu + 1) * z2 / q - 1.0
        d_log_nu = dnu0 + 0.5 * ((nu + 1) * z2 / q - nu * np.log1p(z2 / nu))
        return d_eta, d_log_sigma, d_log_nu

    def location_curvatures(self, eta, y, sigma, nu):
        """Return minus the log density's second derivatives in location, log scale, log df.

        Parameters
        ----------
        eta : ndarray of shape (N,)
            Locations.
        y : ndarray of shape (N,)
            Targets.
        sigma : float
            The scale.
        nu : float
            The degrees of freedom.

        Returns
        -------
        c : ndarray of shape (N,)
            ``-d2l/deta2``: negative where ``((y - eta) / sigma)^2 > nu`` (the likelihood is
            not log-concave).
        cross : ndarray of shape (N, 2)
            ``-d2l/(deta ds)`` for ``s`` log sigma, then log nu.
        curv : ndarray of shape (N, 2, 2)
            ``-d2l/(ds ds')``.
        """
        sigma, nu, z, z2, q, _, dnu0 = self._location_terms(eta, y, sigma, nu)
        nu1, q2 = nu + 1.0, q * q
        c = nu1 * (nu - z2) / (sigma * sigma * q2)
        cross = np.empty((*np.shape(z), 2))
        cross[..., 0] = 2.0 * nu * nu1 * z / (sigma * q2)
        cross[..., 1] = -nu * z * (z2 - 1.0) / (sigma * q2)
        curv = np.empty((*np.shape(z), 2, 2))
        curv[..., 0, 0] = 2.0 * nu * nu1 * z2 / q2
        curv[..., 0, 1] = curv[..., 1, 0] = -nu * z2 * (z2 - 1.0) / q2
        curv[..., 1, 1] = -(
            _dlog_nu_constant_dlog_nu(float(nu), float(dnu0))
            + 0.5 * nu * z2 * (z2 - 1.0) / q2
            - 0.5 * nu * np.log1p(z2 / nu)
            + 0.5 * nu * z2 / q
        )
        return c, cross, curv

    def weighted_loglik_hessian(self, theta, Xd, y, w):
        # exact, from the fused summary (the generic one differentiates the gradients)
        return self._sums(theta, None, Xd, y, w, False, design=True)[1]

    def second_order_sums(self, theta, chol, X, y, w, spread=True):
        return self._sums(theta, chol, X, y, w, spread, design=False)

    def _sums(self, theta, chol, X, y, w, spread, design):
        # one fused kernel over the rows as stored, from the location's exact derivatives
        # (in eta, log sigma and log nu: location_scores and location_curvatures), where
        # the generic sums differentiated the gradients of draws numerically
        theta = np.asarray(theta, dtype=np.float64)
        beta, sigma, nu = self.split(theta[None, :])
        _, dnu0 = self._constants(sigma, nu)
        sigma, nu, dnu0 = float(sigma[0]), float(nu[0]), float(dnu0[0, 0])
        point = np.array([sigma, nu, dnu0, _dlog_nu_constant_dlog_nu(nu, dnu0)])
        X = np.asarray(X)
        X = np.ascontiguousarray(X, dtype=X.dtype if X.dtype == np.float32 else np.float64)
        S = theta.shape[0]
        size, parts = row_tasks(X.shape[0], (S + S * S,))
        spreads = np.empty(X.shape[0] if spread else 0)
        chol = np.eye(S) if chol is None else np.ascontiguousarray(chol, dtype=np.float64)
        kernels.summary_tasks.for_size(X.shape[0])(
            X, not design and bool(self.fit_intercept), np.ascontiguousarray(beta[0]),
            np.ascontiguousarray(y, dtype=np.float64), row_weights(w), point, chol, spread,
            size, parts, spreads,
        )  # fmt: skip
        G, H = summed_gradient_hessian(parts, S)
        return G, H, spreads if spread else None

    def grad_draws(self, thetas, Xd, y):
        d_eta, d_s, d_nu = self._scores(np.atleast_2d(thetas), Xd, y)
        S, n = d_eta.shape
        out = np.empty((S, n, Xd.shape[1] + 2))
        out[:, :, :-2] = d_eta[:, :, None] * Xd[None, :, :]
        out[:, :, -2] = d_s
        out[:, :, -1] = d_nu
        return out

    def _kernel_args(self, thetas_t):
        """The coefficients (Q, J) and the per-draw constants of draws given as columns: the
        kernels' rows ``1/sigma``, ``1/nu``, ``(nu + 1)/2``, the log density's constant and the
        row-free part of the derivative in log nu."""
        _, sigma, nu = self.split(thetas_t.T)
        consts = kernels.draw_constants(sigma, nu)
        return np.ascontiguousarray(thetas_t[:-2]), np.ascontiguousarray(consts)

    def weighted_loglik_chains(self, thetas, Xd, y, w):
        thetas = np.atleast_2d(np.asarray(thetas, dtype=np.float64))
        beta_t, consts = self._kernel_args(thetas.T)
        Xd = _c(Xd)
        S = thetas.shape[0]
        ll, d_eta, grad = np.empty(S), np.empty((S, Xd.shape[0])), np.empty(thetas.shape)
        # the predictors and the coefficients' gradient by BLAS, the rest in one fused pass
        E = np.ascontiguousarray(thetas[:, :-2]) @ Xd.T
        kernels.chain_terms(E, _c(y), _c(w), consts, ll, d_eta, grad[:, -2:])
        grad[:, :-2] = d_eta @ Xd
        return ll, grad

    def projection_features(self, kind, Xd, y, thetas_t, coords, scale, out):
        beta_t, consts = self._kernel_args(np.asarray(thetas_t, dtype=np.float64))
        if kind == "fisher":
            coords = np.ascontiguousarray(coords, dtype=np.int64)
            kernel = kernels.fisher_features.for_size(out.size)
            kernel(_c(Xd), beta_t, _c(y), consts, coords, float(scale), out)
        else:
            kernel = kernels.loglik_features.for_size(out.size)
            kernel(_c(Xd), beta_t, _c(y), consts, float(scale), True, out)
        return out

    def mean_draws(self, thetas, Xd):
        # the location (the mean where df > 1, the median always)
        return self.split(thetas)[0] @ Xd.T

    def simulate_draws(self, thetas, Xd, random_state):
        # x . beta + sigma t_nu
        beta, sigma, nu = self.split(thetas)
        t = random_state.standard_t(np.broadcast_to(nu[:, None], (nu.shape[0], Xd.shape[0])))
        return beta @ Xd.T + sigma[:, None] * t

    # -- the exports' recipes and the test suite's reference (ModelRecipes) --------------
    # extras: the scale, then the degrees of freedom
    def stan_likelihood(self, y):
        return "vector[N]", y, "student_t_lpdf(y[n] | {1}, eta[n], {0})"

    def pymc_loglik(self, pm, pt, eta, y, extras):
        scale, df = extras
        return pm.logp(pm.StudentT.dist(nu=df, mu=eta, sigma=scale), y)

    def numpyro_likelihood(self, numpyro, jax, eta, y, extras):
        scale, df = extras
        t = numpyro.distributions.StudentT(df=df, loc=eta, scale=scale)
        return t, jax.numpy.asarray(y)

    def reference_loglik(self, stats, thetas, Xd, y):
        # theta = (coefficients, log sigma - its centre, log nu - its centre)
        thetas = np.atleast_2d(thetas)
        sigma = np.exp(thetas[:, -2:-1] + self.log_scale_centre)
        nu = np.exp(thetas[:, -1:] + self.df_centre)
        return stats.t.logpdf(y[None, :], nu, loc=thetas[:, :-2] @ Xd.T, scale=sigma)

    def reference_data(self, n_samples, random_state):
        X = random_state.standard_normal((n_samples, 2))
        noise = 0.7 * random_state.standard_t(3.0, n_samples)
        # off the unit scale: the scale's prior follows y's
        return X, 10.0 + 3.0 * (X @ [1.0, -0.5] + noise)


def _dlog_nu_constant_dlog_nu(nu, dnu0):
    """The derivative in log nu of the row-free part ``g(nu) = dnu0`` of the score in log nu:
    ``g + 1/2 + nu^2/4 (trigamma((nu + 1)/2) - trigamma(nu/2))``; from ``SERIES_NU`` on, where
    the trigammas' difference cancels, central differences of the kernels' accurate ``g``."""
    if nu < kernels.SERIES_NU:
        gap = scipy.special.polygamma(1, 0.5 * (nu + 1.0)) - scipy.special.polygamma(1, 0.5 * nu)
        return float(dnu0 + 0.5 + 0.25 * nu * nu * gap)
    h = 1e-4  # g is smooth (about 1/(4 nu)): an error near h^2 g, rounding near 1e-12 g
    return float(
        (kernels.dlog_nu_constant(nu * np.exp(h)) - kernels.dlog_nu_constant(nu * np.exp(-h)))
        / (2.0 * h)
    )


def _weighted_lstsq(Xd, y, w):
    """Least squares with row weights ``w``: by QR (LAPACK's gelsy), several times faster
    than NumPy's SVD-based solver on tall designs, as accurate for a full-rank one (its
    rank-revealing pivots cover the rest)."""
    sw = np.sqrt(w)
    return scipy.linalg.lstsq(Xd * sw[:, None], y * sw, lapack_driver="gelsy", check_finite=False)[
        0
    ]


def _rms(r, w):
    """The weighted root mean square of ``r``, scaled by its largest entry: no overflow of
    the squares of values beyond 1e154."""
    top = np.max(np.abs(r)) if r.shape[0] else 0.0
    if not top > 0:
        return 0.0
    return top * float(np.sqrt(np.average((r / top) ** 2, weights=w)))


def _weighted_median(v, w):
    """The weighted median of ``v``."""
    order = np.argsort(v)
    cum = np.cumsum(w[order])
    return float(v[order][min(np.searchsorted(cum, 0.5 * cum[-1]), v.shape[0] - 1)])


def _weighted_mad(r, w):
    """1.4826 times the weighted median of ``|r|``: the scale of normal residuals, robust to
    outliers."""
    return 1.4826 * _weighted_median(np.abs(r), w)
