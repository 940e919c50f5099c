"""The step kinds of a release: one module per treatment family, and their registry.

* :mod:`~veil.release.steps.passthrough`: ``keep`` and ``drop``;
* :mod:`~veil.release.steps.masking`: ``redact``, ``hmac``, ``token``, ``ff1``;
* :mod:`~veil.release.steps.generalize`: ``generalize`` (one column, a fixed level);
* :mod:`~veil.release.steps.ldp`: ``laplace``, ``gaussian``, ``exponential``,
  ``randomized_response``;
* :mod:`~veil.release.steps.location`: the geo masks of a location pair;
* :mod:`~veil.release.steps.anonymize`: the table's anonymization;
* :mod:`~veil.release.steps.share`: OptimShare's partially perturbed release.

Each module holds its treatments' plan specs, their planned costs and how they run
(see :mod:`~veil.release.steps.base`). A new column treatment is a new module, a line in
:data:`COLUMN_KINDS` and its spec in :data:`Treatment` below.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from veil.release.steps.anonymize import AnonymizationKind
from veil.release.steps.base import ColumnKind, LedgerStep, Step
from veil.release.steps.generalize import GeneralizeKind, GeneralizeTreatment
from veil.release.steps.ldp import (
    ExponentialTreatment,
    GaussianTreatment,
    LaplaceTreatment,
    LdpKind,
    RandomizedResponseTreatment,
)
from veil.release.steps.location import LocationKind
from veil.release.steps.masking import (
    Ff1Treatment,
    HmacTreatment,
    MaskingKind,
    RedactTreatment,
    TokenTreatment,
)
from veil.release.steps.passthrough import DropTreatment, KeepTreatment, PassthroughKind
from veil.release.steps.share import ShareKind

__all__ = [
    "ANONYMIZATION",
    "COLUMN_KINDS",
    "LOCATIONS",
    "SHARE",
    "TREATMENTS",
    "Treatment",
    "column_step",
    "planned_column",
    "reads_text",
]

_PASSTHROUGH, _MASKING, _LDP = PassthroughKind(), MaskingKind(), LdpKind()

COLUMN_KINDS: dict[str, ColumnKind[Any]] = {
    "drop": _PASSTHROUGH,
    "keep": _PASSTHROUGH,
    "redact": _MASKING,
    "hmac": _MASKING,
    "token": _MASKING,
    "ff1": _MASKING,
    "generalize": GeneralizeKind(),
    "laplace": _LDP,
    "gaussian": _LDP,
    "exponential": _LDP,
    "randomized_response": _LDP,
}
"""The kind of each column treatment, by its ``method``."""

Treatment = Annotated[
    DropTreatment
    | KeepTreatment
    | RedactTreatment
    | HmacTreatment
    | TokenTreatment
    | Ff1Treatment
    | GeneralizeTreatment
    | LaplaceTreatment
    | GaussianTreatment
    | ExponentialTreatment
    | RandomizedResponseTreatment,
    Field(discriminator="method"),
]
"""The spec of a column treatment (the plan's ``columns.<name>.treatment``)."""

TREATMENTS = tuple(COLUMN_KINDS)
"""The column treatment methods, in the order error messages list them."""

LOCATIONS = LocationKind()
"""The kind of every location mask."""

ANONYMIZATION = AnonymizationKind()
"""The kind of the plan's ``anonymization``."""

SHARE = ShareKind()
"""The kind of the plan's ``share`` (OptimShare)."""


def planned_column(name: str, spec: Any) -> LedgerStep:
    """The ledger entry of column ``name`` treated with ``spec`` (no data read)."""
    kind: ColumnKind[Any] = COLUMN_KINDS[spec.method]
    return kind.planned(name, spec)


def column_step(name: str, spec: Any) -> Step | None:
    """The step of column ``name``'s treatment, or None (``keep``, ``drop``)."""
    kind: ColumnKind[Any] = COLUMN_KINDS[spec.method]
    return kind.build(name, spec)


def reads_text(spec: Any) -> bool:
    """Whether a CSV column with this treatment must be read as text (keyed treatments)."""
    return bool(getattr(COLUMN_KINDS[spec.method], "reads_text", False))
