"""The base class of the models, and the lookup of a model by name.

A model is a small immutable value object that holds everything specific to one likelihood,
as scikit-learn's GLMs keep it on their loss: how targets are checked and coded, the design
matrix (the intercept is the *last* column), the per-datum log-likelihoods, gradients and
Hessian (through the generic numba kernels of ``_glm_kernels``, specialised by the model's
:class:`~skcoreset.models.SingleIndexFamily`), its 'auto' prior level and its Laplace start,
and the vectorised maths of prediction - the mean response, the log density and simulation.
The prior is N(0, diag(prior_scale^2)) on the coefficients, the intercept included.

Each built-in model is a file of its own (``_logistic.py``, ``_poisson.py``, ``_gaussian.py``,
``_negative_binomial.py``, ``_gamma.py``, ...) named in the registry of ``_names.py``; nothing
else in the package asks which model it holds (doc/models.md: what a model provides).
"""

import inspect
from dataclasses import dataclass, replace

import numpy as np

from .._parallel_kernels import in_ranges
from .._warnings import renamed, warn
from . import _glm_kernels as kernels
from ._checks import check_family
from ._recipes import ModelRecipes

#: Step of the central differences in the log of the extra parameter (its curvatures).
_LOG_EXTRA_STEP = 1e-4

#: A model class's members by their names before 0.1 -> their names: a class that still
#: defines the old one gets it under the new, with a FutureWarning (until 0.2).
_RENAMED_MEMBERS = {
    "has_noise": "has_extra",
    "estimate_noise_blocks": "estimate_extra_blocks",
    "estimate_noise": "estimate_extra",
    "extra_log_prior": "extra_prior_at",
}

# Rows of a design matrix copied on one thread: a large block's copy (NumPy's, which
# releases the GIL) is split among the fit's threads, a range of these each (measured:
# benchmarks/README.md, Thresholds)
_DESIGN_ROWS = 65_536


class _ModelType(type):
    """The models' type: ``noise_scale=``, the old name of ``extra=``, still builds one (with
    a FutureWarning, until 0.2); a class's signature is its ``__init__``'s."""

    def __call__(cls, *args, **kwargs):
        if "noise_scale" in kwargs:
            old = kwargs.pop("noise_scale")
            kwargs["extra"] = renamed("noise_scale=", "extra=", old, kwargs.get("extra"))
        return super().__call__(*args, **kwargs)

    @property
    def __signature__(cls):
        init = inspect.signature(cls.__init__)
        return init.replace(parameters=list(init.parameters.values())[1:])


@dataclass(frozen=True, eq=False)
class GLM(ModelRecipes, metaclass=_ModelType):
    """Base class of the models (use a subclass, or :func:`get_model`).

    Parameters
    ----------
    prior_scale : float or ndarray of shape (P,), default=1.0
        Standard deviation of the Gaussian prior N(0, diag(prior_scale^2)) on the parameters
        (one for all, or one per parameter, the intercept last; see
        :func:`~skcoreset.models.default_prior_scale`).
    fit_intercept : bool, default=True
        Whether the design matrix gets a trailing column of ones.
    extra : float or None, default=None
        The model's extra parameter, when it has one (``has_extra``): the Gaussian noise
        standard deviation, the negative binomial dispersion, the gamma shape. None: a
        parameter of the posterior, fitted jointly with the coefficients by the Laplace fit
        and sampled on the log scale. Its name before 0.1, ``noise_scale=``, still works
        until 0.2, with a ``FutureWarning``.
    extra_prior : (float, float) or None, default=None
        The normal prior ``(mean, sd)`` of the log of a free extra parameter: part of the
        posterior, as ``prior_scale`` is. None: the model's rule without the data's scale
        (:meth:`extra_prior_at` at ``y_sd=None``); :meth:`with_data_scale` sets it from the
        data. Unused by models without an extra parameter.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.models import LogisticModel
    >>> model = LogisticModel(prior_scale=2.0)
    >>> Xd = model.design(np.array([[0.5], [-1.0]]))
    >>> Xd
    array([[ 0.5,  1. ],
           [-1. ,  1. ]])
    >>> model.loglik(np.zeros(2), Xd, np.array([1.0, 0.0])).round(4)
    array([-0.6931, -0.6931])
    """

    prior_scale: float | np.ndarray = 1.0
    fit_intercept: bool = True
    extra: float | None = None
    extra_prior: tuple | None = None

    #: The model's name, as the ``model=`` parameters spell it.
    name = "glm"
    #: The likelihood's numba functions (a :class:`~skcoreset.models.SingleIndexFamily`).
    family = None
    #: Whether the model has an extra parameter besides the coefficients (the Gaussian noise
    #: scale, the negative binomial dispersion, the gamma shape), held in the ``extra`` field.
    has_extra = False
    #: The extra parameter's own name: the Bayesian estimators' attributes
    #: (``<name>_samples_``), the exports' variable (the Gaussian's ``noise_scale``).
    extra_name = "extra"
    #: The coding of class-label targets (:class:`~skcoreset.models.BinaryLabels`,
    #: :class:`~skcoreset.models.ClassLabels`), None for numeric targets. A likelihood of class
    #: labels can separate the classes.
    labels = None
    #: Whether ``prior_scale='auto'`` follows the data's scale, one sd per design column
    #: (:func:`~skcoreset.models.default_prior_scale`); False keeps the model's own.
    auto_prior = True
    #: Whether the parameters include a scale of the targets learnt from the data (the
    #: Student-t scale), which one row cannot give.
    learns_scale = False
    #: Whether the log-likelihood is concave in the parameters (every GLM with its canonical
    #: link here): Newton's method alone finds the mode. Otherwise the Laplace fit falls back
    #: to L-BFGS where the Hessian is not positive definite.
    log_concave = True
    #: The likelihood's name in the exports to probabilistic programming languages
    #: (:mod:`skcoreset.export`: 'bernoulli_logit', 'poisson_log', 'normal', ...), which
    #: write it with the model's recipes (:class:`~skcoreset.models._recipes.ModelRecipes`);
    #: None: the model has no export.
    likelihood = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for old, new in _RENAMED_MEMBERS.items():
            if old in vars(cls) and new not in vars(cls):
                renamed(f"{cls.__name__}.{old}", new)
                setattr(cls, new, vars(cls)[old])

    def __post_init__(self):
        scale = np.asarray(self.prior_scale, dtype=np.float64)
        if scale.ndim > 1 or not np.all(np.isfinite(scale)) or np.any(scale <= 0):
            raise ValueError(
                "prior_scale must be a positive finite number (or one per parameter), got "
                f"{self.prior_scale!r}."
            )
        if self.extra is not None and (not np.isfinite(self.extra) or self.extra <= 0):
            raise ValueError(f"extra must be positive and finite, got {self.extra!r}.")
        if self.has_extra and self.extra_prior is None:
            # the one home of the default: every fit of the posterior reads the field
            object.__setattr__(self, "extra_prior", self._checked_extra_prior(0.0, None))

    def _checked_extra_prior(self, y_mean, y_sd):
        """:meth:`extra_prior_at` as a checked ``(mean, sd)`` of floats."""
        mean, sd = map(float, self.extra_prior_at(y_mean, y_sd))
        if not (np.isfinite(mean) and np.isfinite(sd) and sd > 0):
            raise ValueError(
                f"The prior of log {self.extra_name} must have a finite mean and a positive "
                f"finite sd; got ({mean!r}, {sd!r}) from the data's scale."
            )
        return mean, sd

    @property
    def n_extra(self):
        """How many parameters of the posterior follow the coefficients.

        1 when the model's extra parameter is free (``has_extra`` and ``extra`` None:
        its log is fitted and sampled), else 0. A model of draws (:class:`GeneralModel`) has
        every parameter in its coefficients: 0.
        """
        return int(self.has_extra and self.extra is None)

    # -- data ----------------------------------------------------------------------------
    def n_params(self, n_columns):
        """The number of parameters P for a design matrix of ``n_columns`` columns.

        Parameters
        ----------
        n_columns : int
            Columns of the design matrix (the intercept's included).

        Returns
        -------
        n_params : int
            One coefficient per column here (K - 1 per column for the multinomial model).
        """
        return int(n_columns)

    def with_data_scale(self, y_mean, y_sd):
        """The model with the priors that follow the response's scale set.

        Called where the prior is set from the data's moments: a model with an extra
        parameter sets its prior (``extra_prior``, from :meth:`extra_prior_at`); the
        Student-t model centres its scale's prior there.

        Parameters
        ----------
        y_mean : float
            Weighted mean of the coded targets.
        y_sd : float or None
            Their weighted standard deviation (None: the prior does not follow the data).

        Returns
        -------
        model : GLM
            The model for data of that scale.
        """
        if not self.has_extra:
            return self
        return replace(self, extra_prior=self._checked_extra_prior(y_mean, y_sd))

    def with_classes(self, classes):
        """The model for these class labels (itself, but for models that count classes).

        Parameters
        ----------
        classes : ndarray of shape (K,)
            The labels that :attr:`labels` fitted.

        Returns
        -------
        model : GLM
            The model with its number of classes set.
        """
        return self

    @classmethod
    def composed_name(cls, y):
        """The model a composition means by this one's name, for its targets ``y``.

        A composition names the model of its final estimator
        (:func:`~skcoreset.compose.infer_model`), 'logistic' for any classifier, which fits
        as many classes as ``y`` has: the logistic model answers the multinomial one past
        two classes. The others answer their own name.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            The targets, or their distinct values.

        Returns
        -------
        name : str
            A name of ``MODEL_NAMES``.
        """
        return cls.name

    def encode_targets(self, y):
        """Validate ``y`` for this model and return it coded as a float64 array.

        Parameters
        ----------
        y : array-like of shape (N,)
            Targets: two class labels (logistic), non-negative numbers (Poisson) or real
            numbers (Gaussian).

        Returns
        -------
        y_coded : ndarray of shape (N,)
            The targets as the likelihood reads them (codes {0, 1} for the logistic model).
        """
        raise NotImplementedError

    def design(self, X, out=None):
        """Build the C-contiguous float64 design matrix (a trailing column of ones if needed).

        Parameters
        ----------
        X : array-like of shape (N, D)
            Features.
        out : ndarray of shape (N', P), default=None
            Where to build it when it fits (N' >= N, float64, C-contiguous): a pass over
            blocks reuses one array, rather than mapping fresh memory for each block (arrays
            above 32 MB come from the system each time, page by page).

        Returns
        -------
        Xd : ndarray of shape (N, P)
            ``X`` with a trailing column of ones when ``fit_intercept`` (P = D + 1), else
            ``X`` (P = D; ``X`` itself when it is C-contiguous float64). Rows of ``out`` when
            given and large enough.
        """
        X = np.asarray(X)  # converted by the one copy below (float32 X: no second copy)
        if not self.fit_intercept and X.dtype == np.float64 and X.flags.c_contiguous:
            return X
        n, P = X.shape[0], X.shape[1] + int(self.fit_intercept)
        fits = out is not None and out.shape[0] >= n and out.shape[1] == P
        Xd = out[:n] if fits else np.empty((n, P))

        def run(c0, c1):  # NumPy's copies release the GIL: large blocks on the fit's threads
            rows = slice(c0 * _DESIGN_ROWS, c1 * _DESIGN_ROWS)
            Xd[rows, : X.shape[1]] = X[rows]
            if self.fit_intercept:
                Xd[rows, -1] = 1.0

        in_ranges(run, -(-n // _DESIGN_ROWS))
        return Xd

    @property
    def extra_value(self):
        """The extra parameter as the kernels take it.

        ``extra``, or 1.0 when it is free (None) or the model has none.
        """
        return 1.0 if self.extra is None else float(self.extra)

    @property
    def noise_scale(self):
        """The extra parameter, ``extra`` (its name before 0.1; removed in 0.2).

        Reading it gives a ``FutureWarning``.
        """
        warn("noise_scale was renamed extra in 0.1 and will be removed in 0.2.", FutureWarning)
        return self.extra

    def prior_level(self, y_mean, y_sd):
        """Return the response's scale and level that the 'auto' prior reads.

        See :func:`~skcoreset.models.default_prior_scale`.

        Parameters
        ----------
        y_mean : float
            Weighted mean of the coded targets.
        y_sd : float
            Their weighted standard deviation.

        Returns
        -------
        s_y : float
            The scale of the response on the linear predictor's scale.
        level : float
            The level of the intercept.
        """
        return 1.0, 0.0

    @property
    def starts_from_mean(self):
        """Whether Newton's method starts from the constant fit.

        The fit of :meth:`initial_intercept`, which needs the weighted mean of all targets.
        """
        return self.fit_intercept and type(self).initial_intercept is not GLM.initial_intercept

    def mean_start(self, theta, y_mean):
        """Where Newton's method starts, given a start and the targets' mean.

        ``theta`` with the intercept of the constant fit (:meth:`initial_intercept`) when the
        model starts from it (:attr:`starts_from_mean`): the one home of that rule, whether
        the mean comes from one array, a pass over blocks or dask chunks.

        Parameters
        ----------
        theta : ndarray of shape (P,)
            The start otherwise (intercept last); not modified.
        y_mean : float or None
            Weighted mean of all the targets (not read when the model does not need it).

        Returns
        -------
        theta0 : ndarray of shape (P,)
            ``theta`` itself, or a copy with the constant fit's intercept.
        """
        if not self.starts_from_mean:
            return theta
        theta = np.array(theta, dtype=np.float64)
        theta[-1] = self.initial_intercept(y_mean)
        return theta

    def estimate_extra_blocks(self, blocks):
        """Estimate the extra parameter for the Laplace fit (models with one override this).

        Parameters
        ----------
        blocks : callable
            ``blocks()`` yields ``(Xd, y, w)`` triples (it may be called several times).

        Returns
        -------
        extra : float
            The estimate.
        """
        raise NotImplementedError(f"The {self.name} model has no extra parameter to estimate.")

    def estimate_extra(self, Xd, y, w):
        """Estimate the extra parameter on data in memory (:meth:`estimate_extra_blocks`).

        Parameters
        ----------
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.
        w : ndarray of shape (N,)
            Non-negative weights of the rows.

        Returns
        -------
        extra : float
            The estimate.
        """
        return self.estimate_extra_blocks(lambda: [(Xd, y, w)])

    def variance(self, mean, extra=None):
        """Return the likelihood's variance of a target of mean ``mean``.

        Parameters
        ----------
        mean : ndarray
            Mean responses (from :meth:`mean`), of any shape.
        extra : float or ndarray, default=None
            The extra parameter, broadcast like ``mean`` (None: the model's own).

        Returns
        -------
        variance : ndarray
            ``Var[y | mean]``, of the broadcast shape.
        """
        raise NotImplementedError

    def extra_prior_at(self, y_mean, y_sd):
        """Return the normal prior of the log of the extra parameter at the data's scale.

        The rule behind the ``extra_prior`` field, which :meth:`with_data_scale` sets from
        it when the prior follows the data.

        Parameters
        ----------
        y_mean : float
            Weighted mean of the coded targets.
        y_sd : float or None
            Their weighted standard deviation (None: a numeric ``prior_scale`` was given,
            and the prior does not follow the data's scale).

        Returns
        -------
        mean : float
            The prior mean of the log.
        sd : float
            Its standard deviation.
        """
        return 0.0, 3.0

    @property
    def n_predictors(self):
        """The number of linear predictors: one here (K - 1 for the multinomial model).

        The parameters start with their coefficient vectors, one per predictor, each of one
        entry per design column (the intercept last).
        """
        return 1

    def extra_priors(self, n_columns, y_mean, y_sd):
        """The parameters besides the coefficients and the normal priors of their logs.

        What the exports to probabilistic programming languages sample besides ``coef`` and
        ``intercept`` (:mod:`skcoreset.export`): the extra parameter when it is free, under
        the name of the Bayesian estimators' attributes (``noise_scale``, ``alpha``,
        ``shape``), with the prior :meth:`extra_prior_at`.

        Parameters
        ----------
        n_columns : int
            Columns of the design matrix (the intercept's included).
        y_mean : float
            Weighted mean of the coded targets.
        y_sd : float or None
            Their weighted standard deviation (None: the prior does not follow the data).

        Returns
        -------
        extras : tuple of (str, float, float)
            ``(name, mean, sd)`` of ``log(parameter) ~ N(mean, sd^2)``, for each such
            parameter; empty when there is none, or when the extra parameter is fixed.
        """
        if not self.has_extra or self.extra is not None:
            return ()
        return ((self.extra_name, *map(float, self.extra_prior_at(y_mean, y_sd))),)

    def extra_derivatives(self, eta, y):
        """Return each row's derivatives in the log of the extra parameter.

        At the model's extra parameter: the score ``dl/ds`` (``s = log(extra)``, the family's
        ``dlog_extra``), and by central differences of the family's functions in ``s``
        (step 1e-4, relative error near 1e-8) the curvatures ``-d2l/(deta ds)`` and
        ``-d2l/ds2``: with :meth:`loglik_derivatives`, each row's second-order expansion in
        the coefficients and the log extra parameter together (the joint Laplace fit's
        Hessian, the KL coresets' control variate).

        Parameters
        ----------
        eta : ndarray of shape (N,)
            Linear predictors.
        y : ndarray of shape (N,)
            Coded targets.

        Returns
        -------
        score : ndarray of shape (N,)
            ``dl_n / ds``.
        cross : ndarray of shape (N,)
            ``-d2 l_n / (deta ds)``.
        curv : ndarray of shape (N,)
            ``-d2 l_n / ds2``.
        """
        eta = np.ascontiguousarray(eta, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.float64)
        extra, h = self.extra_value, _LOG_EXTRA_STEP
        up, down = extra * np.exp(h), extra * np.exp(-h)
        score = kernels.dlog_extra_vector(self.family, eta, y, extra)
        # far from the mode a derivative may overflow: inf - inf is NaN, as in the kernels
        with np.errstate(invalid="ignore"):
            cross = (
                kernels.dloglik_vector(self.family, eta, y, down)
                - kernels.dloglik_vector(self.family, eta, y, up)
            ) / (2 * h)
            curv = (
                kernels.dlog_extra_vector(self.family, eta, y, down)
                - kernels.dlog_extra_vector(self.family, eta, y, up)
            ) / (2 * h)
        return score, cross, curv

    def initial_intercept(self, y_mean):
        """Return the intercept where Newton's method starts.

        The constant fit to targets of weighted mean ``y_mean``, for the models that override
        this method; the others start at zero.

        Parameters
        ----------
        y_mean : float
            Weighted mean of the coded targets.

        Returns
        -------
        intercept : float
            The starting intercept.
        """
        return 0.0

    def check_fit(self, blocks, theta):
        """Warn when the data contradict the model at its Laplace mode (a no-op here).

        Called by every Laplace fit. The logistic model warns about separable classes
        (:class:`~skcoreset.models.SeparationWarning`), the Poisson model about overdispersed
        counts (:class:`~skcoreset.models.OverdispersionWarning`).

        Parameters
        ----------
        blocks : callable
            ``blocks()`` yields the fit's ``(Xd, y, w)`` blocks.
        theta : ndarray of shape (P,)
            The mode.
        """

    @property
    def checks_functions(self):
        """Whether :meth:`check_functions` checks anything.

        True for a user's family with ``check_gradient`` on: the fits read rows for the
        check only then.
        """
        return self.family is not None and self.family.check_gradient

    def check_functions(self, Xd, y):
        """Check a user's functions at the start of a fit (see ``check_gradient``).

        For a family built with ``check_gradient=True`` (a user's): its functions at the
        linear predictors of the fit's start on these rows (:func:`._checks.check_family`).
        The built-in models check nothing.

        Parameters
        ----------
        Xd : ndarray of shape (n, P)
            A few rows' design (from :meth:`design`).
        y : ndarray of shape (n,)
            Their coded targets.

        Raises
        ------
        ValueError, TypeError
            Naming the function and the point where it is wrong.
        """
        if not self.checks_functions or Xd.shape[0] == 0:
            return
        eta = Xd @ self.initial_params(Xd, y, np.ones(Xd.shape[0]))
        check_family(self.family, y, eta, self.extra_value, self.log_concave, self.name)

    def initial_params(self, Xd, y, w):
        """Return a starting point for Newton's method (zeros, unless a subclass knows better).

        Parameters
        ----------
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.
        w : ndarray of shape (N,)
            Non-negative weights of the rows.

        Returns
        -------
        theta0 : ndarray of shape (P,)
            The starting parameters.
        """
        theta = np.zeros(Xd.shape[1])
        top = w.max(initial=0.0)
        if not (self.starts_from_mean and top > 0):  # no weighted row: no mean to start from
            return theta
        # weights of 1e-300 can sum to 0 in np.average: then scaled to a largest of 1
        return self.mean_start(theta, np.average(y, weights=w if w.sum() > 0 else w / top))

    # -- evaluation through the kernels --------------------------------------------------
    def loglik(self, theta, Xd, y):
        """Compute the per-datum log-likelihoods ``l_n(theta)``.

        Parameters
        ----------
        theta : ndarray of shape (P,)
            Parameters (coefficients, intercept last).
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.

        Returns
        -------
        loglik : ndarray of shape (N,)
            ``log p(y_n | x_n, theta)`` for each row.
        """
        eta = Xd @ np.asarray(theta, dtype=np.float64)
        return kernels.loglik_vector(self.family, eta, y, self.extra_value)

    def loglik_grad_per_datum(self, theta, Xd, y):
        """Compute the per-datum gradients ``grad l_n(theta)``.

        Parameters
        ----------
        theta : ndarray of shape (P,)
            Parameters (coefficients, intercept last).
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.

        Returns
        -------
        grad : ndarray of shape (N, P)
            The gradient of each row's log-likelihood with respect to ``theta``.
        """
        eta = Xd @ np.asarray(theta, dtype=np.float64)
        return kernels.dloglik_vector(self.family, eta, y, self.extra_value)[:, None] * Xd

    def loglik_derivatives(self, eta, y):
        """Compute each row's first and minus second derivative of the log-likelihood in eta.

        Parameters
        ----------
        eta : ndarray of shape (N,)
            Linear predictors ``Xd @ theta``.
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.

        Returns
        -------
        d : ndarray of shape (N,)
            ``dl_n / d eta``.
        curv : ndarray of shape (N,)
            ``-d^2 l_n / d eta^2`` (non-negative).
        """
        eta = np.ascontiguousarray(eta, dtype=np.float64)
        return kernels.dloglik_curv_vector(self.family, eta, y, self.extra_value)

    def weighted_loglik(self, theta, Xd, y, w):
        """Compute the weighted log-likelihood ``sum_n w_n l_n(theta)`` and its gradient.

        The prior is not included (see :meth:`log_posterior`).

        Parameters
        ----------
        theta : ndarray of shape (P,)
            Parameters (coefficients, intercept last).
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.
        w : ndarray of shape (N,)
            Non-negative weights of the rows.

        Returns
        -------
        ll : float
            The weighted log-likelihood.
        grad : ndarray of shape (P,)
            Its gradient with respect to ``theta``.
        """
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        grad = np.empty_like(theta)
        ll = kernels.weighted_loglik_grad(self.family, theta, Xd, y, w, self.extra_value, grad)
        return ll, grad

    def weighted_loglik_hessian(self, theta, Xd, y, w):
        """Compute the Hessian of ``-sum_n w_n l_n(theta)`` (the prior not included).

        Parameters
        ----------
        theta : ndarray of shape (P,)
            Parameters (coefficients, intercept last).
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.
        w : ndarray of shape (N,)
            Non-negative weights of the rows.

        Returns
        -------
        H : ndarray of shape (P, P)
            The Hessian of the negative weighted log-likelihood.
        """
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        return kernels.weighted_hessian(self.family, theta, Xd, y, w, self.extra_value)

    def weighted_loglik_grad_hessian(self, theta, Xd, y, w):
        """Compute :meth:`weighted_loglik` and :meth:`weighted_loglik_hessian` together.

        From 100 000 rows on, in one pass over the rows: what a Newton step over
        blocks of large data needs.

        Parameters
        ----------
        theta : ndarray of shape (P,)
            Parameters (coefficients, intercept last).
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.
        w : ndarray of shape (N,)
            Non-negative weights of the rows.

        Returns
        -------
        ll : float
            The weighted log-likelihood.
        grad : ndarray of shape (P,)
            Its gradient.
        H : ndarray of shape (P, P)
            The Hessian of the negative weighted log-likelihood.
        """
        if Xd.shape[0] < kernels.FUSED_MIN_ROWS:  # a small block: two passes, two lean kernels
            ll, grad = self.weighted_loglik(theta, Xd, y, w)
            return ll, grad, self.weighted_loglik_hessian(theta, Xd, y, w)
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        grad = np.empty_like(theta)
        ll, H = kernels.weighted_loglik_grad_hessian(
            self.family, theta, Xd, y, w, self.extra_value, grad
        )
        return ll, grad, H

    def log_posterior(self, theta, Xd, y, w):
        """Compute the unnormalised weighted log posterior and its gradient.

        ``log pi_0(theta) + sum_n w_n l_n(theta)`` up to the prior's normalising constant.

        Parameters
        ----------
        theta : ndarray of shape (P,)
            Parameters (coefficients, intercept last).
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.
        w : ndarray of shape (N,)
            Non-negative weights of the rows.

        Returns
        -------
        lp : float
            The log posterior, up to a constant.
        grad : ndarray of shape (P,)
            Its gradient with respect to ``theta``.
        """
        ll, grad = self.weighted_loglik(theta, Xd, y, w)
        return self.add_log_prior(theta, ll, grad)

    def add_log_prior(self, theta, ll, grad):
        """Add the log prior (up to its constant) and its gradient to a log-likelihood.

        Parameters
        ----------
        theta : ndarray of shape (P,)
            Parameters (coefficients, intercept last).
        ll : float
            A log-likelihood at ``theta``.
        grad : ndarray of shape (P,)
            Its gradient.

        Returns
        -------
        lp : float
            ``ll + log pi_0(theta)``.
        grad : ndarray of shape (P,)
            ``grad`` plus the gradient of ``log pi_0`` (a new array).
        """
        theta = np.asarray(theta, dtype=np.float64)
        prec = self.prior_precision(theta.shape[0])
        return ll - 0.5 * (prec * theta) @ theta, grad - prec * theta

    def prior_precision(self, n_params):
        """Return the prior's precision ``1 / prior_scale^2`` of each parameter.

        Parameters
        ----------
        n_params : int
            The number of parameters P.

        Returns
        -------
        precision : ndarray of shape (P,)
            The prior precision of each parameter.
        """
        scale = np.broadcast_to(np.asarray(self.prior_scale, dtype=np.float64), (n_params,))
        return 1.0 / scale**2

    def neg_log_posterior_hessian(self, theta, Xd, y, w):
        """Compute the Hessian of the negative weighted log posterior (positive definite).

        Parameters
        ----------
        theta : ndarray of shape (P,)
            Parameters (coefficients, intercept last).
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.
        w : ndarray of shape (N,)
            Non-negative weights of the rows.

        Returns
        -------
        H : ndarray of shape (P, P)
            The Hessian, the prior's precision included.
        """
        return self.add_prior_hessian(self.weighted_loglik_hessian(theta, Xd, y, w))

    def add_prior_hessian(self, H):
        """Add the prior's precision to the diagonal of ``H``, in place.

        Parameters
        ----------
        H : ndarray of shape (P, P)
            A Hessian of the negative log-likelihood; modified.

        Returns
        -------
        H : ndarray of shape (P, P)
            The same array.
        """
        H[np.diag_indices_from(H)] += self.prior_precision(H.shape[0])
        return H

    def loglik_matrix(self, Xd, y, thetas, out=None, extras=None):
        """Compute the per-datum log-likelihoods at J parameters, an (N, J) matrix.

        One fused kernel (products and likelihood together), so the output is the only (N, J)
        allocation.

        Parameters
        ----------
        Xd : ndarray of shape (N, P)
            Design matrix (from :meth:`design`).
        y : ndarray of shape (N,)
            Targets coded by :meth:`encode_targets`.
        thetas : ndarray of shape (J, P)
            The parameters, one per row.
        out : ndarray of shape (N, J), default=None
            Where to write the result (float64 or float32, to halve the storage); None
            allocates a float64 array.
        extras : ndarray of shape (J,), default=None
            The extra parameter of each draw (None: the model's own for all).

        Returns
        -------
        loglik : ndarray of shape (N, J)
            ``l_n(theta_j)``; ``out`` when given.
        """
        thetas_t = np.ascontiguousarray(np.atleast_2d(thetas).T, dtype=np.float64)
        if out is None:
            out = np.empty((Xd.shape[0], thetas_t.shape[1]))
        if extras is not None:
            extras = np.ascontiguousarray(extras, dtype=np.float64)
        kernel = kernels.loglik_matrix.for_size(out.size)
        kernel(self.family, Xd, thetas_t, y, self.extra_value, extras, 1.0, False, out)
        return out

    # -- prediction: vectorised over rows and posterior draws ----------------------------
    def mean(self, eta):
        """Return the mean response ``E[y | eta]``.

        Parameters
        ----------
        eta : ndarray
            Linear predictors ``x @ theta``, of any shape.

        Returns
        -------
        mean : ndarray
            The probability of class 1 (logistic), the rate (Poisson) or ``eta`` itself
            (Gaussian), of the shape of ``eta``.
        """
        raise NotImplementedError

    def log_density(self, y, eta, extra=None):
        """Compute the log density ``log p(y | eta)``, broadcasting ``y`` against ``eta``.

        Parameters
        ----------
        y : ndarray
            Coded targets, e.g. of shape (rows, 1).
        eta : ndarray
            Linear predictors, e.g. of shape (rows, draws).
        extra : float or ndarray, default=None
            The extra parameter (the Gaussian noise scale, the negative binomial dispersion,
            the gamma shape), broadcast like ``eta``; None uses the model's own.

        Returns
        -------
        log_density : ndarray
            The log density of each target at each predictor, of the broadcast shape.
        """
        extra = np.asarray(self.extra_value if extra is None else extra, dtype=np.float64)
        y, eta, extra = np.broadcast_arrays(np.asarray(y, dtype=np.float64), eta, extra)
        args = (np.ascontiguousarray(a, dtype=np.float64).ravel() for a in (eta, y, extra))
        return kernels.loglik_vector_extras(self.family, *args).reshape(eta.shape)

    def simulate(self, eta, random_state, extra=None):
        """Draw targets from the likelihood at ``eta``.

        Parameters
        ----------
        eta : ndarray
            Linear predictors, of any shape.
        random_state : numpy.random.RandomState
            The source of randomness.
        extra : float or ndarray, default=None
            The extra parameter (the Gaussian noise scale, the negative binomial dispersion,
            the gamma shape), broadcast like ``eta``; None uses the model's own.

        Returns
        -------
        y : ndarray
            One draw per entry of ``eta`` (codes {0, 1} for the logistic model).
        """
        raise NotImplementedError


def with_extra(model, extra):
    """Return the same model with its extra parameter fixed.

    Parameters
    ----------
    model : GLM
        A model.
    extra : float
        The value to fix (ignored when the model has no extra parameter, or has it fixed
        already).

    Returns
    -------
    model : GLM
        A copy with ``extra`` set, or ``model`` itself when there is nothing to set.

    Examples
    --------
    >>> from skcoreset.models import get_model, with_extra
    >>> with_extra(get_model("gaussian"), 2.0).extra
    2.0
    """
    if not model.has_extra or model.extra is not None:
        return model
    return replace(model, extra=float(extra))


def with_noise(model, noise_scale):
    """Return the same model with its extra parameter fixed (:func:`with_extra`'s old name).

    Deprecated in 0.1 (removed in 0.2): use :func:`with_extra`.

    Parameters
    ----------
    model : GLM
        A model.
    noise_scale : float
        The value to fix.

    Returns
    -------
    model : GLM
        :func:`with_extra`'s.

    Examples
    --------
    >>> import warnings
    >>> from skcoreset.models import get_model, with_noise
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     with_noise(get_model("gaussian"), 2.0).extra
    2.0
    """
    return with_extra(model, renamed("with_noise", "with_extra", noise_scale))
