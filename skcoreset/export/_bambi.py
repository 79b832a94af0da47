"""The coreset posterior as Bambi's inputs (``to_bambi``): a data frame with the weights as a
column, the formula ``weighted(y, w) ~ ...``, the family (the model's recipe,
``bambi_family``) and the coreset's priors.

Only the families whose weighted response Bambi builds right have a recipe: with Bambi 0.17.2
(PyMC 5.28) the built models' log densities equal the library's to 4e-16 for the Poisson,
Gaussian and negative binomial models, while its weighted gamma passes (mu, sigma) as PyMC's
(alpha, beta), its weighted Student-t fails to build, and so does its weighted Bernoulli (its
check of 0/1 responses reads the weights too).

A multilevel coreset has no Bambi export (a ``ValueError``: :data:`MULTILEVEL_REFUSED`).
Bambi's group-specific terms (``(1 + x0 | group)``) are its own parameterisation, with its own
hyperpriors, on top of a weighted response that is right for three families only; no built
Bambi model has been checked to give the multilevel coreset posterior's log density, and an
export that may sample another posterior than the library's is not written.
"""

from dataclasses import dataclass, field

import numpy as np

from ._spec import missing

#: The error of ``to_bambi`` on a multilevel coreset.
MULTILEVEL_REFUSED = (
    "to_bambi does not export a multilevel coreset: Bambi writes group effects "
    "('(1 + x0 | group)') with its own parameterisation and hyperpriors, and weights the "
    "response rightly for the poisson, gaussian and negative_binomial families only, so its "
    "model is not known to be this posterior (the weighted coreset rows, the coreset's "
    "priors, half-Student-t(3, tau_scale) group sds, normal group effects), and no Bambi "
    "model has been checked against it. Use to_pymc, to_numpyro or to_stan, which write "
    "the multilevel coreset posterior exactly."
)


@dataclass(frozen=True)
class BambiExport:
    """The arguments of ``bambi.Model`` for the coreset posterior.

    Parameters
    ----------
    data : pandas.DataFrame
        The coreset's rows: one column per feature, the targets and the weights.
    formula : str
        ``'weighted(y, w) ~ 1 + x0 + ...'`` (``0 +`` without an intercept).
    family : str
        Bambi's family.
    link : str
        The link of its mean.
    priors : dict
        Term or parameter name -> ``(distribution, parameters)``, or a number for a fixed
        parameter: normal priors of the coefficients (``Intercept`` the intercept's),
        log-normal ones of the extra parameters in Bambi's terms (``sigma``, ``alpha``,
        ``nu``).
    model_kwargs : dict
        The other arguments: ``center_predictors=False``, so that the intercept's prior is
        the uncentred intercept's, as in the library.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.export import export_spec
    >>> from skcoreset.export._bambi import build
    >>> from skcoreset.models import get_model
    >>> model = get_model("poisson", prior_scale=np.array([2.5, 10.0]))
    >>> export = build(export_spec(model, [[0.5], [1.0]], [0.0, 3.0], [3.0, 4.0]))
    >>> export.formula, export.priors["x0"]
    ('weighted(y, w) ~ 1 + x0', ('Normal', {'mu': 0.0, 'sigma': 2.5}))
    """

    data: object
    formula: str
    family: str
    link: str
    priors: dict
    model_kwargs: dict = field(default_factory=dict)

    def model(self, **kwargs):
        """Build the ``bambi.Model``.

        Parameters
        ----------
        **kwargs : dict
            More arguments of ``bambi.Model`` (they override this export's).

        Returns
        -------
        model : bambi.Model
            The model; ``model.fit()`` samples the coreset posterior.
        """
        try:
            import bambi
        except ImportError as exc:
            raise missing("bambi", "bambi", exc) from None
        priors = {
            name: prior if np.isscalar(prior) else bambi.Prior(prior[0], **prior[1])
            for name, prior in self.priors.items()
        }
        args = {"family": self.family, "link": self.link, "priors": priors, **self.model_kwargs}
        return bambi.Model(self.formula, self.data, **{**args, **kwargs})


def _column_names(names):
    """The features' names as formula terms (``x0, x1, ...`` unless they all are
    identifiers distinct from the response's, the weights' and the intercept's)."""
    ok = len(set(names)) == len(names) and all(
        n.isidentifier() and n not in ("y", "w", "Intercept") for n in names
    )
    return list(names) if ok else [f"x{j}" for j in range(len(names))]


def build(spec):
    """The :class:`BambiExport` of an :class:`~skcoreset.export.ExportSpec`.

    Parameters
    ----------
    spec : ExportSpec
        The coreset posterior.

    Returns
    -------
    export : BambiExport
        Bambi's inputs.

    Raises
    ------
    ValueError
        For a multilevel coreset (``spec.effects``): :data:`MULTILEVEL_REFUSED`.
    NotImplementedError
        Where Bambi cannot write the model's likelihood (its recipe says so).
    """
    if spec.effects is not None:
        raise ValueError(MULTILEVEL_REFUSED)
    # the model's recipe (NotImplementedError where Bambi cannot write its likelihood)
    family, link, aux = spec.recipes.bambi_family(spec.y)
    try:
        import pandas as pd
    except ImportError as exc:
        raise missing("pandas", "bambi", exc) from None
    names = _column_names(spec.feature_names)
    data = pd.DataFrame(spec.X, columns=names)
    data["y"], data["w"] = spec.y, spec.weight
    terms = ["1" if spec.intercept_sd is not None else "0", *names]
    priors = {n: ("Normal", {"mu": 0.0, "sigma": float(s)}) for n, s in zip(names, spec.coef_sd)}
    if spec.intercept_sd is not None:
        priors["Intercept"] = ("Normal", {"mu": 0.0, "sigma": float(spec.intercept_sd)})
    free = {e.name: e for e in spec.extras}
    for name, (bambi_name, reciprocal) in zip(spec.extra_names(), aux):
        sign = -1.0 if reciprocal else 1.0
        if name in free:
            # the log of the reciprocal: the mean changes sign, the sd stays
            e = free[name]
            priors[bambi_name] = ("LogNormal", {"mu": sign * e.log_mean, "sigma": e.log_sd})
        else:
            value = spec.fixed[name]
            priors[bambi_name] = 1.0 / value if reciprocal else value
    return BambiExport(
        data=data,
        formula="weighted(y, w) ~ " + " + ".join(terms),
        family=family,
        link=link,
        priors=priors,
        model_kwargs={"center_predictors": False},
    )
