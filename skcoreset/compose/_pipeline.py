"""A pipeline in which a coreset step selects the rows the later steps are fitted on.

``make_pipeline(StandardScaler(), GIGACoreset(n_points=100), BayesianLogisticRegression())``
fits the scaler on all rows, builds the coreset of the scaled rows, and fits the estimator on
the M selected rows with the coreset weights as ``sample_weight``. At prediction time the
coreset step is skipped: ``predict`` / ``predict_proba`` / ``score`` ... use every row.

A coreset cannot be a step of a stock :class:`sklearn.pipeline.Pipeline` (that pipeline passes
the same ``y`` to every step and has no way to pass weights from one step to the next; see
``doc/sklearn_design.md``). This :class:`Pipeline` is scikit-learn's, with ``fit`` and the
prediction methods built by composing public scikit-learn pipelines around the coreset ("resampler")
steps, so that ``get_params`` / ``set_params`` (``gigacoreset__n_points``), ``named_steps``,
indexing, ``clone``, pickling, ``set_output`` and the HTML display are scikit-learn's.

A resampler is any step with a ``fit_resample(X, y, sample_weight=None)`` method returning
``(X_m, y_m, {"sample_weight": w_m})``: skcoreset's coreset estimators.
"""

import numpy as np
from sklearn import pipeline as _skpipeline
from sklearn.base import is_classifier, is_regressor
from sklearn.utils.metadata_routing import MetadataRouter, MethodMapping, process_routing
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, has_fit_parameter

from .._sklearn_compat import _fit_context, _routing_enabled
from .._warnings import warn
from ..models import get_model
from ..models._multilevel import Multilevel
from ._base import (
    declared_model,
    fit_on_coreset,
    indexable,
    infer_model,
    is_passthrough,
    is_resampler,
    num_rows,
    recover_left_out,
    resample,
)

__all__ = ["Pipeline", "make_pipeline"]

# Beyond this magnitude squares overflow float64 (sqrt of its largest value, ~1.3e154).
_OVERFLOW_SCALE = float(np.sqrt(np.finfo(np.float64).max))


def _final_estimator_has(attr):
    def check(self):
        getattr(self._final_estimator, attr)
        return True

    return check


def _can_transform(self):
    final = self._final_estimator
    # a coreset as the last step is skipped at transform time, like everywhere else
    if not (is_passthrough(final) or is_resampler(final) or hasattr(final, "transform")):
        return False
    return all(
        hasattr(s, "transform")
        for _, s in self.steps[:-1]
        if not is_passthrough(s) and not is_resampler(s)
    )


def _can_inverse_transform(self):
    return all(
        hasattr(s, "inverse_transform")
        for _, s in self.steps
        if not is_passthrough(s) and not is_resampler(s)
    )


class Pipeline(_skpipeline.Pipeline):
    """A pipeline whose coreset steps select (and weight) the rows of the later steps.

    The steps before the first coreset are fitted on all rows; each coreset step is fitted on
    the output of the steps before it and keeps M weighted rows; every step after it is
    fitted on those rows with the coreset weights as ``sample_weight`` (the final estimator
    must accept ``sample_weight``; a transformer that does not is fitted unweighted, with a
    warning). The coreset steps run only during ``fit``: ``predict``, ``predict_proba``,
    ``predict_log_proba``, ``decision_function``, ``score``, ``score_samples``,
    ``transform``, ``inverse_transform`` and ``log_predictive_density`` skip them and use
    every row.

    Parameters
    ----------
    steps : list of (str, estimator) tuples
        Transformers, coreset estimators (anything with ``fit_resample``) and a final
        estimator, as for :class:`sklearn.pipeline.Pipeline`.
    transform_input : None
        Not supported (kept for scikit-learn's signature); must be None.
    memory : str or object with the joblib.Memory interface, default=None
        Caches the fitted transformers *before* the first coreset step (e.g. a scaler is
        fitted once across a grid search over the coreset size).
    verbose : bool, default=False
        Print the time of each step of the part before the first coreset.

    Attributes
    ----------
    named_steps : :class:`~sklearn.utils.Bunch`
        The steps by name.
    sample_indices_ : ndarray
        Rows of the training data kept by the (last) coreset step, as indices of the rows
        passed to ``fit`` (composed through coresets and samplers that keep rows; unset
        after a sampler that makes new rows, such as SMOTE).
    sample_weight_ : ndarray
        The weights the steps after the last coreset were fitted with.
    X_coreset_, y_coreset_ : array-like
        The rows the steps after the last coreset were fitted on: the coreset's input space
        (the output of the steps before it) and the targets in the caller's coding.
    classes_ : ndarray
        The final estimator's classes (classifiers).

    Notes
    -----
    **Likelihood.** A coreset step whose ``model`` is 'auto' takes its likelihood from the
    final estimator (see :func:`skcoreset.compose.infer_model`): logistic for
    classifiers, Poisson for Poisson regressors, Gaussian-linear otherwise. The step's
    ``model`` parameter is left as given; its fitted ``model_`` shows the choice.

    **Sample weights.** ``fit(X, y, sample_weight=w)`` describes weighted data: ``w`` goes
    to every step before the first coreset whose ``fit`` accepts ``sample_weight`` and to the
    coreset, whose weights then include it; the steps after the coreset get the coreset
    weights. ``stepname__param=value`` reaches one step as in scikit-learn
    (``<coreset>__sample_weight`` is the same as ``sample_weight``); giving
    ``sample_weight`` to a step after a coreset is an error, as is any per-row parameter for
    such a step (its rows are no longer those of ``X``). With metadata routing enabled, the
    steps up to the first coreset receive what they request; the steps after it receive the
    coreset weights whether they request them or not.

    **imbalanced-learn samplers** (anything whose ``fit_resample`` returns ``(X, y)``) may
    come before a coreset, e.g. ``make_pipeline(StandardScaler(), SMOTE(), OMPCoreset(),
    estimator)``: the coreset summarises the resampled rows. A sampler that keeps rows of its
    input (``sample_indices_``, e.g. ``RandomUnderSampler``) passes the data's weights on
    and ``sample_indices_`` composes through it; one that makes new rows (``SMOTE``) leaves
    ``sample_indices_`` unset and cannot take ``sample_weight``. A coreset cannot be a step
    of imbalanced-learn's own Pipeline (it would drop the weights); use this one, or
    :class:`~skcoreset.compose.CoresetClassifier` as the last step of theirs.

    Examples
    --------
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skcoreset.coreset import UniformCoreset
    >>> from skcoreset.pipeline import make_pipeline
    >>> pipe = make_pipeline(StandardScaler(), UniformCoreset(50, projection=None),
    ...                      LogisticRegression())
    >>> sorted(pipe.named_steps)
    ['logisticregression', 'standardscaler', 'uniformcoreset']
    >>> pipe.set_params(uniformcoreset__n_points=80)[1].n_points
    80
    """

    # -- structure ------------------------------------------------------------------------
    def _check_steps(self):
        if not isinstance(self.steps, (list, tuple)) or not self.steps:
            raise ValueError("The pipeline is empty. Please add steps.")
        for item in self.steps:
            if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
                raise TypeError(f"Pipeline steps must be (name, estimator) tuples; got {item!r}.")
        names = [name for name, _ in self.steps]
        if len(set(names)) != len(names):
            raise ValueError(f"Names provided are not unique: {names!r}")
        for name in names:
            if "__" in name:
                raise ValueError(f"Estimator names must not contain __: got {name!r}")
            if name in self.get_params(deep=False):
                raise ValueError(f"Estimator names conflict with constructor arguments: {name!r}")
        for name, step in self.steps[:-1]:
            if is_passthrough(step) or is_resampler(step):
                continue
            if not (hasattr(step, "fit") or hasattr(step, "fit_transform")) or not hasattr(
                step, "transform"
            ):
                raise TypeError(
                    "All intermediate steps should be transformers (fit and transform), coreset "
                    f"steps (fit_resample) or 'passthrough'; {name!r} ({type(step).__name__}) is "
                    "neither."
                )
        final = self.steps[-1][1]
        if not is_passthrough(final) and not hasattr(final, "fit"):
            raise TypeError(
                f"Last step of Pipeline should implement fit or be 'passthrough'; "
                f"{type(final).__name__} doesn't."
            )
        if self.transform_input is not None:
            raise ValueError("skcoreset.pipeline.Pipeline does not support transform_input.")

    def _resampler_positions(self):
        return [i for i, (_, s) in enumerate(self.steps) if is_resampler(s)]

    def _inference_pipeline(self):
        """A scikit-learn Pipeline of the same (fitted) steps without the coreset steps."""
        steps = [(n, s) for n, s in self.steps if not is_resampler(s)]
        return _skpipeline.Pipeline(steps)

    def _model_for_resamplers(self):
        """Likelihood for coreset steps with model='auto': from the final estimator."""
        final = self.steps[-1][1]
        if is_passthrough(final) or is_resampler(final):
            return None
        if is_classifier(final) or is_regressor(final) or hasattr(final, "predict"):
            return infer_model(final)
        return None

    # -- fit ------------------------------------------------------------------------------
    # The steps are validated by their own fit.
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, **params):
        """Fit the steps; the steps after a coreset are fitted on its weighted rows.

        Parameters
        ----------
        X : iterable
            Training data; must fulfil the input requirements of the first step.
        y : iterable, default=None
            Training targets.
        **params : dict of str -> object
            ``sample_weight=w``: weights of the data (see the class Notes), ``groups=g``:
            each row's group, for a multilevel model (the coreset takes them, and the step
            after it gets its rows' groups), and ``stepname__param=value`` for one step's
            ``fit``. With metadata routing enabled, the parameters requested by the steps up
            to the first coreset (``groups`` when the coreset requests it).

        Returns
        -------
        self : object
            Pipeline with fitted steps.
        """
        self._check_steps()
        # A refit without a coreset (e.g. set to 'passthrough') must not keep the old one's.
        for name in ("sample_indices_", "sample_weight_", "X_coreset_", "y_coreset_"):
            self.__dict__.pop(name, None)
        positions = self._resampler_positions()
        if not positions:
            return super().fit(X, y, **params)
        self.steps = list(self.steps)
        first = positions[0]
        X, y = indexable(X), indexable(y)
        groups = params.pop("groups", None) if not _routing_enabled() else None
        per_step, data_weight, head_params = self._split_params(params, first)
        Xt = self._fit_head(X, y, first, per_step, data_weight, head_params)
        self._fit_tail(Xt, y, first, per_step, data_weight, lambda: _n_rows(X), groups)
        return self

    def _split_params(self, params, first):
        """``(per-step fit parameters, data weights, parameters for the head pipeline)``.

        Without routing, ``sample_weight`` is the data's weights and ``step__param`` goes to
        one step. With routing, the steps up to the first coreset receive what they request
        (the head's own share is returned for it to route).
        """
        per_step = {name: {} for name, _ in self.steps}
        if _routing_enabled():
            head = _skpipeline.Pipeline(self.steps[: first + 1])
            routed = process_routing(head, "fit", **params)
            for name, _ in self.steps[: first + 1]:
                # routed.get, not `name in routed`: an EmptyRequest (no metadata) supports
                # item access only, and `in` would iterate it forever.
                step_routed = routed.get(name) or {}
                per_step[name].update(step_routed.get("fit", {}))
                per_step[name].update(step_routed.get("fit_transform", {}))
            head_pipe = _skpipeline.Pipeline(self.steps[:first]) if first else None
            consumed = (
                head_pipe.get_metadata_routing().consumes(method="fit_transform", params=params)
                if head_pipe is not None
                else set()
            )
            return per_step, None, {k: params[k] for k in consumed}
        params = dict(params)
        data_weight = params.pop("sample_weight", None)
        for key, value in params.items():
            if "__" not in key:
                raise ValueError(
                    f"Pipeline.fit does not accept the {key} parameter. Pass parameters to a "
                    "step with the stepname__parameter format, or the data's weights as "
                    "sample_weight=."
                )
            name, param = key.split("__", 1)
            if name not in per_step:
                raise ValueError(f"Pipeline.fit got {key!r}, but there is no step {name!r}.")
            per_step[name][param] = value
        return per_step, data_weight, None

    def _fit_head(self, X, y, first, per_step, data_weight, head_params):
        """Fit the steps before the first coreset on all rows: a public scikit-learn Pipeline
        (so ``memory`` caches them); return their output."""
        if first == 0:
            return X
        head = _skpipeline.Pipeline(self.steps[:first], memory=self.memory, verbose=self.verbose)
        if head_params is None:  # no routing: the data's weights go where they are accepted
            head_params = {}
            for name, step in self.steps[:first]:
                step_params = dict(per_step[name])
                if (
                    data_weight is not None
                    and "sample_weight" not in step_params
                    and not is_passthrough(step)
                    and has_fit_parameter(step, "sample_weight")
                ):
                    step_params["sample_weight"] = data_weight
                head_params.update({f"{name}__{k}": v for k, v in step_params.items()})
        Xt = head.fit_transform(X, y, **head_params)
        self.steps[:first] = head.steps  # fitted clones when memory caches them
        if _has_nonfinite(Xt):
            _raise_for_nonfinite_output(head.steps, X, data_weight)
        return Xt

    def _fit_tail(self, Xt, yt, first, per_step, weight, n_rows, groups=None):
        """Fit the coreset steps and every step after them, each on the rows kept so far
        (``groups``: the rows' groups, which the coresets keep with them; ``n_rows()``: the
        data's rows, asked only to check a later step's parameters)."""
        model = self._model_for_resamplers()
        rows = _ALL_ROWS  # the rows kept so far: every row of X, until a coreset selects
        last = len(self.steps) - 1
        coreset = None  # the coreset whose rows the next step gets as they are
        grouped = {}
        for idx in range(first, len(self.steps)):
            name, step = self.steps[idx]
            if is_passthrough(step):
                continue
            step_params = dict(per_step[name])
            if is_resampler(step):
                weight, groups = self._coreset_weight(
                    name, step_params, weight, idx == first, groups
                )
                before = (Xt, yt, groups, weight)  # the coreset's input
                Xt, yt, weight, grouped = self._fit_resampler(
                    name, step, Xt, yt, weight, model, groups
                )
                groups = grouped.get("groups")
                indices = getattr(step, "sample_indices_", None)
                if rows is None or indices is None:
                    rows = None
                else:
                    rows = indices if rows is _ALL_ROWS else rows[indices]
                coreset = step
            else:
                if step_params:
                    self._check_tail_params(name, step_params, n_rows())
                if grouped and has_fit_parameter(step, "groups"):
                    step_params.update(grouped)  # the coreset's rows' groups (and weights)
                Xt = self._fit_weighted_step(
                    name, step, Xt, yt, weight, step_params, idx < last, coreset
                )
                if coreset is not None and idx == last:  # left-out groups' effects
                    recover_left_out(step, coreset, *before)
                coreset = None  # a transformer's output is not the coreset's space
        if rows is not None and rows is not _ALL_ROWS:
            self.sample_indices_ = rows
        self.sample_weight_ = weight

    @staticmethod
    def _coreset_weight(name, step_params, weight, is_first, groups=None):
        """``(weights, groups)`` for a coreset step: the data's weights
        (``<coreset>__sample_weight`` or ``sample_weight``) and groups (``groups``, or routed
        to it); nothing else may be passed to it."""
        routed_groups = step_params.pop("groups", None)
        if routed_groups is not None:
            groups = routed_groups
        user_w = step_params.pop("sample_weight", None)
        if user_w is not None:
            if not is_first:
                raise ValueError(
                    f"sample_weight for {name!r}: the coreset before it supplies the weights "
                    "of its rows."
                )
            if weight is not None and user_w is not weight:
                raise ValueError(
                    f"Got both sample_weight and {name}__sample_weight; give the data's "
                    "weights once."
                )
            weight = user_w
        if step_params:
            raise ValueError(
                f"Coreset step {name!r} takes no fit parameters other than sample_weight and "
                f"groups; got {sorted(step_params)}."
            )
        return weight, groups

    @staticmethod
    def _check_tail_params(name, step_params, n_rows):
        """A step after a coreset sees its rows only: no weights or per-row parameters."""
        if "sample_weight" in step_params:
            raise ValueError(
                f"sample_weight was given for step {name!r}, which comes after a coreset: "
                "the coreset supplies the weights of its rows. Pass the data's weights as "
                "sample_weight= (or to the coreset step)."
            )
        for key, value in step_params.items():
            if num_rows(value, default=-1) == n_rows:
                raise ValueError(
                    f"Parameter {key!r} of step {name!r} looks per-row ({n_rows} entries), "
                    "but that step is fitted on the coreset's rows only."
                )

    @staticmethod
    def _fit_weighted_step(name, step, Xt, yt, weight, step_params, intermediate, coreset=None):
        """Fit a step after a coreset with the coreset weights; return its output. The final
        step, right after ``coreset``, gets the coreset's full-data prior
        (:func:`~skcoreset.compose._base.fit_on_coreset`)."""
        accepts = weight is not None and has_fit_parameter(step, "sample_weight")
        if accepts:
            step_params["sample_weight"] = weight
        if not intermediate:
            if weight is not None and not accepts:
                raise TypeError(
                    f"The final step {name!r} ({type(step).__name__}) must accept "
                    "sample_weight in fit to be fitted on a weighted coreset."
                )
            fit_on_coreset(step, Xt, yt, step_params, coreset)
            return Xt
        if weight is not None and not accepts:
            warn(
                f"Step {name!r} ({type(step).__name__}) does not accept sample_weight: it "
                "is fitted on the coreset's rows without their weights. Place it before "
                "the coreset to fit it on all rows.",
                UserWarning,
            )
        if hasattr(step, "fit_transform"):
            out = step.fit_transform(Xt, yt, **step_params)
        else:
            out = step.fit(Xt, yt, **step_params).transform(Xt)
        if _has_nonfinite(out):
            _raise_for_nonfinite_output([(name, step)], Xt, weight)
        return out

    def _fit_resampler(self, name, step, Xt, yt, weight, model, groups=None):
        """Fit one coreset step: its own model if it names one, else the final estimator's."""
        model = declared_model(step) or model
        Xr, yr, wr, grouped = resample(step, Xt, yt, weight, model, groups)
        if num_rows(Xr, default=1) == 0:
            raise ValueError(
                f"The coreset step {name!r} kept no rows, so the steps after it cannot be "
                "fitted; check its parameters and the data's sample_weight (all negligible?)."
            )
        base = model.base_model() if isinstance(model, Multilevel) else model
        if base is not None and get_model(base).labels is not None and yr is not None:
            labels = np.unique(np.asarray(yr))
            if labels.shape[0] < 2:
                # Else the classifier after it reports "y has one class", although y has two.
                raise ValueError(
                    f"The coreset step {name!r} kept rows of one class only ({labels[:1]}); "
                    "the classifier after it needs both classes: increase its n_points."
                )
        self.X_coreset_, self.y_coreset_ = Xr, yr
        return Xr, yr, wr, grouped

    @available_if(_can_transform)
    def fit_transform(self, X, y=None, **params):
        """Fit, then transform all rows of ``X`` (the coreset steps keep the row count).

        Parameters
        ----------
        X : iterable
            Data, as the first step takes it.
        y : iterable, default=None
            Targets, as the steps take them.
        **params : dict
            As for :meth:`fit`.

        Returns
        -------
        Xt : array-like of shape (n_samples, n_transformed_features)
            The transformed rows.
        """
        return self.fit(X, y, **params).transform(X)

    @available_if(_final_estimator_has("predict"))
    def fit_predict(self, X, y=None, **params):
        """Fit, then predict all rows of ``X``.

        Parameters
        ----------
        X : iterable
            Data, as the first step takes it.
        y : iterable, default=None
            Targets, as the steps take them.
        **params : dict
            As for :meth:`fit`.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The final estimator's predictions.
        """
        return self.fit(X, y, **params).predict(X)

    # -- prediction: the same fitted steps without the coreset steps ---------------------
    @available_if(_final_estimator_has("predict"))
    def predict(self, X, **params):
        """Transform ``X`` with the fitted transformers and predict with the final estimator.

        The coreset steps are skipped: every row of ``X`` gets a prediction.

        Parameters
        ----------
        X : iterable
            Data, as the first step takes it.
        **params : dict
            Passed as by :meth:`sklearn.pipeline.Pipeline.predict`.

        Returns
        -------
        y_pred : ndarray
            The final estimator's predictions.
        """
        check_is_fitted(self)
        return self._inference_pipeline().predict(X, **params)

    @available_if(_final_estimator_has("predict_proba"))
    def predict_proba(self, X, **params):
        """Class probabilities for every row of ``X`` (coreset steps skipped).

        Parameters
        ----------
        X : iterable
            Data, as the first step takes it.
        **params : dict
            Passed to the final estimator's method.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            The final estimator's class probabilities.
        """
        check_is_fitted(self)
        return self._inference_pipeline().predict_proba(X, **params)

    @available_if(_final_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X, **params):
        """Log class probabilities for every row of ``X`` (coreset steps skipped).

        Parameters
        ----------
        X : iterable
            Data, as the first step takes it.
        **params : dict
            Passed to the final estimator's method.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            The final estimator's log class probabilities.
        """
        check_is_fitted(self)
        return self._inference_pipeline().predict_log_proba(X, **params)

    @available_if(_final_estimator_has("decision_function"))
    def decision_function(self, X, **params):
        """Decision function for every row of ``X`` (coreset steps skipped).

        Parameters
        ----------
        X : iterable
            Data, as the first step takes it.
        **params : dict
            Passed to the final estimator's method.

        Returns
        -------
        scores : ndarray
            The final estimator's decision function.
        """
        check_is_fitted(self)
        return self._inference_pipeline().decision_function(X, **params)

    @available_if(_final_estimator_has("score_samples"))
    def score_samples(self, X):
        """The final estimator's ``score_samples`` for every row of ``X``.

        Parameters
        ----------
        X : iterable
            Data, as the first step takes it.

        Returns
        -------
        y_score : ndarray of shape (n_samples,)
            The final estimator's ``score_samples``.
        """
        check_is_fitted(self)
        return self._inference_pipeline().score_samples(X)

    @available_if(_final_estimator_has("score"))
    def score(self, X, y=None, sample_weight=None, **params):
        """The final estimator's ``score`` on all rows of ``(X, y)`` (coreset steps skipped).

        Parameters
        ----------
        X : iterable
            Data, as the first step takes it.
        y : iterable, default=None
            Targets, as the steps take them.
        sample_weight : array-like, default=None
            Passed to the final estimator's ``score``.
        **params : dict
            Passed to the final estimator's method.

        Returns
        -------
        score : float
            The final estimator's score.
        """
        check_is_fitted(self)
        return self._inference_pipeline().score(X, y, sample_weight=sample_weight, **params)

    @available_if(_final_estimator_has("log_predictive_density"))
    def log_predictive_density(self, X, y):
        """Mean log posterior predictive density of ``(X, y)`` (skcoreset's Bayesian models).

        Parameters
        ----------
        X : iterable
            Data, as the first step takes it.
        y : iterable
            Targets, as the steps take them.

        Returns
        -------
        lpd : float
            The mean log posterior predictive density.
        """
        check_is_fitted(self)
        return self.steps[-1][1].log_predictive_density(self._transform_head(X), y)

    @available_if(_final_estimator_has("sample_posterior_predictive"))
    def sample_posterior_predictive(self, X, n_draws=100, random_state=None):
        """Posterior predictive draws at the rows of ``X`` (skcoreset's Bayesian models).

        Parameters
        ----------
        X : iterable
            Data, as the first step takes it.
        n_draws : int, default=100
            Number of replicates.
        random_state : int, RandomState instance or None, default=None
            Seeds the choice of posterior draws and the simulated targets.

        Returns
        -------
        y_draws : ndarray of shape (n_draws, n_rows)
            One replicate of the targets per row.
        """
        check_is_fitted(self)
        return self.steps[-1][1].sample_posterior_predictive(
            self._transform_head(X), n_draws=n_draws, random_state=random_state
        )

    @available_if(_final_estimator_has("to_inference_data"))
    def to_inference_data(self, *, random_state=None):
        """The final estimator's ArviZ export of its fit (skcoreset's Bayesian models).

        Its observations are the rows the final step was fitted on: the coreset rows, in
        the space of the final step's input, with the coreset weights.

        Parameters
        ----------
        random_state : int, RandomState instance or None, default=None
            Seeds the posterior predictive replicates.

        Returns
        -------
        arviz.InferenceData
            The posterior and the groups the final estimator exports.
        """
        check_is_fitted(self)
        return self.steps[-1][1].to_inference_data(random_state=random_state)

    def _transform_head(self, X):
        """X through every fitted transformer before the final step (coreset steps skipped)."""
        inference = self._inference_pipeline()
        if len(inference.steps) == 1:
            return X
        return inference[:-1].transform(X)

    @available_if(_can_transform)
    def transform(self, X, **params):
        """Transform every row of ``X`` (coreset steps skipped).

        Parameters
        ----------
        X : iterable
            Data, as the first step takes it.
        **params : dict
            Passed to the final estimator's method.

        Returns
        -------
        Xt : array-like of shape (n_samples, n_transformed_features)
            The transformed rows.
        """
        return self._inference_pipeline().transform(X, **params)

    @available_if(_can_inverse_transform)
    def inverse_transform(self, X, **params):
        """Apply the inverse transformations in reverse order (coreset steps skipped).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_transformed_features)
            Data, as the first step takes it.
        **params : dict
            Passed to the final estimator's method.

        Returns
        -------
        X_original : array-like of shape (n_samples, n_features)
            The rows in the space of the first step's input.
        """
        return self._inference_pipeline().inverse_transform(X, **params)

    def get_feature_names_out(self, input_features=None):
        """Output feature names (coreset steps keep the columns).

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input feature names, as for :meth:`sklearn.pipeline.Pipeline.get_feature_names_out`.

        Returns
        -------
        feature_names_out : ndarray of str objects
            The names of the features the last transformer outputs.
        """
        return self._inference_pipeline().get_feature_names_out(input_features)

    def __getitem__(self, ind):
        if isinstance(ind, slice):
            if ind.step not in (1, None):
                raise ValueError("Pipeline slicing only supports a step of 1")
            return type(self)(self.steps[ind], memory=self.memory, verbose=self.verbose)
        return super().__getitem__(ind)

    def get_metadata_routing(self):
        """Metadata routing: fit routes to the steps up to the first coreset only.

        The steps after a coreset get its weights, not the caller's metadata; prediction
        methods route as scikit-learn's Pipeline does without the coreset steps.

        Returns
        -------
        routing : MetadataRouter
            The routing of the metadata to the steps (the coreset steps included).
        """
        positions = self._resampler_positions()
        if not positions:
            return super().get_metadata_routing()
        first = positions[0]
        fit_part = _skpipeline.Pipeline(self.steps[: first + 1]).get_metadata_routing()
        predict_part = self._inference_pipeline().get_metadata_routing()
        router = MetadataRouter(owner=self)
        router.add(
            fit_part=fit_part,
            method_mapping=MethodMapping()
            .add(caller="fit", callee="fit")
            .add(caller="fit_transform", callee="fit")
            .add(caller="fit_predict", callee="fit"),
        )
        mapping = MethodMapping()
        for method in (
            "predict",
            "predict_proba",
            "predict_log_proba",
            "decision_function",
            "score",
            "transform",
            "inverse_transform",
        ):
            mapping.add(caller=method, callee=method)
        router.add(predict_part=predict_part, method_mapping=mapping)
        return router


def _numeric_values(data):
    """The numeric values of ``data`` as an array; None for data that cannot be read cheaply
    (not NumPy, pandas, sparse or a list) or are not numeric."""
    if hasattr(data, "tocsr"):
        values = data.tocsr().data
    elif hasattr(data, "select_dtypes"):
        values = data.select_dtypes(include="number").to_numpy(dtype=np.float64)
    elif isinstance(data, (np.ndarray, list, tuple)):
        try:
            values = np.asarray(data)
        except ValueError:  # ragged lists
            return None
    else:
        return None
    return values if values.dtype.kind in "fc" else None


def _has_nonfinite(data):
    """Whether ``data`` are numeric and hold NaN or infinity."""
    values = _numeric_values(data)
    return values is not None and not np.all(np.isfinite(values))


def _raise_for_nonfinite_output(fitted_steps, X, sample_weight=None):
    """A step turned finite input into NaN or infinity: say which, and why (overflow of X's
    values or of the weights it was fitted with).

    Without this check the next step would report "X contains NaN", as if the data had
    missing values. Input that already holds NaN or infinity is left to the steps' own checks.
    """
    values = _numeric_values(X)
    if values is None or _has_nonfinite(X):
        return
    for name, step in fitted_steps:
        if is_passthrough(step):
            continue
        X_next = step.transform(X)
        if not _has_nonfinite(X_next):
            X, values = X_next, _numeric_values(X_next)
            continue
        largest = float(np.max(np.abs(values), initial=0.0))
        heaviest = 0.0 if sample_weight is None else float(np.max(sample_weight, initial=0.0))
        where = f"Step {name!r} ({type(step).__name__}) turned finite input into NaN or infinity"
        if heaviest > _OVERFLOW_SCALE:
            raise ValueError(
                f"{where}: its sample_weight has values too large for float64 arithmetic (up "
                f"to {heaviest:.3g}; weighted sums overflow). Rescale the weights."
            )
        if largest > _OVERFLOW_SCALE:
            raise ValueError(
                f"{where}: its input has values too large for float64 arithmetic (up to "
                f"{largest:.3g}; sums and squares overflow beyond about 1e154). Rescale X "
                "before the pipeline, e.g. divide it by a power of ten."
            )
        raise ValueError(
            f"{where} (largest input magnitude {largest:.3g}); check the step's parameters "
            "and the data it gets."
        )


def make_pipeline(*steps, memory=None, verbose=False):
    """Build a :class:`Pipeline` from estimators, naming the steps after their classes.

    ``make_pipeline(StandardScaler(), GIGACoreset(n_points=100), BayesianLogisticRegression())``
    has the steps 'standardscaler', 'gigacoreset' and 'bayesianlogisticregression', so a grid
    search over the coreset size uses the key ``gigacoreset__n_points``.

    Parameters
    ----------
    *steps : list of estimators
        Transformers, coreset estimators and a final estimator.
    memory : str or object with the joblib.Memory interface, default=None
        Caches the transformers before the first coreset step.
    verbose : bool, default=False
        Print the time of each step before the first coreset.

    Returns
    -------
    p : Pipeline
        The pipeline of the given steps.

    Examples
    --------
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skcoreset.coreset import UniformCoreset
    >>> from skcoreset.linear_model import BayesianLogisticRegression
    >>> from skcoreset.pipeline import make_pipeline
    >>> pipe = make_pipeline(StandardScaler(), UniformCoreset(), BayesianLogisticRegression())
    >>> [name for name, _ in pipe.steps]
    ['standardscaler', 'uniformcoreset', 'bayesianlogisticregression']
    """
    named = _skpipeline.make_pipeline(*steps).steps  # scikit-learn's naming rule
    return Pipeline(named, memory=memory, verbose=verbose)


#: The rows a pipeline's fit has kept before its first coreset: all of them (no index array of
#: every row, which a fit of 10^8 rows would hold for nothing).
_ALL_ROWS = object()


def _n_rows(X):
    """The rows of ``X``; a dask collection's counted (its source's metadata for Parquet)."""
    if hasattr(X, "__dask_graph__"):
        shape = getattr(X, "shape", (None,))[0]
        return int(shape) if isinstance(shape, int | np.integer) else int(len(X))
    return num_rows(X)
