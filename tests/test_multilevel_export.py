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
"""

import re

import numpy as np
import pytest
import scipy.stats as stats
from scipy.special import expit

from skcoreset.coreset import OMPCoreset
from skcoreset.models import Multilevel

N_ROWS, N_GROUPS = 600, 12
#: Agreement of (export - oracle) across parameter points: float64 sums of some 300 rows.
ATOL = 1e-8


def _data(base, seed=0):
    """Grouped data of a random intercept and a random slope on column 0 (string group
    labels; the logistic model's targets string class labels, coded as the library codes)."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((N_ROWS, 2))
    codes = rng.randint(N_GROUPS, size=N_ROWS)
    u = rng.normal(0.0, [0.7, 0.4], (N_GROUPS, 2))
    eta = X @ [0.5, -0.3] + 0.2 + u[codes, 0] + u[codes, 1] * X[:, 0]
    if base == "logistic":
        y = np.array(["no", "yes"])[(rng.random_sample(N_ROWS) < expit(eta)).astype(int)]
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
    """Random constrained parameter values by name (the extra parameter where the model has
    one: the negative binomial's ``alpha``)."""
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
        if post.E:
            point[post.base.extra_name] = np.asarray(np.exp(0.3 * rng.standard_normal()))
        out.append(point)
    return out


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
    extra = np.log(point[base.extra_name]) if post.E else None
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


@pytest.mark.parametrize("base", ["logistic", "negative_binomial"])
def test_the_oracle_is_the_library_multilevel_posterior(base):
    """The oracle's density, with the log transforms' Jacobians (log tau, log alpha: the
    library samples their logs), is the library's multilevel log posterior on the coreset's
    rows up to a constant."""
    coreset = _coreset(base)[0]
    post = coreset.laplace_.posterior
    got, want = [], []
    for point in _points(coreset):
        jacobian = np.sum(np.log(point["group_sd"]))
        if post.E:
            jacobian += np.log(point[post.base.extra_name])
        got.append(oracle_log_joint(coreset, point) + jacobian)
        want.append(library_log_posterior(coreset, point))
    _assert_same_up_to_a_constant(got, want)


@pytest.mark.parametrize("base", ["logistic", "negative_binomial"])
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
    extra = ["alpha"] if base == "negative_binomial" else []
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


@pytest.mark.parametrize("base", ["logistic", "negative_binomial"])
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
    extra = ["alpha"] if base == "negative_binomial" else []
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


@pytest.mark.parametrize("base", ["logistic", "negative_binomial"])
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
    }[base]
    assert f"    target += w[n] * {row};" in lines
    if base == "negative_binomial":
        assert "  real<lower=0> alpha;" in lines
        assert "  target += lognormal_lpdf(alpha | alpha_log_mean, alpha_log_sd);" in lines

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
    assert data["y"].dtype.kind == "i"
    np.testing.assert_array_equal(data["coef_sd"], post.prior_scale[:2])
    assert data["intercept_sd"] == post.prior_scale[2]
    assert data["group_sd_df"] == 3.0 and data["group_sd_scale"] == post.tau_scale
    if base == "negative_binomial":
        assert (data["alpha_log_mean"], data["alpha_log_sd"]) == post.extra_prior
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
