"""Single-index likelihood families: the numba face of a model.

A single-index likelihood depends on the parameters only through ``eta = x . beta`` (plus, for
some, one extra scalar: a noise scale, a dispersion, a shape). A handful of jitted scalar
functions of ``(eta, y, ...)`` then describe it completely, and the generic kernels (the
projections, the Laplace sums, the MALA gradient, the KL batches) loop over rows and call them.

:class:`SingleIndexFamily` holds those functions. numba types every family as a
:class:`FamilyType` of its own, so each kernel is compiled once per family with the family's
functions inlined into its loops (they vectorise as hand-written ones would) and, unlike a
jitted function passed as an argument (which numba 0.68 compiles again in every process), the
specialisation is cached on disk. The type's key is the family's name and a hash of its
functions' code, so editing a function, or two users' families of one name, never load each
other's cached kernels.

The built-in models use this mechanism exactly as a user's model does. This module imports no
scikit-learn.
"""

import hashlib
import math

from numba import njit, types
from numba.core.targetconfig import ConfigStack
from numba.extending import (
    NativeValue,
    models,
    overload_method,
    register_model,
    typeof_impl,
    unbox,
)


@njit(cache=True, inline="always")
def _identity(extra):
    return extra


@njit(cache=True, inline="always")
def _zero_offset(y, param):
    return 0.0


@njit(cache=True, inline="always")
def _zero_extra_offset(extra):
    return 0.0


@njit(cache=True, inline="always")
def _no_extra(eta, y, param):
    return math.nan


#: key -> family: how the compiler finds a family's functions from its type
_FAMILIES = {}


class SingleIndexFamily:
    """A single-index likelihood, given by numba functions of the linear predictor.

    The likelihood depends on the parameters through ``eta = x . beta`` only (and on one
    optional extra scalar). Every function must be compiled with ``numba.njit``; the kernels'
    loops vectorise through it. With ``inline="always"``, as in the built-in families, it gets
    the floating-point options of each kernel that calls it (FMA contraction or not); a plain
    ``njit`` function keeps those of the first kernel compiled. ``param`` is whatever
    ``prepare(extra)`` returns (a float or a tuple of floats): quantities of the extra
    parameter that every row needs, computed once per call instead of once per row.

    Parameters
    ----------
    name : str
        The family's name (shown in messages and in numba's signatures).
    terms : numba function ``(eta, y, param) -> (l - l0, dl/deta)``
        The per-datum log-likelihood less its constant ``l0 = offset(y) +
        extra_offset(extra)``, and its derivative in ``eta``. The hot path: one call per row
        and parameter vector.
    curvature : numba function ``(eta, y, param) -> -d2l/deta2``
        Minus the second derivative in ``eta`` (non-negative: the Hessian weight of the
        Laplace fit; the Fisher information where the likelihood is not log-concave).
    offset : numba function ``(y, param) -> float``, default=None
        The part of ``l`` free of ``eta`` that depends on ``y`` (e.g. ``-log y!``; it may
        depend on the extra parameter too); 0 if None.
    extra_offset : numba function ``extra -> float``, default=None
        The part of ``l`` that depends on the extra parameter alone (e.g. ``-log sigma``); 0
        if None.
    prepare : numba function ``extra -> param``, default=None
        What ``terms`` and ``curvature`` read of the extra parameter; the identity if None.
    dlog_extra : numba function ``(eta, y, param) -> float``, default=None
        ``dl / d log(extra)``, all of ``l`` included: needed to sample the extra parameter.
    check_gradient : bool, default=True
        Check the functions when a fit starts (a coreset's or a Bayesian estimator's):
        ``terms`` returns a pair of numbers, its ``dl/deta`` and ``dlog_extra`` match central
        differences of ``l``, ``curvature`` is non-negative and, for a log-concave model,
        ``-d2l/deta2``; a ``ValueError`` (``TypeError`` for a wrong kind of value) names the
        function and the point. It runs the functions' Python code (``py_func``, nothing is
        compiled for it) at 3 linear predictors on each of 5 rows: some 100 calls, little
        beside a fit. ``False`` skips it (the built-in families, tested apart, do).

    Examples
    --------
    A probit likelihood, written as a user would:

    >>> import math
    >>> from numba import njit
    >>> from skcoreset.models import SingleIndexFamily
    >>> @njit(inline="always")
    ... def probit_terms(eta, y, param):
    ...     s = 2.0 * y - 1.0
    ...     cdf = 0.5 * math.erfc(-s * eta / math.sqrt(2.0))
    ...     pdf = math.exp(-0.5 * eta * eta) / math.sqrt(2.0 * math.pi)
    ...     return math.log(cdf), s * pdf / cdf
    >>> @njit(inline="always")
    ... def probit_curvature(eta, y, param):
    ...     l, d = probit_terms(eta, y, param)
    ...     return d * (d + eta)
    >>> probit = SingleIndexFamily("probit", probit_terms, probit_curvature)
    >>> probit.name
    'probit'
    """

    def __init__(
        self,
        name,
        terms,
        curvature,
        *,
        offset=None,
        extra_offset=None,
        prepare=None,
        dlog_extra=None,
        check_gradient=True,
    ):
        self.name = str(name)
        self.check_gradient = bool(check_gradient)
        self.terms = terms
        self.curvature = curvature
        self.offset = _zero_offset if offset is None else offset
        self.extra_offset = _zero_extra_offset if extra_offset is None else extra_offset
        self.prepare = _identity if prepare is None else prepare
        self.dlog_extra = _no_extra if dlog_extra is None else dlog_extra
        #: whether the extra parameter can be sampled (``dlog_extra`` given)
        self.has_extra = dlog_extra is not None
        for role in ("terms", "curvature", "offset", "extra_offset", "prepare", "dlog_extra"):
            if not hasattr(getattr(self, role), "py_func"):
                raise TypeError(
                    f"The family's {role} must be a numba.njit function, got "
                    f"{getattr(self, role)!r}."
                )
        self.key = f"{self.name}-{_code_hash(self)}"
        _FAMILIES[self.key] = self
        # numba reads the type from this attribute: no typeof dispatch on every call
        self._numba_type_ = FamilyType(self.key)

    def __repr__(self):
        return f"SingleIndexFamily({self.name!r})"

    def __reduce__(self):
        # pickled by its functions (joblib, dask): the copy registers itself again
        return (
            _rebuild,
            (
                self.name,
                self.terms,
                self.curvature,
                self.offset,
                self.extra_offset,
                self.prepare,
                self.dlog_extra,
                self.check_gradient,
            ),
        )


def _rebuild(
    name, terms, curvature, offset, extra_offset, prepare, dlog_extra, check_gradient=True
):
    return SingleIndexFamily(
        name,
        terms,
        curvature,
        offset=offset,
        extra_offset=extra_offset,
        prepare=prepare,
        dlog_extra=dlog_extra if dlog_extra is not _no_extra else None,
        check_gradient=check_gradient,
    )


def _code_hash(family):
    """A short hash of the family's functions' bytecode and constants."""
    h = hashlib.sha256()
    for fn in (
        family.terms,
        family.curvature,
        family.offset,
        family.extra_offset,
        family.prepare,
        family.dlog_extra,
    ):
        code = fn.py_func.__code__
        h.update(fn.py_func.__qualname__.encode())
        h.update(code.co_code)
        h.update(repr(code.co_consts).encode())
        h.update(repr(code.co_names).encode())
    return h.hexdigest()[:16]


class FamilyType(types.Dummy):
    """The numba type of one :class:`SingleIndexFamily` (a value with no data)."""

    def __init__(self, key):
        self.key_ = key
        super().__init__(name=f"Family({key})")

    @property
    def key(self):
        return self.key_

    @property
    def family(self):
        return _FAMILIES[self.key_]


register_model(FamilyType)(models.OpaqueModel)


@typeof_impl.register(SingleIndexFamily)
def _typeof_family(value, context):
    return FamilyType(value.key)


@unbox(FamilyType)
def _unbox_family(typ, obj, c):
    return NativeValue(c.context.get_dummy_value())


#: The methods are compiled apart and inlined by LLVM, not numba: numba inlining a family's
#: functions into every kernel retyped them in each (a large part of the first fit's
#: compilation); LLVM's inlining keeps the kernels' loops vectorising through them (measured:
#: benchmarks/README.md, Thresholds).
_INLINED = {"forceinline": True}

#: (family key, method name, the calling kernel's floating-point options) -> the method's
#: function compiled apart, one build per signature for all kernels with those options: numba
#: builds an overload's implementation again for each kernel that types it, and even the
#: logistic terms are slow to compile each time (measured: benchmarks/README.md, Thresholds).
_COMPILED = {}


def _compiled(family_type, name, arity):
    """The method's function, compiled with the options of the kernel being compiled.

    A callee compiled inside a kernel inherits the kernel's ``fastmath`` and ``error_model``
    (so the family's arithmetic contracts in the kernels that allow it, and not in those whose
    bits must match another's): the shared build must have the options it would have
    inherited, or the first kernel to compile it would decide them for all.
    """
    flags = ConfigStack.top_or_none()  # the kernel's, while numba types its calls
    fastmath = frozenset(flags.fastmath.flags) if flags is not None else frozenset()
    error_model = flags.error_model if flags is not None else "python"
    key = (family_type.key, name, fastmath, error_model)
    if key not in _COMPILED:
        family = family_type.family
        fn = getattr(family, name)
        call = {
            1: lambda a: fn(a),
            2: lambda a, b: fn(a, b),
            3: lambda a, b, c: fn(a, b, c),
        }[arity]
        call.__qualname__ = f"{family.name}.{name}"  # as numba's messages and events name it
        options = dict(_INLINED, fastmath=set(fastmath) or False, error_model=error_model)
        _COMPILED[key] = njit(**options)(call)
    return _COMPILED[key]


def _method(name, arity):
    """``family.<name>(...)`` inside jitted code: a call of that family's function."""
    if arity == 1:

        @overload_method(FamilyType, name, jit_options=_INLINED)
        def _one(family, a):
            fn = _compiled(family, name, 1)
            return lambda family, a: fn(a)

    elif arity == 2:

        @overload_method(FamilyType, name, jit_options=_INLINED)
        def _two(family, a, b):
            fn = _compiled(family, name, 2)
            return lambda family, a, b: fn(a, b)

    else:

        @overload_method(FamilyType, name, jit_options=_INLINED)
        def _three(family, a, b, c):
            fn = _compiled(family, name, 3)
            return lambda family, a, b, c: fn(a, b, c)


for _name, _arity in (
    ("terms", 3),
    ("curvature", 3),
    ("dlog_extra", 3),
    ("offset", 2),
    ("extra_offset", 1),
    ("prepare", 1),
):
    _method(_name, _arity)
