"""scikit-learn's estimator checks on every public estimator of the composition layer and the
coreset algorithms of the registry (small coresets, 20 projections and cheap inner estimators
keep it fast).

The Bayesian GLMs run with short chains: the statistical checks that replace the ones they
cannot pass live in tests/test_bayesian_regression.py.
"""

import warnings

from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.utils.estimator_checks import parametrize_with_checks

from skcoreset.compose import CoresetClassifier, CoresetRegressor
from skcoreset.coreset import GIGACoreset, SensitivityCoreset
from skcoreset.coreset._registry import ALGORITHMS
from skcoreset.linear_model import (
    BayesianGammaRegression,
    BayesianLinearRegression,
    BayesianLogisticRegression,
    BayesianNegativeBinomialRegression,
    BayesianPoissonRegression,
    BayesianStudentTRegression,
)
from skcoreset.pipeline import make_pipeline

# model='gaussian': the checks fit integer targets with three or four values, which
# model='auto' refuses as ambiguous (classes or counts?) by design (tests/test_models.py).
SMALL = dict(n_projections=20, model="gaussian", random_state=0)

# The parameters that keep the checks cheap for the classes without a projection (SMALL for
# the others).
CHEAP = {
    "SensitivityCoreset": dict(n_clusters=2, random_state=0),
    "QuasiNewtonCoreset": dict(model="gaussian", n_draws=20, max_iter=3, random_state=0),
    "SparseVICoreset": dict(model="gaussian", n_draws=20, n_rounds=2, n_steps=2, random_state=0),
    "CoresetMCMC": dict(model="gaussian", n_train=20, n_samples=10, random_state=0),
}

# Every algorithm of the registry (A-IHT II too, IHTCoreset with debias=True).
CORESETS = [a.make(5, **CHEAP.get(a.estimator, SMALL)) for a in ALGORITHMS]

# prior_scale=1.0: with 'auto' the prior comes from moments that repeated rows sum in another
# order, and GIGA on a 20-dimensional projection of the checks' 31-parameter model turns that
# last-bit difference into another coreset: check_sample_weight_equivalence would compare two
# different coresets.
META = [
    CoresetClassifier(
        GIGACoreset(8, n_projections=20, prior_scale=1.0), LogisticRegression(), random_state=0
    ),
    CoresetRegressor(GIGACoreset(8, n_projections=20, prior_scale=1.0), Ridge(), random_state=0),
]

# Sensitivity sampling is for logistic regression only: checks that fit a target with three or
# four values (they treat it as neither classifier nor regressor) must fail with its clear error.
_SENSITIVITY_XFAIL = {
    **{
        name: "sensitivity sampling is logistic only; the check's y has three or four values"
        for name in (
            "check_dtype_object",
            "check_fit_score_takes_y",
            "check_estimators_overwrite_params",
            "check_dont_overwrite_parameters",
            "check_estimators_fit_returns_self",
            "check_readonly_memmap_input",
            "check_n_features_in_after_fitting",
            "check_positive_only_tag_during_fit",
            "check_sample_weights_list",
            "check_sample_weight_equivalence_on_dense_data",
            "check_sample_weight_equivalence_on_sparse_data",
            "check_estimator_sparse_tag",
            "check_estimator_sparse_array",
            "check_estimator_sparse_matrix",
            "check_f_contiguous_array_estimator",
            "check_methods_sample_order_invariance",
            "check_methods_subset_invariance",
            "check_dict_unchanged",
            "check_fit2d_predict1d",
        )
    },
}


# The Gaussian model's noise scale is a parameter of the Laplace fit that the projection draws
# from (its log's spread and its correlations with the coefficients): the repeated rows' sums,
# in another order, move its draws by 1e-13, and GIGA on the checks' 20-dimensional projection
# of 32 parameters turns that into another coreset (Hilbert error 0.0199 against 0.0188), as it
# did the 'auto' prior's last bits. Integer weights give the posterior of duplicated rows, up
# to the coreset's own error: tests/test_coreset_estimators.py,
# test_integer_weights_give_the_posterior_of_duplicated_rows.
_GAUSSIAN_META_XFAIL = {
    check: "rounding in the noise scale's draws moves GIGA's choices on the checks' tiny data"
    for check in (
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
    )
}


def expected_failed_checks(estimator):
    if isinstance(estimator, SensitivityCoreset):
        return _SENSITIVITY_XFAIL
    if isinstance(estimator, CoresetRegressor):
        return _GAUSSIAN_META_XFAIL
    return {}


@parametrize_with_checks(CORESETS + META, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_pipeline_get_set_params_roundtrip():
    # The resampler pipeline is a container (like sklearn's Pipeline, not run through
    # parametrize_with_checks); its parameter interface must still round-trip.
    pipe = make_pipeline(GIGACoreset(5, **SMALL), LogisticRegression())
    params = pipe.get_params()
    assert params["gigacoreset__n_points"] == 5
    pipe.set_params(**{k: v for k, v in params.items() if "__" in k})
    assert pipe.get_params()["gigacoreset__n_projections"] == 20


# -- the Bayesian GLMs (short chains: enough for the API checks) --------------------------


# check_sample_weight_equivalence_on_dense_data passes: with the same seed the sampler uses the
# same random numbers, and integer weights give the duplicated rows' target up to rounding, so
# these short chains agree. Longer chains may part ways on a rounding-close accept decision:
# test_integer_weights_equal_duplicated_rows compares the posteriors statistically. The
# Poisson model keeps a unit prior here: the checks' counts are barely explained by their
# features, and under the wide default prior its predictions reach 1e20, where the last bits
# of a rounding difference show at the checks' rtol of 1e-7.
# The negative binomial regression refuses the checks' real-valued targets (it takes integer
# counts only); its weights are compared with duplicated rows statistically
# (test_bayesian_regression.py), since its sampled dispersion sums the rows' constants in
# another order and these short chains part ways by rounding. So does the gamma regression's
# sampled shape, on the checks' shuffled rows (seen with numpy 2.4 and numba 0.65: the two
# fits' predictions 2.1 and 8.2 after 50 steps of 31 parameters under 15 rows).
_NB_XFAIL = {
    check: "the checks' targets are not integer counts"
    for check in (
        "check_n_features_in_after_fitting",
        "check_regressors_train",
        "check_regressor_data_not_an_array",
        "check_regressors_no_decision_function",
        "check_fit_idempotent",
        "check_fit_check_is_fitted",
        "check_n_features_in",
    )
}


# The Student-t regression refuses targets that are an exact linear function of X, as these
# checks' are: its scale's posterior collapses to 0 there (a ValueError says so).
_T_XFAIL = {
    check: "the checks' targets are an exact linear function of X"
    for check in (
        "check_regressors_no_decision_function",
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
        "check_sample_weights_not_overwritten",
        "check_sample_weights_shape",
    )
}


_ROUNDING_XFAIL = {
    check: "rounding: tested statistically instead"
    for check in (
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
    )
}


def expected_failed_bayesian_checks(estimator):
    if isinstance(estimator, BayesianNegativeBinomialRegression):
        return _NB_XFAIL | _ROUNDING_XFAIL
    if isinstance(estimator, BayesianGammaRegression):
        return _ROUNDING_XFAIL
    return _T_XFAIL if isinstance(estimator, BayesianStudentTRegression) else {}


@parametrize_with_checks(
    [
        BayesianLogisticRegression(n_samples=50, n_warmup=50, n_chains=2, random_state=0),
        BayesianPoissonRegression(
            prior_scale=1.0, n_samples=50, n_warmup=50, n_chains=2, random_state=0
        ),
        BayesianLinearRegression(n_samples=50, n_warmup=50, n_chains=2, random_state=0),
        BayesianNegativeBinomialRegression(
            prior_scale=1.0, n_samples=50, n_warmup=50, n_chains=2, random_state=0
        ),
        BayesianGammaRegression(
            prior_scale=1.0, n_samples=50, n_warmup=50, n_chains=2, random_state=0
        ),
        BayesianStudentTRegression(n_samples=50, n_warmup=50, n_chains=2, random_state=0),
    ],
    expected_failed_checks=expected_failed_bayesian_checks,
)
def test_bayesian_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        # 2 x 50 draws are enough for the API checks but not for R-hat / ESS.
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)
