"""Cores of the coreset methods that optimise the weights against KL(pi_w || pi) directly.

For the coreset posterior pi_w(theta) ∝ pi_0(theta) exp(sum_m w_m l_m(theta)),

    grad_w KL(pi_w || pi) = -Cov_{pi_w}[ g(theta), r(theta) - g(theta) . w ],

with g the candidates' log-likelihoods and r the full data's log-likelihood sum (doc/
algorithms.md, section 7). :func:`kl_gradient` is its Monte Carlo estimate from draws
theta_s ~ pi_w; the three algorithms below differ in how they choose the points and step the
weights. They see the model only through a *problem* object:

* ``problem.loglik(thetas, idx)``: the (S, len(idx)) log-likelihoods of candidates ``idx``
  (all candidates for None) at the S rows of ``thetas``;
* ``problem.full(thetas, g_all=None, step=False)``: the (S,) full-data log-likelihood sums
  (exact, or an unbiased subsample estimate); ``g_all``, when given, is
  ``loglik(thetas, None)``, which the problem may reuse; ``step``: for the gradient of a
  weight step, where the problem may use a cheaper, noisier estimate;
* ``problem.draws(idx, w, n)``: n draws from pi_w (w on candidates ``idx``);
* ``problem.laplace_draws(n)``: n draws of the full data's Laplace fit (SparseVI only);
* ``problem.n_params``: the number of parameters, the draws' length (SparseVI only);
* ``problem.transition(idx, w)``: one Markov transition of persistent chains targeting pi_w,
  returning their (K, P) states (Coreset MCMC only).

So the same code runs on GLMs with MALA draws (the estimators) and on the conjugate Gaussian
model with exact draws (the tests and benchmarks/bench_kl_gaussian.py).
"""

import time

import numpy as np
import scipy.optimize

from .._progress import ProgressBar
from ..models._laplace import solve_spd
from ._kl_kernels import box_qp

# the constrained step's solver stops when a sweep lowers the model by less than this fraction
# of its total decrease: the model itself is a Monte Carlo estimate, good to far less
_QP_RTOL = 1e-3
_QP_MAX_SWEEPS = 1000

# SparseVI's refit of its weights on draws of the data's Laplace fit (:func:`refit`): ridge of
# its large supports (relative to each point's variance), and draws, at least this many, this
# many per point and this many per parameter. With max(200, 2 M) draws, the refit of 16 points
# of AirportDelays (16 parameters) left a coreset posterior whose draws overflowed the Poisson
# log-likelihoods, and SparseVI stopped there at KL 5e6. With 500 draws for 200 parameters
# (the Gaussian problem of ``benchmarks/bench_kl_gaussian.py``) the fit followed the draws'
# noise: reverse KL 52.6 at 100 points and 0.25 at 200, against 34.4 and 0.011 with 2000.
_REFIT_TAU = 1e-3
_REFIT_MIN_DRAWS = 500
_REFIT_DRAWS_PER_POINT = 4
_REFIT_DRAWS_PER_PARAM = 10

# Supports up to this size get exact non-negative least squares (:func:`nonnegative_fit`);
# larger ones the ridged quadratic step of :func:`newton_step`. Lawson-Hanson removes the
# points one at a time, so an exact fit's cost grows steeply with the support: cheap at 200
# points, prohibitive in every round at 1000 (where most of the points left the passive set;
# measured: benchmarks/README.md, Thresholds).
_EXACT_FIT_MAX = 256

# Candidates whose log-likelihood varies over the posterior's draws less than this fraction of
# the median candidate's are never chosen (:func:`flat`).
_FLAT = 1e-6


def flat(norms):
    """Which candidates are *flat*: the norm of their centred log-likelihoods over the draws
    (or of their projections) below ``_FLAT`` times the median's.

    Such a point (a logistic row at margin 30 has a log-likelihood of -1e-13, nearly constant)
    can only matter with a weight a million times the typical one, and with it the coreset
    posterior takes on the point's tails, where its margin falls and its log-likelihood is no
    longer flat. On elec2 (45 312 rows, total weight 45 312) the OMP start of the KL methods put
    3.4e10 on such a point, to fit the noise of the pool's estimate of the full data's
    projection; Coreset MCMC kept 1.5e11 on it. Together all the flat rows of the data vary
    less than ``N * _FLAT`` typical rows: nothing is lost without them.
    """
    return norms < _FLAT * np.median(norms)


def kl_gradient(g, r, w):
    """Monte Carlo estimate of grad_w KL(pi_w || pi) = -Cov[g, r - g . w].

    Parameters
    ----------
    g : ndarray of shape (S, C)
        Log-likelihoods of the C coreset candidates at S draws from pi_w.
    r : ndarray of shape (S,)
        The full data's log-likelihood sum at the same draws (or an unbiased estimate).
    w : ndarray of shape (C,)
        The candidates' weights.

    Returns
    -------
    grad : ndarray of shape (C,)
        The gradient (unbiased sample covariance, divided by S - 1).
    centred : ndarray of shape (S, C)
        ``g`` centred over the draws (its Gram matrix / (S - 1) is the Hessian estimate of
        the quasi-Newton step).
    """
    g = np.asarray(g, dtype=np.float64)
    S = g.shape[0]
    if S < 2:
        raise ValueError(f"The KL gradient needs at least 2 draws, got {S}.")
    # sums, not means: Coreset MCMC calls this after every transition, with a few draws,
    # and np.mean's overhead was a tenth of its step
    centred = g - g.sum(axis=0) / S
    resid = np.asarray(r, dtype=np.float64) - g @ w
    resid -= resid.sum() / S
    return -(centred.T @ resid) / (S - 1), centred


def _gradient_at(problem, thetas, idx, w):
    """:func:`kl_gradient` of the support ``idx`` with weights ``w`` at the draws ``thetas``
    of ``problem``."""
    return kl_gradient(problem.loglik(thetas, idx), problem.full(thetas, step=True), w)


def model_hessian(centred, tau, ridge="average"):
    """``H = C + tau R``, ``C = centred^T centred / (S - 1)``: the Hessian of the weight step's
    quadratic model of the KL divergence.

    ``ridge='average'``: ``R = mean(diag C) I``, relative to the average variance of the
    log-likelihoods, so that ``tau`` means the same for any scale of the data.
    ``ridge='per_point'``: ``R = diag C``, each log-likelihood's own variance
    (Levenberg-Marquardt's scaling: the step does not depend on the units of any one point).

    The per-point ridge keeps steps on a large support stable where the average one does not:
    SparseVI's last steps with it took its 1000-point coreset of BikeTrips from a KL divergence
    to the full posterior of 0.68 to 0.016 (``benchmarks/bench_posterior.py``), where steps
    with the average ridge had raised an earlier one's from 3 to 10^4. But through SparseVI's
    greedy rounds on synthetic logistic data (2 x 10^5 rows, 21 parameters, 100 points) it
    left the coreset posterior 65 standard deviations from the full one (Laplace KL 1160,
    against 4.8), with exact full-data sums as well: SparseVI uses it only on its final
    support.
    """
    S = centred.shape[0]
    H = centred.T @ centred / (S - 1)
    if ridge == "per_point":
        d = np.diag(H).copy()
        # a constant log-likelihood (zero variance) still gets a positive ridge
        R = np.maximum(d, max(1e-12 * float(d.max(initial=0.0)), np.finfo(float).tiny))
    else:
        R = max(float(np.trace(H)) / H.shape[0], np.finfo(float).tiny)
    H[np.diag_indices_from(H)] += tau * R
    return H


def newton_direction(grad, centred, tau, ridge="average"):
    """``H^-1 grad`` with ``H`` of :func:`model_hessian`."""
    return solve_spd(model_hessian(centred, tau, ridge), grad)


def newton_step(
    w,
    grad,
    centred,
    step_size,
    tau,
    max_step,
    max_weight=None,
    ridge="average",
    projection="clip",
):
    """A damped Newton step on the weights, kept non-negative and inside a trust region.

    ``projection='clip'``: ``w - step_size H^-1 grad``, each weight at most doubling (or a
    new, zero weight growing to ``max_step``, e.g. the uniform weight W / M) and at most
    halving. Far from the optimum the quadratic model of the KL divergence is poor: on Poisson
    data one uncapped step from the draws of a wide coreset posterior put 8 300 of the 17 379
    units of weight on one point, and from a 10-point start steps clipped at 0 dropped half
    the points, leaving fewer than the parameters. A weight can still shrink geometrically
    toward 0; ``max_step=None`` lifts both bounds (then clipped at 0).

    ``projection='exact'``: ``w + step_size (v - w)``, with ``v`` the minimiser of the
    quadratic model over the same box, ``0 <= v <= w + max(w, max_step)``
    (:func:`._kl_kernels.box_qp`): the Newton step projected in the model's own metric. With
    ``step_size <= 1/2`` a weight again at most halves. The solver starts from the clipped
    full step, so the model's value is never worse than clipping's. On a large support,
    clipping loses most of the step's progress (see :mod:`._kl_kernels`). SparseVI's 1000
    points of Phishing, with clipped last steps, were at a KL divergence of 0.16 from the
    full posterior (``benchmarks/bench_posterior.py``); the constrained model, solved once on
    2000 draws of the data's Laplace fit, put the same points at 0.025, and with this
    projection in its last steps SparseVI reached 0.028.

    ``max_weight`` (e.g. the data's total weight W: no point stands for more rows than
    there are) bounds every weight. Without it, the doublings of SparseVI's 10-point coreset
    of Phishing gave one point 5.3 times the data's total weight, and all ten 10 times it.
    ``ridge``: see :func:`model_hessian`.
    """
    if projection == "exact":
        H = model_hessian(centred, tau, ridge)
        upper = _step_ceiling(w, max_step, max_weight)
        # start from the full Newton step clipped into the box: the sweeps only lower the
        # model from there, so the result is never worse than clipping
        free = w - solve_spd(H, grad)
        v = np.clip(free, 0.0, upper)
        box_qp(H, grad - H @ w, v, upper, _QP_RTOL, _QP_MAX_SWEEPS)
        # a step_size above 1 extrapolates past v: back into the box
        return np.clip(w + step_size * (v - w), 0.0, upper)
    free = w - step_size * newton_direction(grad, centred, tau, ridge)
    floor = 0.0 if max_step is None else 0.5 * w  # each weight at most halves
    return np.clip(free, floor, _step_ceiling(w, max_step, max_weight))


def _step_ceiling(w, max_step, max_weight):
    """The trust region's upper bound on the weights after a step of :func:`newton_step`:
    each weight at most doubles, a zero one grows to at most ``max_step`` (None: no bound),
    and none exceeds ``max_weight``."""
    upper = np.full(w.shape, np.inf) if max_step is None else w + np.maximum(w, max_step)
    return upper if max_weight is None else np.minimum(upper, max_weight)


class _Budget:
    """The time limit of a construction (None: no limit)."""

    def __init__(self, max_seconds):
        self.deadline = None if max_seconds is None else time.perf_counter() + max_seconds

    def spent(self):
        return self.deadline is not None and time.perf_counter() >= self.deadline


class _Settled:
    """Stop rule on the gradient norm: it has not fallen below ``(1 - tol)`` times its best
    value for ``patience`` iterations in a row (noise alone then keeps it level)."""

    def __init__(self, tol, patience=3):
        self.tol, self.patience = tol, patience
        self.best, self.waited = np.inf, 0

    def __call__(self, norm):
        if norm < (1.0 - self.tol) * self.best:
            self.best, self.waited = norm, 0
        else:
            self.waited += 1
        return self.waited >= self.patience


def quasi_newton(
    problem,
    idx,
    w0,
    *,
    n_draws=500,
    max_iter=20,
    step_size=1.0,
    decay=False,
    tau=0.1,
    tol=0.05,
    max_step=None,
    max_weight=None,
    ridge="average",
    projection="clip",
    max_seconds=None,
    progress=False,
):
    """Quasi-Newton coreset weights on a fixed support (Naik, Rousseau & Campbell 2022).

    ``w <- max(w - step_size H^-1 grad, 0)`` with ``H`` the sample covariance of the
    coreset log-likelihoods plus a ridge (:func:`newton_step`; ``max_step`` caps the
    increase of a weight in a step, ``max_weight`` its value; ``ridge`` and ``projection``:
    see :func:`newton_step`). The loop stops when the gradient norm settles
    (:class:`_Settled` with ``tol``; None: never). ``decay=True``: step k (from 1) is
    ``step_size / sqrt(k)``, which averages out the noise of the draws where constant
    steps keep the weights wandering.

    Returns
    -------
    w : ndarray of shape (len(idx),)
    n_iter : int
    stop_reason : {'converged', 'max_iter', 'max_seconds'}
    """
    w = np.array(w0, dtype=np.float64)
    budget, settled = _Budget(max_seconds), _Settled(tol)
    reason, n_iter = "max_iter", 0
    best, best_norm, norm = w, np.inf, np.inf
    with ProgressBar(max_iter, progress, "quasi-Newton", "step") as bar:
        for it in range(1, max_iter + 1):
            n_iter = it
            thetas = problem.draws(idx, w, n_draws)
            grad, centred = _gradient_at(problem, thetas, idx, w)
            norm = float(np.linalg.norm(grad))
            if norm < best_norm:
                best, best_norm = w, norm
            step = step_size / np.sqrt(it) if decay else step_size
            w = newton_step(w, grad, centred, step, tau, max_step, max_weight, ridge, projection)
            bar.update()
            if tol is not None and settled(norm):
                reason = "converged"
                break
            if budget.spent():
                reason = "max_seconds"
                break
    if tol is not None and norm > best_norm:
        # the gradient grew since its best: the steps went astray (at 20 points of Phishing
        # they took the Laplace KL from 1.8 to 1000 in four steps, the norm from 0.2 to 14),
        # or noise keeps it level; either way the weights where it was least are kept
        w = best
    return w, n_iter, reason


def sparse_vi(
    problem,
    n_candidates,
    n_points,
    *,
    n_draws=200,
    n_rounds=50,
    n_steps=0,
    n_polish=60,
    step_size=0.5,
    tau=0.1,
    max_step=None,
    max_weight=None,
    first_round=None,
    max_seconds=None,
    progress=False,
):
    """Greedy sparse variational coreset (Campbell & Beronov 2019).

    Each round adds ``ceil(n_points / n_rounds)`` candidates by :func:`greedy_batch` (the
    paper's rule, correlation with the residual ``r - g . w`` under pi_w, when a round adds
    one point; ``w`` the support's own fit on the draws, :func:`_selection_weights`), refits
    the support's weights on one sample of the data's Laplace fit (:func:`refit`,
    :class:`LaplaceSample`), then takes ``n_steps`` projected stochastic steps on them, each
    preconditioned by the sample covariance of the support's log-likelihoods; at the end,
    ``n_polish`` more steps on the final support, decaying as ``1 / sqrt(k)``, with the
    per-point ridge of :func:`model_hessian` and the exact projection of
    :func:`newton_step`. The first round adds ``first_round`` candidates instead, when given
    and larger.

    Returns
    -------
    idx : ndarray of int
        The support (candidate numbers).
    w : ndarray
        Its weights (some may be zero).
    n_iter : int
        Weight steps taken.
    stop_reason : {'size_reached', 'no_correlation', 'nonfinite_loglik', 'max_seconds'}
    """
    budget = _Budget(max_seconds)
    per_round = -(-n_points // n_rounds)
    first_round = per_round if first_round is None else max(first_round, per_round)
    idx = np.empty(0, dtype=np.intp)
    w = np.empty(0)
    n_iter, reason = 0, "size_reached"
    sample = LaplaceSample(problem)  # the refits' draws
    with ProgressBar(n_points, progress, "SparseVI", "point") as bar:
        while idx.shape[0] < n_points:
            thetas = problem.draws(idx, w, n_draws)
            k = min(first_round if idx.shape[0] == 0 else per_round, n_points - idx.shape[0])
            g = problem.loglik(thetas, None)
            r = problem.full(thetas, g)
            if not _finite(g, r):
                # draws so far out that the log-likelihoods overflow: no choice is meaningful
                reason = "nonfinite_loglik"
                break
            fit = _selection_weights(g, r, idx, w, problem.n_params)
            new = greedy_batch(g, r, idx, fit, k)
            if new.shape[0] == 0:
                reason = "no_correlation"
                break
            idx = np.concatenate([idx, new])
            w = np.concatenate([w, np.zeros(new.shape[0])])
            bar.advance_to(idx.shape[0])
            # the next choice is made under the coreset posterior of these weights: the
            # refit's, which SparseVI's own steps did not reach (see :func:`refit`)
            fitted = refit(problem, idx, w, max_weight, sample)
            if fitted is None:
                # the data's Laplace draws overflow the log-likelihoods: keep the last support
                reason = "nonfinite_loglik"
                idx, w = idx[: -new.shape[0]], w[: -new.shape[0]]
                break
            w = fitted
            for _ in range(n_steps):
                thetas = problem.draws(idx, w, n_draws)
                grad, centred = _gradient_at(problem, thetas, idx, w)
                w = newton_step(w, grad, centred, step_size, tau, max_step, max_weight)
                n_iter += 1
            if budget.spent():
                reason = "max_seconds"
                break
    if reason == "size_reached" and n_polish > 0:
        # :func:`quasi_newton` on the final support, where the per-point ridge keeps a large
        # support's steps stable and the exact projection keeps their progress (used in the
        # greedy rounds' steps as well, it did worse: on 50 points of Phishing, KL 10.8
        # against 0.71). Constant steps of 0.5 wander: from weights at KL 10.7 on 20 points
        # of Phishing they went to 250-600, with 4000 draws per step too. Decaying steps
        # average the noise out, and the gradient norm of a noisy, decaying sequence is no
        # stop signal: every step is taken. Sixty of them took SparseVI's 20-point coreset
        # from KL 423 to 5.7 (``benchmarks/bench_posterior.py``, before the rounds' refit).
        remaining = None if budget.deadline is None else budget.deadline - time.perf_counter()
        w, polished, _ = quasi_newton(
            problem,
            idx,
            w,
            n_draws=n_draws,
            max_iter=n_polish,
            step_size=step_size,
            decay=True,
            tau=tau,
            tol=None,
            max_step=max_step,
            max_weight=max_weight,
            ridge="per_point",
            projection="exact",
            max_seconds=None if remaining is None else max(remaining, 0.0),
        )
        n_iter += polished
    return idx, w, n_iter, reason


class LaplaceSample:
    """Draws of the full data's Laplace fit with the full log-likelihood sum at each: the
    refits' draws, kept across SparseVI's rounds and extended as the support grows.

    The sum is a pass over the pool per draw: with fresh draws every round the refits took
    most of SparseVI's time (measured: benchmarks/README.md, Thresholds). Kept, they leave each
    refit the support's own log-likelihoods, and every refit fits the same sample, as the Hilbert
    coresets fit one projection.
    """

    def __init__(self, problem):
        self.problem = problem
        self.thetas, self.r = None, np.empty(0)

    def take(self, n):
        """``(thetas, r)``: the first ``n`` draws and the full sums at them."""
        have = self.r.shape[0]
        if n > have:
            new = self.problem.laplace_draws(n - have)
            r = self.problem.full(new)
            self.thetas = new if self.thetas is None else np.vstack([self.thetas, new])
            self.r = np.concatenate([self.r, r])
        return self.thetas[:n], self.r[:n]

    def for_support(self, n_points):
        """``(thetas, r)`` for the refit of ``n_points`` points: enough draws for the points
        and for the parameters (``_REFIT_DRAWS_PER_POINT``, ``_REFIT_DRAWS_PER_PARAM``)."""
        return self.take(
            max(
                _REFIT_MIN_DRAWS,
                _REFIT_DRAWS_PER_POINT * n_points,
                _REFIT_DRAWS_PER_PARAM * self.problem.n_params,
            )
        )


def refit(problem, idx, w, max_weight=None, sample=None):
    """The weights of ``idx`` refitted on draws of the full data's Laplace fit.

    The non-negative least-squares fit, over those draws, of the full log-likelihood sum by
    the support's log-likelihoods, which is how the Hilbert coresets weight their points:
    exact (:func:`nonnegative_fit`) up to ``_EXACT_FIT_MAX`` points, above (or when the exact
    fit fails or exceeds ``max_weight``) one exact-projection Newton step
    (:func:`newton_step`) of full size with a small ridge. The ridge cost a lot at small
    sizes: its coordinate descent stops far from the optimum when the log-likelihoods are
    nearly collinear, and the exact fit took SparseVI from KL 0.25 to 0.15 at 50 points of
    Phishing, from 0.10 to 0.035 at 200, and from 0.14 to 0.03 at 100 points of DS1 (with
    the choice's own fit, :func:`_selection_weights`). At 1000 points both gave 0.035.
    SparseVI's greedy rounds leave weights that its steps from the coreset posterior's own
    draws do not recover from. On 100 points of AirportDelays its last steps ended at KL 40
    (forward 1240) from the rounds' weights, and at 1.9 (forward 6.3) from this refit. In
    ``benchmarks/bench_posterior.py`` the refit lowered SparseVI's KL on Phishing and
    BikeTrips at every size from 20 to 1000 (at 1000 points: 0.028 to 0.020 and 0.0094 to
    0.0067). The last steps then correct what the Laplace fit misses.

    SparseVI refits after every round, so that each greedy choice is made under the
    posterior of refitted weights; its steps after the refit (``n_steps``) are off by
    default. On AirportDelays this took the KL at 100 points from 1.9 (a refit before the
    last steps only) to 0.25, and at 500 from 0.69 to 0.063, where GIGA gave 1.25 and 0.14.
    Two constant steps after each refit made it diverge there: the coreset kept 16 of the
    points, at KL 5e6.

    ``sample``: the :class:`LaplaceSample` of ``problem`` to take the draws from (None:
    fresh draws). Returns None when the log-likelihoods overflow at those draws: there is
    nothing to fit, and a step would make the weights NaN.
    """
    thetas, r = (LaplaceSample(problem) if sample is None else sample).for_support(idx.shape[0])
    g = problem.loglik(thetas, idx)
    if not _finite(g, r):
        return None
    v = nonnegative_fit(g, r) if idx.shape[0] <= _EXACT_FIT_MAX else None
    if v is not None and (max_weight is None or v.max(initial=0.0) <= max_weight):
        return v
    grad, centred = kl_gradient(g, r, w)
    return newton_step(w, grad, centred, 1.0, _REFIT_TAU, None, max_weight, "per_point", "exact")


def _finite(g, r):
    """Whether the log-likelihoods ``g`` and their sums ``r`` at some draws are all finite:
    far out in the tails they overflow, and neither a choice nor a fit means anything."""
    return bool(np.isfinite(r).all() and np.isfinite(g).all())


def nonnegative_fit(g, r):
    """The weights ``v >= 0`` minimising ``||(r - g v) - mean(r - g v)||`` over the draws:
    the quadratic model of the KL divergence built from these draws, minimised exactly.

    Returns None when the solver (Lawson-Hanson, :func:`scipy.optimize.nnls`) does not converge,
    which it can fail to do when columns of ``g`` are near copies of one another.
    """
    try:
        return scipy.optimize.nnls(g - g.mean(axis=0), r - r.mean())[0]
    except RuntimeError:
        return None


def _selection_weights(g, r, idx, w, n_params):
    """The weights whose residual SparseVI's choice correlates with: the support's exact fit on
    the draws of pi_w (:func:`nonnegative_fit`), when the support has at least twice as many
    points as there are parameters and the draws are at least twice as many as the points;
    else ``w``.

    The paper's rule takes the residual at weights that are optimal for the support under
    pi_w, so that it is uncorrelated with the support's own log-likelihoods. The refit's
    weights come from other draws (the data's Laplace fit), and on pi_w's draws their residual
    still correlates with the support: the choice goes to near-copies of its points. On 2 x
    10^5 synthetic logistic rows (21 parameters, 100 points) SparseVI's Laplace KL divergence
    to the full posterior was 1.0 without this fit and 0.44 with it; at 50 points of Phishing
    0.25 and 0.15, at 100 of DS1 0.078 and 0.027. With fewer draws than twice the points the
    fit matches the draws' noise. With fewer points than twice the parameters pi_w is wide,
    and the fit to its tails hurt: at 20 points, KL 16 became 121 on AirportDelays (16
    parameters) and 6.0 became 52 on DS1 (11).
    """
    m = idx.shape[0]
    if m < 2 * n_params or 2 * m > g.shape[0]:
        return w
    v = nonnegative_fit(g[:, idx], r)
    return w if v is None else v


def greedy_batch(g, r, idx, w, k):
    """SparseVI's choice of ``k`` new candidates from draws of pi_w.

    The first is the candidate whose log-likelihood is most correlated, over the draws, with
    the residual ``r - g[:, idx] . w``. Each further one is most correlated with what remains
    of the residual after a least-squares fit, on the draws, of the candidates chosen in this
    round: orthogonal matching pursuit in the space of the draws, standing in for the weight
    steps that one point per round would take between choices. The ``k`` best correlations
    with one residual are near-copies of one another: on BikeTrips at 1000 points (20 per
    round), three seeds gave a KL divergence to the full posterior of 3.0 to 377 with them
    and 0.68 to 1.2 with this.

    Parameters
    ----------
    g : ndarray of shape (S, C)
        Log-likelihoods of all C candidates at S draws of pi_w.
    r : ndarray of shape (S,)
        The full data's log-likelihood sums at the draws.
    idx, w : ndarray
        The support and its weights.
    k : int
        Most candidates to choose.

    Returns
    -------
    new : ndarray of int
        The chosen candidates, in order (fewer than ``k`` when no other correlates
        positively with the residual).
    """
    centred = g - g.mean(axis=0)
    norms = np.linalg.norm(centred, axis=0)
    target = r - g[:, idx] @ w
    target = target - target.mean()
    resid = target
    free = ~flat(norms)
    free[idx] = False
    new = []
    for _ in range(k):
        with np.errstate(invalid="ignore", divide="ignore"):
            corr = (centred.T @ resid) / (norms * np.linalg.norm(resid))
        corr[~(np.isfinite(corr) & free)] = -np.inf
        best = int(np.argmax(corr))
        if not corr[best] > 0:
            break
        new.append(best)
        free[best] = False
        if len(new) < k:
            chosen = centred[:, new]
            coef = np.linalg.lstsq(chosen, target, rcond=None)[0]
            resid = target - chosen @ coef
    return np.asarray(new, dtype=np.intp)


def coreset_mcmc(
    problem,
    idx,
    w0,
    *,
    n_train=2000,
    learning_rate=0.01,
    weight_scale=None,
    max_seconds=None,
    progress=False,
):
    """Coreset MCMC weights (Chen & Campbell 2024): after every transition of the chains,
    an ADAM step on the weights with the gradient from the chains' states, clipped at 0.

    The step is ``learning_rate * weight_scale / sqrt(1 + t / 100)`` per coordinate (ADAM's
    normalised units), so it follows the scale of the weights and decays slowly.
    ``weight_scale`` is the uniform weight W / M (None: the mean of ``w0``, the same for a
    uniform start). Not the mean of an OMP start: that can put 10^11 on a point whose
    log-likelihood is nearly constant (eta = 30 on elec2, for a total weight of 45 312), and
    steps of 0.3% of it zeroed most other weights in the first step (Laplace KL 0.02 to
    10^4). ADAM moves every weight by about that step whatever the gradient's size, so near
    the optimum the iterates wander at the noise of the gradient: the weights returned are
    the average of the iterates over the second half of training (Polyak-Ruppert). Measured
    with an OMP start, the last iterate had moved BikeTrips' 165-point coreset from KL 0.02
    to 1.3.

    Returns
    -------
    w : ndarray of shape (len(idx),)
    n_iter : int
    stop_reason : {'max_iter', 'max_seconds'}
    """
    w = np.array(w0, dtype=np.float64)
    weight_scale = float(np.mean(w)) if weight_scale is None else weight_scale
    scale = learning_rate * max(weight_scale, np.finfo(float).tiny)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    m, v = np.zeros_like(w), np.zeros_like(w)
    budget = _Budget(max_seconds)
    reason, t = "max_iter", 0
    w_sum, n_sum = np.zeros_like(w), 0
    with ProgressBar(n_train, progress, "Coreset MCMC", "step") as bar:
        for t in range(1, n_train + 1):
            thetas = problem.transition(idx, w)
            grad, _ = _gradient_at(problem, thetas, idx, w)
            m = beta1 * m + (1 - beta1) * grad
            v = beta2 * v + (1 - beta2) * grad**2
            m_hat, v_hat = m / (1 - beta1**t), v / (1 - beta2**t)
            step = scale / np.sqrt(1.0 + t / 100.0)
            w = np.maximum(w - step * m_hat / (np.sqrt(v_hat) + eps), 0.0)
            if 2 * t > n_train:
                w_sum += w
                n_sum += 1
            bar.update()
            if budget.spent():
                reason = "max_seconds"
                break
    # a budget that stopped the training in its first half: the last iterate
    return (w_sum / n_sum if n_sum else w), t, reason
