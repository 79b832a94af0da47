"""The coreset posterior as a Stan program and its data (``to_stan``).

Every density is written with ``target += ..._lpdf`` (not ``~``, which drops constants), so
that the program's log density is the normalised one of the PyMC and NumPyro exports; each
row's log-likelihood is multiplied by its weight.
"""

import numpy as np

#: likelihood -> (Stan type of y, the log-likelihood of row n, whether y must be integers)
_LIKELIHOODS = {
    "bernoulli_logit": (
        "array[N] int<lower=0, upper=1>",
        "bernoulli_logit_lpmf(y[n] | eta[n])",
        True,
    ),
    "poisson_log": ("array[N] int<lower=0>", "poisson_log_lpmf(y[n] | eta[n])", True),
    "normal": ("vector[N]", "normal_lpdf(y[n] | eta[n], {0})", False),
    # Stan's phi is the size r = 1 / the library's dispersion
    "neg_binomial_2_log": (
        "array[N] int<lower=0>",
        "neg_binomial_2_log_lpmf(y[n] | eta[n], inv({0}))",
        True,
    ),
    "gamma_log": ("vector<lower=0>[N]", "gamma_lpdf(y[n] | {0}, {0} * exp(-eta[n]))", False),
    # class codes 1..K in Stan, the reference class's predictor 0
    "categorical_logit": (
        "array[N] int<lower=1, upper=K>",
        "categorical_logit_lpmf(y[n] | append_row(0, eta[n]'))",
        True,
    ),
    "student_t": ("vector[N]", "student_t_lpdf(y[n] | {1}, eta[n], {0})", False),
}

#: The Poisson likelihood of rates (non-integer targets, which the library's Poisson takes):
#: ``y eta - exp(eta) - lgamma(y + 1)``, its log density as the library computes it.
_POISSON_RATES = (
    "vector<lower=0>[N]",
    "(y[n] * eta[n] - exp(eta[n]) - lgamma(y[n] + 1))",
    False,
)


def build(spec):
    """The Stan program and data of an :class:`~skcoreset.export.ExportSpec`.

    Parameters
    ----------
    spec : ExportSpec
        The coreset posterior.

    Returns
    -------
    program : str
        The Stan program.
    data : dict
        Its data.
    """
    y_type, row, integer = _LIKELIHOODS[spec.likelihood]
    if spec.rates:
        # Stan's Poisson takes integers: the library's density of rates, written out
        y_type, row, integer = _POISSON_RATES
    y = spec.y
    if integer:
        y = y.astype(np.int64) + (spec.likelihood == "categorical_logit")
    multiclass = spec.n_classes is not None
    M, D = spec.X.shape
    data = {"N": M, "D": D, "X": spec.X, "y": y, "w": spec.weight, "coef_sd": spec.coef_sd}
    decl = ["  int<lower=0> N;", "  int<lower=0> D;"]
    if multiclass:
        data["K"] = spec.n_classes
        decl.append("  int<lower=2> K;")
    decl += ["  matrix[N, D] X;", f"  {y_type} y;", "  vector<lower=0>[N] w;"]
    params, model = [], []
    if multiclass:
        decl.append("  matrix<lower=0>[K - 1, D] coef_sd;")
        params.append("  matrix[K - 1, D] coef;")
        model.append("  target += normal_lpdf(to_vector(coef) | 0, to_vector(coef_sd));")
        eta = "  matrix[N, K - 1] eta = X * coef'"
    else:
        decl.append("  vector<lower=0>[D] coef_sd;")
        params.append("  vector[D] coef;")
        model.append("  target += normal_lpdf(coef | 0, coef_sd);")
        eta = "  vector[N] eta = X * coef"
    if spec.intercept_sd is not None:
        data["intercept_sd"] = spec.intercept_sd
        if multiclass:
            decl.append("  vector<lower=0>[K - 1] intercept_sd;")
            params.append("  vector[K - 1] intercept;")
            eta += " + rep_matrix(intercept', N)"
        else:
            decl.append("  real<lower=0> intercept_sd;")
            params.append("  real intercept;")
            eta += " + intercept"
        model.append("  target += normal_lpdf(intercept | 0, intercept_sd);")
    for e in spec.extras:
        data[f"{e.name}_log_mean"], data[f"{e.name}_log_sd"] = e.log_mean, e.log_sd
        decl += [f"  real {e.name}_log_mean;", f"  real<lower=0> {e.name}_log_sd;"]
        # <lower=0>: sampled on the log scale, where the log-normal density (with the
        # Jacobian) is the normal prior of the log
        params.append(f"  real<lower=0> {e.name};")
        model.append(f"  target += lognormal_lpdf({e.name} | {e.name}_log_mean, {e.name}_log_sd);")
    for name, value in spec.fixed.items():
        data[name] = value
        decl.append(f"  real<lower=0> {name};")
    # the declaration first: older Stan compilers take them only at the top of a block
    model = [f"{eta};", *model] + [
        "  for (n in 1:N) {",
        f"    target += w[n] * {row.format(*spec.extra_names())};",
        "  }",
    ]
    program = "\n".join(
        [
            f"// The {spec.model} coreset posterior: weighted likelihood, the coreset's prior.",
            "data {",
            *decl,
            "}",
            "parameters {",
            *params,
            "}",
            "model {",
            *model,
            "}",
            "",
        ]
    )
    return program, data
