"""Generalization of one column to a fixed level of its hierarchy (outside the anonymization).

A deterministic row step with no formal guarantee of its own: it reduces precision, and
the manifest lists it under ``masked_without_formal_guarantee``. The table-level search
for the levels is the anonymization (:mod:`veil.release.steps.anonymize`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from veil import anonymity
from veil.release.errors import PlanError
from veil.release.hierarchies import HierarchySpec
from veil.release.schema import SpecModel
from veil.release.steps.base import LedgerStep, Step, public_parameters, replaced

__all__ = ["GeneralizeKind", "GeneralizeTreatment", "ShippedHierarchy"]


class GeneralizeTreatment(SpecModel):
    """Replace each value by its label at ``level`` of a hierarchy.

    ``hierarchy`` is a CSV file (anjana's or ARX's format; ``sep`` its separator) or a
    recipe written in the plan (:mod:`veil.release.hierarchies`).
    """

    method: Literal["generalize"] = "generalize"
    hierarchy: HierarchySpec
    level: Annotated[int, Field(ge=0)]

    @model_validator(mode="before")
    @classmethod
    def _file_and_sep(cls, data: Any) -> Any:
        # ``hierarchy: age.csv`` with ``sep: ";"`` beside it: the file's separator.
        if isinstance(data, Mapping) and "sep" in data:
            rest = {k: v for k, v in data.items() if k != "sep"}
            source = rest.get("hierarchy")
            if isinstance(source, (str, os.PathLike)):
                rest["hierarchy"] = {"path": source, "sep": data["sep"]}
            elif isinstance(source, Mapping):
                rest["hierarchy"] = {**source, "sep": data["sep"]}
            return rest
        return data


class ShippedHierarchy:
    """A hierarchy that travels to Dask worker processes as its label table.

    :class:`~veil.anonymity.Hierarchy` is immutable and does not pickle; its label table
    rebuilds the same hierarchy (same codes) where it is unpickled.
    """

    def __init__(self, hierarchy: anonymity.Hierarchy) -> None:
        self._table = hierarchy.table
        self._hierarchy: anonymity.Hierarchy | None = hierarchy

    def __getstate__(self) -> dict[str, Any]:
        return {"table": self._table}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._table = state["table"]
        self._hierarchy = None

    def get(self) -> anonymity.Hierarchy:
        """The hierarchy (rebuilt from its table after unpickling)."""
        if self._hierarchy is None:
            self._hierarchy = anonymity.Hierarchy(self._table)
        return self._hierarchy


class GeneralizeKind:
    """Generalization to a fixed level: a row step, no epsilon, no formal guarantee."""

    def planned(self, name: str, spec: GeneralizeTreatment) -> LedgerStep:
        """No privacy cost and no guarantee of its own."""
        return LedgerStep(
            name,
            spec.method,
            public_parameters(spec),
            None,
            "generalized (deterministic); no formal guarantee by itself",
        )

    def build(self, name: str, spec: GeneralizeTreatment) -> Step:
        """A row step: the hierarchy read now, or a recipe built on each partition's values.

        A recipe's labels depend on the value and the rule only, so every partition
        labels a value alike.
        """
        where = f"columns.{name}.treatment.hierarchy"
        level = spec.level
        if spec.hierarchy.needs_values:
            source = spec.hierarchy

            def from_recipe(df: pd.DataFrame, _: Any) -> pd.DataFrame:
                column = df[name]
                present = column.notna()
                hierarchy = source.load(where, column[present].unique())
                _check_level(name, level, hierarchy)
                labels = hierarchy.generalize(column[present], level).astype(object)
                out = pd.Series(np.full(len(column), np.nan, dtype=object), index=column.index)
                out[present.to_numpy()] = labels.to_numpy()
                return replaced(df, name, out.rename(name))

            return Step(f"{name}: {spec.method}", name, "row", from_recipe, (name,))
        hierarchy = spec.hierarchy.load(where)
        _check_level(name, level, hierarchy)
        shipped = ShippedHierarchy(hierarchy)

        def apply(df: pd.DataFrame, _: Any) -> pd.DataFrame:
            return replaced(df, name, shipped.get().generalize(df[name], level))

        return Step(f"{name}: {spec.method}", name, "row", apply, (name,))


def _check_level(name: str, level: int, hierarchy: anonymity.Hierarchy) -> None:
    if level >= hierarchy.levels:
        raise PlanError(
            f"columns.{name}.treatment.level: {level} is beyond the hierarchy's "
            f"levels 0..{hierarchy.levels - 1}"
        )
