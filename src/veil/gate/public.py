"""Which fields of a plan may be published: an allow-list, never a scrubbed copy.

Every section of a release plan is a pydantic model. :data:`PUBLIC_FIELDS` names, for
each model class, the fields a public manifest or a ledger may show; :data:`PRIVATE_FIELDS`
names the others (key files, environment variables, vault URLs, folders, scheduler
addresses, allocation weights). A field in neither list is a field nobody has judged:
:func:`unclassified` finds them, and the test suite fails on any, so a new field cannot
reach a manifest by default.

:func:`project` builds the public form of a section from the allow-list alone: a nested
section is projected the same way, a path is reduced to its file name, and a value of
any type that is not JSON (a number, a string, a list or a mapping of those) is refused,
so nothing is published that was not chosen to be.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping
from pathlib import PurePath
from typing import Any, Final

from pydantic import BaseModel

__all__ = ["PRIVATE_FIELDS", "PUBLIC_FIELDS", "project", "unclassified", "vault_kind"]

_LDP: Final = ("method", "epsilon", "missing", "bounds", "resolution", "clip_output")

PUBLIC_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    # the plan and its columns
    "Plan": (
        "version",
        "name",
        "input",
        "columns",
        "unlisted",
        "locations",
        "anonymization",
        "share",
        "budget",
        "evaluation",
        "output",
        "engine",
        "acknowledge",
    ),
    "ColumnSpec": ("role", "treatment"),
    # column treatments
    "DropTreatment": ("method",),
    "KeepTreatment": ("method",),
    "RedactTreatment": ("method", "replacement"),
    "HmacTreatment": ("method", "length", "normalize", "namespace"),
    "TokenTreatment": ("method", "namespace"),
    "Ff1Treatment": ("method", "alphabet", "tweak", "missing"),
    "GeneralizeTreatment": ("method", "hierarchy", "level"),
    "LaplaceTreatment": _LDP,
    "GaussianTreatment": (*_LDP, "delta", "calibration"),
    "ExponentialTreatment": ("method", "epsilon", "missing", "domain", "calibration", "ordinal"),
    "RandomizedResponseTreatment": ("method", "epsilon", "missing", "domain"),
    # locations
    "LocationSpec": (
        "lat",
        "lon",
        "role",
        "mask",
        "projection",
        "centre",
        "region",
        "crs",
        "outside",
        "max_outside",
        "missing",
    ),
    "PlanarLaplaceMask": ("method", "epsilon", "reports", "grid_m"),
    "GridMask": ("method", "cell_m", "min_count"),
    "JitterMask": ("method", "radius_m", "kind"),
    "DonutMask": ("method", "r_min_m", "r_max_m"),
    "CloakMask": ("method", "k", "bounds_m", "max_depth", "min_cell_m"),
    # anonymization and hierarchies (a hierarchy is public knowledge; its file, a name)
    "AnonymizationSpec": (
        "quasi_identifiers",
        "models",
        "max_suppression",
        "metric",
        "suppression",
    ),
    "HierarchySpec": ("path", "intervals", "mask", "dates", "suppress", "mapping", "values"),
    "IntervalsRecipe": ("widths", "bounds", "lower", "upper", "labels"),
    "MaskRecipe": ("steps", "char"),
    "DatesRecipe": ("format",),
    "KAnonymitySpec": ("model", "k"),
    "DistinctLDiversitySpec": ("model", "attribute", "l"),
    "EntropyLDiversitySpec": ("model", "attribute", "l"),
    "RecursiveCLDiversitySpec": ("model", "attribute", "c", "l"),
    "TClosenessSpec": ("model", "attribute", "t", "distance"),
    # OptimShare
    "ShareSpec": (
        "quasi_identifiers",
        "synthesized",
        "label",
        "domain",
        "pairs",
        "synthesizer",
        "synthesizer_settings",
        "selection",
        "refine",
        "alpha",
        "min_k",
        "instances",
        "c",
        "e_threshold",
        "merge",
        "score_noise",
        "stop_probability",
    ),
    "FuzzyPairs": ("delta", "t_epsilon", "tn"),
    # budget, evaluation, output, engine, input
    "Budget": (
        "ldp",
        "metric",
        "synthetic",
        "allocation",
        "target",
        "allow_data_dependent_allocation",
    ),
    "LdpBudget": ("epsilon", "delta"),
    "MetricBudget": ("epsilon",),
    "SyntheticBudget": ("epsilon", "delta"),
    "TargetSpec": ("metric", "value", "sample_size", "runs", "features"),
    "EvaluationSpec": ("target", "metrics", "attacks", "attack_sample", "attack_fraction"),
    "OutputSpec": ("format", "file", "report", "keep_order", "raw_csv", "publish_counts"),
    "EngineSpec": ("name",),
    "InputSpec": ("dataset", "format"),
}
"""Per plan model class, the fields that may be published."""

PRIVATE_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "HmacTreatment": ("key_file", "key_env", "key_id"),
    "TokenTreatment": ("key_file", "key_env", "key_id", "vault"),
    "Ff1Treatment": ("key_file", "key_env", "key_id"),
    "LaplaceTreatment": ("weight",),
    "GaussianTreatment": ("weight",),
    "ExponentialTreatment": ("weight",),
    "RandomizedResponseTreatment": ("weight",),
    "PlanarLaplaceMask": ("weight",),
    "HierarchySpec": ("sep",),
    "TargetSpec": ("sample",),
    "OutputSpec": ("custodian_dir",),
    "EngineSpec": ("scheduler",),
    "EvaluationSpec": ("attack_seed",),
    "InputSpec": (
        "path",
        "sep",
        "skipinitialspace",
        "na_values",
        "encoding",
        "columns",
        "text_columns",
    ),
}
"""Per plan model class, the fields that are never published (secrets, the custodian's
folders and machines, internal weights). The key id of a keyed treatment is published
from the key actually used, not from the plan."""

_SCALARS = (str, int, float, bool, type(None))


def _value(value: Any, where: str) -> Any:
    """A JSON value of an allowed field (a nested model projected), else refused."""
    if isinstance(value, BaseModel):
        return project(value)
    if isinstance(value, PurePath):
        return value.name
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, (list, tuple)):
        return [_value(v, where) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _value(v, f"{where}.{k}") for k, v in value.items()}
    raise TypeError(f"{where}: a {type(value).__name__} cannot be published")


def project(section: BaseModel) -> dict[str, Any]:
    """The public form of a plan section: its allowed fields only, recursively.

    Fields left unset (None) are omitted. A model class absent from
    :data:`PUBLIC_FIELDS` publishes nothing.

    Parameters
    ----------
    section : pydantic.BaseModel
        A plan section (a treatment, a mask, the budget, ...).

    Returns
    -------
    dict
        JSON-ready.
    """
    name = type(section).__name__
    out: dict[str, Any] = {}
    for field in PUBLIC_FIELDS.get(name, ()):
        if field not in type(section).model_fields:
            continue
        value = getattr(section, field)
        if value is None:
            continue
        if isinstance(value, Mapping) and all(isinstance(v, BaseModel) for v in value.values()):
            out[field] = {str(k): project(v) for k, v in value.items()}
            continue
        out[field] = _value(value, f"{name}.{field}")
    return out


def vault_kind(vault: str) -> str:
    """What a token vault is, without where it is or how to open it."""
    scheme = vault.split("://", 1)[0].split("+", 1)[0].lower() if "://" in vault else ""
    if scheme.startswith("postgres"):
        return "postgresql database"
    if scheme == "sqlite" or not scheme:
        return "sqlite file" if not scheme or os.path.splitext(vault)[1] else "sqlite database"
    return f"{scheme} database"


def _models(model: type[BaseModel], seen: set[type[BaseModel]]) -> Iterator[type[BaseModel]]:
    if model in seen:
        return
    seen.add(model)
    yield model
    for field in model.model_fields.values():
        for candidate in _types(field.annotation):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                yield from _models(candidate, seen)


def _types(annotation: Any) -> Iterator[Any]:
    yield annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        yield from _types(arg)
    for meta in getattr(annotation, "__metadata__", ()) or ():
        yield from _types(meta)
    origin = getattr(annotation, "__origin__", None)
    if origin is not None:
        yield from _types(origin)


def unclassified(root: type[BaseModel]) -> list[str]:
    """``Class.field`` of every field reachable from ``root`` in neither list."""
    missing: list[str] = []
    for model in _models(root, set()):
        public = set(PUBLIC_FIELDS.get(model.__name__, ()))
        private = set(PRIVATE_FIELDS.get(model.__name__, ()))
        missing.extend(
            f"{model.__name__}.{field}"
            for field in model.model_fields
            if field not in public and field not in private
        )
    return missing
