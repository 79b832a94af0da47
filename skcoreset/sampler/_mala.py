"""Preconditioned MALA for weighted GLM posteriors: the Python driver of ``_mala_kernels``."""

from dataclasses import dataclass, replace

import numpy as np
from sklearn.utils import check_consistent_length, check_random_state

from .._progress import ProgressBar
from .._warnings import renamed
from ..models import get_model
from . import _mala_kernels as kernels
from ._mala_numpy import log_target, mala_run_numpy

#: Acceptance rate targeted during warm-up; optimal for MALA (Roberts & Rosenthal 1998).
TARGET_ACCEPT = 0.574

#: Prior of ``log(extra)`` when a model's extra parameter (e.g. the Gaussian noise scale) is
#: sampled: N(mean, sd^2).
EXTRA_PRIOR = (0.0, 3.0)

# Steps per compiled call. The random numbers of a chunk, (C, n, P) normals then (C, n)
# uniforms, are drawn from ``random_state`` before the call, so the chunk length decides how
# the stream is split: it is fixed (independent of ``progress``) to keep results reproducible.
_CHUNK = 100


def _use_parallel(n_rows, n_params, n_chains):
    """Whether the fixed-step phase runs the chains on threads (kernels.CHAINS_MIN_WORK)."""
    return (
        n_chains > 1 and kernels.mala_run.for_size(n_rows * n_params) == kernels.mala_run.threaded
    )


@dataclass(frozen=True)
class MALAResult:
    """Output of :func:`sample_mala`.

    Parameters
    ----------
    draws : ndarray of shape (n_chains, n_samples, n_params)
        Kept draws (after warm-up).
    acceptance_rate : ndarray of shape (n_chains,)
        Fraction of accepted proposals after warm-up, per chain.
    step_size : float
        The (frozen) step size used after warm-up.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.sampler import MALAResult
    >>> result = MALAResult(np.zeros((2, 10, 3)), np.array([0.6, 0.5]), 0.8)
    >>> result.draws.shape
    (2, 10, 3)
    """

    draws: np.ndarray
    acceptance_rate: np.ndarray
    step_size: float


def default_step_size(n_params):
    """Return the optimal MALA step for a standard normal target, about 1.65 P^(-1/6).

    Parameters
    ----------
    n_params : int
        The dimension P of the target.

    Returns
    -------
    step_size : float
        The step size (Roberts & Rosenthal 1998).

    Examples
    --------
    >>> from skcoreset.sampler import default_step_size
    >>> round(default_step_size(64), 4)
    0.825
    """
    return 1.65 * max(n_params, 1) ** (-1.0 / 6.0)


def _restart_stuck(accepted, theta, logp, grad):
    """Warm-up: a chain that accepted none of a chunk's steps while another accepted some
    moves to the state of the chain of the highest log posterior (in place).

    A healthy chain at the targeted acceptance of 0.574 rejects 100 steps in a row with
    probability 1e-37; a chain that does is where the gradient is many times the typical one,
    and MALA's every proposal overshoots (standardised one-hot categories of 1 row in 50 000:
    a chain of adult's posterior sat so for all its 1 500 steps, R-hat 1.58). Warm-up draws
    are not kept, so moving a chain there changes no kept draw's distribution, only where the
    chain resumes.
    """
    stuck = accepted == 0
    if stuck.all() or not stuck.any():
        return
    best = int(np.argmax(np.where(stuck, -np.inf, logp)))
    theta[stuck] = theta[best]
    logp[stuck] = logp[best]
    grad[stuck] = grad[best]


def sample_mala(
    model,
    X,
    y,
    sample_weight,
    init,
    *,
    prior_scale=1.0,
    sample_extra=False,
    extra_prior=EXTRA_PRIOR,
    precond_chol=None,
    n_samples=1000,
    n_warmup=500,
    step_size="auto",
    target_accept=TARGET_ACCEPT,
    random_state=None,
    progress=False,
    extra_log_prior=None,
):
    """Run preconditioned MALA chains on a weighted GLM posterior.

    The target is ``log N(theta | 0, diag(prior_scale^2)) + sum_n w_n l_n(theta)`` with the
    per-datum log-likelihood ``l_n`` of ``model``. With ``sample_extra`` the last parameter is
    the log of the model's extra parameter (``log sigma`` for the Gaussian model) with prior
    ``N(extra_prior[0], extra_prior[1]^2)``; otherwise the model's own value is used.

    Parameters
    ----------
    model : str or GLM
        The likelihood: a model name ('logistic', 'poisson', 'gaussian', ...) or a model
        object (its ``prior_scale`` is not used: see ``prior_scale``).
    X : ndarray of shape (N, D)
        Design matrix (intercept column included if any).
    y : ndarray of shape (N,)
        Targets, checked for the likelihood.
    sample_weight : ndarray of shape (N,)
        Non-negative weights of the log-likelihood terms.
    init : ndarray of shape (n_chains, P)
        Starting points, one row per chain (P = D, or D + 1 with ``sample_extra``).
    prior_scale : float or array-like of shape (D,), default=1.0
        Standard deviation of the Gaussian prior on the D coefficients.
    sample_extra : bool, default=False
        Whether the last parameter is the log of the model's extra parameter.
    extra_prior : (float, float), default=(0.0, 3.0)
        Mean and standard deviation of the normal prior on that log (a model's
        ``extra_prior``).
    precond_chol : ndarray of shape (P, P) or None, default=None
        Lower Cholesky factor ``L`` of the preconditioner ``A = L L^T`` (identity if None).
    n_samples : int, default=1000
        Kept draws per chain.
    n_warmup : int, default=500
        Warm-up steps per chain (step-size adaptation, then discarded).
    step_size : 'auto' or float, default='auto'
        'auto' adapts the step by dual averaging toward ``target_accept`` during warm-up,
        starting from ``1.65 P^(-1/6)``; a number is used as is throughout.
    target_accept : float, default=0.574
        The acceptance rate the warm-up adapts the step size toward.
    random_state : int, RandomState instance or None, default=None
        Seeds the proposals and the accept/reject decisions.
    progress : bool, default=False
        Show a tqdm progress bar (if tqdm is installed).
    extra_log_prior : (float, float), default=None
        ``extra_prior``'s name before 0.1 (a ``FutureWarning``; removed in 0.2).

    Returns
    -------
    MALAResult
        The kept draws, the acceptance rates and the step size.

    Notes
    -----
    When ``n_rows * P`` reaches 10 000 and there are several chains, the fixed-step phase
    (after warm-up) runs the chains on threads, as many as numba's
    (``numba.set_num_threads`` / ``NUMBA_NUM_THREADS``). The random numbers are drawn from
    ``random_state`` outside the compiled code, so the draws are the same for any number of
    threads and either driver.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import get_model
    >>> from skcoreset.sampler import sample_mala
    >>> rng = np.random.default_rng(0)
    >>> model = get_model("logistic")
    >>> X = model.design(rng.standard_normal((100, 2)))
    >>> y = (rng.random(100) < 0.5).astype(float)
    >>> result = sample_mala(model, X, y, np.ones(100), np.zeros((2, 3)),
    ...                      n_samples=200, n_warmup=200, random_state=0)
    >>> result.draws.shape
    (2, 200, 3)
    """
    if extra_log_prior is not None:
        given = None if extra_prior is EXTRA_PRIOR else extra_prior
        extra_prior = renamed("extra_log_prior=", "extra_prior=", extra_log_prior, given)
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    w = np.ascontiguousarray(sample_weight, dtype=np.float64)
    # the kernels do not bounds-check: mismatched lengths must fail here, not read garbage
    check_consistent_length(X, y, w)
    theta = np.array(init, dtype=np.float64, order="C", ndmin=2)  # a copy: updated in place
    C, P = theta.shape
    model = get_model(model)
    sample_extra = bool(sample_extra)
    if sample_extra and (model.family is None or not model.family.has_extra):
        raise ValueError(f"The {model.name} model has no extra parameter to sample.")
    n_coef = model.n_params(X.shape[1])
    if P != n_coef + int(sample_extra):
        raise ValueError(
            f"init has {P} parameters; the design has {X.shape[1]} columns"
            + (" plus the log of the extra parameter." if sample_extra else ".")
        )
    if precond_chol is None:
        L = np.eye(P)
    else:
        L = np.ascontiguousarray(precond_chol, dtype=np.float64)
        if L.shape != (P, P):
            raise ValueError(f"precond_chol must have shape {(P, P)}, got {L.shape}.")
        L = np.tril(L)
    n_samples, n_warmup = int(n_samples), int(n_warmup)
    rng = check_random_state(random_state)

    # one prior standard deviation per coefficient (a scalar applies to all of them)
    scale = np.asarray(prior_scale, dtype=np.float64)
    if not np.all(np.isfinite(scale) & (scale > 0)):
        raise ValueError("prior_scale must be positive and finite.")
    prior_prec = np.ascontiguousarray(replace(model, prior_scale=scale).prior_precision(n_coef))
    family, extra = model.family, model.extra_value
    # as the kernels take it: None (the extra parameter fixed), or the mean and precision of
    # the normal prior of its log
    prior = None
    if sample_extra:
        prior = (float(extra_prior[0]), 1.0 / float(extra_prior[1]) ** 2)

    logp = np.empty(C)
    grad = np.empty((C, P))
    if family is None:  # a model of draws (GeneralModel): its NumPy functions, on all rows
        target = log_target(model, X, y, w, prior_prec)
        logp[:], grad[:] = target(theta)
        bad = int(np.sum(~(np.isfinite(logp) & np.isfinite(grad).all(axis=1))))
    else:
        data = kernels.target_data(family, X, y, w, extra, prior)
        bad = kernels.mala_init(family, theta, data, prior_prec, extra, prior, logp, grad)
    if bad:
        raise ValueError(
            f"The log posterior or its gradient is not finite at {bad} of the "
            f"{C} starting points; check the data's scale."
        )

    adapt = step_size == "auto"
    eps = default_step_size(P) if adapt else float(step_size)
    da = np.zeros(kernels.DA_SIZE)
    da[kernels.DA_LOG_EPS] = np.log(eps)
    da[kernels.DA_LOG_EPS_BAR] = 0.0
    # Dual averaging shrinks toward 10 x the initial step (Hoffman & Gelman 2014).
    da[kernels.DA_MU] = np.log(10.0 * eps)
    da[kernels.DA_TARGET] = float(target_accept)

    draws = np.empty((C, n_samples, P))
    accept_warm = np.zeros(C, dtype=np.int64)
    accept = np.zeros(C, dtype=np.int64)
    # Only fixed-step chunks are threaded: there the chains are independent and a chunk is one
    # parallel region. Adaptation couples the chains every step (one region per step), and
    # with another process on a core those per-step barriers stalled warm-up (measured:
    # benchmarks/README.md, Thresholds).
    threaded = _use_parallel(X.shape[0], P, C)
    bar = ProgressBar(n_warmup + n_samples, progress, "MALA", unit="step")

    LT = np.ascontiguousarray(L.T)
    work = kernels.chain_work(C)

    def chunk(n, step, adapting, offset, store, n_accept):
        normals = rng.standard_normal((C, n, P))
        uniforms = rng.random_sample((C, n))
        args = (step, adapting, da, normals, uniforms, draws, offset, store, n_accept)
        if family is None:
            mala_run_numpy(target, theta, logp, grad, L, LT, *args)
        else:
            run = (
                kernels.mala_run.threaded if threaded and not adapting else kernels.mala_run.serial
            )
            fixed = (prior_prec, extra, prior, L, LT)
            run(family, theta, logp, grad, *data, *fixed, *args, work)
        bar.update(n)

    try:
        for start in range(0, n_warmup, _CHUNK):
            before = accept_warm.copy()
            chunk(min(_CHUNK, n_warmup - start), eps, adapt, 0, False, accept_warm)
            _restart_stuck(accept_warm - before, theta, logp, grad)
        if adapt and n_warmup > 0:
            eps = float(np.exp(da[kernels.DA_LOG_EPS_BAR]))
        for start in range(0, n_samples, _CHUNK):
            chunk(min(_CHUNK, n_samples - start), eps, False, start, True, accept)
    finally:
        bar.close()
    return MALAResult(draws=draws, acceptance_rate=accept / max(n_samples, 1), step_size=eps)
