"""The model contract, for every registered model: the registry drives these tests.

Each name of ``MODEL_NAMES`` - the built-ins, and a user's model made one by
``skcoreset.models.register`` (the probit model of ``tests/oracles/user_models.py``) - is
checked from its own test entries, written in its model file: ``reference_loglik`` (the
log-likelihood in ``scipy.stats``, from the textbook formulas) and ``reference_data`` (data
drawn from the model). A registered model without them fails here.

1. the kernels' log-likelihood of each row equals the SciPy reference at posterior draws;
2. the weighted log-likelihood's gradient and Hessian (in every parameter of the posterior, a
   free extra parameter's log included) equal central differences of the reference;
3. the sampler (MALA) draws the posterior of the reference, as importance sampling from the
   reference computes it (an oracle of a few lines, independent of any sampler);
4. a coreset built for the posterior (OMP) is closer to it than uniform subsamples;
5. every export - PyMC, NumPyro, Stan, Bambi - writes the library's posterior: the log
   densities of PyMC's and NumPyro's models equal the library's MALA target, Stan's data fit
   its program, Bambi's inputs carry the coreset (or Bambi says it cannot).

Tolerances follow from the quantities at hand: float64 rounding of the sums, the central
differences' own error (estimated by Richardson's comparison of two steps), and Monte Carlo
standard errors; a per-model special case stays in its own test file.
"""

import re
import warnings

import numpy as np
import pytest
import scipy.stats
from sklearn.base import clone

from skcoreset.cli import main, make_parser
from skcoreset.cli._algorithms import make_coreset
from skcoreset.coreset import OMPCoreset, UniformCoreset
from skcoreset.coreset._registry import ALGORITHMS
from skcoreset.linear_model import BayesianGLM
from skcoreset.models import MODEL_NAMES, GeneralModel, SingleIndexFamily, get_model, register
from skcoreset.models import _names as registry
from skcoreset.models._joint import JointExtra
from skcoreset.models._laplace import laplace_approximation
from skcoreset.models._recipes import ModelRecipes
from skcoreset.pipeline import make_pipeline
from skcoreset.sampler import _mala_kernels, ess_bulk, sample_mala
from skcoreset.sampler._mala_numpy import log_target

from .oracles.user_models import Probit

EPS = np.finfo(np.float64).eps

#: The user's model registered for the contract (a name of its own beside the built-ins).
USER_MODELS = {"probit": (Probit, "two classes")}

#: Every registered model, and the user's, registered by the fixture below.
CASES = [*MODEL_NAMES, *USER_MODELS]


@pytest.fixture(params=CASES)
def name(request):
    """A registered model's name (a user's registered for the test, then taken out)."""
    if request.param not in USER_MODELS:
        return request.param
    cls, targets = USER_MODELS[request.param]
    register(request.param, cls, targets=targets)
    request.addfinalizer(lambda: _unregister(request.param))
    return request.param


def _unregister(name):
    registry.REGISTERED.pop(name, None)
    registry.MODELS.pop(name, None)


def _coded(model, y):
    """The model for these targets and the targets in its coding (class labels coded as the
    estimators code them)."""
    if model.labels is None:
        return model, model.encode_targets(y)
    labels = model.labels.fit(y)
    return model.with_classes(labels.classes), labels.encode(y)


def _problem(name, n, seed=0, **params):
    """``(model, Xd, y, w)``: the model's reference data, coded, with random weights."""
    rng = np.random.RandomState(seed)
    X, y = get_model(name).reference_data(n, rng)
    model, y = _coded(get_model(name, **params), y)
    w = rng.uniform(0.5, 2.0, n)
    return model, model.design(X), y, w


def _posterior(model):
    """The posterior's parameters as one vector: a free extra parameter's log joins the
    coefficients (the Laplace fit's and the sampler's layout)."""
    return JointExtra(model) if model.n_extra else model


def _library_loglik(model, thetas, Xd, y):
    """(S, n): each row's log-likelihood at each draw, through the model's own kernels."""
    if model.family is None:
        return model.loglik_draws(thetas, Xd, y)
    Q = model.n_params(Xd.shape[1])
    extras = np.exp(thetas[:, Q]) if model.n_extra else None
    return model.loglik_matrix(Xd, y, thetas[:, :Q], extras=extras).T


def _reference(model, thetas, Xd, y):
    return model.reference_loglik(scipy.stats, np.atleast_2d(thetas), Xd, y)


def _draws_around_the_mode(model, Xd, y, w, n_draws, seed, spread=1.0):
    """Laplace draws of the posterior (``spread`` sds), and the fit."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a model's data warnings are not the point here
        lap = laplace_approximation(model, Xd, y, w, design=True)
    z = np.random.RandomState(seed).standard_normal((n_draws, lap.mean.shape[0]))
    return lap.mean + spread * z @ lap.chol.T, lap


# -- the test entries -----------------------------------------------------------------------------
def test_the_registry_is_every_model(name):
    """Every registered name builds a model of that name, with a single-index family or of
    draws, and its test entries: a registered model without them fails here."""
    model = get_model(name)
    assert model.name == name and name in MODEL_NAMES
    assert isinstance(model.family, SingleIndexFamily) or isinstance(model, GeneralModel)
    cls = type(model)
    assert cls.reference_data is not ModelRecipes.reference_data, "no reference_data"
    assert (
        cls.reference_loglik is not ModelRecipes.reference_loglik
        or cls.reference_logpdf is not ModelRecipes.reference_logpdf
    ), "no reference_logpdf (or reference_loglik)"


def test_a_model_registered_without_test_entries_fails_the_contract():
    """The contract's first check names what a model registered without its entries lacks."""
    from dataclasses import dataclass

    @dataclass(frozen=True, eq=False)
    class Bare(Probit):
        name = "bare"
        reference_logpdf = ModelRecipes.reference_logpdf
        reference_data = ModelRecipes.reference_data

    register("bare", Bare)
    try:
        with pytest.raises(AssertionError, match="no reference_data"):
            test_the_registry_is_every_model("bare")
        with pytest.raises(NotImplementedError, match="'bare' model has no reference data"):
            get_model("bare").reference_data(10, np.random.RandomState(0))
    finally:
        _unregister("bare")


# -- 1. the log-likelihood ------------------------------------------------------------------------
def test_loglik_is_the_scipy_reference(name):
    """Each row's log-likelihood through the kernels equals SciPy's at draws two posterior
    sds around the mode (the extra parameters varying with them). Both sides round a few
    operations per row and the kernels' elementary functions are accurate to a few ulp
    (doc/models.md): 1e-12 of the row's value, or of 1 near zero."""
    model, Xd, y, w = _problem(name, 200)
    thetas, _ = _draws_around_the_mode(model, Xd, y, w, 6, seed=1, spread=2.0)
    got = _library_loglik(model, thetas, Xd, y)
    np.testing.assert_allclose(got, _reference(model, thetas, Xd, y), rtol=1e-12, atol=1e-12)


# -- 2. derivatives -------------------------------------------------------------------------------
def _differences(model, theta, Xd, y, w, steps):
    """Central differences of the reference's weighted log-likelihood at ``theta``: the
    gradient and the Hessian, with steps ``steps`` per coordinate, from one call of the
    reference on all the displaced points. Also the bound on their rounding error."""
    P = theta.shape[0]
    E = np.diag(steps)
    points = [theta]
    for j in range(P):
        points += [theta + E[j], theta - E[j]]
    for j in range(P):
        for k in range(P):
            for a in (1, -1):
                for b in (1, -1):
                    points.append(theta + a * E[j] + b * E[k])
    rows = _reference(model, np.array(points), Xd, y)
    f = rows @ w
    grad = np.array([f[1 + 2 * j] - f[2 + 2 * j] for j in range(P)]) / (2 * steps)
    quads = f[1 + 2 * P :].reshape(P, P, 4)  # (++, +-, -+, --)
    H = (quads[..., 0] - quads[..., 1] - quads[..., 2] + quads[..., 3]) / (
        4 * np.outer(steps, steps)
    )
    # each evaluation of f rounds n terms and their sum: at most a few eps of sum |w l|
    delta = 16 * EPS * (np.abs(rows[0]) @ w)
    return f[0], grad, H, delta


def test_gradient_and_hessian_are_central_differences_of_the_reference(name):
    """The weighted log-likelihood, its gradient and its Hessian in every parameter of the
    posterior (coefficients, and a free extra parameter's log or the model's own extra
    parameters) against central differences of the SciPy reference, one posterior sd off
    the mode. The differences' error is bounded by comparing steps h and 2h (the truncation
    error at h is a third of the difference, Richardson) plus their rounding (delta / h for
    the gradient, delta / h^2 for the Hessian); the check has teeth: that bound is far below
    the derivatives' own size."""
    model, Xd, y, w = _problem(name, 200)
    (theta,), lap = _draws_around_the_mode(model, Xd, y, w, 1, seed=2)
    post = _posterior(model)
    ll, grad = post.weighted_loglik(theta, Xd, y, w)
    H = -post.weighted_loglik_hessian(theta, Xd, y, w)
    sd = np.sqrt(np.diag(lap.cov))
    # the gradient's steps 1e-3 sd, the Hessian's 1e-2 sd (its rounding is delta / h^2)
    f, g1, _, delta = _differences(model, theta, Xd, y, w, 1e-3 * sd)
    _, g2, _, _ = _differences(model, theta, Xd, y, w, 2e-3 * sd)
    _, _, H1, _ = _differences(model, theta, Xd, y, w, 1e-2 * sd)
    _, _, H2, _ = _differences(model, theta, Xd, y, w, 2e-2 * sd)
    assert ll == pytest.approx(f, rel=1e-12, abs=delta)
    g_tol = np.abs(g1 - g2) + 2 * delta / (1e-3 * sd)
    assert np.all(g_tol < 1e-4 * np.abs(grad).max()), g_tol
    assert np.all(np.abs(grad - g1) <= g_tol), (grad, g1, g_tol)
    h_tol = np.abs(H1 - H2) + 2 * delta / np.outer(1e-2 * sd, 1e-2 * sd)
    assert np.all(h_tol < 1e-3 * np.abs(H).max()), h_tol
    assert np.all(np.abs(H - H1) <= h_tol), (H, H1, h_tol)


# -- 3. the sampler -------------------------------------------------------------------------------
def _log_prior(model, thetas):
    """The posterior's normal prior (log density up to its constant) on the joint layout."""
    post = _posterior(model)
    P = thetas.shape[1]
    prec = post.prior_precision(P)
    mean = np.zeros(P)
    if model.n_extra:
        mean[-1] = model.extra_prior[0]
    return -0.5 * ((thetas - mean) ** 2) @ prec


def _importance_moments(model, Xd, y, w, lap, n_draws, seed):
    """Posterior means and sds by self-normalised importance sampling of the reference
    posterior from a Student-t (5 degrees of freedom) at the Laplace fit, 1.2 times as wide,
    with their Monte Carlo standard errors (delta method)."""
    P = lap.mean.shape[0]
    rng = np.random.RandomState(seed)
    proposal = scipy.stats.multivariate_t(lap.mean, 1.44 * lap.cov, df=5, seed=rng)
    thetas = proposal.rvs(n_draws).reshape(n_draws, P)
    log_w = _reference(model, thetas, Xd, y) @ w + _log_prior(model, thetas)
    log_w -= proposal.logpdf(thetas)
    p = np.exp(log_w - log_w.max())
    p /= p.sum()
    mean = p @ thetas
    dev = thetas - mean
    var = p @ dev**2
    se_mean = np.sqrt(p**2 @ dev**2)
    se_var = np.sqrt(p**2 @ (dev**2 - var) ** 2)
    ess = 1.0 / np.sum(p**2)
    return mean, np.sqrt(var), se_mean, se_var / (2 * np.sqrt(var)), ess


def test_mala_draws_the_reference_posterior(name):
    """MALA's posterior means and sds (4 chains of 1500 draws, preconditioned by the Laplace
    fit, the free extra parameter's log sampled) against importance sampling of the SciPy
    reference posterior: z-scores below 4.5 given both Monte Carlo errors (MALA's from its
    ESS), a false alarm once in 10^4 runs of the whole registry."""
    model, Xd, y, w = _problem(name, 80, prior_scale=2.0)
    _, lap = _draws_around_the_mode(model, Xd, y, w, 0, seed=3)
    mean, sd, se_mean, se_sd, ess_is = _importance_moments(model, Xd, y, w, lap, 40_000, 4)
    assert ess_is > 10_000  # the proposal covers the posterior
    init = lap.mean + 0.5 * np.random.RandomState(5).standard_normal((4, lap.mean.shape[0]))
    extra = {"extra_prior": model.extra_prior} if model.n_extra else {}
    result = sample_mala(
        model,
        Xd,
        y,
        w,
        init,
        prior_scale=model.prior_scale,
        sample_extra=bool(model.n_extra),
        precond_chol=lap.chol,
        n_samples=1500,
        n_warmup=500,
        random_state=6,
        **extra,
    )
    draws = result.draws
    flat = draws.reshape(-1, draws.shape[2])
    ess = ess_bulk(draws)
    m_sd = flat.std(axis=0)
    z_mean = (flat.mean(axis=0) - mean) / np.sqrt(m_sd**2 / ess + se_mean**2)
    z_sd = (m_sd - sd) / np.sqrt(m_sd**2 / (2 * ess) + se_sd**2)
    assert np.all(np.abs(z_mean) < 4.5), z_mean
    assert np.all(np.abs(z_sd) < 4.5), z_sd


# -- 4. a coreset ---------------------------------------------------------------------------------
def test_a_coreset_is_closer_to_the_posterior_than_uniform_subsamples(name):
    """OMP's coreset of 40 points has a Laplace fit closer (laplace_kl_) to the data's
    posterior than every one of five uniform subsamples of the same size: the point of a
    coreset, for every model."""
    X, y = get_model(name).reference_data(3000, np.random.RandomState(7))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 40 points: a quality warning, as it should
        omp = OMPCoreset(n_points=40, model=name, random_state=0).fit(X, y).laplace_kl_
        uniform = [
            UniformCoreset(n_points=40, model=name, random_state=s).fit(X, y).laplace_kl_
            for s in range(5)
        ]
    assert omp < min(uniform), (omp, uniform)


# -- 5. the exports -------------------------------------------------------------------------------
def _coreset(name, n_points=30):
    X, y = get_model(name).reference_data(300, np.random.RandomState(0))
    coreset = UniformCoreset(n_points=n_points, projection=None, model=name, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return coreset.fit(X, y), X, y


def _random_points(coreset, n_points=4, seed=1):
    """Random unconstrained values: (library parameter vectors (S, P), the same values by
    name: coef, intercept, and the log of each extra parameter)."""
    spec = coreset._export_spec(None, None, "test")
    rng = np.random.RandomState(seed)
    S = n_points
    coef = 0.3 * rng.standard_normal((S,) + spec.coef_sd.shape)
    intercept = 0.3 * rng.standard_normal((S,) + np.shape(spec.intercept_sd))
    logs = {e.name: e.log_mean + 0.3 * rng.standard_normal(S) for e in spec.extras}
    model = coreset._data_prior.model
    if spec.n_classes is not None:
        theta = np.concatenate([coef, intercept[..., None]], axis=2).reshape(S, -1)
    else:
        theta = np.column_stack([coef, intercept])
    # the models of draws hold their extra parameters' logs centred on their prior means
    centre = model.family is None
    extras = [logs[e.name] - (e.log_mean if centre else 0.0) for e in spec.extras]
    theta = np.column_stack([theta, *extras])
    named = [
        {"coef": coef[s], "intercept": intercept[s], **{k: v[s] for k, v in logs.items()}}
        for s in range(S)
    ]
    return theta, named


def library_log_posterior(coreset, thetas):
    """The target of the library's MALA on the coreset at ``thetas`` (the sampler's own
    function: the compiled kernel, or the NumPy target of a model of draws), plus the
    normalising constants of its normal priors."""
    prior = coreset._data_prior
    model = prior.model
    node = coreset._coreset_node
    Xd, y, w = model.design(node.X), node.y, coreset.sample_weight_
    Q = Xd.shape[1]
    thetas = np.ascontiguousarray(thetas, dtype=np.float64)
    if model.family is None:
        prec = model.prior_precision(model.n_params(Q))
        lp, _ = log_target(model, Xd, y, w, prec)(thetas)
        log_sds = -0.5 * np.log(prec)
    else:
        prec = np.ascontiguousarray(model.prior_precision(Q))
        sample_extra = model.has_extra
        s_mu, s_sd = prior.extra_prior()
        lp, grad = np.empty(thetas.shape[0]), np.empty(thetas.shape)
        extra = model.extra_value if not sample_extra else 1.0
        extra_prior = (s_mu, 1 / s_sd**2) if sample_extra else None
        data = _mala_kernels.target_data(model.family, Xd, y, w, extra, extra_prior)
        _mala_kernels.mala_init(model.family, thetas, data, prec, extra, extra_prior, lp, grad)
        log_sds = np.append(-0.5 * np.log(prec), np.log(s_sd) if sample_extra else [])
    return lp - np.sum(log_sds) - 0.5 * log_sds.shape[0] * np.log(2 * np.pi)


def _export_rtol(coreset, language):
    """Float64 rounding of the sums, or the accuracy the model's recipe states for the
    language's own functions (``export_rtol``)."""
    return coreset._data_prior.model.export_rtol.get(language, 1e-10)


def test_pymc_log_density_is_the_library_log_posterior(name):
    """The PyMC model's log density (the log transforms' Jacobians included) at random
    unconstrained values is the library's log posterior on the coreset."""
    pytest.importorskip("pymc")
    coreset, X, y = _coreset(name)
    model = coreset.to_pymc(X, y)
    logp = model.compile_logp(jacobian=True)
    thetas, points = _random_points(coreset)
    values = {rv.name: model.rvs_to_values[rv].name for rv in model.free_RVs}
    got = [
        logp({values[k]: np.asarray(v) for k, v in point.items()}) for point in points
    ]  # the extras' value variables are their logs ('<name>_log__')
    rtol = _export_rtol(coreset, "pymc")
    np.testing.assert_allclose(got, library_log_posterior(coreset, thetas), rtol=rtol)


def test_numpyro_log_density_is_the_library_log_posterior(name):
    """NumPyro's potential energy at random unconstrained values (the log of each positive
    parameter) is minus the library's log posterior on the coreset."""
    numpyro = pytest.importorskip("numpyro")
    from numpyro.infer.util import potential_energy

    numpyro.enable_x64()
    coreset, X, y = _coreset(name)
    model = coreset.to_numpyro(X, y)
    thetas, points = _random_points(coreset)
    got = [-float(potential_energy(model, (), {}, point)) for point in points]
    rtol = _export_rtol(coreset, "numpyro")
    np.testing.assert_allclose(got, library_log_posterior(coreset, thetas), rtol=rtol)


_STAN_TYPES = {"int": np.integer, "real": np.floating, "vector": np.floating, "matrix": np.floating}


def _stan_data_declarations(program):
    """``name -> (type, dimensions)`` of the program's data block."""
    block = re.search(r"data \{\n(.*?)\n\}", program, re.S).group(1)
    out = {}
    for line in block.splitlines():
        m = re.match(
            r"\s*(array\[(\w+)\] )?(int|real|vector|matrix)(<[^>]*>)?(\[([^\]]*)\])? (\w+);", line
        )
        assert m, line
        dims = ([m.group(2)] if m.group(2) else []) + (
            [d.strip() for d in m.group(6).split(",")] if m.group(6) else []
        )
        out[m.group(7)] = (m.group(3), dims)
    return out


def test_stan_data_fit_the_program(name):
    """Stan is not run here (cmdstanpy is optional): its program is checked as text. Every
    data item is declared with its shape and type, the targets are the model's recipe's
    (Stan's coding of the coreset's rows), each free extra parameter has its log-normal
    prior, and each row's weighted statement is the recipe's."""
    coreset, X, y = _coreset(name)
    program, data = coreset.to_stan(X, y)
    decl = _stan_data_declarations(program)
    assert set(decl) == set(data)
    sizes = {k: v for k, v in data.items() if k in ("N", "D", "K")}
    sizes["K - 1"] = sizes.get("K", 0) - 1
    for key, (kind, dims) in decl.items():
        value = np.asarray(data[key])
        assert value.shape == tuple(sizes[d] for d in dims), key
        assert np.issubdtype(value.dtype, _STAN_TYPES[kind]), key
    spec = coreset._export_spec(X, y, "test")
    y_type, y_data, row = spec.recipes.stan_likelihood(spec.y)
    assert f"  {y_type} y;" in program.splitlines()
    np.testing.assert_array_equal(data["y"], y_data)
    np.testing.assert_array_equal(data["w"], coreset.sample_weight_)
    statement = f"    target += w[n] * {row.format(*spec.extra_names())};"
    assert statement in program.splitlines()
    for e in spec.extras:
        assert (data[f"{e.name}_log_mean"], data[f"{e.name}_log_sd"]) == (e.log_mean, e.log_sd)
        assert f"real<lower=0> {e.name};" in program
        assert (
            f"target += lognormal_lpdf({e.name} | {e.name}_log_mean, {e.name}_log_sd);" in program
        )


def test_bambi_inputs_carry_the_coreset_or_bambi_says_it_cannot(name):
    """Bambi's inputs, where the model has a Bambi family: the coreset's rows, targets and
    weights, and its prior sds; else a NotImplementedError naming the model."""
    pytest.importorskip("pandas")
    coreset, X, y = _coreset(name)
    try:
        export = coreset.to_bambi(X, y)
    except NotImplementedError as exc:
        assert f"The {name!r} model has no Bambi export" in str(exc)
        return
    spec = coreset._export_spec(X, y, "test")
    np.testing.assert_array_equal(export.data.iloc[:, : spec.X.shape[1]].to_numpy(), spec.X)
    np.testing.assert_array_equal(export.data["y"], spec.y)
    np.testing.assert_array_equal(export.data["w"], coreset.sample_weight_)
    terms = [t for t in export.priors if t in export.data.columns or t == "Intercept"]
    sds = [export.priors[t][1]["sigma"] for t in terms]
    np.testing.assert_allclose(sds, coreset.prior_scale_, rtol=1e-14)


# -- a registered model is first-class -------------------------------------------------------
@pytest.mark.parametrize(
    "algorithm",
    [a.name for a in ALGORITHMS if a.model is None],  # the algorithms that take model=
)
def test_every_coreset_algorithm_takes_a_registered_model(algorithm):
    """``model="probit"`` once registered, in every algorithm that takes a model: the
    estimator checks the name against the live registry, and fits the registered class."""
    register("probit", Probit, targets="two classes")
    try:
        X, y = get_model("probit").reference_data(600, np.random.RandomState(8))
        coreset = make_coreset(algorithm, 30, model="probit", random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # 30 points: quality warnings
            coreset.fit(X, y)
        assert coreset.model_ == "probit" and isinstance(coreset._data_prior.model, Probit)
        w = coreset.sample_weight_
        assert 0 < w.shape[0] <= 30 and np.all(np.isfinite(w) & (w > 0))
        assert np.isfinite(coreset.laplace_kl_)
    finally:
        _unregister("probit")
    with pytest.raises(ValueError, match="model"):  # and unknown once taken out
        make_coreset(algorithm, 30, model="probit").fit(X, y)


def test_a_registered_model_in_the_estimators_pipelines_and_command_line(tmp_path):
    """A registered model by its name in BayesianGLM, behind a coreset in a pipeline (the
    composition reads the final estimator's model), and on the command line (the build of
    ``skcoreset build --model probit`` is the estimator's coreset); its name in the help."""
    register("probit", Probit, targets="two classes")
    try:
        X, y = get_model("probit").reference_data(600, np.random.RandomState(9))
        glm = BayesianGLM(model="probit", n_samples=300, n_warmup=300, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # short chains' convergence notes
            glm.fit(X, y)
            pipe = make_pipeline(
                OMPCoreset(n_points=60, random_state=0), clone(glm).set_params(n_samples=100)
            ).fit(X, y)
        # the probit posterior around the coefficients that drew y (a logistic fit's would
        # be 1.6 times as large)
        sd = glm.coef_samples_.reshape(-1, 2).std(axis=0)
        assert np.all(np.abs(glm.coef_ - [0.8, -0.5]) < 5 * sd), (glm.coef_, sd)
        assert set(glm.predict(X[:20])) <= {0, 1}
        assert pipe[0].model_ == "probit"
        np.savez(tmp_path / "data.npz", X=X, y=y)
        status = main(
            ["build", str(tmp_path / "data.npz"), "--model", "probit", "--algorithm", "omp",
             "--n-points", "40", "--random-state", "3", "-o", str(tmp_path / "out.npz")]
        )  # fmt: skip
        assert status == 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = OMPCoreset(40, model="probit", random_state=3).fit(X, y)
        rows = np.load(tmp_path / "out.npz")["row"]
        np.testing.assert_array_equal(rows, expected.sample_indices_)
        assert "probit (two classes)" in " ".join(_build_help().split())
    finally:
        _unregister("probit")


def _build_help():
    commands = next(a for a in make_parser()._actions if a.dest == "command").choices
    return commands["build"].format_help()


def test_register_refuses_what_it_cannot_make_a_model_of():
    """A built-in's name, 'auto', a name that is not the class's, a class that is not a
    model, and a second class under a taken name are refused; the same class again is not
    (a script run twice)."""
    from dataclasses import dataclass

    with pytest.raises(ValueError, match="name of the package's own"):
        register("logistic", get_model("logistic").__class__)
    with pytest.raises(ValueError, match="the class's own name attribute, 'probit'"):
        register("my_probit", Probit)
    with pytest.raises(TypeError, match="subclass of skcoreset.models.GLM"):
        register("probit", object)

    @dataclass(frozen=True, eq=False)
    class Other(Probit):
        pass

    register("probit", Probit)
    try:
        register("probit", Probit)
        with pytest.raises(ValueError, match="registered already"):
            register("probit", Other)
    finally:
        _unregister("probit")


#: The whole contract, one check per function: for a model registered elsewhere (the
#: complementary log-log model of examples/plot_register_cloglog.py, in tests/test_examples.py).
CONTRACT = (
    test_the_registry_is_every_model,
    test_loglik_is_the_scipy_reference,
    test_gradient_and_hessian_are_central_differences_of_the_reference,
    test_mala_draws_the_reference_posterior,
    test_a_coreset_is_closer_to_the_posterior_than_uniform_subsamples,
    test_pymc_log_density_is_the_library_log_posterior,
    test_numpyro_log_density_is_the_library_log_posterior,
    test_stan_data_fit_the_program,
    test_bambi_inputs_carry_the_coreset_or_bambi_says_it_cannot,
)
