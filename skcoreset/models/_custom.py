"""A user's own likelihood, given as two NumPy functions of parameter draws.

``loglik(theta, X, y)`` takes parameters of shape (S, P) and returns the per-datum
log-likelihoods, shape (S, n); ``grad(theta, X, y)`` returns their gradients, shape
(S, n, P). The functions see ``X`` exactly as it was passed to ``fit`` (no intercept column
is added: include one if the model needs it). The prior is N(0, diag(prior_scale^2)) on the P
parameters, the model's own whatever an estimator's ``prior_scale='auto'`` says.
"""

from dataclasses import dataclass

import numpy as np

from ._checks import check_custom_gradient
from ._general import GeneralModel
from ._targets import numeric_targets


@dataclass(frozen=True, eq=False, init=False)
class CustomModel(GeneralModel):
    """A likelihood of your own: per-datum log-likelihoods and gradients in plain NumPy.

    Every coreset estimator but :class:`~skcoreset.coreset.SensitivityCoreset` takes it as
    ``model=`` (projections, Laplace fit, blocks, Dask), and
    :class:`~skcoreset.linear_model.BayesianGLM` samples its posterior.

    Parameters
    ----------
    loglik : callable
        ``loglik(theta, X, y)``: parameters ``theta`` of shape (S, P), rows ``X`` (n, D) as
        passed to ``fit`` and targets ``y`` (n,); returns the log-likelihood of each row at
        each parameter vector, shape (S, n).
    grad : callable
        ``grad(theta, X, y)``: their gradients in ``theta``, shape (S, n, P).
    n_params : int
        P, the number of parameters.
    prior_scale : float or array-like of shape (P,), default=1.0
        Standard deviation of the Gaussian prior of each parameter (kept when an estimator's
        ``prior_scale`` is 'auto': only you know the parameters' scale).
    name : str, default='custom'
        The model's name in messages and ``model_``.
    encode_targets : callable or None, default=None
        ``encode_targets(y)`` validates and codes the targets (returns a float64 array);
        None: any finite numbers.
    check_gradient : bool, default=True
        Check ``grad`` against central differences of ``loglik`` when a fit starts (a
        coreset's or ``BayesianGLM``'s): at 3 parameter vectors (zeros and two small draws
        about them) on 5 rows of the data, a ``ValueError`` naming the parameter and the row
        where they disagree (a flipped sign, swapped columns, zeros: the fit would otherwise
        fail in the Laplace fit's Hessian, or sample a wrong posterior). It costs one call of
        ``loglik`` with 3 (2P + 1) parameter vectors and one of ``grad`` with 3, on those 5
        rows. ``False`` skips it.
    fit_intercept : bool, default=False
        Ignored: the functions see ``X`` as given (see Notes).
    extra : None
        Ignored (every parameter is in ``theta``).
    **fields
        The dataclass's own field names, as :func:`dataclasses.replace` passes them.

    Notes
    -----
    ``fit_intercept`` has no effect: the functions see ``X`` as given (add a column of ones
    yourself if your model has an intercept). The functions' output is checked (shape, NaN)
    at every call, and a wrong one raises a ``ValueError`` naming it. For data too large for
    NumPy's speed, a :class:`~skcoreset.models.SingleIndexFamily` of numba functions runs at
    the built-in models' speed.

    Examples
    --------
    A probit regression (intercept column included by hand):

    >>> import numpy as np
    >>> from scipy.special import log_ndtr
    >>> from skcoreset.models import CustomModel
    >>> def loglik(theta, X, y):
    ...     eta = theta @ X.T
    ...     return np.where(y == 1, log_ndtr(eta), log_ndtr(-eta))
    >>> def grad(theta, X, y):
    ...     eta = theta @ X.T
    ...     s = np.where(y == 1, 1.0, -1.0)
    ...     mills = np.exp(-0.5 * eta**2 - log_ndtr(s * eta)) / np.sqrt(2 * np.pi)
    ...     return (s * mills)[:, :, None] * X[None, :, :]
    >>> model = CustomModel(loglik, grad, n_params=2, prior_scale=2.5, name="probit")
    >>> X = np.array([[0.5, 1.0], [-1.0, 1.0]])
    >>> model.loglik(np.zeros(2), X, np.array([1.0, 0.0])).round(4)
    array([-0.6931, -0.6931])
    """

    loglik_fn: object = None
    grad_fn: object = None
    n_parameters: int = 0
    model_name: str = "custom"
    targets_fn: object = None
    check_gradient: bool = True

    auto_prior = False

    def __init__(
        self,
        loglik=None,
        grad=None,
        n_params=None,
        *,
        prior_scale=1.0,
        name="custom",
        encode_targets=None,
        check_gradient=True,
        fit_intercept=False,
        extra=None,
        **fields,
    ):
        # ``fields``: the dataclass's own names, as dataclasses.replace passes them back
        set_ = object.__setattr__
        set_(self, "loglik_fn", fields.pop("loglik_fn", loglik))
        set_(self, "grad_fn", fields.pop("grad_fn", grad))
        set_(self, "n_parameters", fields.pop("n_parameters", n_params))
        set_(self, "model_name", fields.pop("model_name", name))
        set_(self, "targets_fn", fields.pop("targets_fn", encode_targets))
        set_(self, "check_gradient", bool(fields.pop("check_gradient", check_gradient)))
        fields.pop("extra_prior", None)  # every parameter is in theta: no extra parameter
        if fields:
            raise TypeError(f"Unexpected arguments: {sorted(fields)}.")
        set_(self, "prior_scale", prior_scale)
        set_(self, "fit_intercept", False)  # the functions see X as given
        set_(self, "extra", None)
        set_(self, "extra_prior", None)
        if not (callable(self.loglik_fn) and callable(self.grad_fn)):
            raise TypeError(
                "CustomModel needs two functions: loglik(theta, X, y), grad(theta, X, y)."
            )
        n = self.n_parameters
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n_params must be a positive integer, got {n!r}.")
        scale = np.asarray(prior_scale, dtype=np.float64)
        if scale.ndim == 1 and scale.shape[0] != n:
            raise ValueError(
                f"prior_scale has {scale.shape[0]} entries; the model has {n} parameters."
            )
        super().__post_init__()

    @property
    def name(self):
        """The model's name in messages and ``model_``.

        As given by ``name=``.
        """
        return self.model_name

    def __repr__(self):
        return f"CustomModel(name={self.model_name!r}, n_params={self.n_parameters})"

    def n_params(self, n_columns):
        return int(self.n_parameters)

    def design(self, X, out=None):
        # the rows as they are: no copy of float64 rows to save (``out`` is for GLMs' designs)
        return np.ascontiguousarray(X, dtype=np.float64)

    def encode_targets(self, y):
        if self.targets_fn is None:
            return numeric_targets(y)
        n = len(y)
        out = self.targets_fn(y)  # its own errors (targets it refuses) reach the caller
        try:
            coded = np.ascontiguousarray(out, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"The {self.model_name!r} model's encode_targets returned values that are not "
                f"numbers ({exc}); it must return one float per target."
            ) from None
        if coded.shape != (n,):
            raise ValueError(
                f"The {self.model_name!r} model's encode_targets returned shape {coded.shape}; "
                f"expected ({n},), one code per target."
            )
        bad = ~np.isfinite(coded)
        if np.any(bad):
            first = np.asarray(y, dtype=object).reshape(-1)[np.flatnonzero(bad)[0]]
            raise ValueError(
                f"The {self.model_name!r} model's encode_targets returned NaN or infinity for "
                f"{int(bad.sum())} of the {n} targets (the first: {first!r}): it must code "
                "every target as a finite number, and raise a ValueError naming the targets "
                "it cannot code."
            )
        return coded

    def _shaped(self, what, value, shape):
        """The output of ``what`` as float64 of the expected shape, or a ValueError."""
        value = np.asarray(value, dtype=np.float64)
        if value.shape != shape:
            raise ValueError(
                f"The {self.model_name!r} model's {what} returned shape {value.shape}; expected "
                f"{shape} (draws, rows{', parameters' if len(shape) == 3 else ''})."
            )
        return value

    def raw_draws(self, what, thetas, Xd, y):
        """``loglik`` or ``grad`` (``what``) at the draws, shape-checked, NaN allowed.

        Parameters
        ----------
        what : {'loglik', 'grad'}
            The function.
        thetas : ndarray of shape (S, P)
            Parameter vectors.
        Xd : ndarray of shape (n, D)
            Rows.
        y : ndarray of shape (n,)
            Coded targets.

        Returns
        -------
        values : ndarray of shape (S, n) or (S, n, P)
            The function's output as float64.
        """
        thetas = np.atleast_2d(thetas)
        if what == "loglik":
            return self._shaped(what, self.loglik_fn(thetas, Xd, y), (thetas.shape[0], Xd.shape[0]))
        shape = (thetas.shape[0], Xd.shape[0], self.n_parameters)
        return self._shaped(what, self.grad_fn(thetas, Xd, y), shape)

    @property
    def checks_functions(self):
        return self.check_gradient

    def check_functions(self, Xd, y):
        """Check ``grad`` against ``loglik`` on these rows (with ``check_gradient``).

        See :func:`._checks.check_custom_gradient`.

        Parameters
        ----------
        Xd : ndarray of shape (n, D)
            A few rows, as ``fit`` passes them.
        y : ndarray of shape (n,)
            Their coded targets.
        """
        if self.checks_functions and Xd.shape[0]:
            check_custom_gradient(self, Xd, y)

    def _checked(self, what, value, shape):
        value = self._shaped(what, value, shape)
        # -inf is a log-likelihood (of data impossible at those parameters: the sampler
        # rejects them); NaN, +inf and infinite gradients are bugs
        bad = np.isnan(value) | (value == np.inf if what == "loglik" else ~np.isfinite(value))
        if np.any(bad):
            raise ValueError(
                f"The {self.model_name!r} model's {what} returned NaN or infinity (at "
                f"{int(np.sum(bad))} entries): it must be finite wherever the data and the "
                "parameters' posterior are."
            )
        return value

    def loglik_draws(self, thetas, Xd, y):
        thetas = np.atleast_2d(thetas)
        out = self.loglik_fn(thetas, Xd, y)
        return self._checked("loglik", out, (thetas.shape[0], Xd.shape[0]))

    def grad_draws(self, thetas, Xd, y):
        thetas = np.atleast_2d(thetas)
        out = self.grad_fn(thetas, Xd, y)
        return self._checked("grad", out, (thetas.shape[0], Xd.shape[0], self.n_parameters))
