"""Multinomial (softmax) regression over K classes, the first class the reference.

Class ``k`` has the linear predictor ``eta_k = x . beta_k`` for k = 1, ..., K - 1 and
``eta_0 = 0``; ``l(theta; x, y) = eta_y - log(1 + sum_k exp(eta_k))``. The parameters are the
K - 1 coefficient vectors, each with its intercept last, concatenated: P = (K - 1) Q for a
design matrix of Q columns. Fixing the reference class's coefficients at zero makes them
identified (the softmax is unchanged by a shift common to all classes), as in R's
``nnet::multinom`` and brms's ``categorical``; predictions do not depend on the choice.
"""

from dataclasses import dataclass, replace

import numpy as np
import scipy.special

from .._parallel_kernels import row_tasks, row_weights, summed_gradient_hessian
from . import _multinomial_kernels as kernels
from ._general import GeneralModel
from ._targets import ClassLabels


def _as_c(a):
    """C-contiguous float64, as the kernels read their arrays."""
    return np.ascontiguousarray(a, dtype=np.float64)


def _log_softmax(E):
    """Log-probabilities of the K classes from the K - 1 predictors ``E`` (..., K - 1): the
    reference class's predictor 0 prepended."""
    full = np.concatenate([np.zeros(E.shape[:-1] + (1,)), E], axis=-1)
    return full - scipy.special.logsumexp(full, axis=-1, keepdims=True)


@dataclass(frozen=True, eq=False)
class MultinomialModel(GeneralModel):
    """Categorical likelihood with the softmax link over K classes (any class labels).

    Parameters
    ----------
    prior_scale : float or ndarray, default=1.0
        Standard deviation of the Gaussian prior on the parameters: one for all, one per
        design column (the intercept last; repeated for every class), or one per parameter.
    fit_intercept : bool, default=True
        Whether the design matrix gets a trailing column of ones.
    extra : None
        Unused (the model has no extra parameter).
    extra_prior : None
        Unused (no extra parameter).
    n_classes : int or None, default=None
        K, set from the labels by the estimators (:meth:`with_classes`).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import MultinomialModel
    >>> model = MultinomialModel(n_classes=3)
    >>> Xd = model.design(np.array([[0.5], [-1.0]]))
    >>> model.n_params(Xd.shape[1])
    4
    >>> model.loglik(np.zeros(4), Xd, np.array([0.0, 2.0])).round(4)
    array([-1.0986, -1.0986])
    """

    n_classes: int | None = None

    name = "multinomial"
    likelihood = "categorical_logit"
    log_concave = True
    labels = ClassLabels
    vector_predictor = True

    def __post_init__(self):
        super().__post_init__()
        if self.n_classes is not None and int(self.n_classes) < 2:
            raise ValueError(f"n_classes must be at least 2, got {self.n_classes!r}.")

    def with_classes(self, classes):
        return replace(self, n_classes=len(classes))

    def _k(self):
        if self.n_classes is None:
            raise ValueError(
                "The multinomial model does not know its number of classes yet: it is set "
                "from the labels (model.with_classes(classes), or MultinomialModel(n_classes=K))."
            )
        return int(self.n_classes) - 1

    def n_params(self, n_columns):
        return self._k() * int(n_columns)

    @property
    def n_predictors(self):
        return self._k()

    def encode_targets(self, y):
        labels = ClassLabels.fit(y)
        if self.n_classes is not None and labels.classes.shape[0] > self.n_classes:
            raise ValueError(
                f"y has {labels.classes.shape[0]} classes; the model was set up for "
                f"{self.n_classes}."
            )
        return labels.encode(y)

    def prior_precision(self, n_params):
        scale = np.asarray(self.prior_scale, dtype=np.float64)
        if scale.ndim == 1 and scale.shape[0] != n_params:
            scale = np.tile(scale, n_params // max(scale.shape[0], 1))  # one per column
        return 1.0 / np.broadcast_to(scale, (n_params,)) ** 2

    def initial_params(self, Xd, y, w):
        # zero coefficients, and each class's intercept at its weighted log-odds against the
        # reference class (the constant fit): Newton starts at the data's class mix
        K1, Q = self._k(), Xd.shape[1]
        theta = np.zeros((K1, Q))
        if self.fit_intercept:
            counts = np.bincount(y.astype(np.intp), weights=w, minlength=K1 + 1) + 0.5
            theta[:, -1] = np.log(counts[1:] / counts[0])
        return theta.ravel()

    # -- the likelihood, vectorised over draws and rows --------------------------------
    def _predictors(self, thetas, Xd):
        """``E[s, n, k] = x_n . beta_{s, k}`` for the K - 1 non-reference classes."""
        S, K1, Q = thetas.shape[0], self._k(), Xd.shape[1]
        B = np.ascontiguousarray(thetas).reshape(S * K1, Q)
        return (Xd @ B.T).reshape(Xd.shape[0], S, K1).transpose(1, 0, 2)

    def log_proba_draws(self, thetas, Xd):
        """Compute the log-probabilities of the K classes at S parameter vectors.

        Parameters
        ----------
        thetas : ndarray of shape (S, P)
            Parameter vectors, one per row.
        Xd : ndarray of shape (n, Q)
            Design matrix (from :meth:`design`).

        Returns
        -------
        log_proba : ndarray of shape (S, n, K)
            ``log p(y_n = k | x_n, theta_s)``.
        """
        return _log_softmax(self._predictors(np.atleast_2d(thetas), Xd))

    def _checked_draws(self, thetas_t, Xd, y):
        """The kernels read no bounds: the draws' parameters against the design's columns,
        the rows against the targets."""
        if thetas_t.shape[0] != self.n_params(Xd.shape[1]) or Xd.shape[0] != y.shape[0]:
            raise ValueError(
                f"{thetas_t.shape[0]} parameters per draw, {Xd.shape[0]} rows and "
                f"{y.shape[0]} targets do not fit a design of {Xd.shape[1]} columns and "
                f"{self.n_classes} classes."
            )

    def _checked_codes(self, y):
        """The log-likelihood kernels index the predictors by the class codes: 0, ..., K - 1
        (as :meth:`encode_targets` gives them)."""
        if np.any((y < 0) | (y > self._k()) | (y != np.floor(y))):
            raise ValueError(
                f"The multinomial model's targets are class codes 0 to {self._k()}; code the "
                "labels with model.encode_targets."
            )

    def loglik_draws(self, thetas, Xd, y):
        return self.loglik_matrix(Xd, y, thetas).T

    def loglik_matrix(self, Xd, y, thetas, out=None, extras=None):
        # one fused kernel: the (N, J) output is the only allocation of that size
        thetas_t = np.ascontiguousarray(np.atleast_2d(thetas).T, dtype=np.float64)
        Xd, y = _as_c(Xd), _as_c(y)
        self._checked_draws(thetas_t, Xd, y)
        self._checked_codes(y)
        if out is None:
            out = np.empty((Xd.shape[0], thetas_t.shape[1]))
        kernels.loglik_matrix.for_size(out.size)(Xd, thetas_t, y, 1.0, False, out)
        return out

    def projection_features(self, kind, Xd, y, thetas_t, coords, scale, out):
        # the fused kernels, checked inputs first (they do not bounds-check)
        thetas_t = _as_c(thetas_t)
        Xd, y = _as_c(Xd), _as_c(y)
        self._checked_draws(thetas_t, Xd, y)
        self._checked_codes(y)
        shape = (Xd.shape[0], thetas_t.shape[1])
        if out.shape != shape or not out.flags.c_contiguous:
            raise ValueError(f"out must be C-contiguous of shape {shape}.")
        if kind == "fisher":
            coords = np.ascontiguousarray(coords, dtype=np.int64)
            if coords.shape != (thetas_t.shape[1],) or np.any(
                (coords < 0) | (coords >= thetas_t.shape[0])
            ):
                raise ValueError("coords must hold one parameter index per draw.")
            kernels.fisher_features.for_size(out.size)(Xd, thetas_t, y, coords, float(scale), out)
        else:
            kernels.loglik_matrix.for_size(out.size)(Xd, thetas_t, y, float(scale), True, out)
        return out

    def _residuals(self, thetas, Xd, y):
        """``1[y = k] - p_k`` for the K - 1 non-reference classes, (S, n, K - 1)."""
        p = np.exp(self.log_proba_draws(thetas, Xd)[:, :, 1:])
        codes = y.astype(np.intp)
        rows = np.flatnonzero(codes > 0)
        r = -p
        r[:, rows, codes[rows] - 1] += 1.0
        return r

    def grad_draws(self, thetas, Xd, y):
        r = self._residuals(np.atleast_2d(thetas), Xd, y)
        S, n, K1 = r.shape
        return (r[:, :, :, None] * Xd[None, :, None, :]).reshape(S, n, K1 * Xd.shape[1])

    def weighted_loglik_chains(self, thetas, Xd, y, w):
        # one pass over the rows for all the draws (the MALA target)
        thetas = np.ascontiguousarray(np.atleast_2d(thetas), dtype=np.float64)
        Xd, y, w = _as_c(Xd), _as_c(y), _as_c(w)
        self._checked_draws(thetas.T, Xd, y)
        if w.shape != y.shape:
            raise ValueError(f"{w.shape[0]} weights for {y.shape[0]} rows.")
        ll, grad = np.empty(thetas.shape[0]), np.empty(thetas.shape)
        kernels.weighted_loglik_grad_chains(thetas, Xd, y, w, ll, grad)
        return ll, grad

    def weighted_loglik_hessian(self, theta, Xd, y, w):
        # sum_n w_n (diag(p_n) - p_n p_n^T) (x) x_n x_n^T over the K - 1 classes
        theta = np.ascontiguousarray(theta, dtype=np.float64).reshape(-1)
        Xd, y, w = _as_c(Xd), _as_c(y), _as_c(w)
        self._checked_draws(theta[:, None], Xd, y)
        return kernels.weighted_hessian(theta, Xd, w)

    def second_order_sums(self, theta, chol, X, y, w, spread=True):
        # one fused kernel over the rows as stored (the generic sums built every row's
        # gradient and its product with the factor in NumPy, most of a large fit's pass)
        theta = np.ascontiguousarray(theta, dtype=np.float64).reshape(-1)
        X = np.asarray(X)
        X = np.ascontiguousarray(X, dtype=X.dtype if X.dtype == np.float32 else np.float64)
        y = _as_c(y)
        P = theta.shape[0]
        if P != self.n_params(X.shape[1] + self.fit_intercept) or X.shape[0] != y.shape[0]:
            raise ValueError(
                f"{P} parameters, {X.shape[0]} rows of {X.shape[1]} features and "
                f"{y.shape[0]} targets do not fit {self.n_classes} classes."
            )
        self._checked_codes(y)
        size, parts = row_tasks(X.shape[0], (P + P * P,))
        spreads = np.empty(X.shape[0] if spread else 0)
        kernels.summary_tasks.for_size(X.shape[0])(
            X, bool(self.fit_intercept), theta, y, row_weights(w),
            _padded_lower(chol, P), spread, size, parts, spreads,
        )  # fmt: skip
        G, H = summed_gradient_hessian(parts, P)
        return G, H, spreads if spread else None

    def simulate_draws(self, thetas, Xd, random_state):
        # one class code per row and draw, by inversion of the cumulative probabilities
        cum = np.cumsum(np.exp(self.log_proba_draws(thetas, Xd)), axis=2)
        u = random_state.random_sample(cum.shape[:2] + (1,))
        return np.minimum((u > cum).sum(axis=2), cum.shape[2] - 1)

    # -- the exports' recipes and the test suite's reference (ModelRecipes) --------------
    # the reference class's predictor is 0: prepended to the K - 1 predictors
    def stan_likelihood(self, y):
        # class codes 1, ..., K in Stan
        row = "categorical_logit_lpmf(y[n] | append_row(0, eta[n]'))"
        return "array[N] int<lower=1, upper=K>", y.astype(np.int64) + 1, row

    def pymc_loglik(self, pm, pt, eta, y, extras):
        logits = pt.concatenate([pt.zeros((eta.shape[0], 1)), eta], axis=1)
        return pm.logp(pm.Categorical.dist(logit_p=logits), y.astype(np.int64))

    def numpyro_likelihood(self, numpyro, jax, eta, y, extras):
        jnp = jax.numpy
        logits = jnp.concatenate([jnp.zeros((eta.shape[0], 1)), eta], axis=1)
        return numpyro.distributions.Categorical(logits=logits), jnp.asarray(y.astype(np.int32))

    def reference_loglik(self, stats, thetas, Xd, y):
        # scipy's categorical: a multinomial of one trial, of the softmax's probabilities
        thetas = np.atleast_2d(thetas)
        S, K1, Q = thetas.shape[0], self._k(), Xd.shape[1]
        E = np.einsum("skq,nq->snk", thetas.reshape(S, K1, Q), Xd)
        logits = np.concatenate([np.zeros((S, Xd.shape[0], 1)), E], axis=2)
        one_hot = np.eye(K1 + 1)[y.astype(np.intp)]
        return stats.multinomial.logpmf(one_hot, 1, scipy.special.softmax(logits, axis=2))

    def reference_data(self, n_samples, random_state):
        X = random_state.standard_normal((n_samples, 2))
        E = np.column_stack([np.zeros(n_samples), X @ [[1.0, -0.5], [0.5, 1.0]] + [0.2, -0.1]])
        p = scipy.special.softmax(E, axis=1)
        codes = (random_state.random_sample(n_samples)[:, None] > np.cumsum(p, axis=1)).sum(1)
        return X, np.array(["a", "b", "c"])[np.minimum(codes, 2)]


def _padded_lower(chol, P):
    """``chol``'s lower triangle, zeros above, its columns padded with zeros to a multiple of
    four (the summary kernel takes four columns at a time)."""
    out = np.zeros((P, -(-P // 4) * 4))
    if chol is not None:
        out[:, :P] = np.tril(chol)
    return out
