"""Multilevel (random-effects) models over a single-index likelihood.

``eta_i = x_i . beta + z_i . u_{g(i)}``: every row gets the shared coefficients ``beta`` and its
group's effects ``u_g`` on the columns ``z_i`` (a 1 for the random intercept, then the columns
with random slopes), with ``u_g ~ N(0, diag(tau^2))``. The base model (logistic, Poisson,
negative binomial, Gaussian, gamma, Student-t, or a registered family) gives
``l(y | eta, extra)`` (:mod:`._multilevel_likelihood`).

:class:`Multilevel` is the specification a user passes as ``model=``; :meth:`Multilevel.bind`
ties it to data and returns a :class:`MultilevelPosterior`: the log posterior, its gradient and
its block-arrow Hessian in the sampler's parameterisation

    theta = [beta (D), log extra (E), log tau (q), v (G x q, group-major)]

with E = 0, 1 (the negative binomial's dispersion, the gamma's shape, the Gaussian noise) or 2
(the Student-t's ``log sigma`` then ``log nu``), each with its base model's normal prior,

where ``u_gk = tau_k^(1 - c_gk) v_gk``, ``c`` the centring (``centring``, (G, q)): 0 is
non-centred, which suits groups whose rows say little about their effect (the funnel between
``tau`` and ``u_g`` disappears), 1 centred, which suits groups whose rows pin their effect down
(the non-centred posterior would be a curved ridge); the Laplace fit chooses in between, per
effect (:mod:`._multilevel_laplace`). ``G`` counts the groups with rows here: a group without
(a coreset's left-out group, or one integrated out, :attr:`MultilevelPosterior.marginals`) is
no parameter.

The data term is a sum over groups of functions of ``(beta, extra, u_g)`` only: the Hessian in
``theta`` is block-arrow (a dense shared block, a q x q block per group, and shared-by-group
couplings), which :class:`BlockArrow` factors in ``O(G q^3 + G K q + K^3)``.

This module imports no scikit-learn.
"""

from dataclasses import dataclass, replace
from numbers import Real

import numpy as np

from ._glm import GLM
from ._multilevel_likelihood import (
    check_integrates_groups,
    extra_priors,
    is_student_t,
    likelihood_at,
    log_extras,
    n_extras,
)
from ._multilevel_marginal import GroupMarginals
from ._prior import Moments, checked_prior_scale, is_auto, prior_from_moments
from ._registry import get_model

#: The half-Student-t prior on each group sd: degrees of freedom (brms's default prior on
#: group sds is student_t(3, 0, 2.5), on the link scale).
TAU_DF = 3.0
#: Its scale on the link scale of the models with a link (logit, log); for identity-link
#: models (Gaussian, Student-t) it is this times the sd of the targets, as brms scales it.
TAU_SCALE = 2.5


@dataclass(frozen=True)
class Multilevel:
    """A multilevel model: group effects over a single-index likelihood.

    ``eta_i = x_i . beta + z_i . u_{g(i)}`` with ``z_i = (1, x_i[slopes])``: a random intercept
    per group, and random slopes on the columns ``slopes`` of ``X``. The effects are
    ``u_g ~ N(0, diag(tau^2))``, independent across groups; the group sds ``tau`` get a
    weakly informative half-Student-t prior with 3 degrees of freedom and scale
    ``tau_scale`` (as brms's default); the coefficients and the extra parameters keep the base
    model's priors (the Student-t's scale and degrees of freedom both sampled, by their logs,
    with :class:`~skcoreset.models.StudentTModel`'s priors).

    Pass it as ``model=`` to a coreset estimator or to
    :class:`~skcoreset.linear_model.BayesianMultilevelRegression`, with ``groups=`` in ``fit``.

    Parameters
    ----------
    base : str or GLM, default='logistic'
        The likelihood: ``'logistic'``, ``'poisson'``, ``'negative_binomial'``,
        ``'gaussian'``, ``'gamma'``, ``'student_t'``, a registered single-index family, or
        such a model object (not the multinomial model, nor a user's model of draws: no
        single linear predictor).
    slopes : sequence of int or None, default=None
        Columns of ``X`` with a random slope per group (their fixed coefficients stay in
        ``beta``). None: random intercepts only.
    tau_scale : float or 'auto', default='auto'
        Scale of the half-Student-t(3) prior on each group sd. 'auto': 2.5 on the link scale
        (logistic, Poisson, negative binomial, gamma) and 2.5 times the targets' sd for the
        identity-link models (Gaussian, Student-t), as brms sets it.

    Examples
    --------
    >>> from skcoreset.models import Multilevel
    >>> Multilevel("poisson", slopes=[0]).n_effects
    2
    >>> Multilevel("student_t").name
    'multilevel_student_t'
    """

    base: object = "logistic"
    slopes: tuple | None = None
    tau_scale: object = "auto"

    def __post_init__(self):
        slopes = () if self.slopes is None else self.slopes
        try:
            slopes = tuple(int(s) for s in np.atleast_1d(np.asarray(slopes)))
        except (TypeError, ValueError):
            raise TypeError(f"slopes must be column indices (ints), got {self.slopes!r}.") from None
        if any(s < 0 for s in slopes) or len(set(slopes)) != len(slopes):
            raise ValueError(f"slopes must be distinct non-negative column indices: {slopes}.")
        object.__setattr__(self, "slopes", slopes)
        if not (self.tau_scale == "auto" or _positive(self.tau_scale)):
            raise ValueError(
                f"tau_scale must be a positive number or 'auto', got {self.tau_scale!r}."
            )
        if not isinstance(self.base, (str, GLM)):
            raise TypeError(f"base must be a model name or a GLM, got {type(self.base).__name__}.")
        base = self.base_model()
        if not is_student_t(base) and (base.family is None or base.n_params(2) != 2):
            raise ValueError(
                f"Multilevel needs a single-index base model (logistic, poisson, "
                f"negative_binomial, gaussian, gamma, student_t, or a registered family); "
                f"got {base.name!r}."
            )

    @property
    def name(self):
        """The name: ``'multilevel_'`` and the base model's."""
        return f"multilevel_{self.base_model().name}"

    @property
    def n_effects(self):
        """The number q of effects per group (the intercept, then one per slope)."""
        return 1 + len(self.slopes)

    def base_model(self, **params):
        """Return the base likelihood as a model object.

        Parameters
        ----------
        **params : dict
            Fields of the model to set (``prior_scale``, ``fit_intercept``, ...).

        Returns
        -------
        model : GLM
            The base model.
        """
        if isinstance(self.base, GLM):
            return replace(self.base, **params) if params else self.base
        return get_model(self.base, **params)

    def effects_design(self, X):
        """Return the columns the group effects multiply.

        Parameters
        ----------
        X : ndarray of shape (N, D)
            Features.

        Returns
        -------
        Z : ndarray of shape (N, q)
            A column of ones, then the slopes' columns of ``X``.
        """
        X = np.asarray(X)
        if self.slopes and max(self.slopes) >= X.shape[1]:
            raise ValueError(
                f"slopes={list(self.slopes)} names a column beyond X's {X.shape[1]} columns."
            )
        return np.column_stack([np.ones(X.shape[0]), X[:, list(self.slopes)]]).astype(np.float64)

    def tau_prior_scale(self, base, y_sd):
        """Return the half-Student-t scale of each group sd (``tau_scale`` resolved).

        Parameters
        ----------
        base : GLM
            The base model.
        y_sd : float or None
            The targets' sd (the identity-link models' scale).

        Returns
        -------
        scale : float
            2.5 on the link scale, times ``y_sd`` for the Gaussian model, or ``tau_scale``.
        """
        if self.tau_scale != "auto":
            return float(self.tau_scale)
        identity = base.name in ("gaussian", "student_t")
        return TAU_SCALE * (float(y_sd) if identity and y_sd and y_sd > 0 else 1.0)

    def bind(self, Xd, Z, y, w, codes, n_groups, base, prior_scale, tau_scale, centring=None):
        """Return the posterior on design rows, with priors given.

        Parameters
        ----------
        Xd : ndarray of shape (N, D)
            Design matrix of the fixed coefficients (``base.design(X)``).
        Z : ndarray of shape (N, q)
            The columns the effects multiply (:meth:`effects_design`).
        y : ndarray of shape (N,)
            Coded targets.
        w : ndarray of shape (N,)
            Weights of the rows.
        codes : ndarray of shape (N,)
            Each row's group, in ``range(n_groups)``.
        n_groups : int
            The number of groups.
        base : GLM
            The base model, its priors set.
        prior_scale : ndarray of shape (D,)
            Prior sds of the coefficients.
        tau_scale : float
            Scale of the half-Student-t prior of the group sds.
        centring : ndarray of shape (n_groups, q), default=None
            The parameterisation (0: non-centred).

        Returns
        -------
        posterior : MultilevelPosterior
            The log posterior and its derivatives.
        """
        return MultilevelPosterior(
            self, Xd, Z, y, w, codes, n_groups, base, prior_scale, tau_scale, centring
        )

    def data_scale(self, moments, fit_intercept=True):
        """Return what the priors read of the data: ``(prior scale, y_mean, y_sd)``.

        Parameters
        ----------
        moments : Moments
            The weighted moments of the rows (added block by block in a stream).
        fit_intercept : bool, default=True
            Whether the design has an intercept column.

        Returns
        -------
        data_scale : tuple
            The coefficients' 'auto' prior sds, the targets' mean and sd.
        """
        base = self.base_model(fit_intercept=fit_intercept)
        _, _, y_mean, y_sd = moments.mean_and_sd()
        return prior_from_moments(base.with_data_scale(y_mean, y_sd), moments), y_mean, y_sd

    def posterior(
        self,
        X,
        y,
        codes,
        n_groups,
        w,
        prior_scale="auto",
        fit_intercept=True,
        data_scale=None,
        group_weight=None,
        integrate=None,
    ):
        """Return the posterior of validated rows, with the priors the data call for.

        ``prior_scale='auto'`` follows the data's scale as every estimator's does
        (:func:`~skcoreset.models.default_prior_scale`), and so do the extra parameter's
        prior and ``tau_scale='auto'``.

        Parameters
        ----------
        X : ndarray of shape (N, D)
            Dense features.
        y : ndarray of shape (N,)
            Coded targets.
        codes : ndarray of shape (N,)
            Each row's group, in ``range(n_groups)``.
        n_groups : int
            The number of groups.
        w : ndarray of shape (N,)
            Weights of the rows.
        prior_scale : float, array-like or 'auto', default='auto'
            Prior sds of the coefficients.
        fit_intercept : bool, default=True
            Whether the design has an intercept column.
        data_scale : tuple, default=None
            ``(prior scale, y_mean, y_sd)`` of other rows to use instead of these rows'
            (the full data's, for a coreset's rows).
        group_weight : ndarray of shape (N,), default=None
            Each row's group's weight (the same within a group); a group of weight other
            than 1 enters by its weighted marginal, its effect integrated out
            (:class:`~._multilevel_marginal.GroupMarginals`; not for a Student-t base, a
            ``ValueError``: :func:`~._multilevel_likelihood.integrates_groups`).
        integrate : ndarray of shape (n_groups,) of bool, default=None
            Groups integrated out at weight 1 (those whose rows say little about their
            effects: they leave the sampler's parameters).

        Returns
        -------
        posterior : MultilevelPosterior
            The log posterior and its derivatives.
        """
        base = self.base_model(fit_intercept=fit_intercept)
        gw = np.ones(y.shape[0]) if group_weight is None else np.asarray(group_weight, float)
        if data_scale is None:
            data_scale = self.data_scale(Moments.of(X, y, w * gw), fit_intercept)
        auto_scale, y_mean, y_sd = data_scale
        base = base.with_data_scale(y_mean, y_sd)
        D = X.shape[1] + int(fit_intercept)
        if is_auto(prior_scale):
            scale = np.asarray(auto_scale, dtype=np.float64)
        else:
            scale = checked_prior_scale(prior_scale, D)
            scale = scale if scale.ndim else np.full(D, float(scale))
        base = replace(base, prior_scale=scale)
        Xd, Z = base.design(X), self.effects_design(X)
        marginal = gw != 1.0
        if integrate is not None:
            marginal |= np.asarray(integrate, dtype=bool)[codes]
        explicit = ~marginal
        post = self.bind(
            Xd[explicit],
            Z[explicit],
            y[explicit],
            w[explicit],
            codes[explicit],
            n_groups,
            base,
            scale,
            self.tau_prior_scale(base, y_sd),
        )
        post.data_scale = (scale, y_mean, y_sd)
        if marginal.any():
            check_integrates_groups(base)
            groups, local = np.unique(codes[marginal], return_inverse=True)
            weights = np.zeros(groups.shape[0])
            weights[local] = gw[marginal]
            post.marginals = GroupMarginals(
                base,
                post.E,
                Xd[marginal],
                Z[marginal],
                y[marginal],
                w[marginal],
                local,
                groups.shape[0],
                weights,
            )
            post.marginals.groups = groups  # their indices among all the groups
        return post


def _positive(x):
    return isinstance(x, Real) and not isinstance(x, bool) and np.isfinite(x) and x > 0


def check_groups(groups, n_rows, name="groups"):
    """``(codes, labels)``: each row's group as an index into the sorted distinct labels.

    Raises a ``ValueError`` naming the problem: a missing ``groups``, a length that is not the
    rows', a missing label (None or NaN).
    """
    if groups is None:
        raise ValueError(f"A multilevel model needs {name}= in fit: each row's group label.")
    if hasattr(groups, "to_numpy"):
        groups = groups.to_numpy()
    g = np.asarray(groups)
    if g.ndim != 1 or g.shape[0] != n_rows:
        raise ValueError(
            f"{name} must be 1-d with one label per row ({n_rows}); got shape {g.shape}."
        )
    if g.dtype == object and any(v is None for v in g):
        raise ValueError(f"{name} holds a missing label (None).")
    if g.dtype.kind == "f" and not np.all(np.isfinite(g)):
        raise ValueError(f"{name} holds NaN or infinite labels.")
    try:
        labels, codes = np.unique(g, return_inverse=True)
    except TypeError:
        raise TypeError(f"{name} mixes label types that cannot be sorted.") from None
    return codes.astype(np.intp), labels


@dataclass
class BlockArrow:
    """A symmetric positive definite block-arrow matrix, factored.

    ``H = [[A, C], [C^T, blockdiag(D_g)]]`` with ``A`` (K, K), ``C = [C_1 ... C_G]``,
    ``C_g`` (K, q), ``D_g`` (q, q). With ``L_g L_g^T = D_g``, ``B_g = C_g L_g^{-T}`` and
    ``L_s L_s^T = A - sum_g B_g B_g^T`` (the Schur complement), ``H = R R^T`` for the
    block upper-triangular ``R = [[L_s, B], [0, blockdiag(L_g)]]``: no fill-in. The
    triangular factors are small (K and q rows), so their inverses are kept and every
    operation is a product (a sampler applies them thousands of times).
    """

    Ls: np.ndarray  # (K, K)
    B: np.ndarray  # (G, K, q)
    Lg: np.ndarray  # (G, q, q)
    Ls_inv: np.ndarray
    Lg_inv: np.ndarray

    @classmethod
    def factor(cls, A, C, D):
        """Factor, or raise ``np.linalg.LinAlgError`` when ``H`` is not positive definite."""
        Lg = np.linalg.cholesky(D)
        Lg_inv = np.linalg.inv(Lg)
        B = np.einsum("gkp,gqp->gkq", C, Lg_inv)  # C_g L_g^{-T}
        S = A - np.einsum("gkq,glq->kl", B, B)
        Ls = np.linalg.cholesky(0.5 * (S + S.T))
        return cls(Ls, B, Lg, np.linalg.inv(Ls), Lg_inv)

    @property
    def K(self):
        return self.Ls.shape[0]

    def _split(self, x):
        return x[..., : self.K], x[..., self.K :].reshape(*x.shape[:-1], *self.Lg.shape[:2])

    def _join(self, xs, xg):
        return np.concatenate([xs, xg.reshape(*xs.shape[:-1], -1)], axis=-1)

    def inv_rt(self, z):
        """``R^{-T} z``: with ``z ~ N(0, I)``, a draw of ``N(0, H^{-1})``."""
        zs, zg = self._split(z)
        xs = zs @ self.Ls_inv  # L_s^{-T} z_s
        rest = zg - np.einsum("gkq,...k->...gq", self.B, xs)
        return self._join(xs, np.einsum("gpq,...gp->...gq", self.Lg_inv, rest))

    def r(self, z):
        """``R z``: with ``z ~ N(0, I)``, a draw of ``N(0, H)`` (HMC's momentum)."""
        zs, zg = self._split(z)
        ys = zs @ self.Ls.T + np.einsum("gkq,...gq->...k", self.B, zg)
        return self._join(ys, np.einsum("gpq,...gq->...gp", self.Lg, zg))

    def rt(self, x):
        """``R^T x`` (a proposal's density needs ``|R^T d|^2``)."""
        xs, xg = self._split(x)
        yg = np.einsum("gkq,...k->...gq", self.B, xs) + np.einsum("gpq,...gp->...gq", self.Lg, xg)
        return self._join(xs @ self.Ls, yg)

    def solve(self, r):
        """``H^{-1} r``."""
        rs, rg = self._split(r)
        yg = np.einsum("gpq,...gq->...gp", self.Lg_inv, rg)  # L_g^{-1} r_g
        ys = (rs - np.einsum("gkq,...gq->...k", self.B, yg)) @ self.Ls_inv.T
        return self.inv_rt(self._join(ys, yg))

    def logdet(self):
        """``log det H``."""
        return 2.0 * (
            np.log(np.diagonal(self.Ls)).sum() + np.log(np.diagonal(self.Lg, 0, 1, 2)).sum()
        )


class MultilevelPosterior:
    """The log posterior of a multilevel model on weighted rows, in ``theta``.

    Rows are held sorted by group (``order``: the permutation of the caller's rows), so that
    per-group sums are one ``np.add.reduceat``.
    """

    def __init__(self, spec, Xd, Z, y, w, codes, n_groups, base, prior_scale, tau_scale, centring):
        order = np.argsort(codes, kind="stable")
        self.spec, self.base, self.order = spec, base, order
        self.Xd = np.ascontiguousarray(Xd[order], dtype=np.float64)
        self.Z = np.ascontiguousarray(Z[order], dtype=np.float64)
        self.y = np.ascontiguousarray(y[order], dtype=np.float64)
        self.w = np.ascontiguousarray(w[order], dtype=np.float64)
        # the groups with rows here are the sampler's (``groups_in``, indices among all
        # ``n_groups_all``); another group's effect is the prior's, or its marginal's: it is
        # no parameter (each would widen the sampler's dimension for nothing)
        codes = np.asarray(codes)[order]
        self.n_groups_all = int(n_groups)
        self.groups_in = np.flatnonzero(np.bincount(codes, minlength=self.n_groups_all))
        self.g = np.ascontiguousarray(np.searchsorted(self.groups_in, codes))
        self.G, self.q = int(self.groups_in.shape[0]), Z.shape[1]
        counts = np.bincount(self.g, minlength=self.G)
        self.present = counts > 0  # every group here (the subsample's keep all too)
        self.starts = np.concatenate([[0], np.cumsum(counts)[:-1]])[self.present]
        self.D = Xd.shape[1]
        self.E = n_extras(base)
        self.K = self.D + self.E + self.q
        self.n_params = self.K + self.G * self.q
        self.marginals = None  # groups entering by their weighted marginals
        self.prior_scale = np.broadcast_to(np.asarray(prior_scale, dtype=np.float64), (self.D,))
        #: the normal prior (mean, sd) of each log extra parameter; ``extra_prior`` is the one
        #: pair for E = 1, the pairs for E = 2, None for E = 0
        self.extra_priors = extra_priors(base)
        self.extra_prior = self.extra_priors[0] if self.E == 1 else (self.extra_priors or None)
        self.tau_scale = float(tau_scale)
        shape = (self.G, self.q)
        self.centring = (
            np.zeros(shape)
            if centring is None
            else np.broadcast_to(np.asarray(centring, dtype=np.float64), shape).copy()
        )

    def subsample(self, max_rows):
        """The posterior on at most ``max_rows`` rows of each group, drawn uniformly (seeded:
        the same rows every time), their weights scaled to the group's total: ``self`` when
        no group has more."""
        counts = np.bincount(self.g, minlength=self.G)
        if counts.max(initial=0) <= max_rows:
            return self
        rng = np.random.default_rng(0)
        # a random key per row; per group the max_rows smallest keys are kept
        keys = self.g + rng.random(self.g.shape[0])
        order = np.argsort(keys, kind="stable")
        rank = np.arange(order.shape[0]) - np.repeat(np.cumsum(counts) - counts, counts)
        keep = np.sort(order[rank < max_rows])
        w = self.w[keep]
        scale = self.group_sums(self.w[:, None])[:, 0] / np.maximum(
            np.bincount(self.g[keep], weights=w, minlength=self.G), 1e-300
        )
        sub = MultilevelPosterior(
            self.spec,
            self.Xd[keep],
            self.Z[keep],
            self.y[keep],
            w * scale[self.g[keep]],
            self.g[keep],
            self.G,
            self.base,
            self.prior_scale,
            self.tau_scale,
            None,
        )
        sub.marginals = self.marginals
        return sub

    # -- parameters ------------------------------------------------------------------------
    def split(self, theta):
        """``(beta, log_extra, log_tau, v)`` of one parameter vector; ``log_extra`` None
        (E = 0), a float (E = 1) or the array ``(log sigma, log nu)`` (Student-t)."""
        D, E, K = self.D, self.E, self.K
        return (
            theta[:D],
            log_extras(theta, D, E),
            theta[D + E : K],
            theta[K:].reshape(self.G, self.q),
        )

    def effects(self, theta):
        """``(tau, u)``: the group sds and the effects (G, q) of ``theta``, or of draws
        (..., P) giving (..., q) and (..., G, q)."""
        theta = np.asarray(theta)
        log_tau = theta[..., self.D + self.E : self.K]
        v = theta[..., self.K :].reshape(*theta.shape[:-1], self.G, self.q)
        return np.exp(log_tau), np.exp((1.0 - self.centring) * log_tau[..., None, :]) * v

    def to_theta(self, beta, log_extra, log_tau, u):
        """The parameter vector of the effects ``u`` (G, q) in this parameterisation."""
        v = u * np.exp(-(1.0 - self.centring) * log_tau)
        extra = [] if not self.E else np.atleast_1d(log_extra)
        return np.concatenate([beta, extra, log_tau, v.ravel()])

    def reparameterise(self, theta, centring):
        """``theta`` in another parameterisation (the same point: the same ``beta``, ``u``)."""
        beta, s, log_tau, _ = self.split(theta)
        _, u = self.effects(theta)
        self.centring = np.broadcast_to(
            np.asarray(centring, dtype=np.float64), (self.G, self.q)
        ).copy()
        return self.to_theta(beta, s, log_tau, u)

    def model_at(self, s):
        """The base likelihood at the log extra parameters ``s``
        (:func:`~._multilevel_likelihood.likelihood_at`)."""
        return likelihood_at(self.base, s)

    # -- the density -------------------------------------------------------------------------
    def eta(self, theta):
        beta, _, _, _ = self.split(theta)
        _, u = self.effects(theta)
        return self.Xd @ beta + np.einsum("nq,nq->n", self.Z, u[self.g])

    def group_sums(self, a):
        """Per-group sums of the rows of ``a`` (N, ...) -> (G, ...), zeros for empty groups."""
        out = np.zeros((self.G, *a.shape[1:]))
        if len(self.starts):
            out[self.present] = np.add.reduceat(a, self.starts, axis=0)
        return out

    def log_prior(self, theta):
        """``(log prior, gradient)`` of ``theta`` (the Jacobian of ``log tau`` included).

        ``v_g ~ N(0, tau^(2 c_g))`` with ``c`` the centring: ``u_g = tau^(1 - c_g) v_g``.
        """
        beta, s, log_tau, v = self.split(theta)
        grad = np.zeros_like(theta)
        D, E, K = self.D, self.E, self.K
        lp = -0.5 * np.sum((beta / self.prior_scale) ** 2)
        grad[:D] = -beta / self.prior_scale**2
        for e, (m, sd) in enumerate(self.extra_priors):
            lp -= 0.5 * ((theta[D + e] - m) / sd) ** 2
            grad[D + e] = -(theta[D + e] - m) / sd**2
        tau = np.exp(log_tau)
        r = tau**2 / (TAU_DF * self.tau_scale**2)
        lp += np.sum(-0.5 * (TAU_DF + 1) * np.log1p(r) + log_tau)
        c = self.centring
        v2 = v**2 * np.exp(-2.0 * c * log_tau)  # (v / tau^c)^2
        lp += -0.5 * v2.sum() - np.sum(c * log_tau)
        grad[D + E : K] = -(TAU_DF + 1) * r / (1 + r) + 1.0 + np.sum(c * (v2 - 1.0), axis=0)
        grad[K:] = (-v * np.exp(-2.0 * c * log_tau)).ravel()
        return lp, grad

    def log_posterior(self, theta, gradient=True):
        """``log p(theta | data)`` up to a constant, and its gradient."""
        beta, s, log_tau, v = self.split(theta)
        model = self.model_at(s)
        eta = self.eta(theta)
        ll = self.w @ model.loglik(eta, self.y)
        lp, grad = self.log_prior(theta)
        if self.marginals is not None:
            value, g_shared = self.marginals.value_and_grad(beta, s, log_tau, gradient)
            lp += value
        if not gradient:
            return ll + lp
        if self.marginals is not None:
            grad[: self.K] += g_shared
        wd = self.w * model.dloglik(eta, self.y)
        G = self.group_sums(wd[:, None] * self.Z)  # (G, q): d loglik / d u_g
        D, E, K = self.D, self.E, self.K
        grad[:D] += self.Xd.T @ wd
        if E:
            grad[D : D + E] += self.w @ model.scores(eta, self.y)
        a = 1.0 - self.centring
        t = np.exp(a * log_tau)
        grad[K:] += (t * G).ravel()
        grad[D + E : K] += np.sum(a * t * v * G, axis=0)
        return ll + lp, grad

    def hessian(self, theta):
        """The block-arrow Hessian of ``-log p`` at ``theta``: ``(A, C, D)``."""
        beta, s, log_tau, v = self.split(theta)
        model = self.model_at(s)
        eta = self.eta(theta)
        d, c = model.derivatives(eta, self.y)
        wd, wc = self.w * d, self.w * c
        a = 1.0 - self.centring
        t = np.exp(a * log_tau)  # d u / d v
        u = t * v
        dtau = (a * u)[self.g] * self.Z  # d eta / d log tau
        tZ = t[self.g] * self.Z  # d eta / d v_g
        D, E, K, q = self.D, self.E, self.K, self.q
        Js = np.hstack([self.Xd, dtau])  # the shared directions but the extra's
        shared = np.r_[np.arange(D), np.arange(D + E, K)]
        A = np.zeros((K, K))
        A[np.ix_(shared, shared)] = Js.T @ (wc[:, None] * Js)
        Gs = self.group_sums(wd[:, None] * self.Z)  # (G, q)
        taus = D + E + np.arange(q)
        A[taus, taus] -= np.sum(a**2 * u * Gs, axis=0)
        C = np.zeros((self.G, K, q))
        C[:, shared, :] = self.group_sums(Js[:, :, None] * (wc[:, None] * tZ)[:, None, :])
        C[:, taus, np.arange(q)] -= a * t * Gs
        if E:  # the extras' rows: their couplings to the shared block and to each v_g
            _, cross, curv = model.extra_derivatives(eta, self.y)  # (N, E), (N, E, E)
            extras = D + np.arange(E)
            wcross = self.w[:, None] * cross
            A[np.ix_(extras, shared)] = wcross.T @ Js
            A[np.ix_(shared, extras)] = A[np.ix_(extras, shared)].T
            A[np.ix_(extras, extras)] = np.einsum("n,nef->ef", self.w, curv) + np.diag(
                [1.0 / sd**2 for _, sd in self.extra_priors]
            )
            C[:, extras, :] = self.group_sums(wcross[:, :, None] * tZ[:, None, :])
        Dg = self.group_sums(tZ[:, :, None] * (wc[:, None] * tZ)[:, None, :])
        # the priors
        cen = self.centring
        prec = np.exp(-2.0 * cen * log_tau)  # 1 / tau^(2c)
        A[np.arange(D), np.arange(D)] += 1.0 / self.prior_scale**2
        r = np.exp(2 * log_tau) / (TAU_DF * self.tau_scale**2)
        A[taus, taus] += 2 * (TAU_DF + 1) * r / (1 + r) ** 2 + np.sum(
            2 * cen**2 * v**2 * prec, axis=0
        )
        C[:, taus, np.arange(q)] -= 2 * cen * v * prec
        Dg[:, np.arange(q), np.arange(q)] += prec
        if self.marginals is not None:
            A += self.marginals.hessian(beta, s, log_tau)
        return A, C, Dg

    def information(self, theta):
        """Each effect's data precision on the effect scale ``u`` (G, q) at ``theta``: the
        rows' curvature summed over the group (what decides centring), at least 0 (a
        likelihood that is not log-concave, the Student-t's, curves down at outliers)."""
        beta, s, _, _ = self.split(theta)
        _, c = self.model_at(s).derivatives(self.eta(theta), self.y)
        return np.maximum(self.group_sums((self.w * c)[:, None] * self.Z**2), 0.0)
