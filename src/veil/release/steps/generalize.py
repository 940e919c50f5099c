"""Generalization of one column to a fixed level of its hierarchy (outside the anonymization).

A deterministic row step with no formal guarantee of its own: it reduces precision, and
the manifest lists it under ``masked_without_formal_guarantee``. The table-level search
for the levels is the anonymization (:mod:`veil.release.steps.anonymize`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import pandas as pd
from pydantic import Field, field_validator

from veil import anonymity
from veil.release.errors import PlanError
from veil.release.schema import SpecModel, resolve_path
from veil.release.steps.base import LedgerStep, Step, public_parameters, replaced

__all__ = ["GeneralizeKind", "GeneralizeTreatment", "ShippedHierarchy"]


class GeneralizeTreatment(SpecModel):
    """Replace each value by its label at ``level`` of a hierarchy (CSV, anjana/ARX)."""

    method: Literal["generalize"] = "generalize"
    hierarchy: Path
    level: Annotated[int, Field(ge=0)]
    sep: str | None = None

    _resolve_hierarchy = field_validator("hierarchy")(resolve_path)


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
        """A row step (the hierarchy read now)."""
        hierarchy = anonymity.Hierarchy.from_csv(spec.hierarchy, sep=spec.sep)
        if spec.level >= hierarchy.levels:
            raise PlanError(
                f"columns.{name}.treatment.level: {spec.level} is beyond the hierarchy's "
                f"levels 0..{hierarchy.levels - 1}"
            )
        shipped = ShippedHierarchy(hierarchy)
        level = spec.level

        def apply(df: pd.DataFrame, _: Any) -> pd.DataFrame:
            return replaced(df, name, shipped.get().generalize(df[name], level))

        return Step(f"{name}: {spec.method}", name, "row", apply, (name,))
