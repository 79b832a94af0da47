"""Logistic regression: the Bernoulli likelihood with the logit link.

``l(eta, y) = y eta - log(1 + e^eta)`` for codes ``y`` in {0, 1} (any two class labels, coded
by :class:`~skcoreset.models.BinaryLabels`).
"""

from dataclasses import dataclass

import numpy as np
import scipy.special
from numba import njit

from .._warnings import warn
from ._family import SingleIndexFamily
from ._fastmath_kernels import sigmoid, softplus_sigmoid
from ._glm import GLM
from ._laplace import SeparationWarning
from ._targets import BinaryLabels, classification_model


@njit(cache=True, inline="always")
def _terms(eta, y, param):
    # y eta - log(1 + e^eta) and y - sigmoid(eta), sharing one exponential
    sp, p = softplus_sigmoid(eta)
    return y * eta - sp, y - p


@njit(cache=True, inline="always")
def _curvature(eta, y, param):
    p = sigmoid(eta)
    return p * (1.0 - p)


# built-in: tested apart (tests/test_model_contract.py), not checked at every fit
FAMILY = SingleIndexFamily("logistic", _terms, _curvature, check_gradient=False)


def separating_mode(blocks, theta):
    """Whether the mode's linear predictor separates the classes on the positive-weight rows
    (the one home of the separation rule, see :class:`SeparationWarning`): every row on its
    own class's side, ``min eta(class 1) > max eta(class 0)``. A pass over the blocks until
    two rows overlap, as in the first block of most data: no later row can undo that."""
    lowest_one, highest_zero = np.inf, -np.inf
    for Xd, y, w in blocks():
        eta = Xd @ theta
        kept = w > 0
        ones, zeros = kept & (y == 1.0), kept & (y == 0.0)
        if ones.any():
            lowest_one = min(lowest_one, float(eta[ones].min()))
        if zeros.any():
            highest_zero = max(highest_zero, float(eta[zeros].max()))
        if lowest_one <= highest_zero:
            return False
    # both classes present and every row on its own class's side
    return bool(np.isfinite(lowest_one) and np.isfinite(highest_zero) and lowest_one > highest_zero)


@dataclass(frozen=True, eq=False)
class LogisticModel(GLM):
    """Bernoulli likelihood with the logit link; any two class labels (see BinaryLabels).

    Parameters
    ----------
    prior_scale : float or ndarray of shape (P,), default=1.0
        Standard deviation of the Gaussian prior on the parameters (intercept last).
    fit_intercept : bool, default=True
        Whether the design matrix gets a trailing column of ones.
    extra : float or None, default=None
        Unused (the model has no extra parameter).
    extra_prior : None
        Unused (no extra parameter).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import LogisticModel
    >>> model = LogisticModel()
    >>> model.mean(np.array([0.0, 1.0])).round(4)
    array([0.5   , 0.7311])
    """

    name = "logistic"
    likelihood = "bernoulli_logit"
    family = FAMILY
    labels = BinaryLabels

    @classmethod
    def composed_name(cls, y):
        # a classifier's reading: as many classes as y has (the multinomial model past two)
        return classification_model(y)

    def encode_targets(self, y):
        return BinaryLabels.fit(y).encode(y)

    def check_fit(self, blocks, theta):
        if separating_mode(blocks, theta):
            warn(
                "The classes are linearly separable on the rows of this logistic fit: the "
                "likelihood keeps growing as the coefficients grow, so the Laplace fit, the "
                "posterior and any coreset built on them are set by prior_scale, not by the "
                "data (a weak prior gives huge, meaningless coefficients and standard "
                "deviations). Pass a prior_scale you mean for the separating direction (e.g. "
                "prior_scale=1 on standardised features), and check that no feature encodes "
                "the label.",
                SeparationWarning,
            )

    def mean(self, eta):
        return scipy.special.expit(eta)

    def variance(self, mean, extra=None):
        return mean * (1.0 - mean)

    def log_density(self, y, eta, extra=None):
        return y * eta - np.logaddexp(0.0, eta)

    def simulate(self, eta, random_state, extra=None):
        return (random_state.random_sample(np.shape(eta)) < scipy.special.expit(eta)).astype(
            np.intp
        )

    # -- the exports' recipes and the test suite's reference (ModelRecipes) --------------
    def stan_likelihood(self, y):
        row = "bernoulli_logit_lpmf(y[n] | eta[n])"
        return "array[N] int<lower=0, upper=1>", y.astype(np.int64), row

    def pymc_loglik(self, pm, pt, eta, y, extras):
        return pm.logp(pm.Bernoulli.dist(logit_p=eta), y)

    def numpyro_likelihood(self, numpyro, jax, eta, y, extras):
        return numpyro.distributions.Bernoulli(logits=eta), jax.numpy.asarray(y)

    def reference_logpdf(self, stats, y, eta, extra):
        # log(1 - expit(eta)) as expit(-eta): scipy's 1 - p would lose the tails' digits
        p = np.where(y == 1.0, scipy.special.expit(eta), scipy.special.expit(-eta))
        return stats.bernoulli.logpmf(1, p)

    def reference_data(self, n_samples, random_state):
        X = random_state.standard_normal((n_samples, 2))
        p = scipy.special.expit(X @ [1.0, -0.7] + 0.3)
        # labels as a user has them: the coding (class 1 the larger) is the model's
        return X, np.array(["no", "yes"])[(random_state.random_sample(n_samples) < p).astype(int)]
