"""Against the alternatives: the default pipeline beside full-data NUTS, HMCECS, Pathfinder,
SVI and ADVI on synthetic logistic (the default) or negative binomial regression.

The cases (``--model``):

* ``logistic``: ``bench_scale``'s data (D = 20 features, an intercept, chunks generated from
  per-chunk seeds; float32 X for the library, the same values in float64 for the others);
  ``BayesianLogisticRegression``; 21 parameters.
* ``negative_binomial``: D = 10 standard normal features, generated chunk by chunk (500 000
  rows) from per-chunk seeds ``[45, chunk]`` as ``bench_scale`` does, float32 X;
  log-mean ``0.5 + x . beta`` with ``beta ~ N(0, 0.3^2)`` drawn once (seed 45), NB2 counts of
  dispersion ``alpha = 0.5`` (variance ``mu + alpha mu^2``; counts of mean 1.9, variance
  5.5, 31% zeros, at most 44 in 10^5 rows); ``BayesianNegativeBinomialRegression``; 12
  parameters: the coefficients, the intercept and ``log alpha`` (compared on the log scale, as
  every sampler here samples it).

Every method gets the same prior: the one the library computes for the full data
(``prior_from_moments`` of the data's moments, which ``OMPCoreset().fit(X, y).prior_scale_``
is, and for the negative binomial the prior of ``log alpha``, the model's ``extra_prior`` at
the data's moments; both checked in the library's runs), written for NumPyro and PyMC by
``skcoreset.export`` (``export_spec``: NUTS samples exactly the library's posterior). The
methods:

* ``nuts``: full-data NUTS (NumPyro), two chains each run in turn, the reference; at a size
  where its projected time exceeds the budget the reference is ``mala``, the library's MALA on
  all rows (``BayesianLogisticRegression``, ``BayesianNegativeBinomialRegression``, 4
  chains);
* ``hmcecs``: ``numpyro.infer.HMCECS`` around NUTS with the second-order Taylor proxy at the
  MAP (BFGS from 0, timed with it), two chains, subsamples of ``--hmcecs-subsample`` rows
  (1000 by default);
* ``pathfinder``, ``pathfinder_tuned``: BlackJAX's single-path ``blackjax.vi.pathfinder`` at
  its defaults and at the tightened L-BFGS settings of ``PATHFINDER_TUNED``;
* ``svi_normal``, ``svi_mvn``: NumPyro SVI with ``AutoNormal`` and
  ``AutoMultivariateNormal``, Adam with an exponentially decaying step;
* ``advi``: PyMC's mean-field ADVI (``pm.fit`` at its defaults);
* ``uniform``: a uniform subsample of the default coreset's size, MALA on its weighted rows;
* ``omp``, ``qnc``: ``make_pipeline(OMPCoreset(), BayesianLogisticRegression())`` (the default
  pipeline; ``BayesianNegativeBinomialRegression()`` for the negative binomial) and the same
  with ``QuasiNewtonCoreset``.

Every method runs for both cases; HMCECS's second-order Taylor proxy takes the gradient and
Hessian of each row's log-likelihood by JAX's autodiff (NumPyro's ``taylor_proxy``), so the
negative binomial's needs nothing of its own.

Each runs in its own process, under a wall-clock budget. Times: ``cold`` is the first run in
that process, with its compilation (the library's on an empty numba cache), ``warm`` a second
run in the same process (SVI: the compiled optimisation loop alone, compiled ahead of time;
ADVI: ``pm.fit`` after a one-step fit). A method whose process took, at the previous size,
a time that scaled linearly in N exceeds the budget, or a peak memory that scaled linearly
exceeds the machine's available memory, is not run, and this projection is printed instead.

Accuracy against the reference (:func:`accuracy`): the mean over the parameters of |z|, the
error of the posterior mean in reference sds; the ratios of the posterior sds to the
reference's (median, min, max); the KL divergences between Gaussian moment fits. The
reference's Monte Carlo floor (:func:`mc_floor`): the mean |z| that the reference's own
Monte Carlo error gives an exact method. A method reaches the reference's accuracy when its
mean |z| is within twice the floor and every sd ratio within 0.85-1.15. Below the table, the
speed-up of each pipeline against full-data NUTS: NUTS's warm seconds (its second chain, 500 +
1000 iterations, compiled) over the pipeline's warm fit (4 chains), and NUTS's two chains (the
reference's draws, its cold and warm seconds) over the same; where NUTS is not run at a size
(projected beyond the budget), the same ratios with NUTS's seconds at the previous size scaled
linearly in N, marked as projected.

Other benchmark processes on the machine (``pgrep -fa benchmarks.bench_``, this run's excluded)
are recorded at the start of every method's process (``other_benchmarks``) and flagged in the
table.

Usage (from the repository root; ``pip install -e ".[bench]"``)::

    python -m benchmarks.bench_alternatives --out benchmarks/results/bench_alternatives.json
    python -m benchmarks.bench_alternatives --quick
    python -m benchmarks.bench_alternatives --model negative_binomial --sizes 100000 1000000 \
        --out benchmarks/results/bench_alternatives_nb.json
"""

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import numpy as np

from benchmarks.bench_scale import D, chunk_sizes, make_chunk
from skcoreset.metrics import gaussian_kl, moment_fit

P = D + 1  # logistic: coefficients, then the intercept (the library's layout)
GOAL_Z = 2.0  # mean |z| within this many times the reference's floor
GOAL_SD = (0.85, 1.15)  # every sd ratio within these
SVI_STEPS = 10_000
PATHFINDER_TUNED = {"maxiter": 60, "ftol": 1e-10, "gtol": 1e-10}
HMCECS_SUBSAMPLE = 1000
HMCECS_BLOCKS = 100
APPROX_DRAWS = 200_000  # draws of the approximations (their Monte Carlo error is negligible)

LABELS = {
    "nuts": "full-data NUTS",
    "mala": "full-data MALA",
    "hmcecs": "HMCECS",
    "pathfinder": "Pathfinder",
    "pathfinder_tuned": "Pathfinder (tuned)",
    "svi_normal": "SVI AutoNormal",
    "svi_mvn": "SVI AutoMVN",
    "advi": "PyMC ADVI",
    "uniform": "uniform + MALA",
    "omp": "OMP pipeline",
    "qnc": "QNC pipeline",
}
REFERENCES = ("nuts", "mala")
ALTERNATIVES = (
    "hmcecs",
    "pathfinder",
    "pathfinder_tuned",
    "svi_normal",
    "svi_mvn",
    "advi",
    "uniform",
)
LIBRARY = ("omp", "qnc")

# -- the cases -------------------------------------------------------------------------------

NB_FEATURES = 10
NB_SEED = 45
NB_LEVEL = 0.5  # the log-mean's intercept
NB_COEF_SD = 0.3  # beta ~ N(0, NB_COEF_SD^2), drawn once from NB_SEED
NB_ALPHA = 0.5  # the dispersion: variance mu + alpha mu^2


def nb_coef(seed=NB_SEED):
    """The negative binomial case's true coefficients."""
    return NB_COEF_SD * np.random.default_rng(seed).standard_normal(NB_FEATURES)


def nb_chunk(index, n, seed=NB_SEED):
    """Chunk ``index`` of the negative binomial data: ``(X float32, y int32)`` of ``n`` rows,
    from the chunk's own seed (as ``bench_scale.make_chunk``)."""
    rng = np.random.default_rng([seed, index])
    X = rng.standard_normal((n, NB_FEATURES), dtype=np.float32)
    mu = np.exp(X.astype(np.float64) @ nb_coef(seed) + NB_LEVEL)
    r = 1.0 / NB_ALPHA  # NumPy's n: counts of failures before r successes, mean mu
    y = rng.negative_binomial(r, r / (r + mu)).astype(np.int32)
    return X, y


@dataclass(frozen=True)
class Case:
    """A model and its synthetic data."""

    model: str  # the library's model name (``get_model``)
    n_features: int
    chunk: object  # (index, n) -> (X float32, y) of one chunk
    y_dtype: object  # the library's targets' dtype
    estimator: str  # the Bayesian estimator's class in ``skcoreset``
    extras: tuple = ()  # the extra parameters' names: their logs follow the intercept
    truth: dict = None  # the generating parameters, for the record


CASES = {
    "logistic": Case("logistic", D, make_chunk, np.int8, "BayesianLogisticRegression"),
    "negative_binomial": Case(
        "negative_binomial",
        NB_FEATURES,
        nb_chunk,
        np.int32,
        "BayesianNegativeBinomialRegression",
        extras=("alpha",),
        truth={
            "coef": nb_coef().round(6).tolist(),
            "intercept": NB_LEVEL,
            "alpha": NB_ALPHA,
            "log_alpha": float(np.log(NB_ALPHA)),
            "seed": NB_SEED,
        },
    ),
}


def case_of(cfg):
    return CASES[cfg.get("case", "logistic")]


# -- accuracy --------------------------------------------------------------------------------


def accuracy(draws, reference):
    """How close the draws' posterior is to the reference's.

    Parameters
    ----------
    draws, reference : ndarray of shape (n_draws, P) or (n_chains, n_draws, P)
        Posterior draws of the method and of the reference.

    Returns
    -------
    out : dict
        ``mean_abs_z`` (the mean over parameters of |mean - reference mean| / reference sd),
        ``sd_ratio`` (the P ratios of the sds to the reference's), ``kl_forward``
        (KL(reference || method)) and ``kl_reverse`` of the Gaussian moment fits.
    """
    mean, cov = moment_fit(draws)
    mean0, cov0 = moment_fit(reference)
    sd0 = np.sqrt(np.diag(cov0))
    return {
        "mean_abs_z": float(np.mean(np.abs(mean - mean0) / sd0)),
        "sd_ratio": (np.sqrt(np.diag(cov)) / sd0).tolist(),
        "kl_forward": gaussian_kl(mean0, cov0, mean, cov),
        "kl_reverse": gaussian_kl(mean, cov, mean0, cov0),
    }


def mc_floor(chains):
    """The reference's Monte Carlo floor of the mean |z|.

    Parameters
    ----------
    chains : ndarray of shape (n_chains, n_draws, P)
        The reference's draws, at least two chains.

    Returns
    -------
    halves : float
        The mean over parameters of |z| between the two halves of the chains (the first half
        of the chains against the second, in the pooled sd): how far two runs of the
        reference, each half as long, disagree. The floor of the goal.
    mcse : float
        sqrt(2 / pi) times the mean over parameters of MCSE / sd = 1 / sqrt(ESS) (bulk ESS):
        the expected |z| of the pooled draws' own error against the exact posterior (about
        half of ``halves``: each half's error is sqrt(2) times the pool's).
    """
    from skcoreset.sampler import ess_bulk

    chains = np.asarray(chains, dtype=np.float64)
    if chains.ndim != 3 or chains.shape[0] < 2:
        raise ValueError(f"mc_floor needs (n_chains >= 2, n_draws, P) draws; got {chains.shape}.")
    sd = chains.reshape(-1, chains.shape[-1]).std(axis=0, ddof=1)
    half = chains.shape[0] // 2
    diff = chains[:half].mean(axis=(0, 1)) - chains[half:].mean(axis=(0, 1))
    mcse = np.sqrt(2 / np.pi) * np.mean(1.0 / np.sqrt(ess_bulk(chains)))
    return float(np.mean(np.abs(diff) / sd)), float(mcse)


def reaches(acc, floor):
    """Whether an accuracy (:func:`accuracy`) reaches the reference's: mean |z| within
    ``GOAL_Z`` times the floor and every sd ratio within ``GOAL_SD``."""
    lo, hi = GOAL_SD
    return (
        acc["mean_abs_z"] <= GOAL_Z * floor
        and lo <= min(acc["sd_ratio"]) <= max(acc["sd_ratio"]) <= hi
    )


# -- data and prior --------------------------------------------------------------------------


def make_data(case, N, float64=False):
    """The whole data in memory: float32 X and the library's targets, or (``float64``) the
    same values in float64 for the other methods."""
    X = np.empty((N, case.n_features), dtype=np.float64 if float64 else np.float32)
    y = np.empty(N, dtype=np.float64 if float64 else case.y_dtype)
    a = 0
    for i, n in enumerate(chunk_sizes(N)):
        X[a : a + n], y[a : a + n] = case.chunk(i, n)
        a += n
    return X, y


def library_prior(N, case):
    """The library's prior for the full data, from the moments of the regenerated chunks:
    ``(prior_scale, y_mean, y_sd)``, one sd per coefficient, the intercept last, and the
    targets' moments, which set the extra parameters' priors (``with_data_scale``)."""
    from skcoreset.models import get_model
    from skcoreset.models._prior import Moments, prior_from_moments

    moments = Moments(case.n_features)
    for i, n in enumerate(chunk_sizes(N)):
        X, y = case.chunk(i, n)
        moments.add(X, y.astype(np.float64))
    _, _, y_mean, y_sd = moments.mean_and_sd()
    return prior_from_moments(get_model(case.model), moments), float(y_mean), float(y_sd)


def export_model(X, y, prior, cfg):
    """The full-data posterior as ``skcoreset.export`` writes it: (spec, NumPyro model).

    The model's extra parameters get the prior of the full data's moments (``cfg['y_mean']``,
    ``cfg['y_sd']``), as a coreset's export writes them."""
    from dataclasses import replace

    from skcoreset.export import export_spec
    from skcoreset.export._numpyro import build
    from skcoreset.models import get_model

    case = case_of(cfg)
    model = get_model(case.model, prior_scale=prior)
    scale = {}
    if case.extras:
        scale = {"y_mean": cfg["y_mean"], "y_sd": cfg["y_sd"]}
        model = model.with_data_scale(scale["y_mean"], scale["y_sd"])
    # the spec of one row, then all rows without a copy (export_spec copies X)
    spec = export_spec(model, X[:1], y[:1], np.ones(1), **scale)
    spec = replace(spec, X=X, y=y, weight=np.ones(len(y)))
    return spec, build(spec)


def extra_priors(prior, y_mean, y_sd, case):
    """The extra parameters' priors as the export writes them: [[name, log mean, log sd]]."""
    from skcoreset.export import export_spec
    from skcoreset.models import get_model

    model = get_model(case.model, prior_scale=prior)
    if not case.extras:
        return []
    model = model.with_data_scale(y_mean, y_sd)
    X = np.zeros((1, case.n_features))
    spec = export_spec(model, X, np.ones(1), np.ones(1), y_mean=y_mean, y_sd=y_sd)
    return [[e.name, e.log_mean, e.log_sd] for e in spec.extras]


def _prior_diff(got, expected):
    """The largest difference between (log mean, log sd) pairs and the export's."""
    if not expected:
        return None
    got = np.asarray(got, dtype=np.float64).reshape(len(expected), 2)
    want = np.asarray([e[1:] for e in expected], dtype=np.float64)
    return float(np.max(np.abs(got - want)))


# -- the methods (each in its own process) -------------------------------------------------


def _jax():
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    return jax


def _stack(samples, extras=(), logs=False):
    """(..., P) draws from NumPyro's {'coef': (..., D), 'intercept': (...), extra: (...)}: the
    coefficients, the intercept, then the log of each extra parameter (``logs``: the samples
    hold the logs already, NumPyro's unconstrained values)."""
    parts = [np.asarray(samples["coef"]), np.asarray(samples["intercept"])[..., None]]
    for name in extras:
        value = np.asarray(samples[name], dtype=np.float64)
        parts.append((value if logs else np.log(value))[..., None])
    return np.concatenate(parts, axis=-1)


def _library_draws(est, case):
    """(n_chains, n_draws, P) draws of a fitted Bayesian estimator, as :func:`_stack`'s."""
    return _stack(
        {
            "coef": est.coef_samples_,
            "intercept": est.intercept_samples_,
            **{name: getattr(est, f"{name}_samples_") for name in case.extras},
        },
        case.extras,
    )


def _numpyro_likelihood(spec, eta, y, extras):
    """The observed site's distribution and values, as the NumPyro export writes them: the
    model's recipe (``numpyro_likelihood``), or the export's table of likelihoods where the
    package has no recipes (before they came)."""
    import jax
    import numpyro

    recipe = getattr(getattr(spec, "recipes", None), "numpyro_likelihood", None)
    if recipe is not None:
        return recipe(numpyro, jax, eta, y, extras)
    from skcoreset.export._numpyro import _likelihood

    return _likelihood(numpyro.distributions, jax.numpy, spec.likelihood, eta, extras), y


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def run_nuts(X, y, prior, cfg):
    jax = _jax()
    from numpyro.infer import MCMC, NUTS

    spec, model = export_model(X, y, prior, cfg)
    extras = case_of(cfg).extras
    chains, times = [], []
    for seed in (0, 1):
        mcmc = MCMC(
            NUTS(model),
            num_warmup=cfg["warmup"],
            num_samples=cfg["draws"],
            progress_bar=False,
        )

        def run(mcmc=mcmc, seed=seed):
            mcmc.run(jax.random.PRNGKey(seed))
            # NumPyro returns before the draws are computed: they are waited for here
            return _stack(mcmc.get_samples(), extras)

        draws, seconds = _timed(run)
        chains.append(draws)
        times.append(seconds)
    settings = {"warmup": cfg["warmup"], "draws": cfg["draws"], "chains": 2}
    if extras:
        settings["extra_prior"] = [[e.name, e.log_mean, e.log_sd] for e in spec.extras]
    return np.stack(chains), times, settings


def _estimator(case):
    import skcoreset

    return getattr(skcoreset, case.estimator)


def run_mala(X, y, prior, cfg):
    case = case_of(cfg)
    est = _estimator(case)(prior_scale=prior, random_state=0)
    _, seconds = _timed(lambda: est.fit(X, y))
    draws = _library_draws(est, case)
    settings = {"warmup": est.n_warmup, "draws": est.n_samples, "chains": est.n_chains}
    if case.extras:
        # the sampler's prior of log alpha (a numeric prior_scale: the model's own rule)
        got = getattr(est, "_noise_log_prior", None)
        settings["extra_prior"] = None if got is None else list(map(float, got))
        settings["extra_prior_max_abs_diff"] = (
            None if got is None else _prior_diff(got, cfg["extra_prior"])
        )
    return draws, [seconds], settings


def _map_point(jax, model):
    """The MAP of a NumPyro model (BFGS from 0 on its potential, the unconstrained values):
    {'coef', 'intercept', extras}, constrained (``taylor_proxy`` takes them so)."""
    from jax.flatten_util import ravel_pytree
    from jax.scipy.optimize import minimize
    from numpyro.infer.util import constrain_fn, initialize_model

    info = initialize_model(jax.random.PRNGKey(0), model)
    x0, unravel = ravel_pytree(info.param_info.z)
    res = minimize(lambda x: info.potential_fn(unravel(x)), 0.0 * x0, method="BFGS")
    return constrain_fn(model, (), {}, unravel(res.x))


def run_hmcecs(X, y, prior, cfg):
    jax = _jax()
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import HMCECS, MCMC, NUTS

    spec, full_model = export_model(X, y, prior, cfg)
    extras = case_of(cfg).extras
    Xj, yj, N = jnp.asarray(spec.X), jnp.asarray(spec.y), len(y)
    coef_sd = jnp.asarray(spec.coef_sd)
    subsample = min(cfg.get("hmcecs_subsample", HMCECS_SUBSAMPLE), N)

    def model():
        # the export's model with the rows subsampled (the plate rescales the likelihood)
        coef = numpyro.sample("coef", dist.Normal(0.0, coef_sd).to_event(1))
        intercept = numpyro.sample("intercept", dist.Normal(0.0, spec.intercept_sd))
        # the extra parameters log-normal, as the export's
        free = [numpyro.sample(e.name, dist.LogNormal(e.log_mean, e.log_sd)) for e in spec.extras]
        with numpyro.plate("rows", N, subsample_size=subsample):
            xb = numpyro.subsample(Xj, event_dim=1)
            yb = numpyro.subsample(yj, event_dim=0)
            likelihood, obs = _numpyro_likelihood(spec, xb @ coef + intercept, yb, free)
            numpyro.sample("y", likelihood, obs=obs)

    chains, times = [], []
    for seed in (0, 1):

        def run(seed=seed):
            ref = _map_point(jax, full_model)
            kernel = HMCECS(
                NUTS(model),
                num_blocks=HMCECS_BLOCKS,
                proxy=HMCECS.taylor_proxy(ref, degree=2),
            )
            mcmc = MCMC(
                kernel, num_warmup=cfg["warmup"], num_samples=cfg["draws"], progress_bar=False
            )
            mcmc.run(jax.random.PRNGKey(seed))
            return _stack(mcmc.get_samples(), extras)

        draws, seconds = _timed(run)
        chains.append(draws)
        times.append(seconds)
    settings = {
        "subsample_size": subsample,
        "num_blocks": HMCECS_BLOCKS,
        "proxy": "taylor, degree 2, at the MAP (BFGS from 0)",
        "warmup": cfg["warmup"],
        "draws": cfg["draws"],
        "chains": 2,
    }
    return np.stack(chains), times, settings


def _pathfinder(X, y, prior, cfg, options):
    jax = _jax()
    import blackjax
    from jax.custom_batching import custom_vmap
    from jax.flatten_util import ravel_pytree
    from numpyro.infer.util import initialize_model

    _, model = export_model(X, y, prior, cfg)
    info = initialize_model(jax.random.PRNGKey(0), model)
    x0, unravel = ravel_pytree(info.param_info.z)

    def plain(x):
        return -info.potential_fn(unravel(x))

    # Pathfinder evaluates the ELBO of every iterate at once (a vmap over the maxiter + 1
    # iterates of a vmap over num_samples points): as one product with X that is 48 GB at
    # N = 10^6 and the defaults. The inner points are taken in batches instead, so that the
    # product holds about 3 x 10^7 numbers; the gradient (L-BFGS) is the plain one.
    batch = max(1, 30_000_000 // (len(y) * (options.get("maxiter", 30) + 1)))

    @custom_vmap
    def batched(x):
        return plain(x)

    @batched.def_vmap
    def _(axis_size, in_batched, points):
        return jax.lax.map(plain, points, batch_size=batch), True

    @jax.custom_vjp
    def logdensity(x):
        return batched(x)

    def forward(x):
        return jax.value_and_grad(plain)(x)

    logdensity.defvjp(forward, lambda grad, ct: (ct * grad,))

    @jax.jit
    def fit(key):
        state, _ = blackjax.vi.pathfinder.approximate(key, logdensity, 0.0 * x0, **options)
        return state

    # timed: the fit; its draws (and their log q) are drawn after, as the SVI guides' are
    runs = [
        _timed(lambda s=seed: jax.block_until_ready(fit(jax.random.PRNGKey(s)))) for seed in (0, 1)
    ]
    draws, _ = blackjax.vi.pathfinder.sample(jax.random.PRNGKey(2), runs[0][0], APPROX_DRAWS)
    # the unconstrained values (an extra parameter's log), flattened in the keys' order
    draws = _stack(jax.vmap(unravel)(draws), case_of(cfg).extras, logs=True)
    return draws, [t for _, t in runs], {"implementation": "blackjax", **options}


def run_pathfinder(X, y, prior, cfg):
    return _pathfinder(X, y, prior, cfg, {})


def run_pathfinder_tuned(X, y, prior, cfg):
    return _pathfinder(X, y, prior, cfg, dict(PATHFINDER_TUNED))


def _svi(X, y, prior, cfg, guide_class):
    jax = _jax()
    import optax
    from numpyro import optim
    from numpyro.infer import SVI, Trace_ELBO

    _, model = export_model(X, y, prior, cfg)
    steps = cfg["svi_steps"]
    guide = guide_class(model)
    schedule = optax.exponential_decay(1e-2, steps, 1e-2)  # 1e-2 down to 1e-4
    svi = SVI(model, guide, optim.Adam(schedule), Trace_ELBO())

    def loop(state):
        return jax.lax.scan(lambda s, _: svi.update(s), state, None, length=steps)

    def init_and_compile(seed):
        state = svi.init(jax.random.PRNGKey(seed))
        return state, jax.jit(loop).lower(state).compile()

    # one run: compiled ahead of time, so that the loop's own time is known without a second
    (state, compiled), t_compile = _timed(lambda: init_and_compile(0))
    (state, losses), t_run = _timed(lambda: jax.block_until_ready(compiled(state)))
    params = svi.get_params(state)
    draws = guide.sample_posterior(jax.random.PRNGKey(2), params, sample_shape=(APPROX_DRAWS,))
    settings = {
        "steps": steps,
        "optimizer": "Adam, step 1e-2 decaying exponentially to 1e-4",
        "elbo": "Trace_ELBO, 1 particle",
        "final_loss": float(losses[-1]),
    }
    # cold: init, compilation and the loop; warm: the loop alone
    return _stack(draws, case_of(cfg).extras), [t_compile + t_run, t_run], settings


def run_svi_normal(X, y, prior, cfg):
    from numpyro.infer.autoguide import AutoNormal

    return _svi(X, y, prior, cfg, AutoNormal)


def run_svi_mvn(X, y, prior, cfg):
    from numpyro.infer.autoguide import AutoMultivariateNormal

    return _svi(X, y, prior, cfg, AutoMultivariateNormal)


def run_advi(X, y, prior, cfg):
    import pymc as pm
    import pytensor

    from skcoreset.export._pymc import build

    spec, _ = export_model(X[:1], y[:1], prior, cfg)  # only the numpyro model is thrown away
    from dataclasses import replace

    with build(replace(spec, X=X, y=y, weight=np.ones(len(y)))):
        _, t_first = _timed(lambda: pm.fit(n=1, method="advi", random_seed=0, progressbar=False))
        # SVI's schedule: Adam's step from 1e-2 down to 1e-4, set before each step
        n = cfg["advi_steps"]
        step = pytensor.shared(1e-2)

        def decay(approx, losses, i):
            step.set_value(1e-2 * 1e-2 ** (i / n))

        approx, t_run = _timed(
            lambda: pm.fit(
                n=n,
                method="advi",
                obj_optimizer=pm.adam(learning_rate=step),
                callbacks=[decay],
                random_seed=1,
                progressbar=False,
            )
        )
        post = approx.sample(APPROX_DRAWS, random_seed=2).posterior
    extras = case_of(cfg).extras
    draws = _stack({k: post[k].values[0] for k in ("coef", "intercept", *extras)}, extras)
    settings = {
        "n": cfg["advi_steps"],
        "optimizer": "pm.adam, step 1e-2 decaying exponentially to 1e-4 (a callback)",
    }
    return draws, [t_first + t_run, t_run], settings


def _library(X, y, prior, cfg, make_coreset):
    from skcoreset.pipeline import make_pipeline

    case = case_of(cfg)
    runs = []
    for seed in (0, 1):
        pipe = make_pipeline(make_coreset(seed), _estimator(case)(random_state=seed))
        _, seconds = _timed(lambda p=pipe: p.fit(X, y))
        runs.append((_library_draws(pipe[-1], case), seconds, pipe))
    core, est = runs[0][2][0], runs[0][2][-1]
    settings = {
        "coreset": type(core).__name__,
        "size": int(core.n_points_),
        "prior_max_rel_diff": float(np.max(np.abs(core.prior_scale_ / prior - 1))),
        "chains": 4,
    }
    if case.extras:
        # the coreset's prior of log alpha (its full-data prior) and the sampler's
        data_prior = getattr(core, "_data_prior", None)
        got = None if data_prior is None else data_prior.extra_log_prior()
        sampler = getattr(est, "_noise_log_prior", None)
        settings["extra_prior"] = None if got is None else list(map(float, got))
        for key, value in (("extra_prior", got), ("sampler_extra_prior", sampler)):
            settings[f"{key}_max_abs_diff"] = (
                None if value is None else _prior_diff(value, cfg["extra_prior"])
            )
    quality = getattr(core, "laplace_kl_", None)
    if quality is not None:
        settings["laplace_kl"] = float(quality)
    # the first fit's draws: a user's posterior is that of one coreset
    return runs[0][0], [r[1] for r in runs], settings


def run_omp(X, y, prior, cfg):
    from skcoreset import OMPCoreset

    return _library(X, y, prior, cfg, lambda seed: OMPCoreset(random_state=seed))


def run_qnc(X, y, prior, cfg):
    from skcoreset import QuasiNewtonCoreset

    return _library(X, y, prior, cfg, lambda seed: QuasiNewtonCoreset(random_state=seed))


def run_uniform(X, y, prior, cfg):
    from skcoreset import UniformCoreset

    M = cfg["n_points"]
    return _library(
        X, y, prior, cfg, lambda seed: UniformCoreset(M, projection=None, random_state=seed)
    )


NUMPY_METHODS = ("mala", "omp", "qnc", "uniform")  # the library's: float32 X


def child(args):
    """Run one method and print its JSON (the parent collects it); the draws go to a file."""
    cfg = json.loads(args.cfg)
    prior = np.load(cfg["prior"])
    load = os.getloadavg()[0]
    X, y = make_data(case_of(cfg), args.N, float64=args.child not in NUMPY_METHODS)
    draws, times, settings = globals()[f"run_{args.child}"](X, y, prior, cfg)
    np.save(cfg["draws_file"], draws)
    out = {
        "method": args.child,
        "N": args.N,
        "seconds_cold": times[0],
        "seconds_warm": times[-1] if len(times) > 1 else None,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "x_mb": X.nbytes / 2**20,
        "load_start": load,
        "load_end": os.getloadavg()[0],
        "settings": settings,
    }
    print("RESULT " + json.dumps(out))


def spawn(method, N, cfg, budget, workdir):
    cmd = [sys.executable, "-m", "benchmarks.bench_alternatives", "--child", method]
    cmd += ["--N", str(N), "--cfg", json.dumps(cfg)]
    env = dict(os.environ)
    if method in NUMPY_METHODS:
        # the library's first fit compiles its kernels, as a fresh install's does
        env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="numba-", dir=workdir)
    t = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=budget, env=env)
    except subprocess.TimeoutExpired:
        return {"method": method, "N": N, "status": f"did not finish in {budget / 60:.0f} min"}
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            res = json.loads(line[len("RESULT ") :])
            res["status"] = "ok"
            res["process_seconds"] = time.perf_counter() - t
            return res
    # recorded, not raised: a run at a large size keeps the other methods' rows
    lines = out.stderr.strip().splitlines() or ["no output"]
    print(out.stderr[-3000:], file=sys.stderr)
    return {"method": method, "N": N, "status": f"failed: {lines[-1][:120]}"}


def skip_reason(previous, N, budget, available):
    """Why a method is not run at ``N`` rows (None: it is run), from ``previous = (n0,
    seconds, peak_mb)`` of its process at ``n0`` rows, both scaled linearly in the rows: a
    time beyond ``budget`` seconds, or a peak beyond ``available`` MB. An out-of-memory kill
    ends a process without a word (as HMCECS with 10 000-row subsamples did at 10^6): the
    projection says so before."""
    n0, seconds, peak_mb = previous
    scale = N / n0
    if seconds * scale > budget:
        why = f"projected {seconds * scale / 60:.0f} min"
    elif peak_mb * scale > available:
        why = f"projected peak {peak_mb * scale / 1024:.0f} GB, {available / 1024:.0f} GB available"
    else:
        return None
    return f"{why} (its process at N={n0}, x {scale:g})"


def other_benchmarks():
    """The other benchmark processes on the machine (``pgrep -fa benchmarks.bench_``), this
    run's own processes left out: ``["pid command", ...]``."""
    try:
        out = subprocess.run(
            ["pgrep", "-fa", "benchmarks.bench_"], capture_output=True, text=True, timeout=10
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ["(pgrep failed)"]
    # this process and its ancestors (the shell that started it) are this run's
    mine, pid = set(), os.getpid()
    while pid and pid not in mine:
        mine.add(pid)
        pid = _parent(pid)
    found = []
    for line in out.splitlines():
        pid, _, command = line.partition(" ")
        if not pid.isdigit() or int(pid) in mine or _parent(int(pid)) == os.getpid():
            continue
        found.append(f"{pid} {command[:160]}")
    return found


def _parent(pid):
    """The parent of a process (None where /proc does not say)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def available_mb():
    """The machine's available memory, in MB (inf where /proc/meminfo does not say)."""
    try:
        with open("/proc/meminfo") as f:
            fields = dict(line.split(":", 1) for line in f)
        return int(fields["MemAvailable"].split()[0]) / 1024
    except (OSError, KeyError, ValueError):
        return float("inf")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--model",
        default="logistic",
        choices=list(CASES),
        help="the case: its model, data and Bayesian estimator (default: logistic)",
    )
    p.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 10_000_000])
    p.add_argument(
        "--methods",
        nargs="+",
        default=list(ALTERNATIVES + LIBRARY),
        choices=list(ALTERNATIVES + LIBRARY),
        help="the methods besides the reference (default: all)",
    )
    p.add_argument("--budget", type=float, default=30.0, help="minutes per method and size")
    p.add_argument(
        "--hmcecs-subsample",
        type=int,
        default=HMCECS_SUBSAMPLE,
        help=f"rows of each HMCECS subsample (default {HMCECS_SUBSAMPLE})",
    )
    p.add_argument("--quick", action="store_true", help="N = 10^4, shorter runs")
    p.add_argument("--out", help="write the results as JSON here (and a .txt table beside)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--N", type=int, help=argparse.SUPPRESS)
    p.add_argument("--cfg", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        return child(args)
    if args.quick:
        args.sizes = [10_000]
    cfg = {"warmup": 500, "draws": 1000, "svi_steps": SVI_STEPS, "advi_steps": 10_000}
    cfg["hmcecs_subsample"] = args.hmcecs_subsample
    if args.quick:
        cfg.update(warmup=250, draws=500, svi_steps=2000, advi_steps=2000)
    budget = 60 * args.budget
    workdir = tempfile.mkdtemp(prefix="bench_alternatives-")
    rows, floors, last = [], {}, {}  # last: method -> (N, seconds) of its latest run
    load_start = os.getloadavg()
    case = CASES[args.model]
    priors = {}
    try:
        for N in sorted(args.sizes):
            prior, y_mean, y_sd = library_prior(N, case)
            np.save(f"{workdir}/prior.npy", prior)
            priors[N] = {"prior_scale": prior.tolist(), "y_mean": y_mean, "y_sd": y_sd}
            case_cfg = {}
            if args.model != "logistic":
                case_cfg = {"case": args.model, "y_mean": y_mean, "y_sd": y_sd}
                case_cfg["extra_prior"] = extra_priors(prior, y_mean, y_sd, case)
                priors[N]["extra_prior"] = case_cfg["extra_prior"]
            ref = None
            # full-data MALA: the reference where NUTS does not run, else a row that shows
            # what the library's sampler at its default length gets on all rows
            plan = list(REFERENCES) + [m for m in LIBRARY if m in args.methods]
            plan += [m for m in ALTERNATIVES if m in args.methods]
            for method in plan:
                if method == "uniform":
                    omp = [r for r in rows if r["N"] == N and r["method"] == "omp"]
                    if not omp or omp[0]["status"] != "ok":
                        continue
                    cfg["n_points"] = omp[0]["settings"]["size"]
                skip = method in last and skip_reason(last[method], N, budget, available_mb())
                if skip:
                    rows.append({"method": method, "N": N, "status": f"not run: {skip}"})
                    print(f"{method} N={N}: {rows[-1]['status']}", flush=True)
                    continue
                print(f"running {method} N={N} ...", flush=True)
                others = other_benchmarks()
                if others:
                    print(f"  other benchmarks running: {others}", flush=True)
                draws_file = f"{workdir}/{method}_{N}.npy"
                run_cfg = cfg | {"prior": f"{workdir}/prior.npy", "draws_file": draws_file}
                res = spawn(method, N, run_cfg | case_cfg, budget, workdir)
                res["other_benchmarks"] = others
                rows.append(res)
                if res["status"] != "ok":
                    print(f"  {res['status']}", flush=True)
                    continue
                last[method] = (N, res["process_seconds"], res["peak_mb"])
                draws = np.load(draws_file)
                if ref is None and method in REFERENCES:
                    ref = draws
                    floors[N] = dict(zip(("halves", "mcse"), mc_floor(ref)))
                    half = len(ref) // 2  # the KL of two halves, for scale
                    floors[N]["kl_halves"] = gaussian_kl(
                        *moment_fit(ref[:half]), *moment_fit(ref[half:])
                    )
                    res["floor"] = floors[N]
                elif ref is not None:
                    res["accuracy"] = accuracy(draws, ref)
                    res["reaches"] = reaches(res["accuracy"], floors[N]["halves"])
                print("  " + json.dumps(res), flush=True)
                save(rows, args, cfg, load_start, priors)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    text = save(rows, args, cfg, load_start, priors)
    print(text)


def save(rows, args, cfg, load_start, priors=None):
    """The table of the rows so far; written with the JSON if ``--out`` (after every method,
    so that a run stopped at a large size keeps what it measured)."""
    meta = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average_at_start": load_start,
        "load_average_at_end": os.getloadavg(),
        "budget_minutes": args.budget,
        "settings": cfg,
    }
    if args.model != "logistic":
        case = CASES[args.model]
        meta["model"] = args.model
        meta["data"] = {"n_features": case.n_features, "truth": case.truth}
        meta["priors"] = priors
    meta["speedups"] = speedups(rows)
    text = table(rows, meta)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
        with open(args.out.removesuffix(".json") + ".txt", "w") as f:
            f.write(text + "\n")
    return text


def speedups(rows):
    """Each pipeline's speed-up against full-data NUTS, per size.

    ``nuts_chain_s``: NUTS's warm seconds (its second chain, compiled); ``nuts_chains_s``: its
    two chains (cold + warm: the reference's draws). Where NUTS did not run at a size, both
    are its seconds at the largest smaller size where it ran, scaled linearly in N
    (``basis`` says so). ``speedup``: ``nuts_chain_s`` over the pipeline's warm seconds;
    ``speedup_chains``: ``nuts_chains_s`` over them; ``reaches``: the pipeline's
    :func:`reaches` against the size's reference (``reference``)."""
    out = []
    ok = [r for r in rows if r["status"] == "ok"]
    for N in sorted({r["N"] for r in rows}):
        nuts = next((r for r in ok if r["method"] == "nuts" and r["N"] == N), None)
        if nuts is not None:
            scale, basis = 1.0, "measured"
        else:
            before = [r for r in ok if r["method"] == "nuts" and r["N"] < N]
            if not before:
                continue
            nuts = max(before, key=lambda r: r["N"])
            scale = N / nuts["N"]
            basis = f"projected: NUTS's seconds at N={nuts['N']} x {scale:g}"
        if nuts["seconds_warm"] is None:
            continue
        chain = nuts["seconds_warm"] * scale
        chains = (nuts["seconds_cold"] + nuts["seconds_warm"]) * scale
        reference = next((r["method"] for r in ok if r["N"] == N and "floor" in r), None)
        for method in LIBRARY:
            r = next((r for r in ok if r["method"] == method and r["N"] == N), None)
            if r is None or not r.get("seconds_warm"):
                continue
            out.append(
                {
                    "N": N,
                    "method": method,
                    "basis": basis,
                    "reference": reference,
                    "nuts_chain_s": chain,
                    "nuts_chains_s": chains,
                    "seconds_warm": r["seconds_warm"],
                    "seconds_cold": r["seconds_cold"],
                    "speedup": chain / r["seconds_warm"],
                    "speedup_chains": chains / r["seconds_warm"],
                    "reaches": r.get("reaches"),
                }
            )
    return out


def _s(x):
    return "-" if x is None else f"{x:.1f}"


def table(rows, meta):
    lines = [
        f"{'N':>9} {'method':<20} {'cold s':>8} {'warm s':>8} {'mean|z|':>8} "
        f"{'sd ratio med [min, max]':>24} {'KL fwd':>9} {'peak MB':>8} {'load':>5}  reaches"
    ]
    for r in rows:
        head = f"{r['N']:>9} {LABELS[r['method']]:<20} "
        if r["status"] != "ok":
            lines.append(head + r["status"])
            continue
        busy = " (*)" if r.get("other_benchmarks") else ""
        times = f"{_s(r['seconds_cold']):>8} {_s(r['seconds_warm']):>8} "
        if "floor" in r:
            f = r["floor"]
            lines.append(
                head + times + f"{format(f['halves'], '.3f'):>8} "
                f"{'(MCSE ' + format(f['mcse'], '.3f') + ')':>24} "
                f"{format(f['kl_halves'], '.3g'):>9} "
                f"{r['peak_mb']:>8.0f} {r['load_start']:>5.1f}  reference{busy}"
            )
            continue
        a = r.get("accuracy")
        if a is None:
            lines.append(head + times + "no reference")
            continue
        sd = a["sd_ratio"]
        lines.append(
            head + times + f"{a['mean_abs_z']:>8.3f} "
            f"{f'{np.median(sd):.2f} [{min(sd):.2f}, {max(sd):.2f}]':>24} "
            f"{a['kl_forward']:>9.3g} {r['peak_mb']:>8.0f} {r['load_start']:>5.1f}  "
            f"{'yes' if r['reaches'] else 'no'}{busy}"
        )
    lines.append("")
    for N in sorted({r["N"] for r in rows}):
        at = [r for r in rows if r["N"] == N and r["status"] == "ok" and r.get("accuracy")]
        mine = next((r for r in at if r["method"] == "omp"), None)
        others = [r for r in at if r["method"] in ALTERNATIVES and r["reaches"]]
        if mine is None:
            continue
        if not others:
            lines.append(f"N={N}: no alternative reached the reference's accuracy")
            continue
        for key in ("seconds_warm", "seconds_cold"):
            best = min(others, key=lambda r: r[key])
            lines.append(
                f"N={N}, {key.split('_')[1]}: the fastest alternative that reaches the "
                f"reference's accuracy, {LABELS[best['method']]}, takes {best[key]:.1f} s, "
                f"{best[key] / mine[key]:.1f}x the default pipeline's {mine[key]:.1f} s "
                f"(which {'reaches' if mine['reaches'] else 'misses'} it)"
            )
    for sp in meta.get("speedups", []):
        lines.append(
            f"N={sp['N']}, {LABELS[sp['method']]}: {sp['seconds_warm']:.2f} s warm "
            f"({'reaches' if sp['reaches'] else 'misses'} the reference's accuracy, "
            f"reference {sp['reference']}); full-data NUTS {sp['nuts_chain_s']:.0f} s a chain "
            f"warm, {sp['nuts_chains_s']:.0f} s its two chains ({sp['basis']}): "
            f"{sp['speedup']:.0f}x, {sp['speedup_chains']:.0f}x"
        )
    busy = [r for r in rows if r.get("other_benchmarks")]
    if busy:
        lines.append("(*) other benchmark processes running when the method's process started:")
        for r in busy:
            lines.append(f"  {r['N']} {r['method']}: {'; '.join(r['other_benchmarks'])}")
    lines.append(
        "reference rows: mean |z| and KL between its two halves (the floor), the pooled draws' "
        "own expected |z| (sqrt(2/pi) MCSE/sd) in brackets; reaches: mean |z| <= 2 x the floor "
        "and every sd ratio in [0.85, 1.15]; load: the 1-minute load average when the method's "
        "process started"
    )
    lines.append(
        f"settings: {json.dumps(meta['settings'])}; budget {meta['budget_minutes']:.0f} min; "
        f"load average {meta['load_average_at_start'][0]:.2f} at the start, "
        f"{meta['load_average_at_end'][0]:.2f} at the end"
    )
    for r in rows:
        if r["status"] == "ok":
            lines.append(f"  {r['N']} {r['method']}: {json.dumps(r['settings'])}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
