"""HMC preconditioned by a block-arrow Laplace fit: the sampler of multilevel posteriors.

A dense mass matrix is out of reach with one effect per group (20 000 groups: a 20 000 x
20 000 matrix); the Laplace fit's precision ``H`` is block-arrow, and so is its Cholesky
factor ``R`` (:class:`~skcoreset.models._multilevel.BlockArrow`), so a momentum ``R z``, a
position step ``H^{-1} p`` and a kinetic energy cost ``O(G q^2 + G K q + K^2)``: less than
the gradient. With ``H`` as the mass matrix, the posterior looks like ``N(0, I)`` near the
mode, so a trajectory of length about 1.5 (in those units) decorrelates it whatever the
number of groups.

HMC, not MALA: with the same preconditioner MALA's draws of the group sd were 10 to 50 times
more correlated (the user guide's measurement). As BlackJAX's samplers, :func:`init`,
:func:`hmc_step` and :func:`mala_step` are pure functions of a state; :func:`sample` runs the
chains, adapting the step size in the warm-up by dual averaging (Hoffman & Gelman 2014).
The density is any ``log_posterior(theta) -> (lp, grad)``.
"""

from dataclasses import dataclass

import numpy as np

#: Dual averaging's target acceptance rate: HMC's (Stan's default), MALA's optimum.
TARGET = {"hmc": 0.8, "mala": 0.574}
#: HMC's trajectory length in the preconditioned units, jittered by U(0.5, 1.5).
PATH_LENGTH = 1.5
#: The most leapfrog steps of one trajectory.
MAX_LEAPFROG = 100


@dataclass(frozen=True)
class State:
    """A chain's position, its log density and gradient."""

    theta: np.ndarray
    lp: float
    grad: np.ndarray


def init(log_posterior, theta):
    """The state at ``theta`` (log density -inf where it overflows: rejected)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        lp, grad = log_posterior(theta)
    if not (np.isfinite(lp) and np.all(np.isfinite(grad))):
        return State(theta, -np.inf, np.zeros_like(theta))
    return State(theta, float(lp), grad)


def _accept(new, state, log_ratio, rng):
    prob = float(np.exp(min(0.0, log_ratio))) if np.isfinite(log_ratio) else 0.0
    if rng.random() < prob:
        return new, True, prob
    return state, False, prob


def hmc_step(log_posterior, factor, state, eps, n_leapfrog, rng):
    """One HMC step with mass matrix ``H``: ``(state, accepted, acceptance probability)``."""
    p = factor.r(rng.standard_normal(state.theta.shape[0]))
    kinetic0 = 0.5 * p @ factor.solve(p)
    new = state
    p = p + 0.5 * eps * new.grad
    for i in range(n_leapfrog):
        new = init(log_posterior, new.theta + eps * factor.solve(p))
        if not np.isfinite(new.lp):
            return state, False, 0.0
        p = p + (eps if i < n_leapfrog - 1 else 0.5 * eps) * new.grad
    with np.errstate(over="ignore", invalid="ignore"):  # a diverged trajectory: rejected
        kinetic1 = 0.5 * p @ factor.solve(p)
    return _accept(new, state, new.lp - kinetic1 - (state.lp - kinetic0), rng)


def mala_step(log_posterior, factor, state, eps, rng):
    """One MALA step with preconditioner ``H^{-1}``: ``(state, accepted, probability)``."""
    noise = rng.standard_normal(state.theta.shape[0])
    proposal = state.theta + 0.5 * eps**2 * factor.solve(state.grad) + eps * factor.inv_rt(noise)
    new = init(log_posterior, proposal)
    back = state.theta - (proposal + 0.5 * eps**2 * factor.solve(new.grad))
    log_q_back = -0.5 * np.sum(factor.rt(back) ** 2) / eps**2
    return _accept(new, state, new.lp - state.lp + log_q_back + 0.5 * np.sum(noise**2), rng)


@dataclass
class Result:
    """Draws (chains, kept steps, P), each chain's acceptance rate, step size, and the
    gradient evaluations of its kept steps."""

    draws: np.ndarray
    acceptance_rate: np.ndarray
    step_size: np.ndarray
    n_gradients: np.ndarray


def sample(
    log_posterior,
    factor,
    inits,
    *,
    n_samples,
    n_warmup,
    rng,
    step_size="auto",
    method="hmc",
    progress=None,
):
    """Run a chain from each row of ``inits`` (chains, P).

    ``step_size='auto'`` adapts it during the warm-up by dual averaging toward
    :data:`TARGET`; ``progress`` is called with 1 after each step (or None).
    """
    n_chains, P = inits.shape
    draws = np.empty((n_chains, n_samples, P))
    rates, steps, grads = np.zeros(n_chains), np.zeros(n_chains), np.zeros(n_chains, dtype=int)
    adapt, target = step_size == "auto", TARGET[method]
    for c in range(n_chains):
        state = init(log_posterior, inits[c])
        eps = (0.5 if method == "hmc" else 1.65 * P ** (-1 / 6)) if adapt else float(step_size)
        mu, h_bar, log_eps_bar = np.log(10 * eps), 0.0, np.log(eps)
        accepted = 0
        for i in range(n_warmup + n_samples):
            if method == "hmc":
                n_leapfrog = int(
                    min(MAX_LEAPFROG, np.ceil(rng.uniform(0.5, 1.5) * PATH_LENGTH / eps))
                )
                state, ok, prob = hmc_step(log_posterior, factor, state, eps, n_leapfrog, rng)
            else:
                n_leapfrog = 1
                state, ok, prob = mala_step(log_posterior, factor, state, eps, rng)
            if i < n_warmup and adapt:  # dual averaging: gamma 0.05, t0 10, kappa 0.75
                m = i + 1
                h_bar += ((target - prob) - h_bar) / (m + 10)
                log_eps = mu - np.sqrt(m) / 0.05 * h_bar
                eps = float(np.exp(log_eps))
                log_eps_bar = m**-0.75 * log_eps + (1 - m**-0.75) * log_eps_bar
                if m == n_warmup:
                    eps = float(np.exp(log_eps_bar))
            elif i >= n_warmup:
                draws[c, i - n_warmup] = state.theta
                accepted += ok
                grads[c] += n_leapfrog
            if progress is not None:
                progress(1)
        rates[c], steps[c] = accepted / max(n_samples, 1), eps
    return Result(draws, rates, steps, grads)
