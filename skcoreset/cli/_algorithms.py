"""The coreset algorithms by their command-line names: the registry of
:mod:`skcoreset.coreset` (``_registry``), and the command line's checks of what an algorithm
can do (its model, its projection)."""

from ..coreset._registry import ALGORITHMS, BY_NAME, COMMAND_LINE_DEFAULT, RECOMMENDED
from ._errors import CommandError

#: The algorithms that build coresets of a multilevel model (``--groups``): the Hilbert
#: coresets, whose selection runs inside each group's block of the projection
#: (:mod:`skcoreset.coreset._multilevel`), and the KL ones, each group's weights against its
#: KL (:mod:`skcoreset.coreset._multilevel_kl`); the sensitivity coreset's fit raises a
#: TypeError for one. Read from the registry's modules, so that the parser imports no
#: estimator.
MULTILEVEL = tuple(a.name for a in ALGORITHMS if a.module in ("_hilbert", "_kl_coreset"))


def choose_algorithm(name, groups):
    """The algorithm's name: ``--algorithm`` (None: the command line's default, or for a
    multilevel coreset the recommended one, OMP: QNC's steps add time there, not accuracy,
    from OMP's start), checked to build multilevel coresets when there are ``groups``."""
    if name is None:
        return COMMAND_LINE_DEFAULT if groups is None else RECOMMENDED
    if groups is not None and name not in MULTILEVEL:
        raise CommandError(
            f"{BY_NAME[name].label} (--algorithm {name}) does not build coresets of "
            f"multilevel models (--groups); choose one of: {', '.join(MULTILEVEL)}"
        )
    return name


def resolve_model(name, model):
    """The model the algorithm ``name`` is built for, given ``--model`` (None for 'auto' when
    only the labels can settle it).

    An algorithm whose class is for one model only takes that model for 'auto' and refuses
    any other.
    """
    algorithm = BY_NAME[name]
    own = algorithm.model
    if own is None:
        return None if model == "auto" else model
    if model not in ("auto", own):
        raise CommandError(
            f"{algorithm.label} (--algorithm {name}) is for the {own} model only, not "
            f"{model!r}; choose another --algorithm, or --model {own}"
        )
    return own


def make_coreset(name, n_points, *, model, **options):
    """The unfitted estimator of the algorithm ``name``.

    Parameters
    ----------
    name : str
        A name of the registry (``BY_NAME``).
    n_points : int or 'auto'
        The coreset size.
    model : str
        The likelihood: a name of ``skcoreset.models.MODEL_NAMES`` (from
        :func:`resolve_model`, or settled from the labels).
    **options
        Estimator parameters; those set to None are left at the estimator's default, and
        ``n_projections`` is refused for an algorithm without a projection.

    Returns
    -------
    estimator : BaseCoreset
    """
    algorithm = BY_NAME[name]
    resolve_model(name, model)
    params = {key: value for key, value in options.items() if value is not None}
    if "n_projections" in params and not algorithm.projected:
        raise CommandError(
            f"--n-projections does not apply to {algorithm.label}, which has no projection"
        )
    if algorithm.model is None:  # the class takes model=; one fixed by its class does not
        params["model"] = model
    return algorithm.make(n_points, **params)
