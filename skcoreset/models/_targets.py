"""Targets: which model the data call for, and the one coding of binary class labels.

Two rules live here and nowhere else:

* :class:`ClassLabels` - K class labels <-> codes 0, ..., K - 1, and :class:`BinaryLabels`, the
  same for two classes. The labels are sorted (the order of
  :class:`~sklearn.preprocessing.LabelEncoder`), so {0, 1} and {-1, 1} keep their meaning and
  strings follow their sort order.
* :func:`model_from_targets` - the model ``model='auto'`` stands for when nothing but the
  targets can settle it.
"""

import numpy as np
from sklearn.utils.multiclass import type_of_target


def _numeric_finite(y, input_name):
    """Raise a ValueError naming NaN or infinity in numeric targets (before any other check)."""
    if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
        what = "NaN" if np.isnan(y).any() else "infinity"
        raise ValueError(f"{input_name} contains {what}.")


class ClassLabels:
    """Class labels and their codes 0, 1, ..., K - 1 (the multinomial model's coding).

    Parameters
    ----------
    classes : array-like of shape (K,)
        The labels, sorted; ``classes[k]`` is coded ``k``.

    Examples
    --------
    >>> from skcoreset.models import ClassLabels
    >>> labels = ClassLabels.fit(["ideal", "fair", "good", "ideal"])
    >>> labels.classes
    array(['fair', 'good', 'ideal'], dtype='<U5')
    >>> labels.encode(["good", "ideal"])
    array([1., 2.])
    """

    #: The fewest classes a model with this coding can be fitted to.
    min_classes = 2
    #: The most (None: any number).
    max_classes = None

    def __init__(self, classes):
        self.classes = np.asarray(classes)

    @classmethod
    def fit(cls, y, *, input_name="y"):
        """The coding of the labels in ``y``.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Class labels of any type.
        input_name : str, default="y"
            Name of the argument, for error messages.

        Returns
        -------
        labels : ClassLabels

        Raises
        ------
        ValueError
            If ``y`` holds NaN or infinity, one label only, real values, or more labels than
            the coding takes (each named as such).
        """
        y = _column(y, input_name)
        _numeric_finite(y, input_name)
        try:
            classes = np.unique(y)
        except TypeError:  # labels that cannot be ordered together (numbers and strings)
            kinds = sorted({type(v).__name__ for v in y.tolist()})
            raise ValueError(
                f"{input_name} mixes labels of types that cannot be ordered ({', '.join(kinds)}):"
                " class labels must be all strings or all numbers; convert them to one type "
                f"(e.g. {input_name}.astype(str))."
            ) from None
        K = classes.shape[0]
        if K < cls.min_classes:
            shown = _preview(classes) if K else "no labels"
            raise ValueError(
                f"{input_name} has one class only ({shown}); a classification model needs two "
                "classes or more."
            )
        if K > 2 and type_of_target(y, input_name=input_name) == "continuous":
            raise ValueError(
                f"A classification model needs class labels, but {input_name} holds real "
                f"values ({K} distinct); use model='gaussian' for a real-valued target."
            )
        if cls.max_classes is not None and K > cls.max_classes:
            raise ValueError(
                f"The logistic model takes two classes; {input_name} has {K} (labels "
                f"{_preview(classes)}): more classes need model='multinomial'."
            )
        return cls(classes)

    def encode(self, y, *, input_name="y"):
        """Code the labels ``y`` by their index in ``classes``.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Labels, each one of ``classes``.
        input_name : str, default="y"
            Name of the argument, for error messages.

        Returns
        -------
        codes : ndarray of shape (n_samples,), float64
            ``k`` where ``y`` is ``classes[k]``.
        """
        y = _column(y, input_name)
        _numeric_finite(y, input_name)
        if self.classes.shape[0] == 2 and _numbers(y) and _numbers(self.classes):
            # two numeric classes (the common case, coded on every pass over a dask chunk):
            # two comparisons, far cheaper than searchsorted and its checks (measured:
            # benchmarks/README.md, Thresholds)
            positive = y == self.classes[1]
            if np.all(positive | (y == self.classes[0])):
                return positive.astype(np.float64)
        K = self.classes.shape[0]
        if (
            y.dtype.kind in "iu"
            and self.classes.dtype.kind in "iu"
            and (self.classes[0] == 0 and self.classes[-1] == K - 1)
        ):
            # integer labels 0, ..., K - 1 (sorted and distinct, so these two ends settle it):
            # each label is its own code, checked by one range test instead of searchsorted
            # (a third of the multinomial model's time at 10^7 rows; benchmarks/README.md)
            if y.size == 0 or (y.min() >= 0 and y.max() <= K - 1):
                return y.astype(np.float64)
        try:
            codes = np.minimum(np.searchsorted(self.classes, y), self.classes.shape[0] - 1)
            known = self.classes[codes] == y
        except TypeError:  # labels not comparable with the classes (numbers and strings)
            index = {c: k for k, c in enumerate(self.classes.tolist())}
            found = [index.get(v, -1) for v in y.tolist()]
            codes = np.maximum(np.array(found, dtype=np.intp), 0)
            known = np.array(found, dtype=np.intp) >= 0
        if not np.all(known):
            raise ValueError(
                f"{input_name} has labels that are not among the classes {_preview(self.classes)}:"
                f" {_preview(_distinct(y[~known]))}."
            )
        return codes.astype(np.float64)

    def decode(self, codes):
        """The labels of codes.

        Parameters
        ----------
        codes : array-like of int or float
            Values in 0, ..., K - 1.

        Returns
        -------
        labels : ndarray
            ``classes[codes]``, of the same shape as ``codes``.
        """
        return self.classes[np.asarray(codes).astype(np.intp)]


class BinaryLabels(ClassLabels):
    """Two class labels and their codes {0, 1} (the logistic model's coding).

    Parameters
    ----------
    classes : array-like of shape (2,)
        The labels, sorted; ``classes[1]`` is coded 1 (the "positive" class of the model).

    Examples
    --------
    >>> from skcoreset.models import BinaryLabels
    >>> labels = BinaryLabels.fit(["spam", "ham", "spam"])
    >>> labels.classes
    array(['ham', 'spam'], dtype='<U4')
    >>> labels.encode(["spam", "ham"])
    array([1., 0.])
    >>> labels.decode([0, 1])
    array(['ham', 'spam'], dtype='<U4')
    """

    max_classes = 2


def _numbers(a):
    """Whether ``a`` holds numbers (booleans, integers or reals), compared by value."""
    return a.dtype.kind in "biuf"


def _column(y, input_name):
    """``y`` as a 1-D array (a single column is flattened), without missing values."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{input_name} must be 1-D, got shape {y.shape}.")
    check_no_none(y, input_name)
    return y


def check_no_none(y, input_name="y"):
    """A ValueError naming the first missing value of an object array (None or a float NaN:
    a missing target, neither a label nor a number) or its first infinity."""
    if y.dtype != object:
        return
    values = y.reshape(-1).tolist()
    missing = [i for i, v in enumerate(values) if v is None or (isinstance(v, float) and v != v)]
    if missing:
        what = "None" if values[missing[0]] is None else "NaN"
        raise ValueError(
            f"{input_name} holds {what} ({len(missing)} of {y.size} missing, the first at row "
            f"{missing[0]}): a missing target, which no model can use. Drop those rows (or "
            "fill them) before fitting."
        )
    infinite = [i for i, v in enumerate(values) if isinstance(v, float) and abs(v) == np.inf]
    if infinite:
        raise ValueError(f"{input_name} contains infinity (at row {infinite[0]}).")


def numeric_targets(y):
    """``y`` as a finite 1-D float64 array, or a ValueError naming what is wrong: the check
    every model with numeric targets starts with."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}.")
    check_no_none(y)
    try:
        y = y.astype(np.float64)
    except (TypeError, ValueError):
        # scikit-learn's phrase for targets of the wrong kind
        raise ValueError(
            f"Unknown label type: this model needs numeric targets; y has dtype {y.dtype}."
        ) from None
    if not np.all(np.isfinite(y)):
        raise ValueError(f"y contains {'NaN' if np.isnan(y).any() else 'infinity'}.")
    return y


#: The largest magnitude of targets whose model squares them (the Gaussian and Student-t
#: residuals, the 'auto' prior's spread of y): beyond about 1.3e154 a square overflows
#: float64, and sums of such squares over rows sooner.
MAX_SQUARED_TARGET = 1e150
#: The largest count (2^53): beyond it float64 holds no integer exactly, and a Poisson or
#: negative binomial posterior's spread on the log scale (1 / sqrt(count)) comes within a
#: few ulp of the coefficients it describes.
MAX_COUNT = 2.0**53


def check_target_scale(y, limit, model, why, remedy):
    """A ValueError naming y's largest magnitude when it is beyond what ``model`` computes
    with (``why``), and what to do (``remedy``); nothing otherwise."""
    top = float(np.max(np.abs(y))) if y.shape[0] else 0.0
    if top > limit:
        raise ValueError(
            f"y holds values as large as {top:.3g} in magnitude, beyond the {limit:.3g} the "
            f"{model} model computes with: {why}. {remedy}"
        )
    return y


def _distinct(values):
    """The distinct values, sorted when they can be (labels of several types cannot)."""
    try:
        return np.unique(values)
    except TypeError:
        return list(dict.fromkeys(values.tolist()))


def _preview(values, limit=5):
    shown = ", ".join(repr(v.item() if hasattr(v, "item") else v) for v in values[:limit])
    return "[" + shown + (", ..." if len(values) > limit else "") + "]"


def classification_model(y):
    """'logistic' for two class labels, 'multinomial' for more (how a classifier reads y).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.

    Returns
    -------
    name : str
        The model name.

    Examples
    --------
    >>> from skcoreset.models import classification_model
    >>> classification_model([0, 1, 1]), classification_model([0, 1, 2])
    ('logistic', 'multinomial')
    """
    y = _column(y, "y")
    return "multinomial" if np.unique(y).shape[0] > 2 else "logistic"


def model_from_targets(y):
    """The model that ``model='auto'`` stands for, judged from the targets alone.

    * two distinct values: 'logistic';
    * labels that are not numbers: 'logistic' for two, 'multinomial' for more;
    * real values that are not all integers: 'gaussian';
    * integers with more than two distinct values are ambiguous - class labels
      (``model='multinomial'``) or counts (``model='poisson'``) or integer-valued
      measurements (``model='gaussian'``) - and are refused: pass ``model=`` (or let a final
      estimator in a pipeline, or a classifier, settle it).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        The targets.

    Returns
    -------
    name : str
        The model name.

    Raises
    ------
    ValueError
        For NaN or infinity in ``y``, and for ambiguous integer targets.

    Examples
    --------
    >>> from skcoreset.models import model_from_targets
    >>> model_from_targets([0, 1, 1]), model_from_targets([0.5, 2.25, -1.0])
    ('logistic', 'gaussian')
    >>> model_from_targets(["fair", "good", "ideal"])
    'multinomial'
    """
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    check_no_none(y)
    if y.dtype.kind not in "biuf":
        # strings or objects: only classes make sense; the coding checks them
        return "logistic" if len(set(y.tolist())) <= 2 else "multinomial"
    _numeric_finite(y, "y")
    values = np.unique(y)
    if values.shape[0] <= 2:
        return "logistic"
    if not np.all(values == np.round(values)):
        return "gaussian"
    if values[0] >= 0:
        readings = (
            "class labels (model='multinomial'), counts (model='poisson') or integer-valued "
            "measurements (model='gaussian')"
        )
        advice = "pass model='multinomial', model='poisson' or model='gaussian' to say which"
    else:
        readings = "class labels (model='multinomial') or integer-valued measurements "
        readings += "(model='gaussian')"
        advice = "pass model='multinomial' or model='gaussian' to say which"
    raise ValueError(
        f"y holds {values.shape[0]} distinct integer values: they could be {readings}; {advice}."
    )
