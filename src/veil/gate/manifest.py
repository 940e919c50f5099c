"""The public manifest: a typed model of what may be published beside a release.

A release's ``manifest.json`` is built from this model, field by field; nothing reaches
it by being copied from the plan or the run and scrubbed. Every section is a pydantic
model that forbids unknown fields, so a fact the model does not name cannot be
published, and a value of the wrong kind (a count where a name is expected) is refused.
:func:`validated` is the last step before the manifest is written: it validates the
assembled manifest against :class:`PublicManifest`, and checks that its text holds no
credential (:func:`veil.gate.redact.is_clean`).

What the model admits is public by construction: the plan's public fields
(:mod:`veil.gate.public`), the ledger and its guarantees, each stated with its notion,
unit and neighbouring relation (:data:`veil.mechanisms.NEIGHBOURING`), what is not
protected and what leaks, how the release file was laid out, its SHA-256 and the risk
measured on the release itself. Counts computed from the raw records (records
suppressed, records dropped as outside a projection) are admitted only when the plan
opts in (``output.publish_counts``), and the run then lists them under ``leaks``.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from veil.gate.errors import GateError
from veil.gate.redact import is_clean

__all__ = [
    "FORMAT",
    "AllocationFacts",
    "AnonymizationFacts",
    "Cost",
    "Guarantee",
    "Layout",
    "MaskingFacts",
    "NotProtected",
    "Outputs",
    "PublicManifest",
    "ReleaseFile",
    "RiskAfter",
    "ShareFacts",
    "Step",
    "Totals",
    "public_manifest_schema",
    "validated",
]

FORMAT = "veil public manifest 2"
"""The manifest format this model describes."""

NotionName = Literal["ldp", "metric", "dp-central", "dp-synthetic", "syntactic"]


class _Public(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Cost(_Public):
    """What a step spends, as its mechanism reports it."""

    epsilon: float
    delta: float
    notion: NotionName
    unit: str
    scope: str
    mechanism: str


class Guarantee(_Public):
    """One guarantee of the release: notion, budget, unit and neighbouring relation."""

    scope: str
    step: str
    notion: NotionName
    epsilon: float
    delta: float
    unit: str
    neighbouring: str
    statement: str


class Step(_Public):
    """One step of the ledger: its public parameters, cost and guarantee."""

    scope: str
    step: str
    role: str | None = None
    parameters: dict[str, JsonValue]
    cost: Cost | None
    guarantee: str
    key_id: str | None = None


class MaskingFacts(_Public):
    """A non-randomized treatment as the release shows it (never a count of raw records)."""

    method: str
    column: str | None = None
    columns: list[str] | None = None
    key_id: str | None = None
    namespace: str | None = None
    radix: int | None = None
    projection: str | None = None
    normalize: str | None = None
    length: int | None = None
    entities: list[str] | None = None
    engine: str | None = None
    replacement: str | None = None
    dropped: int | None = None


class AnonymizationFacts(_Public):
    """The anonymization as the release shows it: the levels and the models met."""

    levels: dict[str, int]
    models: list[str]
    suppressed: int | None = None


class ShareChoice(_Public):
    """The chosen (epsilon, delta) pair (its index among the pairs) and instance."""

    pair: int | None = None
    epsilon: float | None = None
    delta: float | None = None
    instance: int | None = None


class ShareFacts(_Public):
    """A share step's public facts: the search's configuration, choice, cost and leaks."""

    method: str
    selection: str
    q: list[str]
    s: list[str]
    label: str
    chosen: ShareChoice
    cost: Cost
    costs: dict[str, Cost]
    guarantee: str
    leaks: list[str]
    readings: dict[str, str]
    settings: dict[str, JsonValue]
    model: JsonValue
    released: dict[str, list[str]]


class AllocationFacts(_Public):
    """How a ``target`` allocation chose the epsilons (and on what kind of sample)."""

    method: str
    metric: str | None
    target: float | None
    sample: str | None
    epsilon: dict[str, float | None]


class LdpTotal(_Public):
    unit: Literal["record"]
    epsilon: float
    delta: float
    budget_epsilon: float | None
    budget_delta: float | None


class MetricTotal(_Public):
    unit: Literal["metre"]
    epsilon: float
    budget_epsilon: float | None


class SyntheticTotal(_Public):
    unit: Literal["dataset"]
    epsilon: float
    delta: float
    budget_epsilon: float | None
    budget_delta: float | None


class Totals(_Public):
    """The ledger's totals per notion, beside the declared budgets."""

    ldp: LdpTotal
    metric: MetricTotal
    synthetic: SyntheticTotal
    syntactic: list[str]


class NotProtected(_Public):
    """What the release leaves unprotected, by kind."""

    columns_kept_as_is: list[str]
    quasi_identifiers_generalized_only: list[str]
    released_exactly_not_covered_by_dp: list[str]
    missingness_released_as_is: list[str]
    unlisted_columns_dropped: list[str]
    masked_without_formal_guarantee: list[str]
    carriers_acknowledged: list[str]


class Layout(_Public):
    """How the release file was laid out: row order and spreadsheet escaping."""

    row_order: str
    csv_formulas: str
    cells_escaped: dict[str, int]


class ReleaseFile(_Public):
    """The release file: what a reader checks what it reads against."""

    file: str
    format: Literal["csv", "parquet"]
    rows: int
    columns: list[str]
    sha256: str


class Outputs(_Public):
    release: ReleaseFile
    report: str | None = None


class RiskAfter(_Public):
    """Re-identification risk measured on the released records alone."""

    after: dict[str, JsonValue]
    computed_on: str | None = None
    not_class_keys: list[str] | None = None


class Randomness(_Public):
    generator: str


class PublicManifest(_Public):
    """Everything a public ``manifest.json`` may hold (see the module documentation)."""

    format: Literal["veil public manifest 2"]
    confidentiality: str
    veil_version: str
    created: str
    plan: dict[str, JsonValue]
    plan_sha256: str
    engine: str
    randomness: Randomness
    steps: dict[str, Step]
    guarantees: list[Guarantee]
    masking: list[MaskingFacts]
    anonymization: AnonymizationFacts | None
    share: ShareFacts | None
    allocation: AllocationFacts | None
    totals: Totals
    ledger_check: str
    not_protected: NotProtected
    leaks: list[str]
    release: Layout
    outputs: Outputs
    risk: RiskAfter | None
    warnings: str
    custodian_record: str


def public_manifest_schema() -> dict[str, Any]:
    """The JSON Schema of the public manifest (draft 2020-12)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **PublicManifest.model_json_schema(mode="serialization"),
        "title": "veil public manifest",
    }


def validated(manifest: dict[str, Any]) -> dict[str, Any]:
    """``manifest`` checked against :class:`PublicManifest` and for credentials.

    Parameters
    ----------
    manifest : dict
        The assembled manifest.

    Returns
    -------
    dict
        The manifest as the model dumps it (JSON-ready).

    Raises
    ------
    GateError
        A field the model does not admit, a value of the wrong kind, or a credential in
        its text: nothing is written.
    """
    try:
        model = PublicManifest.model_validate(manifest)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
            for e in exc.errors(include_url=False)[:5]
        )
        raise GateError(f"public manifest: refused by its allow-list ({problems})") from None
    dumped: dict[str, Any] = model.model_dump(mode="json")
    # A masking entry names only the facts its treatment has; a count the plan does not
    # publish is absent, not null.
    dumped["masking"] = [
        {k: v for k, v in entry.items() if v is not None} for entry in dumped["masking"]
    ]
    if dumped["anonymization"] is not None and dumped["anonymization"]["suppressed"] is None:
        del dumped["anonymization"]["suppressed"]
    if not is_clean(json.dumps(dumped)):
        raise GateError("public manifest: it would hold a credential; nothing was written")
    return dumped
