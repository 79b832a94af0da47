"""The coreset posterior in probabilistic programming languages: PyMC, NumPyro, Stan, Bambi.

Every fitted coreset estimator has ``to_pymc(X, y)``, ``to_numpyro(X, y)``, ``to_stan(X, y)``
and ``to_bambi(X, y)`` (:class:`PPLExportMixin`): the weighted coreset with the library's
likelihood and its full-data prior, written in the language's own terms, so that its NUTS
samples the posterior the library's MALA samples. One description drives the four:
:class:`ExportSpec`, read from the model (its ``likelihood``, ``prior_precision`` and
``extra_priors``); each language writes the likelihood with the model's own recipe
(``stan_likelihood``, ``pymc_loglik``, ``numpyro_likelihood``, ``bambi_family``), so a new
model, a registered user's included, brings its exports with it.

A multilevel coreset (``model=Multilevel(...)``, fitted with ``groups=``) exports its
multilevel posterior - the group effects in each row's predictor, half-Student-t group sds,
non-centred effects - to PyMC, NumPyro and Stan (``to_pymc(X, y, groups)`` and the others);
``to_bambi`` refuses it (a ``ValueError``): Bambi's group-specific terms are not known to give
that posterior.

Bambi's export is for the models whose weighted response Bambi builds right (the Poisson,
Gaussian and negative binomial ones: its built models' log densities equal the library's to
4e-16, checked with Bambi 0.17.2).

The languages are optional dependencies (``pip install skcoreset[pymc]``, ``[numpyro]``,
``[stan]``), imported when an export is called, never by ``import skcoreset``.
"""

from .._lazy import lazy_attributes

_DEFINED_IN = {
    "ExportSpec": "_spec",
    "ExtraParameter": "_spec",
    "export_spec": "_spec",
    "PPLExportMixin": "_mixin",
    "BambiExport": "_bambi",
}

__all__ = list(_DEFINED_IN)

__getattr__, __dir__ = lazy_attributes(__name__, globals(), _DEFINED_IN)
