"""A multilevel model's base likelihood as a function of the linear predictor, its extra
parameters fixed: one interface over the single-index families (E = 0 or 1 free extra
parameter: the GLM kernels) and the Student-t model (E = 2: its scale and degrees of freedom,
the maths of :class:`~._student_t.StudentTModel`).

The extra parameters enter the multilevel posterior by their logs ``s`` (None for E = 0, a
float for E = 1, the array ``(log sigma, log nu)`` for the Student-t), each with the normal
prior of the non-multilevel model (:func:`extra_priors`).

This module imports no scikit-learn.
"""

import numpy as np

from . import _glm_kernels as kernels
from ._glm import with_extra
from ._multilevel_kernels import node_terms, node_terms_student_t
from ._student_t import StudentTModel
from ._student_t_kernels import draw_constants


def is_student_t(base):
    """Whether the base model is the Student-t's (two extra parameters)."""
    return isinstance(base, StudentTModel)


def n_extras(base):
    """E, the free extra parameters of the base model: 2 for the Student-t (scale, degrees of
    freedom), 1 for a family with its extra parameter free, else 0."""
    if is_student_t(base):
        return 2
    return int(base.has_extra and base.extra is None)


def extra_names(base):
    """The free extra parameters' names (the estimators' attributes and the exports'
    variables): ``('scale', 'df')`` for the Student-t, ``(base.extra_name,)`` or ``()``."""
    if is_student_t(base):
        return ("scale", "df")
    return (base.extra_name,) if n_extras(base) else ()


def extra_priors(base):
    """``((mean, sd), ...)``: the normal prior of each free extra parameter's log, the base
    model's own (its data scale set by ``with_data_scale``)."""
    if is_student_t(base):
        # the number of columns only sizes the coefficients' prior: its prior_scale's
        n_columns = np.size(base.prior_scale)
        return tuple((m, sd) for _, m, sd in base.extra_priors(n_columns, 0.0, None))
    return (tuple(map(float, base.extra_prior)),) if n_extras(base) else ()


def integrates_groups(base):
    """Whether groups of this base model can be integrated out (weighted marginals: a coreset
    of groups, the sampler's weakly informed groups). Not the Student-t's: with heavy tails a
    small group whose rows form two clusters has a bimodal effect posterior, where the
    adaptive Gauss-Hermite rule, centred at one mode, errs (measured against scipy's quad on
    120 groups of 4 rows at 2.6 degrees of freedom: up to 0.12 nats a group with 11 nodes,
    6e-3 with 40; the other bases are within 1e-6)."""
    return not is_student_t(base)


def check_integrates_groups(base):
    """Raise the ``ValueError`` of :func:`integrates_groups`."""
    if not integrates_groups(base):
        raise ValueError(
            f"The {base.name!r} base model integrates no group out (a group_weight other "
            "than 1: a coreset of groups): with heavy tails a small group's effect can have "
            "a bimodal posterior, where the groups' quadrature is not accurate. Give every "
            "group weight 1 (the multilevel coresets of a Student-t base keep small groups "
            "whole)."
        )


def log_extras(theta, D, E):
    """The log extra parameters of a parameter vector (extras after ``D`` coefficients): None,
    a float, or the array of the two."""
    if not E:
        return None
    return theta[D] if E == 1 else theta[D : D + E]


def pooled_log_extras(base, theta, D):
    """The log extra parameters of a fit of the base model without groups (its parameters'
    own layout: the Student-t's are centred on their priors' means)."""
    if is_student_t(base):
        return theta[D : D + 2] + np.array([base.log_scale_centre, base.df_centre])
    return log_extras(theta, D, n_extras(base))


def log_density(base, y, eta, extras):
    """``log p(y | eta, extras)`` broadcast over draws: ``eta`` (rows, J), ``extras`` (J, E)
    the extra parameters' values (not logs) of each draw, or None (E = 0)."""
    if is_student_t(base):
        return base.location_loglik(eta, y, extras[:, 0], extras[:, 1])
    return base.log_density(y, eta, None if extras is None else extras[:, 0])


def location(base, eta):
    """The predictions' centre at ``eta``: the mean response, the Student-t's location (as
    :class:`~skcoreset.linear_model.BayesianStudentTRegression` predicts)."""
    return eta if is_student_t(base) else base.mean(eta)


def likelihood_at(base, s):
    """The base likelihood at the log extra parameters ``s`` (as :func:`log_extras`)."""
    return StudentTAt(base, s) if is_student_t(base) else FamilyAt(base, s)


class FamilyAt:
    """A single-index family's likelihood at its extra parameter (the GLM kernels)."""

    def __init__(self, base, s):
        self.model = base if s is None else with_extra(base, float(np.exp(s)))
        self.E = n_extras(base)
        self.log_concave = base.log_concave

    def loglik(self, eta, y):
        """Each row's log-likelihood."""
        return kernels.loglik_vector(self.model.family, eta, y, self.model.extra_value)

    def dloglik(self, eta, y):
        """Each row's ``dl/deta``."""
        return kernels.dloglik_vector(self.model.family, eta, y, self.model.extra_value)

    def derivatives(self, eta, y):
        """``(dl/deta, -d2l/deta2)`` of each row."""
        return self.model.loglik_derivatives(eta, y)

    def scores(self, eta, y):
        """``dl/ds`` (N, E) in the log extra parameters."""
        if not self.E:
            return np.empty((eta.shape[0], 0))
        extra = self.model.extra_value
        return kernels.dlog_extra_vector(self.model.family, eta, y, extra)[:, None]

    def extra_derivatives(self, eta, y):
        """``(scores (N, E), -d2l/(deta ds) (N, E), -d2l/(ds ds') (N, E, E))``."""
        score, cross, curv = self.model.extra_derivatives(eta, y)
        return score[:, None], cross[:, None], curv[:, None, None]

    def node_terms(self, eta0, Z, points, g, y, w, n_groups, with_score):
        """:func:`~._multilevel_kernels.node_terms`: ``(f, d, s)``, ``s`` (N, K, E)."""
        model = self.model
        return node_terms(
            model.family, eta0, Z, points, g, y, w, model.extra_value, n_groups, with_score
        )


class StudentTAt:
    """The Student-t likelihood at ``s = (log sigma, log nu)``."""

    E = 2
    log_concave = False

    def __init__(self, base, s):
        self.base = base
        with np.errstate(over="ignore"):  # a far point of a search: inf, rejected downstream
            self.sigma, self.nu = (float(v) for v in np.exp(np.asarray(s, dtype=np.float64)))

    def loglik(self, eta, y):
        return self.base.location_loglik(eta, y, self.sigma, self.nu)

    def dloglik(self, eta, y):
        return self.base.location_scores(eta, y, self.sigma, self.nu)[0]

    def derivatives(self, eta, y):
        return self.dloglik(eta, y), self.base.location_curvatures(eta, y, self.sigma, self.nu)[0]

    def scores(self, eta, y):
        _, d_sigma, d_nu = self.base.location_scores(eta, y, self.sigma, self.nu)
        return np.column_stack([d_sigma, d_nu])

    def extra_derivatives(self, eta, y):
        _, cross, curv = self.base.location_curvatures(eta, y, self.sigma, self.nu)
        return self.scores(eta, y), cross, curv

    def node_terms(self, eta0, Z, points, g, y, w, n_groups, with_score):
        consts = np.ascontiguousarray(
            draw_constants(np.array([self.sigma]), np.array([self.nu]))[:, 0]
        )
        return node_terms_student_t(eta0, Z, points, g, y, w, consts, n_groups)
