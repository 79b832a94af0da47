"""The coreset posterior as a Stan program and its data (``to_stan``).

Every density is written with ``target += ..._lpdf`` (not ``~``, which drops constants), so
that the program's log density is the normalised one of the PyMC and NumPyro exports; each
row's log-likelihood (the model's recipe, ``stan_likelihood``) is multiplied by its weight.
"""


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
    # the model's recipe: y's type and values as Stan reads them, and a row's statement
    y_type, y, row = spec.recipes.stan_likelihood(spec.y)
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
