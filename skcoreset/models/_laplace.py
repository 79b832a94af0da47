"""Laplace approximation of a (weighted) GLM posterior: MAP plus inverse Hessian, of rows in
memory, of blocks, or of a coreset estimator's data source (:func:`laplace_of_all_rows`)."""

import warnings
from dataclasses import dataclass, replace

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.stats
from sklearn.utils import check_consistent_length, check_random_state

from ._glm import GLM, with_extra
from ._joint import JointExtra


class SeparationWarning(UserWarning):
    """The classes are linearly separable: the prior alone sets the logistic posterior.

    Issued by every Laplace fit of the logistic model (the coresets' projection, the
    Bayesian GLMs' start, the fidelity measures) when the linear predictor at the mode
    separates the two classes perfectly on the fitted rows (those with positive weight):
    every row lies on its own class's side, ``min eta(class 1) > max eta(class 0)``. Such a
    mode exists only on linearly separable data, where the likelihood keeps growing as the
    coefficients grow along the separating direction: the mode, the posterior spread in
    that direction and any coreset built on them follow ``prior_scale`` rather than the
    data (with a weak prior, coefficients in the hundreds and standard deviations in the
    thousands). On data whose classes overlap no separating mode exists, so the warning
    cannot fire. Data separable only up to a few boundary rows that the prior-limited mode
    puts on the wrong side are not detected.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skcoreset.models import SeparationWarning, get_model, laplace_approximation
    >>> X = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    >>> y = np.array([0.0, 0.0, 1.0, 1.0])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     lap = laplace_approximation(get_model("logistic", prior_scale=100.0), X, y)
    >>> [w.category.__name__ for w in caught]
    ['SeparationWarning']
    """


@dataclass(frozen=True)
class LaplaceApproximation:
    """Gaussian approximation N(mean, cov) of a posterior.

    Made by :func:`laplace_approximation` and :func:`laplace_from_blocks`. Its parameters
    are all the posterior's: the coefficients (intercept last), then, when the model's extra
    parameter is free (``n_extra``), the log of that parameter, fitted jointly with them.

    Parameters
    ----------
    mean : ndarray of shape (P,)
        The MAP estimate.
    cov : ndarray of shape (P, P)
        Inverse Hessian of the negative log posterior at the MAP.
    chol : ndarray of shape (P, P)
        Lower Cholesky factor of ``cov``.
    model : GLM
        The model, with its extra parameter (e.g. the Gaussian noise scale) at the mode.
    n_iter : int, default=0
        Optimiser iterations.
    n_extra : int, default=0
        How many of the last parameters are the log of the model's extra parameter: 1 when
        it was free (fitted and sampled), 0 when it is fixed or there is none.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import LaplaceApproximation, get_model
    >>> lap = LaplaceApproximation(
    ...     mean=np.zeros(2), cov=np.eye(2), chol=np.eye(2), model=get_model("logistic")
    ... )
    >>> lap.sample(5, random_state=0).shape
    (5, 2)
    """

    mean: np.ndarray
    cov: np.ndarray
    chol: np.ndarray
    model: GLM
    n_iter: int = 0
    n_extra: int = 0

    @property
    def free_model(self):
        """The model whose posterior this approximates.

        ``model`` with its extra parameter free again when it was fitted (``n_extra``), e.g.
        for the Laplace fit of a coreset of the same posterior.
        """
        return replace(self.model, extra=None) if self.n_extra else self.model

    @property
    def coef_mean(self):
        """The coefficients' mode.

        ``mean`` without the log extra parameter.
        """
        return self.mean[: self.mean.shape[0] - self.n_extra]

    def sample(self, n_draws, random_state=None):
        """Draw parameter vectors from N(mean, cov).

        Parameters
        ----------
        n_draws : int
            How many draws.
        random_state : int, RandomState instance or None, default=None
            Seeds the draws.

        Returns
        -------
        thetas : ndarray of shape (n_draws, P)
            One draw per row.
        """
        rng = check_random_state(random_state)
        z = rng.standard_normal((n_draws, self.mean.shape[0]))
        return self.mean + z @ self.chol.T


# Newton's last step over data given as blocks is taken unconfirmed when shorter than this many
# posterior sds (see _newton): one pass over the data fewer. Newton's error after a step of
# length s (in sds) is about s^2 times the relative third derivative, of order 1/sqrt(n) for n
# rows, and the Hessian's relative change over it s / sqrt(n). (1e-2 saves a pass more at
# 10^7 rows, but moves a fit of 2000 rows in blocks by 2e-5 relative: not taken.)
LAST_STEP = 1e-3

# A longer last step is taken unconfirmed too when Newton's contraction, observed over the
# full step before it, shows the step to be in the quadratic regime: with s' = C s^2 (C half
# the Hessian's relative Lipschitz constant, so C = s' / s^2 estimated from those two), the
# landing error is C s'^2 = (s' / s)^2 s' and the Hessian changes over the step by 2 C s' =
# 2 (s' / s)^2, relative. Both stay below 1e-5 (of s' and relative) when the step shrank at
# least this much, squared. Synthetic logistic data at 10^6 rows: 45.9, 1.1, then 0.00118 sd
# (a shrink of 9.3e2): one pass fewer than with LAST_STEP alone (measured: benchmarks/README.md,
# Thresholds).
CONTRACTION = 1e-5


class _Posterior:
    """The weighted log posterior of data given as blocks: ``blocks()`` yields ``(Xd, y, w)``.

    One block for data in memory; many for a streaming fit, where each evaluation is one
    pass over the blocks. With ``fused``, each pass also evaluates the Hessian at the same
    point (Newton asks for it next unless the step is rejected), so that an accepted Newton
    step costs one pass over the data rather than two (for a GLM, one kernel's pass over
    each block: :meth:`~skcoreset.models.GLM.weighted_loglik_grad_hessian`).
    """

    def __init__(self, model, blocks, fused=False):
        self.model = model
        self.blocks = blocks
        self.fused = fused
        self._hessian = (None, None)  # (theta, Hessian summed by the last evaluation)

    def _parts(self, theta, value):
        """Each block's ``(ll, gradient)``, ``(ll, gradient, Hessian)`` when fused, or (not
        ``value``) its Hessian, in block order: a pass over the data."""
        for Xd, y, w in self.blocks():
            if not value:
                yield self.model.weighted_loglik_hessian(theta, Xd, y, w)
            elif self.fused:
                yield self.model.weighted_loglik_grad_hessian(theta, Xd, y, w)
            else:
                yield self.model.weighted_loglik(theta, Xd, y, w)

    def value_and_grad(self, theta):
        ll, grad, H = 0.0, 0.0, 0.0
        for part in self._parts(theta, True):
            ll, grad = ll + part[0], grad + part[1]
            if self.fused:
                H = H + part[2]
        if self.fused:
            self._hessian = (np.array(theta, dtype=np.float64), H)
        return self.model.add_log_prior(theta, ll, grad)

    def neg_hessian(self, theta):
        at, H = self._hessian
        if at is None or not np.array_equal(at, theta):
            H = 0.0
            for part in self._parts(theta, False):
                H = H + part
        return self.model.add_prior_hessian(np.array(H, dtype=np.float64))


def _newton(posterior, theta, tol, max_iter, last_step=0.0):
    """Damped Newton on the convex negative log posterior, Armijo backtracking.

    Returns ``(theta, n_iter, H)``, H the negative Hessian of the log posterior where the
    last step began (at theta itself unless that step was taken unverified). When
    ``last_step`` > 0, a step shorter than ``last_step`` posterior sds (``g^T H^-1 g <
    last_step^2``), or at most sqrt(CONTRACTION) times the full step before it, is taken
    without the evaluation that would confirm it, and ends the iteration: in Newton's
    quadratic regime it lands within about its square of the mode, and the Hessian changes
    over it by about its length times the relative third derivative (of order 1/sqrt(n) for n
    rows; see CONTRACTION). Each evaluation of a posterior given as blocks is a pass over the
    data: this saves the last.
    """
    f, g = posterior.value_and_grad(theta)
    f, g = -f, -g
    last_full = None  # the decrement of the last step taken whole (t = 1)
    for it in range(1, max_iter + 1):
        H = posterior.neg_hessian(theta)
        if not (np.isfinite(f) and np.all(np.isfinite(g)) and np.all(np.isfinite(H))):
            where = "at its start" if it == 1 else f"after {it - 1} Newton steps"
            raise ValueError(
                f"The Laplace fit of the {posterior.model.name!r} model found a non-finite "
                f"(overflowed or NaN) log posterior, gradient or Hessian {where}: check the "
                "scale of X and y (e.g. "
                "standardise X), and, for a model of your own, that its family's functions "
                "are finite over the range of the data."
            )
        try:
            step = -solve_spd(H, g, singular=True)
        except np.linalg.LinAlgError:
            raise ValueError(_singular(posterior.model, theta.shape[0])) from None
        decrement = -g @ step  # Newton decrement squared, >= 0
        if decrement / 2 <= tol * (1.0 + abs(f)):
            return theta, it, H
        if last_step > 0 and (
            decrement < last_step * last_step
            or (last_full is not None and decrement <= CONTRACTION * last_full)
        ):
            return theta + step, it, H
        t = 1.0
        while True:
            cand = theta + t * step
            fc, gc = posterior.value_and_grad(cand)
            if np.isfinite(fc) and -fc <= f - 0.25 * t * decrement:
                break
            t *= 0.5
            if t < 1e-12:
                return theta, it, H
        last_full = decrement if t == 1.0 else None
        theta, f, g = cand, -fc, -gc
    return theta, max_iter, None


def _singular(model, n_params):
    """What a Hessian that is not positive definite at Newton's point says of the fit."""
    if model.log_concave:
        why = (
            "parameters the rows cannot pin down (fewer rows with positive weight than the "
            f"{n_params} parameters, or a column constant or repeated among them, beyond "
            "what the prior holds), or X and y on scales far apart"
        )
    else:
        why = (
            f"the {model.name!r} log-likelihood is not concave, and Newton reached a point "
            "that is no mode from where it started (heavy tails, a free extra parameter); "
            f"with about as many rows as its {n_params} parameters the posterior may have "
            "no proper mode at all"
        )
    return (
        f"The Hessian of the Laplace fit is not positive definite (numerically singular): "
        f"{why}. Use more rows, standardise X (e.g. sklearn.preprocessing.StandardScaler) "
        "and check the scale of y."
    )


def _equilibration(H):
    """``d`` with ``diag(d) H diag(d)`` of unit diagonal (H symmetric positive definite):
    each unknown in units of its own curvature. Unknowns on different scales (coefficients of
    amounts in 10^5 beside those of 0/1 codes; weights of points whose log-likelihoods vary
    by 10^-14 beside others varying by 1) give H a condition number near 1 / machine epsilon
    that this scaling removes, and scipy then warns that a solve may be inaccurate where it
    is not."""
    diag = np.diag(H)
    if not np.all(diag > 0):  # also NaN
        raise np.linalg.LinAlgError("The matrix is not positive definite.")
    return 1.0 / np.sqrt(diag)


def solve_spd(H, b, singular=False):
    """``H^-1 b`` for symmetric positive definite ``H``, solved by Cholesky after
    equilibration (:func:`_equilibration`). Raises ``numpy.linalg.LinAlgError`` when H is not
    positive definite, and with ``singular=True`` also when it is numerically singular (the
    Cholesky pivots of the equilibrated H spanning more than 1 / machine epsilon, a lower
    bound of its condition number), where a solve would give noise; never warns."""
    d = _equilibration(H)
    factor = scipy.linalg.cho_factor(H * np.outer(d, d), check_finite=False)
    if singular:
        pivots = np.diag(factor[0]) ** 2
        if pivots.min() <= np.finfo(float).eps * pivots.max():
            raise np.linalg.LinAlgError("The matrix is numerically singular.")
    return d * scipy.linalg.cho_solve(factor, d * b, check_finite=False)


def _lbfgs(posterior, theta, tol, max_iter):
    def fun(th):
        f, g = posterior.value_and_grad(th)
        return -f, -g

    res = scipy.optimize.minimize(
        fun, theta, jac=True, method="L-BFGS-B", options={"maxiter": max_iter, "gtol": tol}
    )
    return res.x, res.nit


def _fit(model, blocks, theta0, method, tol, max_iter, fused=False, last_step=0.0, check=True):
    """The Laplace approximation of the posterior of data given as blocks."""
    if model.n_extra:
        return _joint_fit(model, blocks, theta0, method, tol, max_iter, fused, last_step)
    posterior = _Posterior(model, blocks, fused)
    laplace = fit_posterior(model, posterior, theta0, method, tol, max_iter, last_step)
    if check:
        model.check_fit(blocks, laplace.mean)
    return laplace


def _joint_fit(model, blocks, theta0, method, tol, max_iter, fused, last_step):
    """The Laplace fit of a posterior whose extra parameter is free: of the coefficients
    and the log extra parameter together (:class:`~skcoreset.models._joint.JointExtra`).

    Without a start (``theta0`` None, or the coefficients alone), Newton starts from the
    model's moment estimate of the extra parameter and the coefficients' fit at it: close
    to the joint mode, from which a few joint steps converge."""
    n_coef = None if theta0 is None else np.shape(theta0)[0]
    if theta0 is None or n_coef == model.n_params(_n_columns(blocks)):
        fixed = with_extra(model, model.estimate_extra_blocks(blocks))
        if theta0 is None:
            start = _fit(fixed, blocks, _start(fixed, blocks), method, 1e-8, max_iter, fused,
                         last_step, check=False)  # fmt: skip
            theta0 = start.mean
        theta0 = np.append(theta0, np.log(fixed.extra_value))
    joint = JointExtra(model)
    try:
        laplace = fit_posterior(
            joint, _Posterior(joint, blocks, fused), np.asarray(theta0, dtype=np.float64),
            method, tol, max_iter, last_step,
        )  # fmt: skip
    except ValueError:
        raise ValueError(
            f"The joint Laplace fit of the {model.name!r} model's coefficients and "
            f"{model.extra_name} found no proper mode: with about as many rows as parameters "
            f"the coefficients fit the rows and the {model.extra_name}'s posterior degenerates "
            "(a noise scale collapsing to 0). Use more rows (or coreset points) than "
            f"parameters, or fix the {model.extra_name} (the model's extra=...)."
        ) from None
    joint.check_fit(blocks, laplace.mean)
    return as_joint(laplace, model)


def best_fit(model, Xd, y, w, starts=()):
    """The Laplace fit at the highest mode Newton finds from the model's own start and from
    each of ``starts`` (the data's mode, for a coreset's posterior): a posterior that need
    not be log-concave (Student-t, a free extra parameter, a user's model) can have modes
    besides its highest, and the model's start can lead to one of them (a Student-t coreset
    whose weighted rows of extreme leverage pulled least squares: a mode 776 nats below the
    one at the data's mode, 54 posterior sds away). One fit for a log-concave posterior, whose
    mode is unique.

    Raises the first start's ValueError when no start gives a fit.
    """
    candidates = [None, *starts] if not (model.log_concave and not model.n_extra) else [None]
    best, best_lp, error = None, -np.inf, None
    for theta0 in candidates:
        try:
            with warnings.catch_warnings():
                # a degenerate posterior's Hessian is ill-conditioned on the way to the error
                # this reports (or to a start that is not kept)
                warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
                fit = _fit_from(model, Xd, y, w, theta0)
        except (ValueError, np.linalg.LinAlgError) as exc:
            error = error or exc
            continue
        lp = log_posterior_at(fit, Xd, y, w)
        if best is None or lp > best_lp:
            best, best_lp = fit, lp
    if best is None:
        raise error
    return best


def _fit_from(model, Xd, y, w, theta0):
    """:func:`laplace_approximation` of rows in memory, from ``theta0`` (None: the model's own
    start)."""
    if theta0 is None:
        return laplace_approximation(model, Xd, y, w, design=True)
    return _fit(model, lambda: [(Xd, y, w)], np.array(theta0, dtype=np.float64), "newton",
                1e-14, 100)  # fmt: skip


def log_posterior_at(laplace, Xd, y, w, theta=None):
    """The weighted log posterior (up to its constant) of a Laplace fit's posterior at
    ``theta`` (default: its mode), in all the fit's parameters; -inf where it is not
    finite."""
    model = laplace.free_model
    fitted = JointExtra(model) if laplace.n_extra else model
    theta = laplace.mean if theta is None else np.asarray(theta, dtype=np.float64)
    with np.errstate(all="ignore"):
        ll, grad = fitted.weighted_loglik(theta, Xd, y, w)
        lp = float(fitted.add_log_prior(theta, ll, grad)[0])
    return lp if np.isfinite(lp) else -np.inf


def typical_starts(laplace, Xd, y, w, starts, halvings=10):
    """Starts of MCMC chains (draws of the Laplace fit), each moved halfway to the mode until
    the posterior's log density there is no lower than the fit expects of its draws: the
    mode's, less the drop a draw of the fit exceeds with probability 1e-4 (half a chi-square
    of P degrees of freedom: its 1 - 1e-4 quantile); the mode itself after ``halvings``.

    Overdispersed starts let R-hat see chains that do not mix, but a draw where the posterior
    is far lower than its Gaussian fit says (the tail of rows of extreme leverage: a
    standardised one-hot category of 1 row in 50 000) sits where the gradient is tens of times
    the typical one, and MALA's every proposal overshoots: on adult (124 parameters) one chain
    of four started 505 nats below the mode, where the Gaussian expects 62, and never moved
    (R-hat 1.77). A draw of a Gaussian posterior's own fit moves with probability 1e-4.
    """
    P = laplace.mean.shape[0]
    floor = log_posterior_at(laplace, Xd, y, w) - 0.5 * scipy.stats.chi2.isf(1e-4, P)
    out = np.array(starts, dtype=np.float64)
    for c in range(out.shape[0]):
        for _ in range(halvings):
            if log_posterior_at(laplace, Xd, y, w, out[c]) >= floor:
                break
            out[c] = laplace.mean + 0.5 * (out[c] - laplace.mean)
        else:
            out[c] = laplace.mean
    return out


def laplace_or_start(model, Xd, y, w, starts=()):
    """The Laplace fit, or where there is none, a place and a scale to start from.

    Where a free extra parameter's posterior has no proper joint mode (as many rows as
    parameters: the coefficients interpolate, the noise scale collapses), the coefficients'
    fit at the extra parameter's moment estimate, its log beside them, uncorrelated, with the
    spread of its likelihood at the mode and its prior: where MCMC on the posterior starts
    and its preconditioner (it samples the posterior itself), and a coreset's projection of
    such data draws from. Not an approximation of that posterior.

    Parameters
    ----------
    model : GLM
        The model with its prior.
    Xd : ndarray of shape (N, P)
        Design matrix.
    y : ndarray of shape (N,)
        Coded targets.
    w : ndarray of shape (N,)
        Positive weights.
    starts : sequence of ndarray, default=()
        Starts of Newton's method besides the model's own (e.g. the full data's mode, for a
        coreset's posterior): the highest mode is kept (:func:`best_fit`).

    Returns
    -------
    LaplaceApproximation
    """
    try:
        return best_fit(model, Xd, y, w, starts)
    except ValueError:
        if not model.n_extra:
            raise
    fixed = with_extra(model, model.estimate_extra(Xd, y, w))
    lap = laplace_approximation(fixed, Xd, y, w, design=True)
    curv = fixed.extra_derivatives(Xd @ lap.mean, y)[2]
    info = float(np.ascontiguousarray(w, dtype=np.float64) @ curv)
    sd = 1.0 / np.sqrt(max(info, 0.0) + 1.0 / model.extra_prior[1] ** 2)
    P = lap.mean.shape[0]
    cov, chol = np.zeros((P + 1, P + 1)), np.zeros((P + 1, P + 1))
    cov[:P, :P], chol[:P, :P] = lap.cov, lap.chol
    cov[P, P], chol[P, P] = sd * sd, sd
    mean = np.append(lap.mean, np.log(fixed.extra_value))
    return LaplaceApproximation(mean, cov, chol, fixed, lap.n_iter, n_extra=1)


def as_joint(laplace, model):
    """A Laplace fit of :class:`~skcoreset.models._joint.JointExtra`'s posterior, reported
    with ``model`` at the mode's extra parameter and ``n_extra=1``."""
    fixed, _ = JointExtra(model).at(laplace.mean)
    if fixed is None:
        raise ValueError(
            f"The Laplace fit of the {model.name!r} model's {model.extra_name} diverged (its "
            "log is not finite at the mode); check the scale of y."
        )
    return replace(laplace, model=fixed, n_extra=1)


def _n_columns(blocks):
    """Columns of the design matrix of data given as blocks."""
    return next(iter(blocks()))[0].shape[1]


def fit_posterior(
    model, posterior, theta0, method="newton", tol=1e-14, max_iter=100, last_step=0.0
):
    """The Laplace approximation of any posterior with ``value_and_grad(theta)`` (log
    posterior and gradient) and ``neg_hessian(theta)`` (e.g. evaluated by parallel tasks).
    ``last_step``: Newton's last step, when shorter than that many posterior sds, is taken
    unconfirmed (see :func:`_newton`); 0 confirms every step."""
    H = None
    if method == "newton":
        try:
            mean, n_iter, H = _newton(posterior, theta0, tol, max_iter, last_step)
        except ValueError:
            if model.log_concave:
                raise
            # away from the mode the Hessian of a non-concave log-likelihood (heavy tails)
            # need not be positive definite: quasi-Newton steps need no Hessian
            mean, n_iter = _lbfgs(posterior, theta0, 1e-10, 10 * max_iter)
            mean, it, H = _newton(posterior, mean, tol, max_iter, last_step)
            n_iter += it
    elif method == "lbfgs":
        mean, n_iter = _lbfgs(posterior, theta0, tol, max_iter)
    else:
        raise ValueError(f"method must be 'newton' or 'lbfgs', got {method!r}.")
    if not np.all(np.isfinite(mean)):
        raise ValueError("The Laplace fit diverged (non-finite MAP); check the data's scale.")
    if H is None:
        H = posterior.neg_hessian(mean)
    d = _equilibration(H)
    scale = np.outer(d, d)
    cov = scale * scipy.linalg.inv(H * scale, check_finite=True)
    cov = 0.5 * (cov + cov.T)
    chol = np.linalg.cholesky(cov)
    return LaplaceApproximation(mean=mean, cov=cov, chol=chol, model=model, n_iter=n_iter)


def laplace_from_blocks(model, blocks, *, theta0=None, method="newton", tol=1e-14, max_iter=100):
    """The Laplace approximation of data too large to hold: Newton passes over blocks.

    Parameters
    ----------
    model : GLM
        The likelihood and prior.
    blocks : callable
        ``blocks()`` returns an iterable of ``(Xd, y, w)``: design matrix (C-contiguous
        float64, intercept column included), coded targets and weights of each block. It is
        called once per Newton evaluation (and twice more for a Gaussian noise estimate).
    theta0 : ndarray of shape (P,), default=None
        Where Newton starts (e.g. the mean of a fit on a subsample: then a few passes
        converge); None: the model's own start.
    method : {'newton', 'lbfgs'}, default='newton'
        Optimiser for the MAP.
    tol : float, default=1e-14
        As for :func:`laplace_approximation`.
    max_iter : int, default=100
        Optimiser iterations.

    Returns
    -------
    LaplaceApproximation
        The MAP and the inverse Hessian there.

    See Also
    --------
    laplace_approximation : The same fit on data in memory.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import get_model, laplace_from_blocks
    >>> rng = np.random.default_rng(0)
    >>> model = get_model("logistic")
    >>> Xd = model.design(rng.standard_normal((200, 2)))
    >>> y = (rng.random(200) < 0.5).astype(float)
    >>> blocks = lambda: [(Xd[:100], y[:100], np.ones(100)), (Xd[100:], y[100:], np.ones(100))]
    >>> laplace_from_blocks(model, blocks).mean.shape
    (3,)
    """
    if theta0 is None and not model.n_extra:
        theta0 = _start(model, blocks)
    if theta0 is not None:
        theta0 = np.array(theta0, dtype=np.float64)
    return _fit(model, blocks, theta0, method, tol, max_iter, True, LAST_STEP)


def _start(model, blocks):
    """Where Newton starts on data given as blocks: the model's own start."""
    first = next(iter(blocks()))
    theta0 = model.initial_params(*first)
    if model.starts_from_mean:
        # the model's constant fit needs the weighted mean of all targets
        w_sum = wy_sum = 0.0
        for _, y, w in blocks():
            w_sum += w.sum()
            wy_sum += (w * y).sum()
        if w_sum > 0:  # rows without weight (an empty coreset): the model's zero start
            theta0 = model.mean_start(theta0, wy_sum / w_sum)
    return theta0


def laplace_approximation(
    model,
    X,
    y,
    sample_weight=None,
    *,
    subsample=None,
    method="newton",
    tol=1e-14,
    max_iter=100,
    random_state=None,
    design=False,
):
    """Fit the Laplace approximation of the weighted posterior.

    Parameters
    ----------
    model : GLM
        The likelihood and prior.
    X : ndarray of shape (N, D)
        Features (or the design matrix when ``design=True``).
    y : ndarray of shape (N,)
        Targets, already coded by ``model.encode_targets``.
    sample_weight : ndarray of shape (N,), default=None
        Weights of the per-datum log-likelihoods.
    subsample : int, default=None
        Fit on a random subsample of this many rows, with the weights scaled up so that the
        total weight (hence the posterior's scale) is that of the full data. Use for large N.
    method : {'newton', 'lbfgs'}, default='newton'
        Optimiser for the MAP. The covariance always comes from the exact Hessian.
    tol : float, default=1e-14
        Newton stops when half the Newton decrement falls below ``tol * (1 + abs(f))`` (f the
        negative log posterior: relative, because rounding alone leaves ~1e-16 abs(f));
        L-BFGS uses it as its gradient tolerance.
    max_iter : int, default=100
        Optimiser iterations.
    random_state : int, RandomState instance or None, default=None
        Seeds the subsample.
    design : bool, default=False
        Whether ``X`` already is the design matrix (intercept column included).

    Returns
    -------
    LaplaceApproximation
        The MAP and the inverse Hessian there.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import get_model, laplace_approximation
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 2))
    >>> y = (rng.random(500) < 1 / (1 + np.exp(-X @ [2.0, -1.0]))).astype(float)
    >>> lap = laplace_approximation(get_model("logistic"), X, y)
    >>> lap.mean.shape, lap.cov.shape
    ((3,), (3, 3))
    """
    Xd = np.ascontiguousarray(X, dtype=np.float64) if design else model.design(X)
    y = np.ascontiguousarray(y, dtype=np.float64)
    N = Xd.shape[0]
    w = (
        np.ones(N)
        if sample_weight is None
        else np.ascontiguousarray(sample_weight, dtype=np.float64)
    )
    # the kernels do not bounds-check: mismatched lengths must fail here, not read garbage
    check_consistent_length(Xd, y, w)
    if subsample is not None and subsample < N:
        rng = check_random_state(random_state)
        idx = np.sort(rng.choice(N, size=int(subsample), replace=False))
        total = w.sum()
        Xd, y, w = Xd[idx], y[idx], w[idx]
        w = w * (total / w.sum())
    theta0 = None if model.n_extra else model.initial_params(Xd, y, w)
    return _fit(model, lambda: [(Xd, y, w)], theta0, method, tol, max_iter)


# -- the Laplace fit of a data source ---------------------------------------------------------
# ``data``: the rows of a fit as the coreset estimators read them (``coreset._blocks.
# InMemoryData``, ``coreset._dask.DaskData``): ``n_rows``, ``total_weight``, ``all_rows()``
# (the rows if one block holds them), ``sample(size, random_state)`` and ``laplace(model,
# start)`` (Newton's passes over the blocks).


def pilot_rows(n, block_rows):
    """Rows of the pilot's sample (:func:`pilot_of_rows`): ``100 sqrt(n)``, from 10 000 to a
    block's worth (``block_rows``: a fit holds no more, and a dask fit's client holds the
    pilot's rows).

    The pilot misses the data's mode by about ``sqrt(n / rows)`` posterior sds a parameter,
    and the error of the data's fit from the sums at its mean and a sample of rows grows
    like the square of that distance over ``sqrt(n)`` (the third-order remainder the sample
    estimates): ``rows ~ sqrt(n)`` keeps it the same at every size, until the block's bound,
    beyond which a pass more confirms the fit when its predicted error asks. On synthetic
    logistic data (20 features) its predicted KL was 5e-6 to 4e-5 nats at 10^6 and 10^7 rows
    (100 sqrt(n) rows, the default sample), within 1% of the quality target at 21 parameters,
    where a pilot of a hundredth of the rows (at most 30 000, the start of Newton's passes)
    was 100 times that (measured: benchmarks/README.md, Thresholds).
    """
    return int(min(max(100.0 * np.sqrt(n), 10_000), block_rows))


def laplace_start_rows(n):
    """Rows of the weighted subsample whose Laplace fit starts Newton's passes over all ``n``
    rows: a hundredth of them, from 10 000 to 30 000.

    The start then misses the full fit by about sqrt(n / rows) = 10 posterior sds up to
    3 x 10^6 rows (18 at 10^7), where Newton converges in 4 passes; from 10 000 rows it took
    5 at 3 x 10^6 and 10^7 rows (synthetic logistic data, 20 features). More rows would
    cost their own fit, and for dask data the client's memory, for no pass fewer.
    """
    return min(max(n // 100, 10_000), 30_000)


def laplace_of_sample(data, model, size, random_state):
    """The Laplace fit of ``size`` rows drawn among those with positive weight (weights scaled
    up to the total), and those rows; None when the data have no more rows than that."""
    sample = data.sample(size, random_state)
    if sample is None:
        return None
    indices, X, y, w = sample
    w = w * (data.total_weight / w.sum())
    return laplace_approximation(model, model.design(X), y, w, design=True), indices


def pilot_of_rows(data, model, random_state):
    """``(laplace, start_indices, pilot)``: the Laplace fit a construction summarises every
    block at, when it then fits the data from those sums (:func:`~skcoreset.coreset._taylor.
    fit_from_sums`): of the data's pilot sample (``data.pilot_sample()``, weights scaled up to
    the total; ``pilot`` True), or, when it has none (the rows are one block, or the
    estimator asked for none), of all the rows (:func:`laplace_of_all_rows`; ``pilot``
    False)."""
    sample = data.pilot_sample()
    if sample is None or sample[0].shape[0] == 0:
        return *laplace_of_all_rows(data, model, random_state), False
    indices, X, y, w = sample
    w = w * (data.total_weight / w.sum())
    return _pilot_fit(model, model.design(X), y, w), indices, True


#: Rows of the pilot's own start (:func:`_pilot_fit`): a pilot of more rows is fitted by
#: Newton from the fit of every k-th of its rows.
PILOT_START_ROWS = 20_000


def _pilot_fit(model, Xd, y, w):
    """The Laplace fit of the pilot's rows: from the model's own start on every k-th of them
    (a sample of the data too, at weights scaled up to theirs) when they are many, then
    Newton on all of them: the model's start (least squares, a robust regression) and
    Newton's first steps are paid on the few rows (a Student-t pilot of 266 000 rows: its
    robust start took most of a 10^7-row fit's seconds)."""
    n = y.shape[0]
    if n < 4 * PILOT_START_ROWS:
        return laplace_approximation(model, Xd, y, w, design=True)
    rows = slice(None, None, n // PILOT_START_ROWS)
    start = laplace_approximation(model, Xd[rows], y[rows], w[rows] * (w.sum() / w[rows].sum()),
                                  design=True)  # fmt: skip
    theta0 = start.mean if start.n_extra == 0 else start.mean  # every parameter, extra's log
    return _fit(model, lambda: [(Xd, y, w)], np.array(theta0, dtype=np.float64), "newton",
                1e-14, 100)  # fmt: skip


def laplace_of_all_rows(data, model, random_state, start_rows="auto"):
    """The Laplace fit of all the rows of ``data``, and the rows of the fit that started it.

    One fit when the rows are one block. Otherwise Newton's passes over the blocks, from the
    fit of a weighted subsample of ``start_rows`` rows (weights scaled up to the total;
    'auto': :func:`laplace_start_rows`; None: from the model's own starting point). A
    subsample's fit alone misses the full posterior by about sqrt(N / n) standard deviations,
    far enough to spoil a projection (measured: KL 5 against 0.2 with n / N = 0.1) or the
    expansion point of the KL coresets' control variate; from there a few passes converge.

    Returns
    -------
    laplace : LaplaceApproximation
    start_indices : ndarray of int or None
        The rows of the starting fit (None when there was none).
    """
    rows = data.all_rows()
    if rows is not None:  # (a start to draw from where the posterior has no proper fit)
        X, y, w = rows
        return laplace_or_start(model, model.design(X), y, w), None
    if start_rows == "auto":
        start_rows = laplace_start_rows(data.n_rows)
    sample = (
        None if start_rows is None else laplace_of_sample(data, model, start_rows, random_state)
    )
    start, indices = (None, None) if sample is None else sample
    return data.laplace(model, start), indices
