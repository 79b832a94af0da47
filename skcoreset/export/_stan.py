"""The coreset posterior as a Stan program and its data (``to_stan``).

Every density is written with ``target += ..._lpdf`` (not ``~``, which drops constants), so
that the program's log density is the normalised one of the PyMC and NumPyro exports; each
row's log-likelihood (the model's recipe, ``stan_likelihood``) is multiplied by its weight.

A multilevel coreset's group effects (``spec.effects``) add the data ``G``, ``Q``, ``group``
(1-based), ``Z`` and ``group_sd_df``, ``group_sd_scale``; the parameters ``group_sd``
(``<lower=0>``, half-Student-t: ``student_t_lpdf`` plus ``Q * log2()``, the truncation's
normalisation) and ``group_effects_raw`` (standard normal); the transformed parameters
``group_effects = group_effects_raw * diag(group_sd)``; and ``z_n . u_{g(n)}`` in each row's
predictor (``G`` the groups entered row by row: possibly none, ``N`` possibly 0, for a coreset
of groups).

The weighted marginals of a coreset of groups (``spec.effects.marginal``) add the data
``N_marginal``, ``G_marginal``, ``K_nodes``, ``X_marginal``, ``y_marginal``, ``w_marginal``,
``group_marginal`` (1-based), ``group_weight`` and the fixed nodes' ``node_offset``
(``N_marginal x K_nodes``: what each node adds to each row's predictor), ``node_sq``
(``Q`` matrices ``G_marginal x K_nodes``: the squared effects at the nodes) and
``log_node_weight`` (the rule's log weights with the nodes' Jacobian); the model block adds
``group_weight[g] * log_sum_exp(...)`` per group: the fixed-node Gauss-Hermite rule of
:class:`~skcoreset.export._spec.GroupMarginalTerms`. Their effects are not parameters.
"""

import re

import numpy as np


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
    transformed = []
    effects = spec.effects
    if effects is not None:
        data.update(
            G=effects.n_groups,
            Q=effects.n_effects,
            group=effects.index + 1,
            Z=effects.Z,
            group_sd_df=effects.tau_df,
            group_sd_scale=effects.tau_scale,
        )
        decl += [
            "  int<lower=0> G;",
            "  int<lower=1> Q;",
            "  array[N] int<lower=1, upper=G> group;",
            "  matrix[N, Q] Z;",
            "  real<lower=0> group_sd_df;",
            "  real<lower=0> group_sd_scale;",
        ]
        params += ["  vector<lower=0>[Q] group_sd;", "  matrix[G, Q] group_effects_raw;"]
        # non-centred: u = tau * v, v ~ N(0, 1)
        transformed = [
            "  matrix[G, Q] group_effects = diag_post_multiply(group_effects_raw, group_sd);"
        ]
        # the half-Student-t: the Student-t's density on tau > 0, times 2 (its normalisation)
        model += [
            "  target += student_t_lpdf(group_sd | group_sd_df, 0, group_sd_scale) + Q * log2();",
            "  target += std_normal_lpdf(to_vector(group_effects_raw));",
        ]
        eta += " + rows_dot_product(Z, group_effects[group])"
    # the declaration first: older Stan compilers take them only at the top of a block
    model = [f"{eta};", *model] + [
        "  for (n in 1:N) {",
        f"    target += w[n] * {row.format(*spec.extra_names())};",
        "  }",
    ]
    marginal = None if effects is None else effects.marginal
    if marginal is not None:
        m_decl, m_data, m_model = _marginals(spec, marginal)
        decl += m_decl
        data.update(m_data)
        model += m_model
    program = "\n".join(
        [
            f"// The {spec.model} coreset posterior: weighted likelihood, the coreset's prior.",
            "data {",
            *decl,
            "}",
            "parameters {",
            *params,
            "}",
            *(["transformed parameters {", *transformed, "}"] if transformed else []),
            "model {",
            *model,
            "}",
            "",
        ]
    )
    return program, data


def _marginals(spec, marginal):
    """The data declarations, data and model statements of the weighted marginals."""
    y_type, y, row = spec.recipes.stan_likelihood(marginal.y)
    # the row's statement for marginal row n at node k
    row = row.format(*spec.extra_names())
    row = re.sub(r"(?<!\w)y\[n\]", "y_marginal[n]", row)
    row = re.sub(r"(?<!\w)eta\[n\]", "eta_nodes[n, k]", row)
    data = {
        "N_marginal": marginal.X.shape[0],
        "G_marginal": marginal.n_groups,
        "K_nodes": marginal.n_nodes,
        "X_marginal": marginal.X,
        "y_marginal": y,
        "w_marginal": marginal.weight,
        "group_marginal": marginal.index + 1,
        "group_weight": marginal.group_weight,
        "node_offset": marginal.node_offset,
        "node_sq": np.ascontiguousarray(np.moveaxis(marginal.node_sq, 2, 0)),
        "log_node_weight": marginal.log_node_weight,
    }
    decl = [
        "  int<lower=0> N_marginal;",
        "  int<lower=1> G_marginal;",
        "  int<lower=1> K_nodes;",
        "  matrix[N_marginal, D] X_marginal;",
        f"  {y_type.replace('[N]', '[N_marginal]')} y_marginal;",
        "  vector<lower=0>[N_marginal] w_marginal;",
        "  array[N_marginal] int<lower=1, upper=G_marginal> group_marginal;",
        "  vector<lower=0>[G_marginal] group_weight;",
        "  matrix[N_marginal, K_nodes] node_offset;",
        "  array[Q] matrix[G_marginal, K_nodes] node_sq;",
        "  matrix[G_marginal, K_nodes] log_node_weight;",
    ]
    eta0 = "X_marginal * coef" + (" + intercept" if spec.intercept_sd is not None else "")
    model = [
        "  {",
        "    // the groups' weighted marginals: Gauss-Hermite on fixed nodes",
        f"    matrix[N_marginal, K_nodes] eta_nodes = rep_matrix({eta0}, K_nodes) + node_offset;",
        "    matrix[G_marginal, K_nodes] f",
        "      = log_node_weight - sum(log(group_sd)) - 0.5 * Q * log(2 * pi());",
        "    for (j in 1:Q) {",
        "      f -= 0.5 * node_sq[j] / square(group_sd[j]);",
        "    }",
        "    for (n in 1:N_marginal) {",
        "      for (k in 1:K_nodes) {",
        f"        f[group_marginal[n], k] += w_marginal[n] * {row};",
        "      }",
        "    }",
        "    for (g in 1:G_marginal) {",
        "      target += group_weight[g] * log_sum_exp(f[g]);",
        "    }",
        "  }",
    ]
    return decl, data, model
