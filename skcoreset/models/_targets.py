"""Targets: which model the data call for, and the one coding of binary class labels.

Two rules live here and nowhere else:

* :class:`BinaryLabels` - two class labels <-> codes {0, 1}. The labels are sorted and the
  larger one is class 1 (the order of :class:`~sklearn.preprocessing.LabelEncoder`), so {0, 1}
  and {-1, 1} keep their meaning and strings follow their sort order.
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


class BinaryLabels:
    """Two class labels and their codes {0, 1}.

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

    def __init__(self, classes):
        self.classes = np.asarray(classes)

    @classmethod
    def fit(cls, y, *, input_name="y"):
        """The coding of the two labels in ``y``.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Class labels of any type with exactly two distinct values.
        input_name : str, default="y"
            Name of the argument, for error messages.

        Returns
        -------
        labels : BinaryLabels

        Raises
        ------
        ValueError
            If ``y`` holds NaN or infinity, one label only, more than two labels, or real
            values (each named as such).
        """
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        if y.ndim != 1:
            raise ValueError(f"{input_name} must be 1-D, got shape {y.shape}.")
        _numeric_finite(y, input_name)
        classes = np.unique(y)
        if classes.shape[0] == 2:
            return cls(classes)
        if classes.shape[0] < 2:
            shown = _preview(classes) if classes.shape[0] else "no labels"
            raise ValueError(
                f"{input_name} has one class only ({shown}); a binary model needs two classes."
            )
        kind = type_of_target(y, input_name=input_name)
        if kind == "continuous":
            raise ValueError(
                f"A binary model needs two class labels, but {input_name} holds real values "
                f"({classes.shape[0]} distinct); use model='gaussian' for a real-valued target."
            )
        raise ValueError(
            f"Only binary classification is supported; {input_name} has {classes.shape[0]} "
            f"classes (labels {_preview(classes)})."
        )

    def encode(self, y, *, input_name="y"):
        """Code the labels ``y`` as 0.0 (first class) and 1.0 (second class).

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Labels, each one of ``classes``.
        input_name : str, default="y"
            Name of the argument, for error messages.

        Returns
        -------
        codes : ndarray of shape (n_samples,), float64
            1.0 where ``y`` is ``classes[1]``, 0.0 where it is ``classes[0]``.
        """
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        _numeric_finite(y, input_name)
        positive = y == self.classes[1]
        known = positive | (y == self.classes[0])
        if not np.all(known):
            raise ValueError(
                f"{input_name} has labels that are not among the classes {_preview(self.classes)}:"
                f" {_preview(np.unique(y[~known]))}."
            )
        return positive.astype(np.float64)

    def decode(self, codes):
        """The labels of codes in {0, 1}.

        Parameters
        ----------
        codes : array-like of int or float
            Values 0 or 1.

        Returns
        -------
        labels : ndarray
            ``classes[codes]``, of the same shape as ``codes``.
        """
        return self.classes[np.asarray(codes).astype(np.intp)]


def numeric_targets(y):
    """``y`` as a finite 1-D float64 array, or a ValueError naming what is wrong: the check
    every model with numeric targets starts with."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}.")
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


def _preview(values, limit=5):
    shown = ", ".join(repr(v.item() if hasattr(v, "item") else v) for v in values[:limit])
    return "[" + shown + (", ..." if len(values) > limit else "") + "]"


def model_from_targets(y):
    """The model that ``model='auto'`` stands for, judged from the targets alone.

    * two distinct values, or labels that are not numbers: 'logistic';
    * real values that are not all integers: 'gaussian';
    * integers with more than two distinct values are ambiguous - class labels (multiclass,
      not supported) or counts (``model='poisson'``) or integer-valued measurements
      (``model='gaussian'``) - and are refused: pass ``model=`` (or let a final estimator in a
      pipeline settle it).

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
    """
    y = np.asarray(y)
    if y.dtype.kind not in "biuf":
        return "logistic"  # strings or objects: only classes make sense; the coding checks them
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    _numeric_finite(y, "y")
    values = np.unique(y)
    if values.shape[0] <= 2:
        return "logistic"
    if not np.all(values == np.round(values)):
        return "gaussian"
    if values[0] >= 0:
        readings = "counts (model='poisson') or integer-valued measurements (model='gaussian')"
        advice = "pass model='poisson' or model='gaussian' to say which"
    else:
        readings = "integer-valued measurements (model='gaussian')"
        advice = "pass model='gaussian' if they are measurements"
    raise ValueError(
        f"y holds {values.shape[0]} distinct integer values: they could be class labels (more "
        f"than two classes are not supported) or {readings}; {advice}."
    )
