"""Table-level anonymization: the optimal generalization of the quasi-identifiers.

The step needs the class counts of the whole table: records per combination of the
quasi-identifiers and the models' sensitive attributes. The lattice search of
:func:`veil.anonymity.anonymize` runs on those counts (``weights=``), so an engine can
get them with a distributed group-by; each partition then has its quasi-identifiers
generalized to the chosen levels and the records of suppressed classes removed (or
marked). Levels, suppressed records and metrics are those of the search on the whole
table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import Field, field_validator

from veil import anonymity
from veil.frames import output_frame
from veil.mechanisms import PrivacyCost
from veil.release.hierarchies import HierarchySpec
from veil.release.schema import SpecModel
from veil.release.steps.base import RECORDS, Counted, Finished, LedgerStep, Step
from veil.release.steps.generalize import ShippedHierarchy

__all__ = [
    "MODELS",
    "AnonymizationKind",
    "AnonymizationSpec",
    "DistinctLDiversitySpec",
    "EntropyLDiversitySpec",
    "HierarchySpec",
    "KAnonymitySpec",
    "ModelSpec",
    "RecursiveCLDiversitySpec",
    "TClosenessSpec",
]

MODELS = (
    "k_anonymity",
    "distinct_l_diversity",
    "entropy_l_diversity",
    "recursive_c_l_diversity",
    "t_closeness",
)


class KAnonymitySpec(SpecModel):
    """Every released class holds at least ``k`` records."""

    model: Literal["k_anonymity"] = "k_anonymity"
    k: Annotated[int, Field(ge=1)]


class DistinctLDiversitySpec(SpecModel):
    """Every released class holds ``l`` distinct values of ``attribute``.

    ``l`` is at least 2: every class holds one value, so l = 1 would state a guarantee
    that says nothing.
    """

    model: Literal["distinct_l_diversity"] = "distinct_l_diversity"
    attribute: str
    l: Annotated[int, Field(ge=2)]  # noqa: E741


class EntropyLDiversitySpec(SpecModel):
    """Every released class has entropy of ``attribute`` at least ``log(l)``.

    ``l`` is above 1: every entropy is at least log(1) = 0.
    """

    model: Literal["entropy_l_diversity"] = "entropy_l_diversity"
    attribute: str
    l: Annotated[float, Field(gt=1, allow_inf_nan=False)]  # noqa: E741


class RecursiveCLDiversitySpec(SpecModel):
    """Recursive (c, l)-diversity of ``attribute`` (``l`` at least 2, as the library asks)."""

    model: Literal["recursive_c_l_diversity"] = "recursive_c_l_diversity"
    attribute: str
    c: Annotated[float, Field(gt=0, allow_inf_nan=False)]
    l: Annotated[int, Field(ge=2)]  # noqa: E741


class TClosenessSpec(SpecModel):
    """The distribution of ``attribute`` in each class is within EMD ``t`` of the table's."""

    model: Literal["t_closeness"] = "t_closeness"
    attribute: str
    t: Annotated[float, Field(ge=0, le=1)]
    distance: Literal["equal", "ordered"] = "equal"


ModelSpec = Annotated[
    KAnonymitySpec
    | DistinctLDiversitySpec
    | EntropyLDiversitySpec
    | RecursiveCLDiversitySpec
    | TClosenessSpec,
    Field(discriminator="model"),
]


class AnonymizationSpec(SpecModel):
    """Table-level anonymization: the optimal generalization of the QIs.

    Runs :func:`veil.anonymity.anonymize` after the column treatments.

    ``quasi_identifiers`` maps each QI column to its hierarchy (a path, a mapping with
    ``path`` and ``sep``, or a recipe of :mod:`veil.release.hierarchies`); ``models``
    lists the privacy models, each written as ``{k_anonymity: 5}`` or
    ``{distinct_l_diversity: {attribute: x, l: 3}}``. ``time_limit`` bounds the search
    (seconds): past it the release takes the best node found, which satisfies the models
    but is not proven optimal, and says so in a warning. Twenty QIs of four levels are a
    lattice of 10^12 nodes, which no search settles.
    """

    quasi_identifiers: Annotated[dict[str, HierarchySpec], Field(min_length=1)]
    models: Annotated[list[ModelSpec], Field(min_length=1)]
    max_suppression: Annotated[float, Field(ge=0, le=1)] = 0.0
    metric: Literal["loss", "discernibility", "aecs", "precision"] = "loss"
    suppression: Literal["remove", "mark"] = "remove"
    time_limit: Annotated[float, Field(gt=0, le=86_400)] = 300.0

    @field_validator("models", mode="before")
    @classmethod
    def _model_shorthand(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        out: list[Any] = []
        for item in value:
            if isinstance(item, Mapping) and "model" not in item and len(item) == 1:
                ((name, params),) = item.items()
                if name == "k_anonymity" and not isinstance(params, Mapping):
                    item = {"model": name, "k": params}
                elif isinstance(params, Mapping):
                    item = {"model": name, **params}
            out.append(item)
        return out

    @property
    def sensitive(self) -> list[str]:
        """The sensitive attributes the models name, sorted."""
        return sorted({a for m in self.models if (a := getattr(m, "attribute", None))})


def _models(spec: AnonymizationSpec) -> list[anonymity.PrivacyModel]:
    out: list[anonymity.PrivacyModel] = []
    for m in spec.models:
        if isinstance(m, KAnonymitySpec):
            out.append(anonymity.KAnonymity(m.k))
        elif isinstance(m, DistinctLDiversitySpec):
            out.append(anonymity.DistinctLDiversity(m.attribute, m.l))
        elif isinstance(m, EntropyLDiversitySpec):
            out.append(anonymity.EntropyLDiversity(m.attribute, m.l))
        elif isinstance(m, RecursiveCLDiversitySpec):
            out.append(anonymity.RecursiveCLDiversity(m.attribute, m.c, m.l))
        else:
            out.append(anonymity.TCloseness(m.attribute, m.t, m.distance))
    return out


def _kept_rows(
    codes: list[npt.NDArray[np.intp]], kept: list[npt.NDArray[np.intp]], radices: list[int]
) -> npt.NDArray[np.bool_]:
    """Whether each row's class (its group codes) is among the ``kept`` classes."""
    n = len(codes[0])
    key = np.zeros(n + len(kept[0]), dtype=np.int64)
    span = 1
    for rows, classes, radix in zip(codes, kept, radices, strict=True):
        if span * radix >= 1 << 62:
            # Re-code the key densely before it could overflow.
            dense, _ = pd.factorize(key)
            key = np.asarray(dense, dtype=np.int64)
            span = int(key.max(initial=0)) + 1
        key = key * radix + np.concatenate([rows, classes])
        span *= radix
    released: npt.NDArray[np.bool_] = np.isin(key[:n], key[n:])
    return released


def _release_classes(
    result: anonymity.AnonymizationResult,
    hierarchies: dict[str, anonymity.Hierarchy],
    suppression: str,
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Per partition: generalize the QIs to the chosen levels, suppress the other classes.

    ``result`` comes from the class counts (suppression ``remove``): its rows are the
    released classes. A record is released when its generalized class is one of them,
    as :func:`veil.anonymity.anonymize` decides on the whole table.
    """
    qis = list(result.levels)
    groups = [hierarchies[q].codes(result.levels[q]) for q in qis]
    labels = [np.asarray(hierarchies[q].labels(result.levels[q]), dtype=object) for q in qis]
    kept: list[npt.NDArray[np.intp]] = []
    for q, names in zip(qis, labels, strict=True):
        found = pd.Index(names).get_indexer(result.data[q].astype(object))
        assert (found >= 0).all(), f"anonymization: a released class of {q!r} has no label"
        kept.append(np.asarray(found, dtype=np.intp))
    radices = [len(names) for names in labels]
    shipped = {q: ShippedHierarchy(hierarchies[q]) for q in qis}

    def release(frame: pd.DataFrame) -> pd.DataFrame:
        codes = [g[shipped[q].get().encode(frame[q])] for q, g in zip(qis, groups, strict=True)]
        released = _kept_rows(codes, kept, radices)
        out = output_frame(frame)
        for q, names, c in zip(qis, labels, codes, strict=True):
            out[q] = names[c]
        if suppression == "remove":
            return out.loc[released]
        out.loc[~released, qis] = "*"
        return out

    return release


def _model_text(model: Any) -> str:
    params = model.model_dump(exclude={"model"})
    return f"{model.model}(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")"


class AnonymizationKind:
    """The anonymization: a counted step (class counts, search, then each partition)."""

    def planned(self, spec: AnonymizationSpec) -> LedgerStep:
        """A syntactic guarantee: every released class satisfies the models."""
        models = ", ".join(_model_text(m) for m in spec.models)
        params = {
            "quasi_identifiers": list(spec.quasi_identifiers),
            "models": [m.model_dump(mode="json") for m in spec.models],
            "max_suppression": spec.max_suppression,
            "metric": spec.metric,
            "suppression": spec.suppression,
        }
        cost = PrivacyCost(0.0, 0.0, "syntactic", "record", "table", models)
        return LedgerStep(
            "table",
            "anonymization",
            params,
            cost,
            f"every released class of {list(spec.quasi_identifiers)} satisfies {models}",
        )

    def build(self, spec: AnonymizationSpec) -> Step:
        """A counted step (hierarchies read now); its finisher runs after the drops."""
        # Files are read now; recipes without declared values are built on the values
        # the class counts hold (every value of the table).
        files = {
            qi: h.load(f"anonymization.quasi_identifiers.{qi}")
            for qi, h in spec.quasi_identifiers.items()
            if not h.needs_values
        }
        recipes = {qi: h for qi, h in spec.quasi_identifiers.items() if h.needs_values}
        models = _models(spec)
        sensitive = spec.sensitive
        keys = (*spec.quasi_identifiers, *sensitive)

        def from_counts(counts: pd.DataFrame, rows: int) -> Finished:
            hierarchies = dict(files)
            for qi, recipe in recipes.items():
                where = f"anonymization.quasi_identifiers.{qi}"
                hierarchies[qi] = recipe.load(where, counts[qi].unique())
            hierarchies = {qi: hierarchies[qi] for qi in spec.quasi_identifiers}
            result = anonymity.anonymize(
                counts,
                hierarchies,
                models,
                max_suppression=spec.max_suppression,
                metric=spec.metric,
                sensitive=sensitive or None,
                suppression="remove",
                weights=RECORDS,
                time_limit=spec.time_limit,
            )
            facts = {
                "levels": dict(result.levels),
                "suppressed": int(result.suppressed),
                "metrics": {k: float(v) for k, v in result.metrics.items()},
                "models": [repr(m) for m in models],
            }
            detail = (
                f"a group-by of the {rows} records over {', '.join(keys)} gave "
                f"{len(counts)} classes; the search ran on them, and the partitions were "
                "generalized and filtered"
            )
            return Finished(_release_classes(result, hierarchies, spec.suppression), detail, facts)

        counted = Counted(keys, from_counts, after_drop=True)
        return Step("anonymization", "table", "counts", None, keys, counted)
