"""The exports to probabilistic programming languages: one posterior wherever it runs.

* The exported models' log densities equal the library's weighted log posterior (the function
  its MALA targets, with the priors' normalising constants) at random unconstrained values,
  the log transforms' Jacobians included: for every registered model in
  tests/test_model_contract.py; here the special cases (a fixed extra parameter, Poisson
  rates).
* NUTS on an export samples the posterior the library's MALA samples on the same coreset:
  posterior means and sds agree within their Monte Carlo error (ESS-based standard errors).
* Stan's program and data agree with each other and with the model (every registered model's
  in tests/test_model_contract.py); each likelihood's Stan statement; Bambi's inputs with the
  coreset's prior.
* The compositions hand the coreset's full-data prior to an 'auto' Bayesian estimator.
"""

import sys
import warnings

import numpy as np
import pytest
from sklearn.base import clone, is_classifier

from skcoreset.compose import CoresetClassifier, CoresetRegressor
from skcoreset.coreset import OMPCoreset, UniformCoreset
from skcoreset.datasets import (
    make_linear_regression,
    make_logistic_regression,
    make_poisson_regression,
)
from skcoreset.linear_model import (
    BayesianGLM,
    BayesianLinearRegression,
    BayesianLogisticRegression,
    BayesianNegativeBinomialRegression,
)
from skcoreset.models import CustomModel
from skcoreset.pipeline import make_pipeline

from .test_model_contract import _random_points, library_log_posterior


def _data(name, n=300, seed=0):
    """Small data of each model (class labels as strings: the coding is the library's)."""
    rng = np.random.RandomState(seed)
    if name == "logistic":
        X, y = make_logistic_regression(n_samples=n, n_features=2, random_state=seed)
        return X, np.array(["no", "yes"])[y]
    if name == "poisson":
        return make_poisson_regression(n_samples=n, n_features=2, random_state=seed)
    if name in ("gaussian", "student_t"):
        X, y = make_linear_regression(n_samples=n, n_features=2, random_state=seed)
        if name == "student_t":
            y = y + rng.standard_t(3, n)
        return X, 10.0 + 3.0 * y  # off the unit scale: the extra priors follow y's
    X = rng.standard_normal((n, 2))
    eta = X @ [0.5, -0.3] + 1.0
    if name == "negative_binomial":
        return X, rng.negative_binomial(2.0, 2.0 / (2.0 + np.exp(eta))).astype(float)
    if name == "gamma":
        return X, rng.gamma(3.0, np.exp(eta) / 3.0)
    E = np.column_stack([np.zeros(n), X @ [[1.0, -0.5], [0.5, 1.0]] + [0.2, -0.1]])
    p = np.exp(E - E.max(axis=1, keepdims=True))
    codes = (rng.random_sample(n)[:, None] > np.cumsum(p / p.sum(1, keepdims=True), 1)).sum(1)
    return X, np.array(["a", "b", "c"])[codes]


def _coreset(name, n_points=30, **params):
    X, y = _data(name)
    coreset = UniformCoreset(
        n_points=n_points, projection=None, model=name, random_state=0, **params
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return coreset.fit(X, y), X, y


# -- log densities (every registered model's: tests/test_model_contract.py) -----------------
def test_log_density_with_a_fixed_extra_parameter():
    """A model object whose extra parameter is fixed: a constant of the exports."""
    pytest.importorskip("pymc")
    from skcoreset.models import GaussianModel

    X, y = _data("gaussian")
    coreset = UniformCoreset(
        n_points=30, projection=None, model=GaussianModel(extra=3.0), random_state=0
    ).fit(X, y)
    model = coreset.to_pymc()
    assert sorted(rv.name for rv in model.free_RVs) == ["coef", "intercept"]
    spec = coreset._export_spec(None, None, "test")
    point = {"coef": np.array([0.2, -0.1]), "intercept": np.array(9.0)}
    node = coreset._coreset_node
    eta = node.X @ point["coef"] + point["intercept"]
    ll = coreset.sample_weight_ @ (
        -0.5 * ((node.y - eta) / 3.0) ** 2 - np.log(3.0) - 0.5 * np.log(2 * np.pi)
    )
    sds = np.append(spec.coef_sd, spec.intercept_sd)
    theta = np.append(point["coef"], point["intercept"])
    lp = ll - 0.5 * np.sum((theta / sds) ** 2) - np.sum(np.log(sds * np.sqrt(2 * np.pi)))
    np.testing.assert_allclose(model.compile_logp()(point), lp, rtol=1e-10)


# -- NUTS on the exports against the library's MALA ---------------------------------------
def _draws_of(estimator):
    """The MALA draws by name, (chains, draws, ...)."""
    draws = {"coef": estimator.coef_samples_, "intercept": estimator.intercept_samples_}
    for name in ("noise_scale", "alpha", "shape"):
        if hasattr(estimator, f"{name}_samples_"):
            draws[name] = getattr(estimator, f"{name}_samples_")
    return draws


def _assert_same_posterior(nuts, mala, z_max=4.5):
    """Posterior means and sds of every coordinate agree within their Monte Carlo error:
    z-scores from the ESS of each sample (arviz's bulk ESS)."""
    import arviz

    for name, a in nuts.items():
        b = mala[name]
        a, b = (np.asarray(v, dtype=np.float64).reshape(v.shape[0], v.shape[1], -1) for v in (a, b))
        for j in range(a.shape[2]):
            ess_a = float(arviz.ess(a[:, :, j]))
            ess_b = float(arviz.ess(b[:, :, j]))
            va, vb = a[:, :, j].var(), b[:, :, j].var()
            z_mean = (a[:, :, j].mean() - b[:, :, j].mean()) / np.sqrt(va / ess_a + vb / ess_b)
            # the sd's standard error, sd / sqrt(2 ESS) for a near-normal marginal
            sa, sb = np.sqrt(va), np.sqrt(vb)
            z_sd = (sa - sb) / np.sqrt(va / (2 * ess_a) + vb / (2 * ess_b))
            assert abs(z_mean) < z_max, (name, j, z_mean)
            assert abs(z_sd) < z_max, (name, j, z_sd)


def _mala_on_coreset(coreset, estimator, X, y):
    """The library's MALA on the coreset's rows, with the coreset's prior (as the
    compositions hand it on)."""
    meta = CoresetClassifier if is_classifier(estimator) else CoresetRegressor
    fitted = meta(coreset, estimator).fit(X, y)
    return fitted.coreset_, fitted.estimator_


@pytest.mark.parametrize(
    "name, estimator",
    [
        ("logistic", BayesianLogisticRegression),
        ("gaussian", BayesianLinearRegression),
    ],
)
def test_pymc_nuts_samples_the_mala_posterior(name, estimator):
    pm = pytest.importorskip("pymc")
    X, y = _data(name, n=1000)
    coreset = OMPCoreset(n_points=40, model=name, random_state=0)
    mala = estimator(n_samples=2000, n_warmup=500, random_state=0)
    coreset, mala = _mala_on_coreset(coreset, mala, X, y)
    with coreset.to_pymc(X, y):
        idata = pm.sample(
            draws=1000,
            tune=500,
            chains=2,
            cores=1,
            random_seed=0,
            progressbar=False,
            compute_convergence_checks=False,
        )
    nuts = {k: idata.posterior[k].values for k in _draws_of(mala)}
    _assert_same_posterior(nuts, _draws_of(mala))


@pytest.mark.parametrize(
    "name, estimator",
    [
        ("negative_binomial", BayesianNegativeBinomialRegression),
        ("multinomial", BayesianLogisticRegression),
    ],
)
def test_numpyro_nuts_samples_the_mala_posterior(name, estimator):
    numpyro = pytest.importorskip("numpyro")
    import jax

    numpyro.enable_x64()
    X, y = _data(name, n=1000)
    coreset = OMPCoreset(n_points=40, model=name, random_state=0)
    mala = estimator(n_samples=2000, n_warmup=500, random_state=0)
    coreset, mala = _mala_on_coreset(coreset, mala, X, y)
    mcmc = numpyro.infer.MCMC(
        numpyro.infer.NUTS(coreset.to_numpyro(X, y)),
        num_warmup=500,
        num_samples=1000,
        num_chains=2,
        chain_method="sequential",
        progress_bar=False,
    )
    mcmc.run(jax.random.PRNGKey(0))
    nuts = {k: np.asarray(v) for k, v in mcmc.get_samples(group_by_chain=True).items()}
    draws = _draws_of(mala)
    if name == "multinomial":  # the library reports the reference class's zeros too
        draws = {k: v[:, :, 1:] for k, v in draws.items()}
    _assert_same_posterior({k: nuts[k] for k in draws}, draws)


# -- Stan (every registered model's data against its program: tests/test_model_contract.py) --
@pytest.mark.parametrize(
    "name, line",
    [
        ("logistic", "bernoulli_logit_lpmf(y[n] | eta[n])"),
        ("poisson", "poisson_log_lpmf(y[n] | eta[n])"),
        ("gaussian", "normal_lpdf(y[n] | eta[n], noise_scale)"),
        ("negative_binomial", "neg_binomial_2_log_lpmf(y[n] | eta[n], inv(alpha))"),
        ("gamma", "gamma_lpdf(y[n] | shape, shape * exp(-eta[n]))"),
        ("multinomial", "categorical_logit_lpmf(y[n] | append_row(0, eta[n]'))"),
        ("student_t", "student_t_lpdf(y[n] | df, eta[n], scale)"),
    ],
)
def test_stan_likelihood_line(name, line):
    """Each row's log-likelihood, weighted: the model's likelihood in Stan's terms (the
    negative binomial's size the reciprocal of the library's dispersion, the gamma's rate
    shape / mean)."""
    program, _ = _coreset(name)[0].to_stan()
    assert f"    target += w[n] * {line};" in program.splitlines()


def _rates_coreset():
    """A Poisson coreset of rates (counts / 3: not integers), which the library's Poisson
    model takes, its density ``y eta - exp(eta) - lgamma(y + 1)``."""
    X, y = _data("poisson")
    coreset = UniformCoreset(n_points=30, projection=None, model="poisson", random_state=0)
    return coreset.fit(X, y / 3.0), X, y / 3.0


def test_poisson_rates_pymc_log_density_is_the_library_log_posterior():
    """PyMC's Poisson floors rates (-1941.64 against the library's -1733.69 in issue 46): the
    export writes the library's density."""
    pytest.importorskip("pymc")
    coreset, X, y = _rates_coreset()
    assert not np.all(coreset.get_coreset()[1] == np.round(coreset.get_coreset()[1]))
    model = coreset.to_pymc(X, y)
    logp = model.compile_logp(jacobian=True)
    thetas, points = _random_points(coreset)
    got = [logp({k: np.asarray(v) for k, v in point.items()}) for point in points]
    np.testing.assert_allclose(got, library_log_posterior(coreset, thetas), rtol=1e-10)


def test_poisson_rates_numpyro_log_density_is_the_library_log_posterior():
    """NumPyro's Poisson is -inf off the integers (NUTS could not start): the export writes
    the library's density, its draws counts."""
    numpyro = pytest.importorskip("numpyro")
    from numpyro.infer.util import potential_energy

    numpyro.enable_x64()
    coreset, X, y = _rates_coreset()
    model = coreset.to_numpyro(X, y)
    thetas, points = _random_points(coreset)
    got = [-float(potential_energy(model, (), {}, point)) for point in points]
    np.testing.assert_allclose(got, library_log_posterior(coreset, thetas), rtol=1e-10)
    trace = numpyro.handlers.trace(numpyro.handlers.seed(model, 0)).get_trace()
    assert trace["y"]["fn"].log_prob(trace["y"]["value"]).shape == (coreset.n_points_,)


def test_poisson_rates_in_stan_and_bambi():
    """Stan's Poisson takes integers: the program takes real targets and writes the library's
    density of each; Bambi's Poisson family cannot, and says so."""
    coreset, X, y = _rates_coreset()
    program, data = coreset.to_stan(X, y)
    assert "  vector<lower=0>[N] y;" in program.splitlines()
    row = "    target += w[n] * (y[n] * eta[n] - exp(eta[n]) - lgamma(y[n] + 1));"
    assert row in program.splitlines()
    np.testing.assert_array_equal(data["y"], coreset.get_coreset()[1])
    assert data["y"].dtype == np.float64
    with pytest.raises(NotImplementedError, match="rates .* to_pymc, to_numpyro or to_stan"):
        coreset.to_bambi()
    # integer counts keep Stan's own Poisson
    program, data = _coreset("poisson")[0].to_stan()
    assert "    target += w[n] * poisson_log_lpmf(y[n] | eta[n]);" in program.splitlines()


# -- Bambi -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["poisson", "gaussian", "negative_binomial"])
def test_bambi_inputs_carry_the_coreset_prior(name):
    pytest.importorskip("pandas")
    coreset, X, y = _coreset(name)
    export = coreset.to_bambi(X, y)
    spec = coreset._export_spec(X, y, "test")
    np.testing.assert_array_equal(export.data[["x0", "x1"]].to_numpy(), spec.X)
    np.testing.assert_array_equal(export.data["y"], spec.y)
    np.testing.assert_array_equal(export.data["w"], coreset.sample_weight_)
    assert export.formula == "weighted(y, w) ~ 1 + x0 + x1"
    assert export.model_kwargs == {"center_predictors": False}
    sds = [export.priors[k][1]["sigma"] for k in ("x0", "x1", "Intercept")]
    np.testing.assert_allclose(sds, coreset.prior_scale_, rtol=1e-14)
    for e in spec.extras:
        # Bambi's negative binomial alpha is the reciprocal of the library's: log flips sign
        bambi_name = {"noise_scale": "sigma", "alpha": "alpha"}[e.name]
        sign = -1.0 if name == "negative_binomial" else 1.0
        assert export.priors[bambi_name] == (
            "LogNormal",
            {"mu": sign * e.log_mean, "sigma": e.log_sd},
        )


@pytest.mark.parametrize("name", ["logistic", "gamma", "multinomial", "student_t"])
def test_bambi_export_only_where_its_weighted_response_is_right(name):
    coreset = _coreset(name)[0]
    with pytest.raises(NotImplementedError, match="Bambi's weighted response"):
        coreset.to_bambi()


# -- inputs and errors -------------------------------------------------------------------------
def test_the_rows_of_x_are_the_coreset_rows():
    pytest.importorskip("pymc")
    coreset, X, y = _coreset("logistic")
    mine, theirs = coreset.to_stan(), coreset.to_stan(X, y)
    assert mine[0] == theirs[0]
    for key in mine[1]:
        np.testing.assert_array_equal(mine[1][key], theirs[1][key])
    with pytest.raises(ValueError, match="not the coreset's"):
        coreset.to_stan(X[::-1], y[::-1])
    with pytest.raises(ValueError, match="both X and y"):
        coreset.to_stan(X)
    with pytest.raises(ValueError, match="coreset holds row"):
        coreset.to_stan(X[:5], y[:5])


def test_exports_after_partial_fit():
    X, y = _data("logistic")
    coreset = UniformCoreset(n_points=30, projection=None, random_state=0)
    coreset.partial_fit(X[:150], y[:150]).partial_fit(X[150:], y[150:])
    program, data = coreset.to_stan()
    assert data["N"] == coreset.n_points_
    assert program == coreset.to_stan(X, y)[0]


def test_a_model_without_export_says_so():
    def loglik(theta, X, y):
        return -0.5 * (y - theta @ X.T) ** 2

    def grad(theta, X, y):
        return ((y - theta @ X.T)[:, :, None]) * X[None]

    X, y = _data("gaussian")
    coreset = UniformCoreset(
        n_points=30, projection=None, model=CustomModel(loglik, grad, n_params=2), random_state=0
    ).fit(X, y)
    for method in ("to_pymc", "to_numpyro", "to_stan", "to_bambi"):
        with pytest.raises(NotImplementedError, match="'custom' model has no export"):
            getattr(coreset, method)()


@pytest.mark.parametrize(
    "method, module, extra",
    [("to_pymc", "pymc", "pymc"), ("to_numpyro", "numpyro", "numpyro")],
)
def test_a_missing_language_names_its_extra(monkeypatch, method, module, extra):
    coreset = _coreset("logistic")[0]
    monkeypatch.setitem(sys.modules, module, None)  # import fails
    with pytest.raises(ImportError, match=rf"pip install 'skcoreset\[{extra}\]'"):
        getattr(coreset, method)()


# -- the prior handed on -----------------------------------------------------------------------
def _small_fit(estimator):
    return clone(estimator).set_params(n_samples=100, n_warmup=100, random_state=0)


@pytest.mark.parametrize(
    "name, estimator",
    [
        ("logistic", BayesianLogisticRegression()),
        ("gaussian", BayesianLinearRegression()),
        ("student_t", BayesianGLM(model="student_t")),
        ("multinomial", BayesianLogisticRegression()),
    ],
)
def test_the_pipeline_hands_on_the_coreset_prior(name, estimator):
    """The final estimator's 'auto' prior is the coreset's full-data one, not the one its
    weighted rows would give."""
    X, y = _data(name, n=2000)
    # uniform: the weighted moments of its rows are not the data's (OMP's are close to them
    # for the Gaussian model, whose log-likelihood is quadratic)
    coreset = UniformCoreset(n_points=40, projection=None, model=name, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = make_pipeline(coreset, _small_fit(estimator)).fit(X, y)
        alone = _small_fit(estimator).fit(
            pipe.X_coreset_, pipe.y_coreset_, sample_weight=pipe.sample_weight_
        )
    fitted_coreset, final = pipe[0], pipe[-1]
    np.testing.assert_array_equal(final.prior_scale_, fitted_coreset.prior_scale_)
    assert not np.allclose(alone.prior_scale_, fitted_coreset.prior_scale_)
    prior = fitted_coreset._data_prior
    if prior.model.has_extra:
        assert final._extra_prior == prior.extra_prior()
    assert final._data_scale == (prior.y_mean, prior.y_sd)


def test_the_meta_estimators_hand_on_the_coreset_prior():
    X, y = _data("negative_binomial", n=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg = CoresetRegressor(
            UniformCoreset(n_points=40, projection=None, model="negative_binomial", random_state=0),
            _small_fit(BayesianNegativeBinomialRegression()),
        ).fit(X, y)
    np.testing.assert_array_equal(reg.estimator_.prior_scale_, reg.coreset_.prior_scale_)
    alone = _small_fit(BayesianNegativeBinomialRegression())
    alone.fit(reg.X_coreset_, reg.y_coreset_, sample_weight=reg.sample_weight_)
    assert not np.allclose(alone.prior_scale_, reg.coreset_.prior_scale_)
    assert reg.estimator_._extra_prior == reg.coreset_._data_prior.extra_prior()


def test_no_prior_handed_on_across_a_transformer_or_to_a_given_prior():
    from sklearn.preprocessing import StandardScaler

    X, y = _data("logistic", n=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        given = make_pipeline(
            UniformCoreset(n_points=40, projection=None, random_state=0),
            _small_fit(BayesianLogisticRegression(prior_scale=[1.0, 2.0, 3.0])),
        ).fit(X, y)
        across = make_pipeline(
            UniformCoreset(n_points=40, projection=None, random_state=0),
            StandardScaler(),
            _small_fit(BayesianLogisticRegression()),
        ).fit(X, y)
    np.testing.assert_array_equal(given[-1].prior_scale_, [1.0, 2.0, 3.0])
    # after the scaler the coreset's prior is on other features: the rows' own
    assert not np.array_equal(across[-1].prior_scale_, across[0].prior_scale_)


@pytest.mark.parametrize("make", [BayesianLinearRegression, OMPCoreset])
def test_prior_scale_takes_one_sd_per_coefficient(make):
    X, y = _data("gaussian")
    scale = np.array([1.0, 2.0, 30.0])
    kept = scale.copy()
    params = {"n_samples": 100, "n_warmup": 100} if make is BayesianLinearRegression else {}
    est = make(prior_scale=scale, random_state=0, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    np.testing.assert_array_equal(est.prior_scale_, scale)
    np.testing.assert_array_equal(scale, kept)  # the caller's array is not changed
    with pytest.raises(ValueError, match=r"one standard deviation per coefficient .*\(3 here\)"):
        make(prior_scale=[1.0, 2.0], **params).fit(X, y)
    with pytest.raises(ValueError, match="positive finite"):
        make(prior_scale=[1.0, -2.0, 3.0], **params).fit(X, y)


def test_the_pipeline_posterior_is_the_full_data_posterior_with_the_same_prior():
    """One posterior: the pipeline's MALA on an OMP coreset, with the prior handed on,
    against NUTS on all rows with the full data's 'auto' prior (the export of the exact
    coreset, every row with weight 1): within the Monte Carlo error."""
    pm = pytest.importorskip("pymc")
    X, y = _data("logistic", n=2000)
    pipe = make_pipeline(
        OMPCoreset(n_points=150, random_state=0),
        BayesianLogisticRegression(n_samples=2000, n_warmup=500, random_state=0),
    ).fit(X, y)
    full = OMPCoreset(n_points=X.shape[0]).fit(X, y)
    np.testing.assert_array_equal(full.sample_weight_, 1.0)
    np.testing.assert_array_equal(full.prior_scale_, pipe[-1].prior_scale_)
    with full.to_pymc(X, y):
        idata = pm.sample(
            draws=1000,
            tune=500,
            chains=2,
            cores=1,
            random_seed=0,
            progressbar=False,
            compute_convergence_checks=False,
        )
    mala = _draws_of(pipe[-1])
    _assert_same_posterior({k: idata.posterior[k].values for k in mala}, mala)
