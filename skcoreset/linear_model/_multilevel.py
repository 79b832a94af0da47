"""Bayesian multilevel regression: group effects over a single-index likelihood, by HMC.

The posterior is :class:`~skcoreset.models.Multilevel`'s, with the rows' ``sample_weight`` as
exponents of their likelihood terms (a coreset's weights). The sampler is HMC whose mass matrix
is the block-arrow Laplace fit's precision (:mod:`skcoreset.sampler._block_hmc`), in the
partially non-centred parameterisation the fit chooses per effect (``parameterisation``).
"""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .._logging import phase, report
from .._progress import ProgressBar
from .._sklearn_compat import Interval, StrOptions, _fit_context
from .._threads import one_blas_thread
from .._warnings import warn
from ..models._grouped_data import validate_grouped
from ..models._multilevel import Multilevel
from ..models._multilevel_laplace import fit_laplace
from ..models._multilevel_likelihood import (
    extra_names,
    integrates_groups,
    location,
)
from ..models._multilevel_marginal import recover_effects
from ..sampler import diagnostics
from ..sampler._block_hmc import sample
from ._base import ESS_THRESHOLD, RHAT_THRESHOLD, _dense

_BLOCK_DRAWS = 200  # draws per block of predictions: (rows x 200) linear predictors at a time


#: A group's effect is weakly informed (parameterisation 'auto') when its rows' precision on
#: it is below this multiple of its prior's, 1 / tau^2: where the partial centring still
#: leaves a funnel (measured: benchmarks/bench_multilevel_sampler.py). Above it the
#: quadrature costs time for nothing (verbagg, 316 persons of 24 rows at about 8 times the
#: prior's precision: 36 s integrated against 5 s sampled, the same ESS).
WEAK_GROUP = 2.0
#: The weakly informed groups are integrated out when they are at least this share of the
#: groups: then the funnel would rule the sampler; a few of them among well-informed groups
#: cost the quadrature's time and gain nothing (measured: the same benchmark).
WEAK_SHARE = 0.5


def _weak_groups(posterior, theta):
    """The groups (mask, G) to integrate out by quadrature: the weakly informed ones, when
    they are most of the groups, and a random intercept only (with slopes the grid's
    quadrature and the sds' search grow slow: measured, minutes for 300 groups); none of a
    Student-t base (``integrates_groups``: every effect sampled)."""
    none = np.zeros(posterior.G, dtype=bool)
    if posterior.q > 1 or not posterior.present.any() or not integrates_groups(posterior.base):
        return none
    tau, _ = posterior.effects(theta)
    ratio = posterior.information(theta) * tau**2
    weak = np.all(ratio < WEAK_GROUP, axis=1) & posterior.present
    return weak if weak.sum() >= WEAK_SHARE * posterior.present.sum() else none


def _check_group_weight(group_weight, codes, n_rows):
    """Each row's group weight (ones for None), checked: finite, non-negative, one number
    per row and the same within a group."""
    if group_weight is None:
        return np.ones(n_rows)
    gw = np.asarray(group_weight, dtype=np.float64)
    if gw.shape != (n_rows,):
        raise ValueError(f"group_weight must hold one number per row ({n_rows}); got {gw.shape}.")
    if not np.all(np.isfinite(gw)) or np.any(gw < 0):
        raise ValueError("group_weight must be finite and non-negative.")
    low = np.full(codes.max(initial=0) + 1, np.inf)
    high = np.full_like(low, -np.inf)
    np.minimum.at(low, codes, gw)
    np.maximum.at(high, codes, gw)
    if np.any(high - low > 1e-12 * np.maximum(1.0, np.abs(high))):
        raise ValueError("group_weight must be the same on every row of a group.")
    return gw


class BayesianMultilevelRegression(RegressorMixin, BaseEstimator):
    """Bayesian multilevel (random-effects) regression, sampled by block-preconditioned HMC.

    ``eta_i = x_i . coef + intercept + z_i . u_{g(i)}`` with group effects
    ``u_g ~ N(0, diag(group_sd^2))`` (see :class:`~skcoreset.models.Multilevel`). Fit it on
    all rows, or on a coreset's weighted rows (``sample_weight``, ``groups``).

    Parameters
    ----------
    model : Multilevel, default=None
        The model; None: ``Multilevel('logistic')``.
    prior_scale : float, array-like or 'auto', default='auto'
        Sd of the Gaussian prior of the coefficients (intercept last). 'auto': the data's
        scale (:func:`~skcoreset.models.default_prior_scale`), as the other estimators.
    fit_intercept : bool, default=True
        Whether the model has a fixed intercept (the groups' intercepts vary around it).
    parameterisation : {'auto', 'centred', 'non-centred'}, default='auto'
        How the sampler sees each group effect ``u_g = group_sd^(1 - c) v_g``: 'auto' is
        the partially non-centred parameterisation (Papaspiliopoulos, Roberts & Skold
        2003), ``c`` the share of the effect's precision its rows give at the Laplace fit,
        and, with a random intercept, the weakly informed groups integrated out by
        quadrature when they are most of the groups (their effects drawn afterwards; not
        with a Student-t base, whose effects are all sampled);
        'centred' is ``c = 1``, 'non-centred' ``c = 0``, every effect sampled. 'auto' mixes
        well in every regime measured, where each fixed choice fails in one (the user
        guide's "Multilevel models").
    n_samples, n_warmup, n_chains : int, default=1000, 500, 4
        Kept steps and warm-up steps per chain, and chains.
    step_size : float or 'auto', default='auto'
        HMC's leapfrog step (in the Laplace fit's units); 'auto' adapts it during the
        warm-up.
    random_state : int, RandomState instance or None, default=None
        Seeds the chains' starts and steps.
    progress : bool, default=False
        Show a progress bar of the sampler's steps.
    verbose : int, default=0
        Log the phases of the fit.

    Attributes
    ----------
    coef_, intercept_ : ndarray of shape (n_features,), float
        Posterior means of the fixed coefficients and intercept.
    group_sd_ : ndarray of shape (q,)
        Posterior mean of the group sds (the intercept's, then each slope's).
    group_effects_ : ndarray of shape (n_groups, q)
        Posterior means of each group's effects ``u_g``.
    coef_samples_, intercept_samples_, group_sd_samples_, group_effects_samples_ : ndarray
        The draws, of shapes (chains, draws, ...).
    <extra>_samples_, <extra>_ : ndarray of shape (chains, draws), float
        The draws and posterior mean of the base model's free extra parameters, on their
        natural scale: ``noise_scale`` (Gaussian), ``alpha`` (negative binomial), ``shape``
        (gamma), or the Student-t's ``scale`` and ``df`` (degrees of freedom), as the
        non-multilevel estimators name them.
    groups_ : ndarray of shape (n_groups,)
        The group labels, sorted (the rows of ``group_effects_``).
    classes_ : ndarray of shape (2,)
        The class labels (logistic base model only).
    rhat_, ess_ : ndarray
        Split R-hat and bulk ESS of every parameter: coefficients, intercept, the logs of the
        extra parameters (the Student-t's log scale, then log df), group sds, then the
        effects group by group.
    centring_ : ndarray of shape (n_groups, q)
        The sampler's parameterisation of each effect: ``u_g = group_sd^(1 - c) v_g``, 1 for
        a centred effect, 0 for a non-centred one; NaN for a group integrated out (its
        effect no parameter of the sampler, drawn afterwards from its rows).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.linear_model import BayesianMultilevelRegression
    >>> from skcoreset.models import Multilevel
    >>> rng = np.random.default_rng(0)
    >>> g = rng.integers(0, 20, 2000)
    >>> X = rng.standard_normal((2000, 2))
    >>> y = X @ [1.0, -0.5] + rng.normal(0, 0.7, 20)[g] + rng.standard_normal(2000)
    >>> est = BayesianMultilevelRegression(Multilevel("gaussian"), n_samples=300,
    ...                                    random_state=0).fit(X, y, groups=g)
    >>> est.group_effects_.shape
    (20, 1)
    """

    #: The compositions hand it the rows' groups, and a coreset with ``model='auto'`` builds
    #: a multilevel coreset for it (:func:`~skcoreset.compose._base.declared_model`).
    __skcoreset_multilevel__ = True

    _parameter_constraints: dict = {
        "model": [Multilevel, None],
        "prior_scale": [
            Interval(numbers.Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
            "array-like",
        ],
        "fit_intercept": ["boolean"],
        "parameterisation": [StrOptions({"auto", "centred", "non-centred"})],
        "n_samples": [Interval(numbers.Integral, 4, None, closed="left")],
        "n_warmup": [Interval(numbers.Integral, 0, None, closed="left")],
        "n_chains": [Interval(numbers.Integral, 1, None, closed="left")],
        "step_size": [StrOptions({"auto"}), Interval(numbers.Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "progress": ["boolean"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        model=None,
        *,
        prior_scale="auto",
        fit_intercept=True,
        parameterisation="auto",
        n_samples=1000,
        n_warmup=500,
        n_chains=4,
        step_size="auto",
        random_state=None,
        progress=False,
        verbose=0,
    ):
        self.model = model
        self.prior_scale = prior_scale
        self.fit_intercept = fit_intercept
        self.parameterisation = parameterisation
        self.n_samples = n_samples
        self.n_warmup = n_warmup
        self.n_chains = n_chains
        self.step_size = step_size
        self.random_state = random_state
        self.progress = progress
        self.verbose = verbose

    def _spec(self):
        return Multilevel() if self.model is None else self.model

    def fit(self, X, y, groups=None, sample_weight=None, group_weight=None):
        """Sample the posterior.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features (dense or sparse).
        y : array-like of shape (n_samples,)
            Targets, as the base model needs (two class labels, counts, real values).
        groups : array-like of shape (n_samples,)
            Each row's group label (any sortable type).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative exponents of the rows' likelihood terms (a coreset's weights).
        group_weight : array-like of shape (n_samples,), default=None
            Each row's group's weight, the same on all rows of a group (a coreset of groups
            gives it: ``fit_resample``'s ``"group_weight"``). A group of weight ``w_g`` other
            than 1 enters by ``w_g`` times its marginal likelihood, its effect integrated out
            by adaptive Gauss-Hermite quadrature, and its effect's draws are drawn from its
            rows given each draw of the other parameters (not with a Student-t base: a
            ``ValueError``). None: every group's weight is 1.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, y, groups, sample_weight, group_weight=group_weight)

    def _fit_with_prior(self, X, y, groups, sample_weight, data_scale, group_weight=None):
        """``fit`` on a coreset's rows with the full data's prior (``data_scale``: the
        coreset's), so that both target one posterior (the compositions call it)."""
        return self._fit(X, y, groups, sample_weight, data_scale, group_weight)

    @_fit_context(prefer_skip_nested_validation=True)
    @one_blas_thread()
    def _fit(self, X, y, groups=None, sample_weight=None, data_scale=None, group_weight=None):
        spec = self._spec()
        data = validate_grouped(self, spec, X, y, groups, sample_weight, self.fit_intercept)
        X, y, w, codes, labels = data.X, data.y, data.w, data.codes, data.labels
        if data.classes is not None:
            self.classes_ = data.classes
        gw = _check_group_weight(group_weight, codes, X.shape[0])
        keep = (w > 0) & (gw > 0)
        X, y, w, codes, gw = X[keep], y[keep], w[keep], codes[keep], gw[keep]
        if X.shape[0] < 2:
            raise ValueError(
                "BayesianMultilevelRegression needs at least 2 rows with positive weight."
            )
        rng = check_random_state(self.random_state)
        posterior = spec.posterior(
            X, y, codes, len(labels), w, self.prior_scale, self.fit_intercept, data_scale, gw
        )
        self.prior_scale_ = posterior.prior_scale.copy()
        with phase(self, f"Laplace fit ({X.shape[0]} rows, {len(labels)} groups)"):
            laplace = fit_laplace(posterior, self.parameterisation)
        if self.parameterisation == "auto":
            weak = np.zeros(len(labels), dtype=bool)
            weak[posterior.groups_in] = _weak_groups(posterior, laplace.mean)
            if weak.any():  # their effects integrated out: the sampler sees no funnel
                posterior = spec.posterior(
                    X,
                    y,
                    codes,
                    len(labels),
                    w,
                    self.prior_scale,
                    self.fit_intercept,
                    data_scale,
                    gw,
                    weak,
                )
                with phase(self, f"Laplace fit, {int(weak.sum())} groups integrated out"):
                    laplace = fit_laplace(posterior, self.parameterisation)
        self.laplace_ = laplace
        init = laplace.draws(self.n_chains, rng)
        steps = self.n_chains * (self.n_warmup + self.n_samples)
        with (
            phase(self, f"HMC: {self.n_chains} chains x ({self.n_warmup} + {self.n_samples})"),
            ProgressBar(steps, self.progress, "HMC steps") as bar,
        ):
            result = sample(
                posterior.log_posterior,
                laplace.factor,
                init,
                n_samples=self.n_samples,
                n_warmup=self.n_warmup,
                rng=rng,
                step_size=self.step_size,
                progress=bar.update if self.progress else None,
            )
        self._set_draws(posterior, result, labels, X.shape[1], rng)
        report(
            self,
            "acceptance rate per chain: %s",
            np.array2string(result.acceptance_rate, precision=3),
        )
        self._warn_convergence()
        return self

    def _set_draws(self, posterior, result, labels, n_features, rng):
        draws = result.draws
        D, E = posterior.D, posterior.E
        tau, u_in = posterior.effects(draws)
        # every group's effects: the sampler's groups, those integrated out (recovered
        # below), and those with no row of positive weight (the prior's)
        u = tau[:, :, None, :] * rng.standard_normal((*draws.shape[:2], len(labels), tau.shape[-1]))
        u[:, :, posterior.groups_in] = u_in
        marginals = posterior.marginals
        if marginals is not None:  # their effects, from their rows given each draw
            with phase(self, f"effects of {marginals.G} groups integrated out"):
                for c in range(draws.shape[0]):
                    u[c][:, marginals.groups] = marginals.recover(posterior.split, draws[c], rng)
        self.coef_samples_ = np.ascontiguousarray(draws[..., :n_features])
        self.intercept_samples_ = (
            draws[..., n_features].copy() if self.fit_intercept else np.zeros(draws.shape[:2])
        )
        base = posterior.base
        for e, name in enumerate(extra_names(base)):
            setattr(self, f"{name}_samples_", np.exp(draws[..., D + e]))
            setattr(self, f"{name}_", float(np.exp(draws[..., D + e]).mean()))
        self.group_sd_samples_, self.group_effects_samples_ = tau, u
        self.coef_ = self.coef_samples_.mean(axis=(0, 1))
        self.intercept_ = float(self.intercept_samples_.mean())
        self.group_sd_ = tau.mean(axis=(0, 1))
        self.group_effects_ = u.mean(axis=(0, 1))
        self.groups_ = labels
        self.centring_ = np.full((len(labels), posterior.q), np.nan)
        self.centring_[posterior.groups_in] = posterior.centring
        self.acceptance_rate_, self.step_size_ = result.acceptance_rate, result.step_size
        natural = np.concatenate([draws[..., : D + E], tau, u.reshape(*u.shape[:2], -1)], axis=-1)
        self.rhat_, self.ess_ = diagnostics(natural)
        self._base = base
        self._spec_fitted = posterior.spec
        self._posterior = posterior
        # the shared parameters' draws: a left-out group's effects are drawn given them
        self._shared_draws = np.ascontiguousarray(draws[..., : posterior.K])

    def _warn_convergence(self):
        max_rhat, min_ess = np.nanmax(self.rhat_), np.nanmin(self.ess_)
        report(self, "max R-hat %.4g, min bulk ESS %.4g", max_rhat, min_ess)
        if not (max_rhat <= RHAT_THRESHOLD and min_ess >= ESS_THRESHOLD):
            warn(
                f"BayesianMultilevelRegression: the MCMC chains may not have converged (max "
                f"R-hat {max_rhat:.4g}, min bulk ESS {min_ess:.4g}). Increase n_samples "
                "and/or n_warmup.",
                ConvergenceWarning,
            )

    def recover_groups(self, X, y, groups, sample_weight=None, random_state=None):
        """Add the effects of groups the fit did not see, from their own rows.

        For each draw of the shared parameters (coefficients, extra parameter, group sds),
        each new group's effect is drawn from ``p(u_g | draw, y_g)`` (an independence
        Metropolis-Hastings step per draw, as for the groups the fit integrated out). This
        is how a coreset of groups gives every group's effect: the compositions call it with
        the rows of the groups the coreset left out. Rows of groups already fitted are
        ignored.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The new groups' rows.
        y : array-like of shape (n_samples,)
            Their targets.
        groups : array-like of shape (n_samples,)
            Their groups.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows.
        random_state : int, RandomState instance or None, default=None
            Seeds the draws (None: the estimator's ``random_state``).

        Returns
        -------
        self : object
            The estimator, with ``groups_``, ``group_effects_`` and
            ``group_effects_samples_`` extended (sorted by label).
        """
        check_is_fitted(self, "coef_samples_")
        spec, post = self._spec_fitted, self._posterior
        data = validate_grouped(
            self,
            spec,
            X,
            y,
            groups,
            sample_weight,
            self.fit_intercept,
            reset=False,
            classes=getattr(self, "classes_", None),
        )
        new = ~np.isin(data.labels, self.groups_)
        rows = new[data.codes] & (data.w > 0)
        if not rows.any():
            return self
        labels, local = np.unique(data.labels[data.codes[rows]], return_inverse=True)
        base = post.base
        rng = check_random_state(self.random_state if random_state is None else random_state)
        draws = self._shared_draws
        effects = np.stack(
            [
                recover_effects(
                    base,
                    post.E,
                    base.design(data.X[rows]),
                    spec.effects_design(data.X[rows]),
                    data.y[rows],
                    data.w[rows],
                    local,
                    labels.shape[0],
                    draws[c],
                    rng,
                )  # fmt: skip
                for c in range(draws.shape[0])
            ]
        )
        all_labels = np.concatenate([self.groups_, labels])
        order = np.argsort(all_labels, kind="stable")
        self.groups_ = all_labels[order]
        self.group_effects_samples_ = np.concatenate(
            [self.group_effects_samples_, effects], axis=2
        )[:, :, order]
        self.group_effects_ = self.group_effects_samples_.mean(axis=(0, 1))
        return self

    # -- prediction ------------------------------------------------------------------------
    def _linear_predictors(self, X, groups, rng):
        """Linear predictors (rows, draws) of the pooled draws; a group not seen in fit (or
        ``groups=None``) gets a new effect per draw from ``N(0, group_sd^2)``: the posterior
        predictive of a new group (brms's ``sample_new_levels='gaussian'``)."""
        check_is_fitted(self, "coef_samples_")
        X = _dense(validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False))
        Z = self._spec_fitted.effects_design(X)
        beta = self.coef_samples_.reshape(-1, X.shape[1])
        b0 = self.intercept_samples_.reshape(-1)
        tau = self.group_sd_samples_.reshape(-1, Z.shape[1])
        u = self.group_effects_samples_.reshape(-1, *self.group_effects_.shape)
        S = beta.shape[0]
        if groups is None:
            pos = np.full(X.shape[0], -1)
        else:
            g = np.asarray(groups.to_numpy() if hasattr(groups, "to_numpy") else groups)
            if g.shape != (X.shape[0],):
                raise ValueError(f"groups must hold one label per row of X ({X.shape[0]}).")
            pos = np.searchsorted(self.groups_, g)
            pos = np.minimum(pos, len(self.groups_) - 1)
            pos = np.where(self.groups_[pos] == g, pos, -1)
        eta = X @ beta.T + b0
        seen = pos >= 0
        eta[seen] += np.einsum("nq,snq->ns", Z[seen], u[:, pos[seen], :])
        if not seen.all():
            new = rng.standard_normal((int((~seen).sum()), S, Z.shape[1])) * tau
            eta[~seen] += np.einsum("nq,nsq->ns", Z[~seen], new)
        return eta

    def predict(self, X, groups=None):
        """The posterior predictive mean (the most probable class for a logistic base).

        With a Student-t base, the posterior mean of the location, as
        :class:`~skcoreset.linear_model.BayesianStudentTRegression` predicts.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.
        groups : array-like of shape (n_samples,), default=None
            Each row's group; a group not seen in fit, or None, predicts at the population
            level (a new group's effect drawn from ``N(0, group_sd^2)`` per draw).

        Returns
        -------
        y : ndarray of shape (n_samples,)
            The posterior predictive means, or class labels.
        """
        if self._base.labels is not None:
            return self.classes_[(self.predict_proba(X, groups)[:, 1] > 0.5).astype(int)]
        eta = self._linear_predictors(X, groups, np.random.default_rng(0))
        return location(self._base, eta).mean(axis=1)

    def predict_proba(self, X, groups=None):
        """Posterior predictive class probabilities (logistic base model).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.
        groups : array-like of shape (n_samples,), default=None
            As in :meth:`predict`.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            The probabilities of ``classes_``.
        """
        check_is_fitted(self, "coef_samples_")
        if self._base.labels is None:
            raise AttributeError(f"The {self._base.name!r} base model has no class probabilities.")
        p = self._base.mean(self._linear_predictors(X, groups, np.random.default_rng(0))).mean(
            axis=1
        )
        return np.column_stack([1 - p, p])

    def score(self, X, y, groups=None, sample_weight=None):
        """Return the accuracy (logistic base model) or R^2 of :meth:`predict`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.
        y : array-like of shape (n_samples,)
            Their targets.
        groups : array-like of shape (n_samples,), default=None
            Their groups, as in :meth:`predict`.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in the score.

        Returns
        -------
        score : float
            Accuracy or R^2.
        """
        pred = self.predict(X, groups)
        if self._base.labels is not None:
            return accuracy_score(y, pred, sample_weight=sample_weight)
        return r2_score(y, pred, sample_weight=sample_weight)

    def to_inference_data(self):
        """Return the draws as an ArviZ ``InferenceData``, with group coordinates.

        ``posterior`` holds ``coef`` (chain, draw, feature), ``intercept``, the extra
        parameters under their names (the Student-t's ``scale`` and ``df``), ``group_sd``
        (chain, draw, effect) and ``group_effects`` (chain, draw, group, effect), ``group``
        labelled by :attr:`groups_` and ``effect`` by ``'intercept'`` then ``'x<j>'`` for
        each slope's column.

        Returns
        -------
        idata : arviz.InferenceData
            The posterior group.
        """
        import arviz as az

        check_is_fitted(self, "coef_samples_")
        effects = ["intercept", *(f"x{j}" for j in self._spec_fitted.slopes)]
        posterior = {
            "coef": self.coef_samples_,
            "group_sd": self.group_sd_samples_,
            "group_effects": self.group_effects_samples_,
        }
        if self.fit_intercept:
            posterior["intercept"] = self.intercept_samples_
        for name in extra_names(self._base):
            posterior[name] = getattr(self, f"{name}_samples_")
        return az.from_dict(
            posterior=posterior,
            coords={
                "feature": np.arange(self.coef_.shape[0]),
                "group": self.groups_,
                "effect": effects,
            },
            dims={
                "coef": ["feature"],
                "group_sd": ["effect"],
                "group_effects": ["group", "effect"],
            },
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
