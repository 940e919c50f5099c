"""Columns released as they are (``keep``) or left out (``drop``): no step runs.

A kept column is unprotected unless the anonymization generalizes it; the manifest
lists it under ``not_protected``. A dropped column is removed before anything is written.
"""

from __future__ import annotations

from typing import Literal

from veil.release.schema import SpecModel
from veil.release.steps.base import LedgerStep, public_parameters

__all__ = ["DropTreatment", "KeepTreatment", "PassthroughKind"]


class DropTreatment(SpecModel):
    """Remove the column from the release."""

    method: Literal["drop"] = "drop"


class KeepTreatment(SpecModel):
    """Release the column as it is (unprotected; listed in the manifest)."""

    method: Literal["keep"] = "keep"


_GUARANTEES = {"keep": "none: released as is", "drop": "removed from the release"}


class PassthroughKind:
    """``keep`` and ``drop``: nothing to run, no cost."""

    def planned(self, name: str, spec: KeepTreatment | DropTreatment) -> LedgerStep:
        """No cost; the guarantee says whether the column is released."""
        return LedgerStep(
            name, spec.method, public_parameters(spec), None, _GUARANTEES[spec.method]
        )

    def build(self, name: str, spec: KeepTreatment | DropTreatment) -> None:
        """No step: a kept column passes through, a dropped one is removed at the end."""
        return None
