"""The multilevel pipeline: a coreset of grouped rows, then the multilevel sampler, against the
same sampler on all rows and against NumPyro NUTS on all rows.

For each case (grouped data, a random intercept per group) three methods:

* ``pipeline``, for each seed ``s``: ``OMPCoreset(model=Multilevel(base), random_state=s)
  .fit_resample(X, y, groups=g)``, then ``BayesianMultilevelRegression(Multilevel(base),
  prior_scale=cs.prior_scale_, random_state=s).fit(X_m, y_m, **p)``: ``groups=p["groups"]``,
  ``sample_weight=p["sample_weight"]``, and ``group_weight=p["group_weight"]`` where the
  coreset is one of groups; it then leaves some groups out, whose effects
  ``est.recover_groups(X[left], y[left], g[left])`` draws from their rows
  (``left = cs.left_out_indices_``), as the library's pipeline does, so every group's effect
  is compared; every other setting at its default (``n_points='auto'``; 4 chains of 500 +
  1000 HMC steps). Timed: the coreset's seconds and the sampler's (the recovery included).
* ``full``: ``BayesianMultilevelRegression(Multilevel(base), random_state=1000).fit(X, y,
  groups=g)`` on all rows, the pipeline's reference; a second fit (``random_state=1001``) gives
  the Monte Carlo floor, compared with the first as the pipeline is.
* ``nuts``: NumPyro NUTS on all rows with the full fit's prior (``prior_scale_``, the group sd's
  half-Student-t(3) scale ``laplace_.posterior.tau_scale``, and for the Gaussian base the normal
  prior ``laplace_.posterior.base.extra_prior`` of ``log noise_scale``), written here, the
  effects non-centred (``v_g ~ N(0, 1)``, ``u_g = group_sd v_g``), 4 chains run in turn
  (``chain_method='sequential'``), 500 warm-up + 1000 draws each. Its compilation is estimated
  by a separate run of 1 warm-up step and 1 draw (each ``MCMC`` compiles its own code; after
  another such run, which pays JAX's start-up in the process's first case), and "run" is the
  seconds beyond it. Before it, a pilot (1 chain, 200 + 200) is timed; when the
  pilot's run time, scaled linearly to 4 chains x 1500 iterations, exceeds ``--nuts-budget``,
  the 4 chains are not run: the time is the projection ("projected") and the comparison with
  ``full`` uses the pilot's draws (1 chain of 200, so a noisy one). ``--nuts-effects centred``
  samples ``u_g`` directly instead (the non-centred form mixes slowly where each group has
  many rows: at 10^5 rows in 100 groups its R-hat was 1.08-1.12 after 4 x (250 + 500)).

The parameters compared: the coefficients, the intercept, the log of the extra parameter
(Gaussian ``noise_scale``), the log of the group sd (compared on the log scale, where every
sampler here samples it) and every group's effect ``u_g``. For a pair of fits, per parameter,
``|z| = |mean - mean_ref| / sd_ref`` and the ratio ``sd / sd_ref`` (:func:`compare`): mean,
median and max |z| over the parameters (and max |z| of the shared parameters alone, and of the
group effects alone), and the smallest and largest sd ratio. The pipeline against ``full``
(per seed; the worst seed), the floor (``full`` 1001 against ``full`` 1000), and ``full``
against ``nuts`` (NUTS the reference).

Goals printed per case: the pipeline's mean |z| <= 0.1, max |z| <= 0.5 and sd ratios in
0.85-1.15 on every seed; ``full`` against NUTS median |z| <= 0.1; for
``synthetic_1e6_logistic`` also the pipeline (its slowest seed, coreset + sampler) at least
20x faster than NUTS's run (compilation excluded) and a coreset of at most 10% of the rows.

The cases (``--cases``; ``--quick`` sizes in brackets):

* ``synthetic_1e6_logistic``: 10^6 rows (10^5) in 1000 groups (100), uneven: each row's group
  drawn with probabilities proportional to ``exp(0.6 z_g)``, ``z_g ~ N(0, 1)`` (about 200 to
  3000 rows a group at either size); D = 4 standard normal features, coefficients
  ``(0.8, -0.5, 0.3, 0)``, intercept -0.3, group effects ``N(0, 0.8^2)``; logistic.
* ``synthetic_small_groups``: 10^5 rows (10^4) in 20 000 groups (2000) of 5 rows, the same
  features, coefficients and group sd; logistic.
* the shared grouped sets (``--data-dir``; features as shipped, whole also under ``--quick``):
  ``mathachieve_school`` (Gaussian, 7185 rows, 160 schools), ``chem97_school`` (Gaussian,
  31 022 rows, 2410 schools of 1 to 188 rows), ``contraception_district`` (logistic, 1934
  rows, 60 districts), ``verbagg_person`` (logistic, 7584 rows, 316 persons).

Before each case's timed fits, one small fit of each kind (coreset and sampler, 20 draws) on
a subset compiles the model's numba kernels. ``--quick``: the smaller synthetic sets, 2 seeds,
NUTS 250 + 500 per chain (its pilot 100 + 100), 20 to 30 minutes on a loaded 2-core
machine. The JSON (and the table beside it) is written after every case, so that a long run
keeps what it measured.

Usage (from the repository root; ``pip install -e ".[bench]"`` for NumPyro)::

    python -m benchmarks.bench_multilevel --out benchmarks/results/bench_multilevel.json
    python -m benchmarks.bench_multilevel --quick \
        --out benchmarks/results/bench_multilevel_quick.json
    python -m benchmarks.bench_multilevel --cases mathachieve_school --methods pipeline full
    python -m benchmarks.bench_multilevel --table-from benchmarks/results/bench_multilevel.json
"""

import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys
import time
import traceback
import warnings
from collections import Counter

import numpy as np

import skcoreset
from skcoreset import BayesianMultilevelRegression, OMPCoreset
from skcoreset.models import Multilevel
from skcoreset.models._multilevel_likelihood import extra_names

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: the goals, on every seed of the pipeline
MEAN_Z, MAX_Z, SD_RATIO = 0.1, 0.5, (0.85, 1.15)
#: full against NUTS: the median |z| over the parameters
NUTS_MEDIAN_Z = 0.1
#: synthetic_1e6_logistic: the pipeline's speed-up against NUTS, and the coreset's share of rows
SPEEDUP, MAX_FRACTION = 20.0, 0.10
SPEED_CASE = "synthetic_1e6_logistic"

REF_SEED, FLOOR_SEED, NUTS_SEED = 1000, 1001, 2000
NUTS = {"chains": 4, "warmup": 500, "draws": 1000, "pilot_warmup": 200, "pilot_draws": 200}
NUTS_QUICK = {"chains": 4, "warmup": 250, "draws": 500, "pilot_warmup": 100, "pilot_draws": 100}
#: NUTS's R-hat above this: its draws are not a reference to trust (said in the goals)
NUTS_RHAT = 1.01

# -- the data ---------------------------------------------------------------------------------
TRUE_COEF = (0.8, -0.5, 0.3, 0.0)
TRUE_INTERCEPT = -0.3
TRUE_TAU = 0.8
SIZE_SPREAD = 0.6  # group probabilities proportional to exp(SIZE_SPREAD z), z ~ N(0, 1)


def _logistic_rows(rng, g, n_groups):
    """Standard normal features and Bernoulli targets of the synthetic model for the rows'
    groups ``g``; the true effects with them."""
    X = rng.standard_normal((g.shape[0], len(TRUE_COEF)))
    u = TRUE_TAU * rng.standard_normal(n_groups)
    eta = X @ np.asarray(TRUE_COEF) + TRUE_INTERCEPT + u[g]
    y = (rng.random(g.shape[0]) < 1.0 / (1.0 + np.exp(-eta))).astype(np.float64)
    return X, y, u


def _synthetic_uneven(data_dir, quick):
    N, G = (100_000, 100) if quick else (1_000_000, 1000)
    rng = np.random.default_rng(1_000_000)
    p = np.exp(SIZE_SPREAD * rng.standard_normal(G))
    g = rng.choice(G, N, p=p / p.sum())
    X, y, u = _logistic_rows(rng, g, G)
    names = [f"x{j}" for j in range(X.shape[1])]
    truth = {"coef": list(TRUE_COEF), "intercept": TRUE_INTERCEPT, "group_sd": TRUE_TAU}
    return X, y, g, names, truth


def _synthetic_small(data_dir, quick):
    N, G = (10_000, 2000) if quick else (100_000, 20_000)
    rng = np.random.default_rng(100_000)
    g = rng.permutation(np.repeat(np.arange(G), N // G))
    X, y, u = _logistic_rows(rng, g, G)
    names = [f"x{j}" for j in range(X.shape[1])]
    truth = {"coef": list(TRUE_COEF), "intercept": TRUE_INTERCEPT, "group_sd": TRUE_TAU}
    return X, y, g, names, truth


def _shared(file):
    def load(data_dir, quick):
        data = np.load(pathlib.Path(data_dir) / file, allow_pickle=False)
        X = np.asarray(data["X"], dtype=np.float64)
        y = np.asarray(data["y"], dtype=np.float64)
        g = np.asarray(data["groups"])
        return X, y, g, [str(n) for n in data["feature_names"]], None

    return load


#: case -> (base model, loader(data_dir, quick) -> (X, y, groups, feature names, truth), what)
CASES = {
    "synthetic_1e6_logistic": (
        "logistic",
        _synthetic_uneven,
        "synthetic, 10^6 rows (quick 10^5), 1000 uneven groups (quick 100), tau 0.8",
    ),
    "synthetic_small_groups": (
        "logistic",
        _synthetic_small,
        "synthetic, 10^5 rows (quick 10^4), groups of 5, tau 0.8",
    ),
    "mathachieve_school": ("gaussian", _shared("mathachieve_school.npz"), "MathAchieve"),
    "chem97_school": ("gaussian", _shared("chem97_school.npz"), "Chem97"),
    "contraception_district": (
        "logistic",
        _shared("contraception_district.npz"),
        "Contraception",
    ),
    "verbagg_person": ("logistic", _shared("verbagg_person.npz"), "VerbAgg"),
}
METHODS = ("pipeline", "full", "nuts")


# -- the posterior's moments and their comparison ---------------------------------------------
def _moments(x, axes=(0, 1)):
    """Mean and sd (ddof 1) of draws over their chain and draw axes."""
    x = np.asarray(x, dtype=np.float64)
    return x.mean(axis=axes), x.std(axis=axes, ddof=1)


def param_names(feature_names, extra, labels):
    """The compared parameters, in the order of :func:`estimator_moments`."""
    names = [f"coef[{n}]" for n in feature_names] + ["intercept"]
    names += [f"log {extra}"] if extra else []
    names += ["log group_sd"]
    return names + [f"u[{label}]" for label in labels]


def estimator_moments(est, labels):
    """``{"mean", "sd"}`` (P,) of a fitted ``BayesianMultilevelRegression``'s draws, the groups in
    the order of ``labels`` (NaN for a group the fit did not see): coefficients, intercept,
    log extra parameters (the Student-t's log scale, then log df), log group sd, then each
    group's effect. Random intercepts only."""
    post = est.laplace_.posterior
    if post.q != 1:
        raise ValueError("bench_multilevel compares random-intercept models only (q = 1).")
    parts = [
        _moments(est.coef_samples_, (0, 1)),
        _moments(est.intercept_samples_[..., None], (0, 1)),
    ]
    for name in extra_names(post.base):
        extra = getattr(est, f"{name}_samples_")
        parts.append(_moments(np.log(extra)[..., None], (0, 1)))
    parts.append(_moments(np.log(est.group_sd_samples_), (0, 1)))
    m_u, s_u = _moments(est.group_effects_samples_[..., 0], (0, 1))
    pos = np.searchsorted(est.groups_, labels).clip(0, len(est.groups_) - 1)
    seen = est.groups_[pos] == labels
    parts.append((np.where(seen, m_u[pos], np.nan), np.where(seen, s_u[pos], np.nan)))
    # a group the fit did not see: the effect it predicts for it, a new group's N(0, tau^2)
    # per draw (mean 0, sd the root of the mean tau^2)
    new_sd = float(np.sqrt(np.mean(est.group_sd_samples_[..., 0] ** 2)))
    return {
        "mean": np.concatenate([p[0] for p in parts]),
        "sd": np.concatenate([p[1] for p in parts]),
        "unseen_mean": 0.0,
        "unseen_sd": new_sd,
    }


def with_unseen(moments):
    """The moments with each unseen group's effect (NaN) replaced by the new group's that the
    fit predicts for it."""
    mean, sd = moments["mean"].copy(), moments["sd"].copy()
    missing = ~np.isfinite(mean)
    mean[missing], sd[missing] = moments["unseen_mean"], moments["unseen_sd"]
    return {"mean": mean, "sd": sd}


def compare(fit, ref, names, n_shared):
    """``fit``'s moments against ``ref``'s (each ``{"mean", "sd"}``): per parameter ``|z| =
    |mean - mean_ref| / sd_ref`` and ``sd / sd_ref``; their summaries over the parameters (a
    parameter either fit lacks, NaN, is left out and counted). ``n_shared``: the parameters
    before the group effects."""
    z = np.abs(fit["mean"] - ref["mean"]) / ref["sd"]
    ratio = fit["sd"] / ref["sd"]
    ok = np.isfinite(z) & np.isfinite(ratio)
    zs, rs = np.where(ok, z, np.nan), np.where(ok, ratio, np.nan)
    worst = int(np.nanargmax(zs))
    worst_sd = int(np.nanargmax(np.abs(np.log(rs))))

    def summary(x, fn):
        return float(fn(x)) if np.any(np.isfinite(x)) else None

    shared, effects = slice(0, n_shared), slice(n_shared, None)
    return {
        "n_params": int(ok.sum()),
        "n_missing": int((~ok).sum()),
        "mean_abs_z": float(np.nanmean(zs)),
        "median_abs_z": float(np.nanmedian(zs)),
        "max_abs_z": float(np.nanmax(zs)),
        "worst_param": names[worst],
        "sd_ratio_min": float(np.nanmin(rs)),
        "sd_ratio_max": float(np.nanmax(rs)),
        "worst_sd_param": names[worst_sd],
        "shared_max_abs_z": summary(zs[shared], np.nanmax),
        "shared_sd_ratio": [summary(rs[shared], np.nanmin), summary(rs[shared], np.nanmax)],
        "effects_mean_abs_z": summary(zs[effects], np.nanmean),
        "effects_max_abs_z": summary(zs[effects], np.nanmax),
    }


def meets_goals(cmp):
    return (
        cmp["mean_abs_z"] <= MEAN_Z
        and cmp["max_abs_z"] <= MAX_Z
        and SD_RATIO[0] <= cmp["sd_ratio_min"]
        and cmp["sd_ratio_max"] <= SD_RATIO[1]
    )


# -- the library's fits ------------------------------------------------------------------------
def recorded(fn, messages=None):
    """``(result, seconds, warning names)`` of ``fn()``, every warning recorded (their texts
    appended to ``messages``: category, message, where)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = time.perf_counter()
        out = fn()
        seconds = time.perf_counter() - t
    if messages is not None:
        for w in caught:
            text = f"{w.category.__name__}: {str(w.message)[:300]} ({w.filename}:{w.lineno})"
            if text not in messages:
                messages.append(text)
    return out, seconds, sorted({w.category.__name__ for w in caught})


def diagnostics_of(est):
    return {
        "rhat_max": float(np.nanmax(est.rhat_)),
        "ess_min": float(np.nanmin(est.ess_)),
        "step_size": np.asarray(est.step_size_).tolist(),
        "acceptance_rate": np.asarray(est.acceptance_rate_).tolist(),
    }


def priors_of(est):
    """The prior a fit sampled: coefficients' sds, the group sd's scale, the extra's prior."""
    post = est.laplace_.posterior
    return {
        "prior_scale": np.asarray(est.prior_scale_, dtype=np.float64).tolist(),
        "tau_scale": float(post.tau_scale),
        "extra_name": ", ".join(extra_names(post.base)) or None,
        "extra_prior": [float(v) for pair in post.extra_priors for v in pair] or None,
    }


def prior_differences(got, ref):
    """The largest relative difference of each part of two :func:`priors_of`, None where they
    agree to 1e-9."""
    out = {}
    for key in ("prior_scale", "tau_scale", "extra_prior"):
        a, b = got[key], ref[key]
        if a is None and b is None:
            continue
        if a is None or b is None:
            out[key] = "one fit has it, the other not"
            continue
        a, b = np.atleast_1d(a), np.atleast_1d(b)
        rel = float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))
        if rel > 1e-9:
            out[key] = {"pipeline": a.tolist(), "full": b.tolist(), "max_rel_diff": rel}
    return out


def warm_up(base, X, y, g):
    """A small coreset and sampler fit, so that the timed fits do not pay numba's compilation of
    the model's kernels."""
    n = min(3000, X.shape[0])
    rows = np.random.default_rng(1).choice(X.shape[0], n, replace=False)
    spec = Multilevel(base)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            cs = OMPCoreset(model=spec, random_state=0)
            Xm, ym, p = cs.fit_resample(X[rows], y[rows], groups=g[rows])
            BayesianMultilevelRegression(
                spec, prior_scale=cs.prior_scale_, n_samples=20, n_warmup=20, random_state=0
            ).fit(Xm, ym, groups=p["groups"], sample_weight=p["sample_weight"])
            BayesianMultilevelRegression(spec, n_samples=20, n_warmup=20, random_state=0).fit(
                X[rows], y[rows], groups=g[rows]
            )
        except Exception:  # noqa: BLE001, S110 - the timed fits will record it
            pass


def run_full(base, X, y, g, labels, seed):
    messages = []
    est, seconds, warned = recorded(
        lambda: BayesianMultilevelRegression(Multilevel(base), random_state=seed).fit(
            X, y, groups=g
        ),
        messages,
    )
    rec = {"random_state": seed, "seconds": seconds, "warnings": warned}
    rec["warning_messages"] = messages
    rec.update(diagnostics_of(est), priors=priors_of(est))
    rec["group_sd_mean"] = est.group_sd_.tolist()
    return rec, estimator_moments(est, labels), est


def run_pipeline(base, X, y, g, labels, seed):
    spec = Multilevel(base)
    cs = OMPCoreset(model=spec, random_state=seed)
    messages = []
    (Xm, ym, p), t_cs, w_cs = recorded(lambda: cs.fit_resample(X, y, groups=g), messages)
    est = BayesianMultilevelRegression(spec, prior_scale=cs.prior_scale_, random_state=seed)
    # every fit parameter the coreset hands on: groups and sample_weight, and group_weight
    # where it is a coreset of groups (some groups left out, the others weighted)
    _, t_fit, w_fit = recorded(lambda: est.fit(Xm, ym, **p), messages)
    # a coreset of groups: the left-out groups' effects from their rows, as the library's
    # pipeline recovers them (``recover_groups``), timed with the sampler
    left = getattr(cs, "left_out_indices_", np.empty(0, dtype=int))
    t_recover = 0.0
    if len(left):
        _, t_recover, _ = recorded(lambda: est.recover_groups(X[left], y[left], g[left]), messages)
        t_fit += t_recover
    group_weight = p.get("group_weight")
    rec = {
        "seed": seed,
        "coreset_seconds": t_cs,
        "sampler_seconds": t_fit,
        "recover_seconds": t_recover,
        "seconds": t_cs + t_fit,
        "n_points": int(len(ym)),
        "fraction": len(ym) / X.shape[0],
        "fit_params": sorted(p),
        "n_groups_in_coreset": int(np.unique(p["groups"]).size),
        "n_groups_weighted": 0
        if group_weight is None
        else int(np.unique(np.asarray(p["groups"])[np.asarray(group_weight) != 1]).size),
        "n_groups_marginal": int(getattr(cs, "n_groups_marginal_", 0)),
        "groups_kept_whole": int(getattr(cs, "n_groups_kept_whole_", -1)),
        "hilbert_error": float(getattr(cs, "hilbert_error_", np.nan)),
        "weight_sum": float(np.sum(p["sample_weight"])),
        "coreset_warnings": w_cs,
        "sampler_warnings": w_fit,
        "warning_messages": messages,
        "coreset_prior_scale": np.asarray(cs.prior_scale_, dtype=np.float64).tolist(),
    }
    rec.update(diagnostics_of(est), priors=priors_of(est))
    rec["group_sd_mean"] = est.group_sd_.tolist()
    return rec, estimator_moments(est, labels)


# -- NUTS --------------------------------------------------------------------------------------
def _jax():
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    return jax


def numpyro_model(base, n_groups, prior_scale, tau_scale, extra_prior, centred=False):
    """The multilevel posterior of ``BayesianMultilevelRegression`` as a NumPyro model of
    ``(X, g, y)``, the effects non-centred (``centred``: sampled as ``u_g`` directly).

    ``coef_j ~ N(0, prior_scale_j)``, ``intercept ~ N(0, prior_scale_D)``, ``group_sd ~
    HalfStudentT(3, tau_scale)`` (a folded Student-t; NUTS samples its log, the Jacobian
    included, as the library does), ``v_g ~ N(0, 1)``, ``u_g = group_sd v_g``; Gaussian base:
    ``log noise_scale ~ N(extra_prior)`` (sampled on the log scale directly, as the library's
    prior is on it); ``eta = X coef + intercept + u_g(i)``."""
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    scale = jnp.asarray(prior_scale)

    def model(X, g, y):
        coef = numpyro.sample("coef", dist.Normal(0.0, scale[:-1]).to_event(1))
        intercept = numpyro.sample("intercept", dist.Normal(0.0, scale[-1]))
        group_sd = numpyro.sample(
            "group_sd", dist.FoldedDistribution(dist.StudentT(3.0, 0.0, tau_scale))
        )
        if centred:
            u = numpyro.sample("u", dist.Normal(0.0, group_sd).expand([n_groups]).to_event(1))
        else:
            v = numpyro.sample("v", dist.Normal(0.0, 1.0).expand([n_groups]).to_event(1))
            u = group_sd * v
        eta = X @ coef + intercept + u[g]
        if base == "logistic":
            likelihood = dist.Bernoulli(logits=eta)
        elif base == "gaussian":
            log_sigma = numpyro.sample("log_extra", dist.Normal(*extra_prior))
            likelihood = dist.Normal(eta, jnp.exp(log_sigma))
        elif base == "poisson":
            likelihood = dist.Poisson(jnp.exp(eta))
        else:
            raise ValueError(f"no NumPyro likelihood written for the {base!r} base")
        with numpyro.plate("rows", X.shape[0]):
            numpyro.sample("y", likelihood, obs=y)

    return model


def _nuts_run(jax, model, args, chains, warmup, draws, seed):
    """``(samples grouped by chain, seconds, {mean leapfrog steps per iteration, divergent
    draws})`` of one ``MCMC`` (its compilation included), the draws waited for."""
    from numpyro.infer import MCMC, NUTS

    mcmc = MCMC(
        NUTS(model),
        num_warmup=warmup,
        num_samples=draws,
        num_chains=chains,
        chain_method="sequential",
        progress_bar=False,
    )
    t = time.perf_counter()
    mcmc.run(jax.random.PRNGKey(seed), *args, extra_fields=("num_steps", "diverging"))
    samples = jax.block_until_ready(mcmc.get_samples(group_by_chain=True))
    seconds = time.perf_counter() - t
    fields = mcmc.get_extra_fields()
    stats = {
        "mean_steps": float(np.mean(np.asarray(fields["num_steps"]))),
        "divergences": int(np.sum(np.asarray(fields["diverging"]))),
    }
    return {k: np.asarray(v) for k, v in samples.items()}, seconds, stats


def nuts_moments(samples, extra):
    """The moments of NUTS's draws in :func:`estimator_moments`'s layout, and its diagnostics
    (split R-hat, bulk ESS) over the same parameters."""
    from numpyro.diagnostics import effective_sample_size, split_gelman_rubin

    tau = samples["group_sd"]
    blocks = [samples["coef"], samples["intercept"][..., None]]
    if extra:
        blocks.append(samples["log_extra"][..., None])
    u = samples["u"] if "u" in samples else tau[..., None] * samples["v"]
    blocks += [np.log(tau)[..., None], u]
    parts = [_moments(b, (0, 1)) for b in blocks]
    rhat = max(float(np.nanmax(split_gelman_rubin(b))) for b in blocks)
    ess = min(float(np.nanmin(effective_sample_size(b))) for b in blocks)
    moments = {
        "mean": np.concatenate([p[0] for p in parts]),
        "sd": np.concatenate([p[1] for p in parts]),
    }
    return moments, {"rhat_max": rhat, "ess_min": ess}


def run_nuts(base, X, y, codes, n_groups, priors, cfg, budget):
    """NUTS on all rows with ``priors`` (:func:`priors_of` of the full fit): the compilation
    estimate, the pilot, then the chains unless their projected time exceeds ``budget``."""
    jax = _jax()
    import jax.numpy as jnp

    model = numpyro_model(
        base,
        n_groups,
        priors["prior_scale"],
        priors["tau_scale"],
        priors["extra_prior"],
        centred=cfg["effects"] == "centred",
    )
    args = (jnp.asarray(X), jnp.asarray(codes), jnp.asarray(y))
    extra = priors["extra_name"]
    # the first MCMC of a process also pays JAX's start (about 10 s here): recorded, not
    # counted; the second, of 1 + 1 iterations, is the estimate of an MCMC's compilation
    _, first_s, _ = _nuts_run(jax, model, args, 1, 1, 1, NUTS_SEED)
    _, compile_s, _ = _nuts_run(jax, model, args, 1, 1, 1, NUTS_SEED)
    pw, pd = cfg["pilot_warmup"], cfg["pilot_draws"]
    pilot, pilot_s, pilot_stats = _nuts_run(jax, model, args, 1, pw, pd, NUTS_SEED + 1)
    pilot_run = max(pilot_s - compile_s, 0.0)
    iterations = cfg["chains"] * (cfg["warmup"] + cfg["draws"])
    projected_run = pilot_run * iterations / (pw + pd)
    rec = {
        "settings": dict(cfg),
        "first_call_seconds": first_s,
        "compile_seconds": compile_s,
        "pilot_seconds": pilot_s,
        "pilot_run_seconds": pilot_run,
        "pilot_mean_steps": pilot_stats["mean_steps"],
        "pilot_divergences": pilot_stats["divergences"],
        "projected_run_seconds": projected_run,
        "budget_seconds": budget,
    }
    if compile_s + projected_run > budget:
        rec.update(
            basis="projected",
            run_seconds=projected_run,
            seconds=compile_s + projected_run,
            draws_compared=f"pilot: 1 chain, {pw} + {pd}",
        )
        samples = pilot
    else:
        samples, seconds, stats = _nuts_run(
            jax, model, args, cfg["chains"], cfg["warmup"], cfg["draws"], NUTS_SEED + 2
        )
        rec.update(
            basis="measured",
            seconds=seconds,
            run_seconds=max(seconds - compile_s, 0.0),
            mean_steps=stats["mean_steps"],
            divergences=stats["divergences"],
            draws_compared=f"{cfg['chains']} chains, {cfg['warmup']} + {cfg['draws']}",
        )
    moments, diag = nuts_moments(samples, extra)
    rec.update(diag)
    rec["group_sd_mean"] = float(samples["group_sd"].mean())
    return rec, moments


# -- a case ------------------------------------------------------------------------------------
def run_case(name, args, seeds, nuts_cfg):
    base, loader, what = CASES[name]
    X, y, g, feature_names, truth = loader(args.data_dir, args.quick)
    labels, codes = np.unique(g, return_inverse=True)
    sizes = np.bincount(codes)
    info = {
        "case": name,
        "base": base,
        "data": what,
        "N": int(X.shape[0]),
        "D": int(X.shape[1]),
        "G": int(labels.size),
        "group_rows": [int(sizes.min()), float(np.median(sizes)), int(sizes.max())],
        "truth": truth,
        "feature_names": feature_names,
    }
    print(
        f"{name} ({base}, {what}): N = {X.shape[0]}, D = {X.shape[1]}, G = {labels.size}, rows "
        f"per group {sizes.min()} / {np.median(sizes):g} / {sizes.max()}",
        flush=True,
    )
    t_case = t = time.perf_counter()
    warm_up(base, X, y, g)
    info["warm_up_seconds"] = time.perf_counter() - t
    extra = "noise_scale" if base == "gaussian" else None
    names = param_names(feature_names, extra, labels)
    n_shared = len(names) - labels.size
    info["P"] = len(names)
    out = {"info": info, "pipeline": [], "full": [], "floor": None, "nuts": None}
    ref = None  # the reference full fit: every method needs it (NUTS takes its prior)
    try:
        rec, ref, est = run_full(base, X, y, g, labels, REF_SEED)
        out["full"].append(rec)
        print(
            f"  full (random_state {REF_SEED}): {rec['seconds']:.1f} s, R-hat "
            f"{rec['rhat_max']:.3f}, ESS {rec['ess_min']:.0f}, group sd "
            f"{rec['group_sd_mean'][0]:.3f} {' '.join(rec['warnings'])}",
            flush=True,
        )
        del est
    except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
        out["full"].append(_error(exc))
        print(f"  full: {out['full'][-1]['error']}", flush=True)
    if "full" in args.methods and ref is not None:
        try:
            rec, mom, est = run_full(base, X, y, g, labels, FLOOR_SEED)
            del est
            rec["against_full"] = compare(mom, ref, names, n_shared)
            out["full"].append(rec)
            out["floor"] = rec["against_full"]
            print(f"  floor (full {FLOOR_SEED} against {REF_SEED}): {_cmp_line(out['floor'])}")
        except Exception as exc:  # noqa: BLE001
            out["full"].append(_error(exc))
            print(f"  floor: {out['full'][-1]['error']}", flush=True)
    full_priors = out["full"][0].get("priors") if out["full"] else None
    if "pipeline" in args.methods:
        for s in seeds:
            try:
                rec, mom = run_pipeline(base, X, y, g, labels, s)
                if ref is not None:
                    rec["against_full"] = compare(mom, ref, names, n_shared)
                    left_out = ~np.isfinite(mom["mean"])
                    if left_out.any():
                        # every effect: the left-out groups' as the pipeline predicts them
                        every = with_unseen(mom)
                        rec["against_full_every_effect"] = compare(every, ref, names, n_shared)
                        rec["against_full_left_out"] = compare(
                            {k: every[k][left_out] for k in ("mean", "sd")},
                            {k: ref[k][left_out] for k in ("mean", "sd")},
                            [n for n, out in zip(names, left_out) if out],
                            0,
                        )
                    rec["prior_differences"] = prior_differences(rec["priors"], full_priors)
                    rec["coreset_prior_equal_full"] = bool(
                        np.array_equal(rec["coreset_prior_scale"], full_priors["prior_scale"])
                    )
                out["pipeline"].append(rec)
                print("  " + _pipeline_line(rec), flush=True)
                if rec.get("prior_differences"):
                    print(
                        f"    the pipeline's prior differs from full's: "
                        f"{json.dumps(rec['prior_differences'])}",
                        flush=True,
                    )
                if "coreset_prior_equal_full" in rec and not rec["coreset_prior_equal_full"]:
                    print(
                        f"    cs.prior_scale_ {rec['coreset_prior_scale']} != full prior_scale_ "
                        f"{full_priors['prior_scale']}",
                        flush=True,
                    )
            except Exception as exc:  # noqa: BLE001
                out["pipeline"].append({"seed": s, **_error(exc)})
                print(f"  pipeline seed {s}: {out['pipeline'][-1]['error']}", flush=True)
    if "nuts" in args.methods:
        if full_priors is None:
            out["nuts"] = {"error": "no full fit: NUTS takes its prior"}
        else:
            try:
                rec, mom = run_nuts(
                    base, X, y, codes, labels.size, full_priors, nuts_cfg, args.nuts_budget
                )
                if ref is not None:
                    rec["full_against_nuts"] = compare(ref, mom, names, n_shared)
                out["nuts"] = rec
                print("  " + _nuts_line(rec), flush=True)
            except Exception as exc:  # noqa: BLE001
                out["nuts"] = _error(exc)
                print(f"  nuts: {out['nuts']['error']}", flush=True)
    info["seconds"] = time.perf_counter() - t_case
    return out


def _error(exc):
    return {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(limit=8)}


def _cmp_line(c):
    return (
        f"mean |z| {c['mean_abs_z']:.3f}, median {c['median_abs_z']:.3f}, max {c['max_abs_z']:.3f}"
        f" ({c['worst_param']}), sd ratio {c['sd_ratio_min']:.3f}-{c['sd_ratio_max']:.3f}"
    )


def _pipeline_line(rec):
    head = (
        f"pipeline seed {rec['seed']}: M {rec['n_points']} ({100 * rec['fraction']:.1f}%), "
        f"coreset {rec['coreset_seconds']:.1f} s + sampler {rec['sampler_seconds']:.1f} s, "
        f"R-hat {rec['rhat_max']:.3f}"
    )
    warned = " ".join(rec["coreset_warnings"] + rec["sampler_warnings"])
    if rec.get("n_groups_weighted"):
        head += (
            f", a coreset of groups ({rec['n_groups_in_coreset']} groups in it, "
            f"{rec['n_groups_weighted']} of weight != 1)"
        )
    if "against_full" in rec:
        head += ", " + _cmp_line(rec["against_full"])
        if rec["against_full"]["n_missing"]:
            head += (
                f" ({rec['against_full']['n_missing']} effects of groups left out: not compared)"
            )
        out = rec.get("against_full_left_out")
        if out:
            head += (
                f"; the left-out groups' effects as a new group's: mean |z| "
                f"{out['mean_abs_z']:.3f}, max {out['max_abs_z']:.3f}, sd ratio "
                f"{out['sd_ratio_min']:.3f}-{out['sd_ratio_max']:.3f}"
            )
    return head + (f" {warned}" if warned else "")


def _divergent(rec):
    """NUTS's divergent draws: the chains', or the pilot's where the chains were not run."""
    return rec.get("divergences", rec.get("pilot_divergences", "?"))


def _nuts_line(rec):
    head = (
        f"nuts ({rec['basis']}): {rec['seconds']:.1f} s compile+run, {rec['run_seconds']:.1f} s "
        f"run (compile {rec['compile_seconds']:.1f} s; pilot {rec['pilot_seconds']:.1f} s, "
        f"{rec['pilot_mean_steps']:.0f} steps/iteration), R-hat {rec['rhat_max']:.3f}, min ESS "
        f"{rec['ess_min']:.0f}, {_divergent(rec)} divergent"
    )
    if "full_against_nuts" in rec:
        head += "; full against NUTS: " + _cmp_line(rec["full_against_nuts"])
    return head


# -- the table ---------------------------------------------------------------------------------
def _f(x, fmt=".3f"):
    return "-" if x is None or (isinstance(x, float) and not np.isfinite(x)) else format(x, fmt)


COLUMNS = (
    ("case", 23),
    ("method", 9),
    ("M (% rows)", 14),
    ("seconds", 19),
    ("mean|z|", 11),
    ("median|z|", 9),
    ("max|z|", 6),
    ("sd ratio", 11),
    ("R-hat", 5),
    ("ESS", 5),
    ("notes", 0),
)


def _row(cells):
    out = []
    for k, (cell, (_, width)) in enumerate(zip(cells, COLUMNS)):
        out.append(f"{cell:<{width}}" if k < 2 or k == len(COLUMNS) - 1 else f"{cell:>{width}}")
    return " ".join(out).rstrip()


def case_rows(res):
    info = res["info"]
    name = info["case"]
    lines = []
    pipe = [r for r in res["pipeline"] if "against_full" in r]
    if pipe:
        c = [r["against_full"] for r in pipe]
        M = sorted({r["n_points"] for r in pipe})
        frac = max(r["fraction"] for r in pipe)
        cs = [r["coreset_seconds"] for r in pipe]
        hmc = [r["sampler_seconds"] for r in pipe]
        warned = Counter(w for r in pipe for w in r["coreset_warnings"] + r["sampler_warnings"])
        notes = f"{len(pipe)} seeds; seconds coreset + sampler, median seed"
        missing = max(x["n_missing"] for x in c)
        if missing:
            notes += f"; up to {missing} groups left out by the coreset (effects not compared)"
        if warned:
            notes += "; " + " ".join(f"{k} x{v}" for k, v in sorted(warned.items()))
        lines.append(
            _row(
                [
                    name,
                    "pipeline",
                    f"{M[0] if len(M) == 1 else f'{M[0]}+'} ({100 * frac:.1f}%)",
                    f"{np.median(cs):.1f} + {np.median(hmc):.1f}",
                    f"{np.median([x['mean_abs_z'] for x in c]):.3f}/"
                    f"{max(x['mean_abs_z'] for x in c):.3f}",
                    _f(max(x["median_abs_z"] for x in c)),
                    _f(max(x["max_abs_z"] for x in c)),
                    f"{min(x['sd_ratio_min'] for x in c):.3f}-"
                    f"{max(x['sd_ratio_max'] for x in c):.3f}",
                    _f(max(r["rhat_max"] for r in pipe)),
                    _f(min(r["ess_min"] for r in pipe), ".0f"),
                    notes,
                ]
            )
        )
        every = [r["against_full_every_effect"] for r in pipe if "against_full_every_effect" in r]
        if every:
            lines.append(
                _row(
                    [
                        name,
                        "all u_g",
                        "",
                        "",
                        f"{np.median([x['mean_abs_z'] for x in every]):.3f}/"
                        f"{max(x['mean_abs_z'] for x in every):.3f}",
                        _f(max(x["median_abs_z"] for x in every)),
                        _f(max(x["max_abs_z"] for x in every)),
                        f"{min(x['sd_ratio_min'] for x in every):.3f}-"
                        f"{max(x['sd_ratio_max'] for x in every):.3f}",
                        "",
                        "",
                        "the pipeline over every parameter, the effects of the groups it left "
                        "out as it predicts a new group's (N(0, group_sd^2))",
                    ]
                )
            )
    errors = [r for r in res["pipeline"] if "error" in r]
    if errors:
        lines.append(_row([name, "pipeline", f"ERROR ({len(errors)} seeds) {errors[0]['error']}"]))
    fulls = [r for r in res["full"] if "error" not in r]
    if fulls:
        f0 = fulls[0]
        floor = res.get("floor")
        lines.append(
            _row(
                [
                    name,
                    "full",
                    f"{info['N']} (100%)",
                    f"{f0['seconds']:.1f}",
                    _f(floor["mean_abs_z"]) if floor else "-",
                    _f(floor["median_abs_z"]) if floor else "-",
                    _f(floor["max_abs_z"]) if floor else "-",
                    f"{floor['sd_ratio_min']:.3f}-{floor['sd_ratio_max']:.3f}" if floor else "-",
                    _f(max(r["rhat_max"] for r in fulls)),
                    _f(min(r["ess_min"] for r in fulls), ".0f"),
                    f"the reference (random_state {REF_SEED}); |z|, sd ratio: the MC floor, "
                    f"full {FLOOR_SEED} against it"
                    + (f"; {' '.join(f0['warnings'])}" if f0["warnings"] else ""),
                ]
            )
        )
    for r in res["full"]:
        if "error" in r:
            lines.append(_row([name, "full", f"ERROR {r['error']}"]))
    nuts = res.get("nuts")
    if nuts and "error" not in nuts:
        c = nuts.get("full_against_nuts")
        s = nuts["settings"]
        lines.append(
            _row(
                [
                    name,
                    "nuts",
                    f"{info['N']} (100%)",
                    f"{nuts['seconds']:.1f} ({nuts['run_seconds']:.1f})",
                    _f(c["mean_abs_z"]) if c else "-",
                    _f(c["median_abs_z"]) if c else "-",
                    _f(c["max_abs_z"]) if c else "-",
                    f"{c['sd_ratio_min']:.3f}-{c['sd_ratio_max']:.3f}" if c else "-",
                    _f(nuts["rhat_max"]),
                    _f(nuts["ess_min"], ".0f"),
                    f"{'PROJECTED' if nuts['basis'] == 'projected' else 'measured'}: "
                    f"{s['chains']} x ({s['warmup']} + {s['draws']}), "
                    f"{s.get('effects', 'non-centred')}, "
                    f"{_divergent(nuts)} divergent; seconds "
                    "compile+run (run); |z|, sd ratio: full against NUTS"
                    + (
                        f" ({nuts['draws_compared']}: the pilot's draws)"
                        if nuts["basis"] == "projected"
                        else ""
                    ),
                ]
            )
        )
    elif nuts:
        lines.append(_row([name, "nuts", f"ERROR {nuts['error']}"]))
    return lines


def goal_lines(res):
    """The goals of a case: ``(lines, verdict dict)``."""
    info = res["info"]
    name = info["case"]
    v = {"case": name}
    lines = [f"  {name}:"]
    pipe = [r for r in res["pipeline"] if "against_full" in r]
    if pipe:
        c = [r["against_full"] for r in pipe]
        mean_ok = all(x["mean_abs_z"] <= MEAN_Z for x in c)
        max_ok = all(x["max_abs_z"] <= MAX_Z for x in c)
        sd_ok = all(
            SD_RATIO[0] <= x["sd_ratio_min"] and x["sd_ratio_max"] <= SD_RATIO[1] for x in c
        )
        worst = max(pipe, key=lambda r: r["against_full"]["max_abs_z"])
        v.update(pipeline_mean_z=mean_ok, pipeline_max_z=max_ok, pipeline_sd_ratio=sd_ok)
        v["pipeline_every_seed"] = [meets_goals(x) for x in c]
        lines.append(
            f"    pipeline mean|z| <= {MEAN_Z} every seed: {_yes(mean_ok)} (worst "
            f"{max(x['mean_abs_z'] for x in c):.3f}); max|z| <= {MAX_Z}: {_yes(max_ok)} (worst "
            f"{worst['against_full']['max_abs_z']:.3f}, seed {worst['seed']}, "
            f"{worst['against_full']['worst_param']}); sd ratios in {SD_RATIO[0]}-{SD_RATIO[1]}: "
            f"{_yes(sd_ok)} ({min(x['sd_ratio_min'] for x in c):.3f}-"
            f"{max(x['sd_ratio_max'] for x in c):.3f})"
            + (
                f" [the groups in the coreset only: up to {max(x['n_missing'] for x in c)} "
                "left out]"
                if any(x["n_missing"] for x in c)
                else ""
            )
        )
        every = [r["against_full_every_effect"] for r in pipe if "against_full_every_effect" in r]
        if every:
            ok = all(meets_goals(x) for x in every)
            v["pipeline_every_effect"] = ok
            lines.append(
                f"    the same goals over every group effect, the left-out groups' as the pipeline "
                f"predicts a new group's: {_yes(ok)} (mean|z| up to "
                f"{max(x['mean_abs_z'] for x in every):.3f}, max|z| "
                f"{max(x['max_abs_z'] for x in every):.3f}, sd ratios "
                f"{min(x['sd_ratio_min'] for x in every):.3f}-"
                f"{max(x['sd_ratio_max'] for x in every):.3f})"
            )
        floor = res.get("floor")
        if floor:
            lines.append(
                f"    MC floor (two full fits) meets the same goals: {_yes(meets_goals(floor))}"
            )
    nuts = res.get("nuts") or {}
    c = nuts.get("full_against_nuts")
    if c:
        ok = c["median_abs_z"] <= NUTS_MEDIAN_Z
        v["full_vs_nuts_median_z"] = ok
        lines.append(
            f"    full against NUTS median|z| <= {NUTS_MEDIAN_Z}: {_yes(ok)} "
            f"({c['median_abs_z']:.3f}; max {c['max_abs_z']:.3f}, {c['worst_param']})"
            + (
                f" [NUTS projected: compared with its pilot, {nuts['draws_compared']}]"
                if nuts.get("basis") == "projected"
                else ""
            )
        )
        if nuts["rhat_max"] > NUTS_RHAT:
            lines.append(
                f"    [NUTS itself has not converged: R-hat {nuts['rhat_max']:.3f}, min ESS "
                f"{nuts['ess_min']:.0f}, {_divergent(nuts)} "
                f"divergent; {nuts['settings'].get('effects', 'non-centred')} effects]"
            )
    if pipe and nuts.get("run_seconds"):
        slowest = max(r["seconds"] for r in pipe)
        speed = nuts["run_seconds"] / slowest
        speed_all = nuts["seconds"] / slowest
        v["speedup"] = speed
        line = (
            f"    speed-up against NUTS: {speed:.1f}x its run, {speed_all:.1f}x its "
            f"compile+run ({nuts['basis']}), the pipeline's slowest seed {slowest:.1f} s"
        )
        if name == SPEED_CASE:
            ok = speed >= SPEEDUP
            frac = max(r["fraction"] for r in pipe)
            v["speedup_goal"], v["fraction_goal"] = ok, frac <= MAX_FRACTION
            line += f" (goal >= {SPEEDUP:g}x: {_yes(ok)})"
            lines.append(line)
            lines.append(
                f"    coreset <= {100 * MAX_FRACTION:.0f}% of the rows: "
                f"{_yes(frac <= MAX_FRACTION)} ({100 * frac:.2f}%, largest seed)"
            )
        else:
            lines.append(line)
    return lines, v


def _yes(ok):
    return "yes" if ok else "NO"


def seed_lines(res):
    out = []
    for r in res["pipeline"]:
        if "error" in r:
            out.append(f"  {res['info']['case']} seed {r['seed']}: {r['error']}")
            continue
        line = f"  {res['info']['case']} {_pipeline_line(r)}"
        if r.get("prior_differences"):
            line += f"; PRIOR DIFFERS from full's: {json.dumps(r['prior_differences'])}"
        if "coreset_prior_equal_full" in r and not r["coreset_prior_equal_full"]:
            line += "; cs.prior_scale_ != full's prior_scale_"
        out.append(line)
    return out


def render(result):
    lines = [
        "The multilevel pipeline (OMPCoreset of grouped rows, then BayesianMultilevelRegression "
        "with the coreset's prior) against the same sampler on all rows (full), and full "
        "against NumPyro NUTS on all rows.",
        "Parameters compared: coefficients, intercept, log extra parameter, log group sd and "
        "every group effect u_g; |z| = |mean - mean_ref| / sd_ref, sd ratio = sd / sd_ref.",
        "pipeline: mean|z| median seed/worst seed, median|z|, max|z|, sd ratio, R-hat (max), "
        "ESS (min): worst seed, against full; full: the MC floor (a second full fit against "
        "it); nuts: full against NUTS.",
        "",
        _row([title for title, _ in COLUMNS]),
    ]
    for res in result["cases"]:
        info = res["info"]
        if "error" in info:
            lines.append(_row([info["case"], "-", f"ERROR {info['error']}"]))
            continue
        lines += case_rows(res)
    lines += ["", "Cases:"]
    for res in result["cases"]:
        info = res["info"]
        if "error" in info:
            continue
        a, m, b = info["group_rows"]
        lines.append(
            f"  {info['case']}: {info['base']}, N {info['N']}, D {info['D']}, G {info['G']} "
            f"(rows per group {a} / {m:g} / {b}), P {info['P']}, {info['seconds'] / 60:.1f} min"
        )
    lines += ["", "Per seed:"]
    for res in result["cases"]:
        if "error" not in res["info"]:
            lines += seed_lines(res)
    lines += [
        "",
        f"Goals (pipeline every seed: mean|z| <= {MEAN_Z}, max|z| <= {MAX_Z}, sd ratios in "
        f"{SD_RATIO[0]}-{SD_RATIO[1]}; full against NUTS: median|z| <= {NUTS_MEDIAN_Z}; "
        f"{SPEED_CASE}: >= {SPEEDUP:g}x faster than NUTS's run, coreset <= "
        f"{100 * MAX_FRACTION:.0f}% of rows):",
    ]
    verdicts = []
    for res in result["cases"]:
        if "error" in res["info"]:
            continue
        g, v = goal_lines(res)
        lines += g
        verdicts.append(v)
    start, end = result["git_start"], result["git_end"]
    changed = start["package_changes"] or end["package_changes"]
    lines += [
        "",
        f"NUTS settings: {json.dumps(result['nuts_settings'])}, budget "
        f"{result['nuts_budget']:.0f} s; compile: a separate 1 + 1 run; seeds {result['seeds']}",
        f"commit {start['commit'] or 'unknown'} at the start, {end['commit'] or 'unknown'} at the "
        f"end{'; skcoreset/ had uncommitted changes' if changed else ''}; skcoreset from "
        f"{start.get('package_path', '?')}; "
        f"{result['seconds'] / 60:.1f} minutes on {result['machine']['cpu_count']} cpus, load "
        f"average {result['load_average_at_start'][0]:.2f} at the start, "
        f"{result['load_average_at_end'][0]:.2f} at the end; {result['command']}",
    ]
    if result.get("note"):
        lines.append(result["note"])
    return "\n".join(lines), verdicts


# -- provenance and the run --------------------------------------------------------------------
def git(*args):
    try:
        out = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30, check=True
        )
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def provenance():
    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        "package_changes": git("--no-optional-locks", "status", "--porcelain", "--", "skcoreset"),
        "package_path": str(pathlib.Path(skcoreset.__file__).parent),
        "time": time.strftime("%Y-%m-%d %H:%M:%S %z"),
    }


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


def save(result, out):
    text, result["verdicts"] = render(result)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1, default=_json_default))
        out.with_suffix(".txt").write_text(text + "\n")
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller synthetic sets, 2 seeds")
    ap.add_argument("--seeds", type=int, default=4, help="pipeline seeds 0 .. n - 1 (default 4)")
    ap.add_argument(
        "--cases",
        nargs="+",
        choices=list(CASES),
        default=list(CASES),
        metavar="CASE",
        help=f"cases to run (default all): {', '.join(CASES)}",
    )
    ap.add_argument(
        "--methods",
        nargs="+",
        choices=METHODS,
        default=list(METHODS),
        help="methods to run (default all; the pipeline and NUTS need full's fit)",
    )
    ap.add_argument(
        "--nuts-budget",
        type=float,
        default=3600.0,
        help="seconds: NUTS's chains are not run (their time projected from a pilot) beyond it",
    )
    ap.add_argument(
        "--nuts-effects",
        choices=("non-centred", "centred"),
        default="non-centred",
        help="NUTS's parameterisation of the group effects (default non-centred; centred suits "
        "groups whose rows pin their effect down, as 10^3 rows a group do)",
    )
    ap.add_argument(
        "--data-dir",
        type=pathlib.Path,
        default=ROOT.parent / "shared" / "data",
        help="the shared .npz files (default ../shared/data)",
    )
    ap.add_argument("--out", type=pathlib.Path, help="write JSON here and the table beside it")
    ap.add_argument("--note", default="", help="free text kept in the JSON")
    ap.add_argument(
        "--table-from",
        type=pathlib.Path,
        metavar="PATH.json",
        help="fit nothing: print the table of a saved run (and rewrite its .txt beside it)",
    )
    args = ap.parse_args(argv)
    if args.table_from:
        result = json.loads(args.table_from.read_text())
        text, _ = render(result)
        print(text)
        args.table_from.with_suffix(".txt").write_text(text + "\n")
        return
    seeds = list(range(min(args.seeds, 2) if args.quick else args.seeds))
    nuts_cfg = dict(NUTS_QUICK if args.quick else NUTS, effects=args.nuts_effects)
    t0 = time.perf_counter()
    result = {
        "command": "python -m benchmarks.bench_multilevel " + " ".join(sys.argv[1:]),
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor(),
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
        },
        "versions": {"skcoreset": skcoreset.__version__, "numpy": np.__version__},
        "git_start": provenance(),
        "note": args.note,
        "quick": args.quick,
        "seeds": seeds,
        "methods": args.methods,
        "nuts_settings": nuts_cfg,
        "nuts_budget": args.nuts_budget,
        "load_average_at_start": os.getloadavg(),
        "goals": {
            "mean_abs_z": MEAN_Z,
            "max_abs_z": MAX_Z,
            "sd_ratio": SD_RATIO,
            "full_vs_nuts_median_abs_z": NUTS_MEDIAN_Z,
            "speedup": SPEEDUP,
            "max_fraction": MAX_FRACTION,
        },
        "cases": [],
    }
    if "nuts" in args.methods:
        try:
            import numpyro

            result["versions"]["numpyro"] = numpyro.__version__
        except ImportError:
            print("NumPyro is not installed (pip install -e '.[bench]'): nuts left out")
            args.methods = [m for m in args.methods if m != "nuts"]
    for name in args.cases:
        try:
            res = run_case(name, args, seeds, nuts_cfg)
        except Exception as exc:  # noqa: BLE001 - e.g. a data file missing
            print(f"{name}: {type(exc).__name__}: {exc}", flush=True)
            res = {"info": {"case": name, **_error(exc)}, "pipeline": [], "full": []}
        result["cases"].append(res)
        result["git_end"] = provenance()
        result["seconds"] = time.perf_counter() - t0
        result["load_average_at_end"] = os.getloadavg()
        save(result, args.out)  # after every case: a long run keeps what it measured
    if "jax" in sys.modules:
        result["versions"]["jax"] = sys.modules["jax"].__version__
    text = save(result, args.out)
    print()
    print(text)


if __name__ == "__main__":
    main()
