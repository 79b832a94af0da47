"""The exports of a multilevel coreset: its multilevel posterior wherever it runs.

The coreset posterior of a multilevel model (``model=Multilevel(...)``, fitted with
``groups=``) on its weighted rows ``n`` is

    eta_n = x_n . coef + intercept + z_n . u_{g(n)},   z_n = (1, x_n[slopes]),
    sum_n w_n log p(y_n | eta_n, extra)
      + log N(coef | 0, prior_scale[:D]) + log N(intercept | 0, prior_scale[D])
      + log LogNormal(extra | extra_prior) + sum_k log HalfStudentT(tau_k | 3, 0, tau_scale)
      + sum_gk log N(v_gk | 0, 1),                     u_gk = tau_k v_gk,

the priors those of the coreset's ``laplace_.posterior``. An oracle of a few lines writes it
with ``scipy.stats`` on the coreset's own rows (the posterior object holds the data's rows,
not the coreset's), and is checked against the library's own multilevel log posterior bound
to those rows. NumPyro's and PyMC's log densities (on the constrained values) minus the
oracle's are the same at several parameter points: the exported posterior is the library's,
up to a constant (here the constant itself is 0: both are normalised). Stan is not run
(cmdstanpy is optional): its program and data are checked as text and arrays. Bambi refuses.

A coreset of groups adds each weighted group's marginal log-likelihood (its effect integrated
out) by quadrature on fixed nodes; its exports are checked against the library's posterior of
the coreset (``Multilevel.posterior(..., group_weight=...)``), in its own parameterisation with
the Jacobians of log tau and of the effects' partial centring (section below).
"""

import re
import warnings

import numpy as np
import pytest
import scipy.stats as stats
from scipy.special import expit

from skcoreset.coreset import OMPCoreset
from skcoreset.export._spec import multilevel_export_spec
from skcoreset.models import Multilevel
from skcoreset.models import _glm_kernels as kernels
from skcoreset.models import _multilevel_marginal as multilevel_marginal
from skcoreset.models._multilevel_laplace import fit_laplace
from skcoreset.models._multilevel_marginal import GroupMarginals
from skcoreset.models._poisson import OverdispersionWarning

N_ROWS, N_GROUPS = 600, 12
#: Agreement of (export - oracle) across parameter points: float64 sums of some 300 rows.
ATOL = 1e-8


def _data(base, seed=0):
    """Grouped data of a random intercept and a random slope on column 0 (string group
    labels; the logistic model's targets string class labels, coded as the library codes;
    the Student-t's heavy-tailed noise, t with 4 df and scale 0.5)."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((N_ROWS, 2))
    codes = rng.randint(N_GROUPS, size=N_ROWS)
    u = rng.normal(0.0, [0.7, 0.4], (N_GROUPS, 2))
    eta = X @ [0.5, -0.3] + 0.2 + u[codes, 0] + u[codes, 1] * X[:, 0]
    if base == "logistic":
        y = np.array(["no", "yes"])[(rng.random_sample(N_ROWS) < expit(eta)).astype(int)]
    elif base == "student_t":
        y = eta + 0.5 * rng.standard_t(4.0, N_ROWS)
    else:
        y = rng.negative_binomial(2.0, 2.0 / (2.0 + np.exp(eta))).astype(float)
    groups = np.array([f"g{k:02d}" for k in range(N_GROUPS)])[codes]
    return X, y, groups


_FITTED = {}


def _coreset(base):
    """The fitted multilevel coreset of each base model (fitted once per session)."""
    if base not in _FITTED:
        X, y, groups = _data(base)
        coreset = OMPCoreset(model=Multilevel(base, slopes=[0]), n_points=200, random_state=0)
        _FITTED[base] = coreset.fit(X, y, groups=groups), X, y, groups
    return _FITTED[base]


def _oracle_inputs(coreset):
    """The coreset's rows, their coded targets, weights, group indices, and the priors."""
    X, y, params = coreset.get_coreset()
    post = coreset.laplace_.posterior
    coded = (y == "yes").astype(float) if y.dtype.kind in "US" else y.astype(float)
    g = np.searchsorted(coreset.groups_, coreset.sample_groups_)
    assert np.array_equal(coreset.groups_[g], coreset.sample_groups_)
    return X, coded, params["sample_weight"], g, post


def _points(coreset, n_points=3, seed=1):
    """Random constrained parameter values by name (the extra parameters where the model has
    them: the negative binomial's ``alpha``, the Student-t's ``scale`` and ``df``)."""
    rng = np.random.RandomState(seed)
    post = coreset.laplace_.posterior
    D = coreset.n_features_in_
    out = []
    for _ in range(n_points):
        point = {
            "coef": 0.3 * rng.standard_normal(D),
            "intercept": np.asarray(0.3 * rng.standard_normal()),
            "group_sd": np.exp(0.4 * rng.standard_normal(post.q)),
            "group_effects_raw": rng.standard_normal((post.G, post.q)),
        }
        for name, centre in _extras(post):
            point[name] = np.asarray(centre * np.exp(0.3 * rng.standard_normal()))
        out.append(point)
    return out


def _extras(post):
    """``(name, typical value)`` of the model's free extra parameters."""
    return {
        "logistic": [],
        "poisson": [],
        "negative_binomial": [("alpha", 1.0)],
        "student_t": [("scale", 0.5), ("df", 4.0)],
    }[post.base.name]


def oracle_terms(coreset, point):
    """The multilevel coreset posterior at constrained values, written from the formulas
    with ``scipy.stats`` (module notes): each coreset row's log-likelihood, the rows'
    weights, and the normalised log prior."""
    X, y, w, g, post = _oracle_inputs(coreset)
    D = X.shape[1]
    coef, intercept = point["coef"], float(point["intercept"])
    tau, v = point["group_sd"], point["group_effects_raw"]
    u = tau * v
    Z = np.column_stack([np.ones(X.shape[0]), X[:, 0]])  # slopes=[0]
    eta = X @ coef + intercept + np.sum(Z * u[g], axis=1)
    lp = stats.norm.logpdf(coef, 0.0, post.prior_scale[:D]).sum()
    lp += stats.norm.logpdf(intercept, 0.0, post.prior_scale[D])
    name = post.base.name
    if name == "logistic":
        ll = stats.bernoulli.logpmf(y, expit(eta))
    elif name == "student_t":  # location eta, log-normal scale and degrees of freedom
        (m_scale, sd_scale), (m_df, sd_df) = post.extra_prior
        scale, df = float(point["scale"]), float(point["df"])
        lp += stats.lognorm.logpdf(scale, sd_scale, scale=np.exp(m_scale))
        lp += stats.lognorm.logpdf(df, sd_df, scale=np.exp(m_df))
        ll = stats.t.logpdf(y, df, eta, scale)
    else:  # the negative binomial: mean exp(eta), dispersion alpha (variance mu + alpha mu^2)
        alpha = float(point["alpha"])
        m, sd = post.extra_prior
        lp += stats.lognorm.logpdf(alpha, sd, scale=np.exp(m))
        r = 1.0 / alpha
        ll = stats.nbinom.logpmf(y, r, r / (r + np.exp(eta)))
    lp += np.sum(np.log(2.0) + stats.t.logpdf(tau, 3.0, 0.0, post.tau_scale))  # half-t
    lp += stats.norm.logpdf(v).sum()
    return ll, w, float(lp)


def oracle_log_joint(coreset, point):
    """The multilevel coreset posterior's normalised log density at constrained values."""
    ll, w, lp = oracle_terms(coreset, point)
    return float(w @ ll + lp)


def library_log_posterior(coreset, point):
    """The library's multilevel log posterior (up to a constant, in its sampler's
    parameters: log extra, log tau, non-centred effects) bound to the coreset's rows."""
    X, y, w, g, post = _oracle_inputs(coreset)
    base, spec = post.base, post.spec
    bound = spec.bind(
        base.design(X),
        spec.effects_design(X),
        y,
        w,
        g,
        post.G,
        base,
        post.prior_scale,
        post.tau_scale,
    )
    extra = None
    if post.E:  # the logs of the extra parameters, in the library's order
        extra = np.log([float(point[name]) for name, _ in _extras(post)])
        extra = extra[0] if post.E == 1 else extra
    theta = bound.to_theta(
        np.append(point["coef"], point["intercept"]),
        extra,
        np.log(point["group_sd"]),
        point["group_sd"] * point["group_effects_raw"],
    )
    return float(bound.log_posterior(theta, gradient=False))


def _assert_same_up_to_a_constant(got, want, atol=ATOL):
    diff = np.asarray(got) - np.asarray(want)
    np.testing.assert_allclose(diff - diff[0], 0.0, atol=atol)
    return diff


@pytest.mark.parametrize("base", ["logistic", "negative_binomial", "student_t"])
def test_the_oracle_is_the_library_multilevel_posterior(base):
    """The oracle's density, with the log transforms' Jacobians (log tau, log alpha: the
    library samples their logs), is the library's multilevel log posterior on the coreset's
    rows up to a constant."""
    coreset = _coreset(base)[0]
    post = coreset.laplace_.posterior
    got, want = [], []
    for point in _points(coreset):
        jacobian = np.sum(np.log(point["group_sd"]))
        for name, _ in _extras(post):
            jacobian += np.log(point[name])
        got.append(oracle_log_joint(coreset, point) + jacobian)
        want.append(library_log_posterior(coreset, point))
    _assert_same_up_to_a_constant(got, want)


@pytest.mark.parametrize("base", ["logistic", "negative_binomial", "student_t"])
def test_numpyro_log_density_is_the_multilevel_coreset_posterior(base):
    """The whole log density where NumPyro's likelihood is exact (logistic); where the
    model states a coarser accuracy for NumPyro's own functions (the negative binomial's
    JAX betaln, ``export_rtol``), the priors exactly and each row's log-likelihood to it."""
    numpyro = pytest.importorskip("numpyro")
    from numpyro.infer.util import log_density

    numpyro.enable_x64()
    coreset = _coreset(base)[0]
    rtol = coreset.laplace_.posterior.base.export_rtol.get("numpyro")
    model = coreset.to_numpyro()
    got, want, got_prior, want_prior = [], [], [], []
    for point in _points(coreset):
        params = {k: np.asarray(v) for k, v in point.items()}
        lp, trace = log_density(model, (), {}, params)
        ll, w, prior = oracle_terms(coreset, point)
        site = trace["y"]
        np.testing.assert_array_equal(site["scale"], w)  # the coreset weights
        rows = np.asarray(site["fn"].log_prob(site["value"]))
        np.testing.assert_allclose(rows, ll, rtol=rtol or 1e-12)
        got.append(float(lp))
        want.append(float(w @ ll + prior))
        got_prior.append(float(lp) - float(w @ rows))
        want_prior.append(prior)
        np.testing.assert_allclose(
            trace["group_effects"]["value"],
            point["group_sd"] * point["group_effects_raw"],
            rtol=1e-15,
        )
    diff = _assert_same_up_to_a_constant(got_prior, want_prior)
    np.testing.assert_allclose(diff, 0.0, atol=ATOL)  # normalised
    if rtol is None:
        diff = _assert_same_up_to_a_constant(got, want)
        np.testing.assert_allclose(diff, 0.0, atol=ATOL)
    sites = [name for name, site in trace.items() if site["type"] in ("sample", "deterministic")]
    extra = [name for name, _ in _extras(coreset.laplace_.posterior)]
    assert sites == [
        "coef",
        "intercept",
        *extra,
        "group_sd",
        "group_effects_raw",
        "group_effects",
        "y",
    ]
    assert trace["group_sd"]["value"].shape == (2,)
    assert trace["group_effects_raw"]["value"].shape == (N_GROUPS, 2)


@pytest.mark.parametrize("base", ["logistic", "negative_binomial", "student_t"])
def test_pymc_log_density_is_the_multilevel_coreset_posterior(base):
    pytest.importorskip("pymc")
    coreset = _coreset(base)[0]
    model = coreset.to_pymc()
    logp = model.compile_logp(jacobian=False)
    values = {rv.name: model.rvs_to_values[rv].name for rv in model.free_RVs}
    got, want = [], []
    for point in _points(coreset):
        # the positive variables' value variables are their logs ('<name>_log__')
        inputs = {
            values[k]: np.log(v) if values[k].endswith("_log__") else np.asarray(v)
            for k, v in point.items()
        }
        got.append(float(logp(inputs)))
        want.append(oracle_log_joint(coreset, point))
    diff = _assert_same_up_to_a_constant(got, want)
    # normalised but for PyMC's HalfStudentT, whose constant is off by 1.9e-9 an sd
    np.testing.assert_allclose(diff, 0.0, atol=ATOL)
    extra = [name for name, _ in _extras(coreset.laplace_.posterior)]
    assert [rv.name for rv in model.free_RVs] == [
        "coef",
        "intercept",
        *extra,
        "group_sd",
        "group_effects_raw",
    ]
    assert [d.name for d in model.deterministics] == ["group_effects"]
    assert list(model.coords["group"]) == coreset.groups_.tolist()
    assert list(model.coords["effect"]) == ["intercept", "x0"]
    assert model.named_vars_to_dims["group_effects"] == ("group", "effect")


def _data_block(program):
    """``name -> declaration`` of the program's data block."""
    block = re.search(r"^data \{\n(.*?)\n\}", program, re.S | re.M).group(1)
    return {line.rstrip(";").split()[-1]: line.strip() for line in block.splitlines()}


@pytest.mark.parametrize("base", ["logistic", "negative_binomial", "student_t"])
def test_stan_program_and_data(base):
    """The program's blocks and statements, and data that fit the program and the coreset:
    the same rows, weights and groups as the other exports."""
    coreset, X, y, groups = _coreset(base)
    program, data = coreset.to_stan()
    lines = program.splitlines()
    blocks = [line for line in lines if line.endswith("{") and not line.startswith(" ")]
    assert blocks == ["data {", "parameters {", "transformed parameters {", "model {"]
    for line in [
        "  vector<lower=0>[Q] group_sd;",
        "  matrix[G, Q] group_effects_raw;",
        "  matrix[G, Q] group_effects = diag_post_multiply(group_effects_raw, group_sd);",
        "  vector[N] eta = X * coef + intercept + rows_dot_product(Z, group_effects[group]);",
        "  target += student_t_lpdf(group_sd | group_sd_df, 0, group_sd_scale) + Q * log2();",
        "  target += std_normal_lpdf(to_vector(group_effects_raw));",
        "  target += normal_lpdf(coef | 0, coef_sd);",
        "  target += normal_lpdf(intercept | 0, intercept_sd);",
    ]:
        assert line in lines, line
    row = {
        "logistic": "bernoulli_logit_lpmf(y[n] | eta[n])",
        "negative_binomial": "neg_binomial_2_log_lpmf(y[n] | eta[n], inv(alpha))",
        "student_t": "student_t_lpdf(y[n] | df, eta[n], scale)",
    }[base]
    assert f"    target += w[n] * {row};" in lines
    for name, _ in _extras(coreset.laplace_.posterior):
        assert f"  real<lower=0> {name};" in lines
        assert f"  target += lognormal_lpdf({name} | {name}_log_mean, {name}_log_sd);" in lines

    declared = _data_block(program)
    assert set(declared) == set(data)
    post = coreset.laplace_.posterior
    Xm, ym, params = coreset.get_coreset()
    N = Xm.shape[0]
    assert data["N"] == N and data["D"] == 2
    assert data["G"] == N_GROUPS and data["Q"] == 2
    assert declared["group"] == "array[N] int<lower=1, upper=G> group;"
    assert data["group"].dtype.kind == "i" and data["group"].shape == (N,)
    assert 1 <= data["group"].min() and data["group"].max() <= N_GROUPS
    np.testing.assert_array_equal(coreset.groups_[data["group"] - 1], coreset.sample_groups_)
    np.testing.assert_array_equal(data["X"], Xm)
    np.testing.assert_array_equal(data["Z"], np.column_stack([np.ones(N), Xm[:, 0]]))
    np.testing.assert_array_equal(data["w"], params["sample_weight"])
    coded = (ym == "yes").astype(int) if base == "logistic" else ym
    np.testing.assert_array_equal(data["y"], coded)
    assert data["y"].dtype.kind == ("f" if base == "student_t" else "i")
    np.testing.assert_array_equal(data["coef_sd"], post.prior_scale[:2])
    assert data["intercept_sd"] == post.prior_scale[2]
    assert data["group_sd_df"] == 3.0 and data["group_sd_scale"] == post.tau_scale
    if base == "negative_binomial":
        assert (data["alpha_log_mean"], data["alpha_log_sd"]) == post.extra_prior
    if base == "student_t":  # the scale's prior, then the degrees of freedom's
        assert (data["scale_log_mean"], data["scale_log_sd"]) == post.extra_prior[0]
        assert (data["df_log_mean"], data["df_log_sd"]) == post.extra_prior[1]
    # the data it was fitted on give the same export
    program_xy, data_xy = coreset.to_stan(X, y, groups)
    assert program_xy == program
    for key in data:
        np.testing.assert_array_equal(data_xy[key], data[key])


def test_bambi_refuses_a_multilevel_coreset():
    coreset = _coreset("negative_binomial")[0]
    with pytest.raises(ValueError, match="to_bambi does not export a multilevel coreset.*to_pymc"):
        coreset.to_bambi()


def test_groups_are_checked():
    coreset, X, y, groups = _coreset("logistic")
    with pytest.raises(ValueError, match="not the coreset's"):
        coreset.to_stan(X, y, groups[::-1])
    with pytest.raises(ValueError, match="groups with X and y"):
        coreset.to_stan(groups=groups)
    with pytest.raises(ValueError, match="one label per row"):
        coreset.to_stan(X, y, groups[:10])
    # a coreset without groups takes none
    plain = OMPCoreset(n_points=50, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="groups= is for a multilevel coreset"):
        plain.to_stan(X, y, groups)


# -- a coreset of groups: weighted marginals ---------------------------------------------------
#
# Data of many small groups (3000 groups of 4 rows) and a few large ones (3 of 300 rows): the
# coreset weights a few small groups whole (``sample_group_weight_ != 1``), each entering by
# ``W_g`` times its marginal log-likelihood, and reduces the large ones row by row (weight 1,
# explicit effects). The exports write each marginal by Gauss-Hermite quadrature on 20 fixed
# nodes a group; the library's posterior integrates with 11 nodes at each group's conditional
# mode at every point. Measured (export - library, spread across three draws of the coreset
# posterior's Laplace fit; 52 logistic / 38 Poisson groups by marginals): with the library's
# quadrature raised to 40 nodes, 6e-12 (logistic) and 3e-8 (Poisson); with its default 11
# nodes, 3e-8 (logistic) and 1.2e-4 (Poisson: the library's own quadrature error, 1e-6 a
# Poisson group of 4 rows against 2e-9 for the export's fixed nodes, both against 60 adaptive
# nodes). The comparisons use 40 nodes; logistic's also the default.

G_SMALL, G_LARGE, N_LARGE = 3000, 3, 300
#: Agreement of (export - library) across parameter points with weighted marginals: the two
#: quadratures differ (the library's nodes follow each group's mode, the export's are fixed).
ATOL_MARGINAL = 1e-6
#: The library's quadrature nodes for these comparisons (its default 11 are off by 1e-6 a
#: Poisson group; 40 by less than 1e-12).
LIBRARY_NODES = 40

_FITTED_GROUPS = {}


def _coreset_of_groups(base):
    """A coreset of groups (fitted once per session), its data and group labels."""
    if base not in _FITTED_GROUPS:
        rng = np.random.default_rng(12)
        g = np.concatenate(
            [np.repeat(np.arange(G_SMALL), 4), np.repeat(G_SMALL + np.arange(G_LARGE), N_LARGE)]
        )
        X = rng.standard_normal((g.size, 2))
        eta = X @ [0.5, -0.5] + 0.2 + rng.normal(0.0, 0.7, G_SMALL + G_LARGE)[g]
        if base == "logistic":
            y = (rng.random(g.size) < expit(eta)).astype(int)
        elif base == "student_t":
            y = eta + 0.5 * rng.standard_t(4.0, g.size)
        else:
            y = rng.poisson(np.exp(eta))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OverdispersionWarning)  # the group effects'
            coreset = OMPCoreset(model=Multilevel(base), random_state=0).fit(X, y, groups=g)
        _FITTED_GROUPS[base] = coreset, X, y, g
    return _FITTED_GROUPS[base]


def _coreset_posterior(coreset, X, y, g):
    """The library's multilevel posterior of the coreset: its weighted rows, its groups'
    weights (marginals for weights other than 1), the full data's priors."""
    idx = coreset.sample_indices_
    codes = np.searchsorted(coreset.groups_, g[idx])
    return Multilevel(coreset.laplace_.posterior.base.name).posterior(
        X[idx],
        y[idx].astype(float),
        codes,
        coreset.groups_.shape[0],
        coreset.sample_weight_,
        data_scale=coreset.laplace_.posterior.data_scale,
        group_weight=coreset.sample_group_weight_,
    )


_POINTS = {}


def _marginal_points(coreset, X, y, g):
    """:func:`_draws_and_library` of a coreset of groups (once per session)."""
    key = id(coreset)
    if key not in _POINTS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OverdispersionWarning)
            _POINTS[key] = _draws_and_library(coreset, X, y, g)
    return _POINTS[key]


def _draws_and_library(coreset, X, y, g, n_points=3):
    """Draws of the coreset posterior's Laplace fit as the exports' constrained values (the
    explicit groups' non-centred effects), and the library's log posterior at each in those
    values (with its quadrature raised to LIBRARY_NODES nodes), and with its default nodes."""
    post = _coreset_posterior(coreset, X, y, g)
    laplace = fit_laplace(post)  # its parameterisation: post.centring
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(multilevel_marginal.NODES, 1, LIBRARY_NODES)
        fine = _coreset_posterior(coreset, X, y, g)
    fine.centring = post.centring.copy()
    # the posterior's groups are those with rows entered row by row (its effects, in order)
    np.testing.assert_array_equal(coreset.groups_[post.groups_in], _explicit(coreset))
    points, library, library_default = [], [], []
    for theta in laplace.draws(n_points, np.random.default_rng(1)):
        beta, s, log_tau, _ = post.split(theta)
        tau, u = post.effects(theta)
        point = {
            "coef": beta[:-1],
            "intercept": np.asarray(beta[-1]),
            "group_sd": tau,
            "group_effects_raw": u / tau,
        }
        if post.E:
            point[post.base.extra_name] = np.asarray(np.exp(s))
        # theta -> (tau, raw = tau^-c v): log Jacobian sum log tau - sum c log tau, and
        # log extra
        jacobian = np.sum(log_tau) - np.sum(post.centring * log_tau) + (s if post.E else 0.0)
        for p, out in ((fine, library), (post, library_default)):
            value = p.log_posterior(p.to_theta(beta, s, log_tau, u), gradient=False)
            out.append(float(value) - jacobian)
        points.append(point)
    return points, np.array(library), np.array(library_default), post


def _explicit(coreset):
    """The labels of the groups entered row by row (weight 1)."""
    return np.unique(coreset.sample_groups_[coreset.sample_group_weight_ == 1.0])


def _factor(site):
    """The log density a ``numpyro.factor`` site adds."""
    return float(site["fn"].log_prob(site["value"]))


def _rule(terms, point, base):
    """``sum_g W_g m_g`` by the export's fixed-node rule, in NumPy."""
    eta0 = terms.X @ point["coef"] + float(point["intercept"])

    def loglik(eta, y):
        return kernels.loglik_vector(base.family, eta, y, base.extra_value)

    return float(terms.group_weight @ terms.log_marginals(eta0, loglik, point["group_sd"]))


@pytest.mark.parametrize("base", ["logistic", "poisson"])
def test_coreset_of_groups_export_spec(base):
    """The rows split as the library's posterior splits them: weight-1 groups row by row with
    explicit effects, the others by their weighted marginals, their nodes at each group's
    conditional mode and curvature at the Laplace mean."""
    coreset, X, y, g = _coreset_of_groups(base)
    assert coreset.n_groups_marginal_ > 0
    spec = coreset._export_spec(None, None, "NumPyro")
    effects, terms = spec.effects, spec.effects.marginal
    weighted = coreset.sample_group_weight_ != 1.0
    np.testing.assert_array_equal(effects.labels, _explicit(coreset))
    assert set(effects.labels) <= set(G_SMALL + np.arange(G_LARGE))  # the large groups
    np.testing.assert_array_equal(spec.X, coreset.get_coreset()[0][~weighted])
    np.testing.assert_array_equal(spec.weight, coreset.sample_weight_[~weighted])
    np.testing.assert_array_equal(effects.labels[effects.index], coreset.sample_groups_[~weighted])
    assert terms.n_groups == coreset.n_groups_marginal_ and terms.n_nodes == 20
    np.testing.assert_array_equal(terms.X, coreset.get_coreset()[0][weighted])
    np.testing.assert_array_equal(terms.weight, coreset.sample_weight_[weighted])
    np.testing.assert_array_equal(terms.labels[terms.index], coreset.sample_groups_[weighted])
    np.testing.assert_array_equal(
        terms.group_weight[terms.index], coreset.sample_group_weight_[weighted]
    )
    # the centres and scales: the library's conditional modes at the Laplace mean
    post = coreset.laplace_.posterior
    beta, s, log_tau, _ = post.split(coreset.laplace_.mean)
    Xd = post.base.design(terms.X)
    marginals = GroupMarginals(
        post.base,
        post.E,
        Xd,
        terms.Z,
        terms.y,
        terms.weight,
        terms.index,
        terms.n_groups,
        terms.group_weight,
    )
    u_hat, F = marginals.modes(Xd @ beta, post.model_at(s), np.exp(log_tau))
    np.testing.assert_allclose(terms.centre, u_hat, atol=1e-9)
    np.testing.assert_allclose(terms.scale[:, 0, 0], 1.0 / np.sqrt(F[:, 0, 0]), rtol=1e-9)
    # at the Laplace mean the fixed rule is the library's quadrature (rtol: its 11 nodes)
    point = {"coef": beta[:-1], "intercept": beta[-1], "group_sd": np.exp(log_tau)}
    want = marginals.value_and_grad(beta, s, log_tau, gradient=False)[0]
    np.testing.assert_allclose(_rule(terms, point, post.base), want, rtol=1e-6)


@pytest.mark.parametrize("base", ["logistic", "poisson"])
def test_numpyro_and_pymc_weight_the_marginals_of_a_coreset_of_groups(base):
    """NumPyro's and PyMC's log densities minus the library's coreset posterior (in the
    exports' values: the log tau and the effects' Jacobians) are the same at three draws of
    its Laplace fit; NumPyro's factor is the fixed-node rule written in NumPy."""
    numpyro = pytest.importorskip("numpyro")
    pytest.importorskip("pymc")
    from numpyro.infer.util import log_density

    numpyro.enable_x64()
    coreset, X, y, g = _coreset_of_groups(base)
    points, library, library_default, post = _marginal_points(coreset, X, y, g)
    terms = coreset._export_spec(None, None, "NumPyro").effects.marginal
    model = coreset.to_numpyro()
    pm_model = coreset.to_pymc()
    logp = pm_model.compile_logp(jacobian=False)
    values = {rv.name: pm_model.rvs_to_values[rv].name for rv in pm_model.free_RVs}
    got_numpyro, got_pymc = [], []
    for point in points:
        lp, trace = log_density(model, (), {}, {k: np.asarray(v) for k, v in point.items()})
        got_numpyro.append(float(lp))
        np.testing.assert_allclose(
            _factor(trace["group_marginals"]), _rule(terms, point, post.base), rtol=1e-12
        )
        inputs = {
            values[k]: np.log(v) if values[k].endswith("_log__") else np.asarray(v)
            for k, v in point.items()
        }
        got_pymc.append(float(logp(inputs)))
    _assert_same_up_to_a_constant(got_numpyro, library, atol=ATOL_MARGINAL)
    _assert_same_up_to_a_constant(got_pymc, library, atol=ATOL_MARGINAL)
    np.testing.assert_allclose(got_pymc, got_numpyro, atol=1e-8)
    if base == "logistic":  # the library's own 11 nodes suffice for logistic groups of 4
        _assert_same_up_to_a_constant(got_numpyro, library_default, atol=ATOL_MARGINAL)
    else:  # not for Poisson ones: its quadrature is off by 1e-6 a group (module notes)
        _assert_same_up_to_a_constant(got_numpyro, library_default, atol=1e-3)
    sites = [name for name, site in trace.items() if site["type"] in ("sample", "deterministic")]
    assert sites == [
        "coef",
        "intercept",
        "group_sd",
        "group_effects_raw",
        "group_effects",
        "y",
        "group_marginals",
    ]
    assert trace["group_effects_raw"]["value"].shape == (G_LARGE, 1)
    assert [rv.name for rv in pm_model.free_RVs] == [
        "coef",
        "intercept",
        "group_sd",
        "group_effects_raw",
    ]
    assert [p.name for p in pm_model.potentials] == ["weighted_loglik", "group_marginals"]
    assert list(pm_model.coords["group"]) == _explicit(coreset).tolist()


def test_stan_writes_the_marginals_of_a_coreset_of_groups():
    """The program's block of marginals and its data: the rule the program states, computed
    from the data as Stan reads them (1-based groups, node_sq by effect), is NumPyro's."""
    numpyro = pytest.importorskip("numpyro")
    from numpyro.infer.util import log_density

    numpyro.enable_x64()
    coreset, X, y, g = _coreset_of_groups("poisson")
    program, data = coreset.to_stan()
    lines = program.splitlines()
    for line in [
        "  int<lower=0> G;",
        "  array[N_marginal] int<lower=0> y_marginal;",
        "  array[N_marginal] int<lower=1, upper=G_marginal> group_marginal;",
        "  array[Q] matrix[G_marginal, K_nodes] node_sq;",
        "    matrix[N_marginal, K_nodes] eta_nodes = rep_matrix(X_marginal * coef + intercept,"
        " K_nodes) + node_offset;",
        "      = log_node_weight - sum(log(group_sd)) - 0.5 * Q * log(2 * pi());",
        "      f -= 0.5 * node_sq[j] / square(group_sd[j]);",
        "        f[group_marginal[n], k] += w_marginal[n] * poisson_log_lpmf(y_marginal[n] |"
        " eta_nodes[n, k]);",
        "      target += group_weight[g] * log_sum_exp(f[g]);",
    ]:
        assert line in lines, line
    assert set(_data_block(program)) == set(data)
    weighted = coreset.sample_group_weight_ != 1.0
    assert data["N"] == np.sum(~weighted) and data["N_marginal"] == np.sum(weighted)
    assert data["G"] == G_LARGE and data["G_marginal"] == coreset.n_groups_marginal_
    assert data["K_nodes"] == 20 and data["node_sq"].shape == (1, data["G_marginal"], 20)
    assert data["y_marginal"].dtype.kind == "i"
    # the model block's statements, in NumPy on the data
    point = _marginal_points(coreset, X, y, g)[0][0]
    tau = point["group_sd"]
    eta_nodes = (data["X_marginal"] @ point["coef"] + point["intercept"])[:, None]
    eta_nodes = eta_nodes + data["node_offset"]
    f = data["log_node_weight"] - np.sum(np.log(tau)) - 0.5 * data["Q"] * np.log(2 * np.pi)
    for j in range(data["Q"]):
        f = f - 0.5 * data["node_sq"][j] / tau[j] ** 2
    rows = stats.poisson.logpmf(data["y_marginal"][:, None], np.exp(eta_nodes))
    np.add.at(f, data["group_marginal"] - 1, data["w_marginal"][:, None] * rows)
    stan_value = data["group_weight"] @ np.log(np.exp(f).sum(axis=1))
    _, trace = log_density(
        coreset.to_numpyro(), (), {}, {k: np.asarray(v) for k, v in point.items()}
    )
    np.testing.assert_allclose(stan_value, _factor(trace["group_marginals"]), rtol=1e-12)


def test_marginals_of_random_slopes_and_without_a_centre_are_refused():
    rng = np.random.RandomState(0)
    X, y, codes = rng.standard_normal((40, 2)), rng.poisson(2.0, 40), np.arange(40) % 4
    gw = np.where(codes < 2, 1.0, 7.5)
    slopes = Multilevel("poisson", slopes=[1]).posterior(X, y, codes, 4, np.ones(40))
    with pytest.raises(ValueError, match="random intercept only.*2 effects per group"):
        multilevel_export_spec(
            slopes,
            X,
            y,
            np.ones(40),
            codes,
            np.arange(4),
            group_weight=gw,
            centre=np.zeros(slopes.n_params),
        )
    # without weighted groups the slopes are exported as before
    assert multilevel_export_spec(slopes, X, y, np.ones(40), codes, np.arange(4)).effects
    post = Multilevel("poisson").posterior(X, y, codes, 4, np.ones(40))
    with pytest.raises(ValueError, match="needs centre="):
        multilevel_export_spec(post, X, y, np.ones(40), codes, np.arange(4), group_weight=gw)


def test_a_coreset_of_small_groups_only_has_no_explicit_effects():
    """3000 groups of 4 rows: every kept group enters by its marginal; the exports have no
    rows entered row by row, no group effects, and the group sd still."""
    numpyro = pytest.importorskip("numpyro")
    pytest.importorskip("pymc")
    from numpyro.infer.util import log_density

    numpyro.enable_x64()
    rng = np.random.default_rng(12)
    g = np.repeat(np.arange(G_SMALL), 4)
    X = rng.standard_normal((g.size, 2))
    y = (rng.random(g.size) < expit(X @ [0.5, -0.5] + rng.normal(0, 0.8, G_SMALL)[g])).astype(int)
    coreset = OMPCoreset(model=Multilevel("logistic"), random_state=0).fit(X, y, groups=g)
    assert coreset.n_groups_marginal_ > 0 and np.all(coreset.sample_group_weight_ != 1.0)
    point = {"coef": np.array([0.5, -0.5]), "intercept": np.asarray(0.1), "group_sd": np.ones(1)}
    lp, trace = log_density(coreset.to_numpyro(), (), {}, point)
    sites = [name for name, site in trace.items() if site["type"] == "sample"]
    assert sites == ["coef", "intercept", "group_sd", "group_marginals"]
    terms = coreset._export_spec(None, None, "NumPyro").effects.marginal
    prior = sum(float(trace[k]["fn"].log_prob(trace[k]["value"]).sum()) for k in sites[:3])
    base = coreset.laplace_.posterior.base
    np.testing.assert_allclose(float(lp), prior + _rule(terms, point, base), rtol=1e-12)
    model = coreset.to_pymc()
    assert [rv.name for rv in model.free_RVs] == ["coef", "intercept", "group_sd"]
    assert [p.name for p in model.potentials] == ["group_marginals"]
    assert "group" not in model.coords
    program, data = coreset.to_stan()
    assert data["N"] == 0 and data["G"] == 0 and data["X"].shape == (0, 2)
    assert data["G_marginal"] == coreset.n_groups_marginal_
    assert data["N_marginal"] == coreset.sample_indices_.shape[0]


def test_recover_group_effects_of_an_exported_coreset_of_groups():
    """Given draws of the shared parameters (here the coreset's Laplace fit's, in the
    exported model's names and shapes), the groups without effect variables (weighted by
    their marginals, or left out) get effects from their rows: for a Gaussian model of known
    noise their means are the draws' average of the closed-form conditional means."""
    from skcoreset.models import get_model
    from skcoreset.sampler import diagnostics

    rng = np.random.default_rng(21)
    G = 2000
    g = np.repeat(np.arange(G), 3)
    X = rng.standard_normal((g.size, 2))
    y = X @ [0.5, -0.3] + 0.2 + rng.normal(0, 0.7, G)[g] + rng.normal(0, 1.0, g.size)
    spec = Multilevel(get_model("gaussian", extra=1.0))
    cs = OMPCoreset(model=spec, random_state=0).fit(X, y, groups=g)
    assert cs.n_groups_marginal_ > 0 and cs.left_out_indices_.size > 0
    theta = cs.laplace_.draws(2000, np.random.RandomState(1))
    draws = {  # as a sampler of the exported model gives them: (chains, draws, ...)
        "coef": theta[:, :2].reshape(2, 1000, 2),
        "intercept": theta[:, 2].reshape(2, 1000),
        "group_sd": np.exp(theta[:, 3:4]).reshape(2, 1000, 1),
    }
    labels, effects = cs.recover_group_effects(draws, X, y, g, random_state=0)
    marginal = np.unique(cs.sample_groups_[cs.sample_group_weight_ != 1])
    left = np.unique(g[cs.left_out_indices_])
    np.testing.assert_array_equal(labels, np.union1d(marginal, left))
    assert effects.shape == (2000, labels.size, 1)
    beta, b0, tau = theta[:, :2], theta[:, 2], np.exp(theta[:, 3])
    for k in [*marginal[:2], *left[:2]]:
        rows = g == k
        resid = y[rows][None, :] - (X[rows] @ beta.T).T - b0[:, None]
        var = 1.0 / (rows.sum() + 1.0 / tau**2)
        mean = var * resid.sum(axis=1)
        exact = mean.mean()
        sd = np.sqrt(np.mean(var + mean**2) - exact**2)
        got = effects[:, labels == k, 0][:, 0]
        ess = diagnostics(got.reshape(2, 1000))[1][0]
        assert abs(got.mean() - exact) < 4.5 * sd / np.sqrt(ess)
    with pytest.raises(ValueError, match="draws has no 'group_sd'"):
        cs.recover_group_effects({"coef": draws["coef"], "intercept": draws["intercept"]}, X, y, g)


def test_a_student_t_coreset_of_small_groups_keeps_them_whole():
    """A Student-t base integrates no group out (its small groups' effects can be bimodal,
    where the quadrature is not accurate): the many small groups are kept whole, every group
    at weight 1, and the export of weighted groups is refused with the reason."""
    coreset, X, y, g = _coreset_of_groups("student_t")
    assert coreset.n_groups_marginal_ == 0 and coreset.left_out_indices_.size == 0
    np.testing.assert_array_equal(coreset.sample_group_weight_, 1.0)
    small = np.flatnonzero(np.bincount(g) == 4)
    assert coreset.n_groups_kept_whole_ == small.size
    assert set(small) <= set(coreset.sample_groups_)
    program, data = coreset.to_stan()
    assert "N_marginal" not in data and data["G"] == G_SMALL + G_LARGE
    post = coreset.laplace_.posterior
    idx = coreset.sample_indices_
    codes = np.searchsorted(coreset.groups_, g[idx])
    gw = np.where(codes < 10, 2.0, 1.0)
    with pytest.raises(ValueError, match="'student_t' base model integrates no group out"):
        multilevel_export_spec(
            post, X[idx], y[idx], coreset.sample_weight_, codes, coreset.groups_,
            group_weight=gw, centre=coreset.laplace_.mean,
        )  # fmt: skip
