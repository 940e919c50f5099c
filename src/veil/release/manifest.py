"""The public manifest and the confidential custodian record of a release.

A release writes two records, and they must never travel together:

* the **public manifest** (``manifest.json``, beside the release file): releasable as it
  is. It is assembled here from the release gate's allow-list model
  (:class:`veil.gate.PublicManifest`): the plan's public fields
  (:func:`veil.gate.project`), the ledger and each guarantee with its notion, unit and
  neighbouring relation, what is not protected and what leaks, how the release file was
  laid out and its SHA-256, and the risk measured on the release itself. Nothing is
  copied from the plan or the run and scrubbed; nothing computed from the raw records
  is admitted unless it is listed under ``leaks`` (the counts of ``output.publish_counts``).
* the **custodian record** (``custodian.json``, in the custodian folder, by default a
  folder beside the release folder, never inside it): CONFIDENTIAL, for the data
  custodian's audit trail. It holds the input's path, SHA-256, rows and columns, the plan
  (paths in full, database URLs without their credentials), the plan file's path and
  hash, the seed of a seeded run, risk before and after, what a ``target`` allocation
  measured, information-loss metrics, the records suppressed and dropped, the evidence
  behind each acknowledged carrier, the attacks run on a shadow release and what they
  achieved, timings, where each step ran, the warnings in full
  and the hash of the custodian report.

Neither holds key material: keyed treatments are identified by their key id only, and
every text of the custodian record passes :func:`veil.gate.redact`.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from veil import __version__
from veil.gate import FORMAT, Declared, project, redact, validated
from veil.gate.manifest import AnonymizationFacts, MaskingFacts, ShareChoice, ShareFacts
from veil.mechanisms import NEIGHBOURING
from veil.release.ledger import ReleaseLedger
from veil.release.plan import LdpTreatment, Plan
from veil.risk import Carrier

__all__ = [
    "CONFIDENTIAL",
    "PUBLIC",
    "Records",
    "RunFacts",
    "build_records",
    "declared",
    "not_protected",
    "public_plan",
    "warning_records",
]

PUBLIC = (
    "public: releasable with the release; holds nothing computed from the raw records "
    "beyond what the release itself shows, except what it lists under leaks"
)
CONFIDENTIAL = (
    "CONFIDENTIAL custodian record: computed from the raw records (input hash, risk "
    "before release, measurements, timings); never publish it or place it beside the "
    "release"
)
_COUNTS_LEAK = (
    "output.publish_counts: the numbers of records {what} are computed from the raw "
    "records; with the released row count they give the input's size"
)
_CARRIER_WHAT = {
    "coordinates": "is a coordinate of the masked location {r}",
    "coordinate-text": "holds the masked location {r} as text",
    "same-numbers": "gives the treated {r} away",
    "same-categories": "gives the treated {r} away",
    "identifier": "singles out records by itself",
    "address": "holds street addresses",
    "pii-text": "holds personal data in free text",
}


def warning_records(caught: Sequence[warnings.WarningMessage]) -> list[dict[str, str]]:
    """Each caught warning as ``{"category", "message"}``, repeats removed, order kept.

    Messages pass :func:`veil.gate.redact` (a warning may quote a URL or a key).
    """
    seen: set[tuple[str, str]] = set()
    out: list[dict[str, str]] = []
    for w in caught:
        key = (w.category.__name__, redact(str(w.message)))
        if key not in seen:
            seen.add(key)
            out.append({"category": key[0], "message": key[1]})
    return out


def declared(plan: Plan, columns: Sequence[str]) -> Declared:
    """What ``plan`` treats and what it copies unchanged, for the gate's carrier check.

    ``columns`` are the input's; columns the plan drops or does not list are not
    released and are left out. A share step's synthesized columns (S) are treated, and
    its exact ones (Q, as the plan gives them) are released as they are: one that gives
    an S column away undoes its synthesis.
    """
    anonymized = set(plan.anonymization.quasi_identifiers) if plan.anonymization else set()
    synthesized = set(plan.share.synthesized) if plan.share else set()
    numeric: list[str] = []
    categorical: list[str] = []
    identifiers: list[str] = []
    kept: dict[str, str] = {}
    for name, spec in plan.columns.items():
        method = spec.treatment.method
        if method in ("laplace", "gaussian"):
            numeric.append(name)
        elif method in ("exponential", "randomized_response"):
            categorical.append(name)
        elif method in ("hmac", "token", "ff1", "redact"):
            identifiers.append(name)
        elif method == "generalize" or (method == "keep" and name in anonymized | synthesized):
            # Generalized or synthesized: an exact copy gives it away as a number or as a
            # category.
            numeric.append(name)
            categorical.append(name)
        elif method == "keep" and name in columns:
            kept[name] = spec.role
    return Declared(
        locations=tuple((loc.lat, loc.lon) for loc in plan.locations),
        numeric=tuple(numeric),
        categorical=tuple(categorical),
        identifiers=tuple(identifiers),
        kept=kept,
        acknowledged=tuple(plan.acknowledge),
    )


def not_protected(
    plan: Plan, dropped_unlisted: Sequence[str], ledger: ReleaseLedger | None = None
) -> dict[str, Any]:
    """What the release leaves unprotected, by kind.

    ``masked_without_formal_guarantee`` lists the steps that change values but state no
    privacy guarantee (a generalization outside the anonymization, a grid, a jitter, a
    donut mask): they reduce precision, nothing more can be claimed for them.
    ``carriers_acknowledged`` lists the columns the plan releases as they are although
    they carry a treated value or single out records (its ``acknowledge``).
    """
    kept = [n for n, s in plan.columns.items() if s.treatment.method == "keep"]
    anonymized = set(plan.anonymization.quasi_identifiers) if plan.anonymization else set()
    exact: list[str] = list(plan.share.quasi_identifiers) if plan.share else []
    synthesized = set(plan.share.synthesized) if plan.share else set()
    missing = [
        n
        for n, s in plan.columns.items()
        if isinstance(s.treatment, LdpTreatment) and s.treatment.missing == "keep"
    ]
    missing += [f"{loc.lat}, {loc.lon}" for loc in plan.locations if loc.missing == "keep"]
    return {
        "columns_kept_as_is": [
            n for n in kept if n not in anonymized and n not in synthesized and n not in exact
        ],
        "quasi_identifiers_generalized_only": sorted(anonymized),
        "released_exactly_not_covered_by_dp": exact,
        "missingness_released_as_is": missing,
        "unlisted_columns_dropped": list(dropped_unlisted),
        "masked_without_formal_guarantee": [] if ledger is None else ledger.without_guarantee(),
        "carriers_acknowledged": list(plan.acknowledge),
    }


def public_plan(plan: Plan) -> dict[str, Any]:
    """The plan as the public manifest shows it: its allow-listed fields only."""
    return project(plan)


def _secret_free(value: Any) -> Any:
    """``value`` (JSON-ready) with every string passed through :func:`veil.gate.redact`."""
    if isinstance(value, Mapping):
        return {str(k): _secret_free(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_secret_free(v) for v in value]
    if isinstance(value, str):
        return redact(value, key_material=False)
    return value


def _private_plan(plan: Plan) -> dict[str, Any]:
    """The plan with its full paths (custodian record), every credential removed."""
    dumped: dict[str, Any] = json.loads(json.dumps(plan.model_dump(mode="json"), default=str))
    return dict(_secret_free(dumped))


@dataclass
class RunFacts:
    """What the phases of a run learned, each fact on the side it may be published.

    Public facts describe the plan, the ledger and the release; confidential facts are
    computed from the raw records or describe the custodian's machine.
    """

    plan: Plan
    ledger: ReleaseLedger
    plan_source: Mapping[str, str] | None = None
    engine: str = "pandas"
    randomness: Mapping[str, Any] = field(default_factory=dict)
    input_info: Mapping[str, Any] = field(default_factory=dict)
    masking: Sequence[Mapping[str, Any]] = ()
    recorded: Sequence[Mapping[str, Any]] = ()
    anonymization: Mapping[str, Any] | None = None
    share: Mapping[str, Any] | None = None
    allocation: Mapping[str, Any] | None = None
    dropped_unlisted: Sequence[str] = ()
    timings: dict[str, float] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)
    custodian_outputs: dict[str, Any] = field(default_factory=dict)
    risk: Mapping[str, Any] | None = None
    execution: dict[str, Any] = field(default_factory=dict)
    release: dict[str, Any] = field(default_factory=dict)
    leaks: list[str] = field(default_factory=list)
    carriers: Sequence[Carrier] = ()
    attacks: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Records:
    """The public manifest and the confidential custodian record of one run."""

    manifest: dict[str, Any]
    custodian: dict[str, Any]


def _steps(facts: RunFacts) -> dict[str, dict[str, Any]]:
    by_scope: dict[str, list[dict[str, Any]]] = {}
    for entry in facts.recorded:
        by_scope.setdefault(str(entry.get("scope", "")), []).append(dict(entry))
    key_ids = {
        str(e["column"]): str(e["key_id"]) for e in facts.masking if "column" in e and "key_id" in e
    }
    steps: dict[str, dict[str, Any]] = {}
    for step in facts.ledger.steps:
        item = step.to_dict()
        recorded = by_scope.get(step.scope, [])
        # The planned cost comes from the plan's parameters alone; the recorded one also
        # knows the column's type (an integer column's grid, for example). The run has
        # checked that their epsilon and delta agree.
        if len(recorded) == 1:
            item["cost"] = recorded[0]
        if step.scope in key_ids:
            item["key_id"] = key_ids[step.scope]
        if step.scope in facts.plan.columns:
            item["role"] = facts.plan.columns[step.scope].role
        steps[step.scope if step.scope != "table" else "table (anonymization)"] = item
    return steps


def _guarantees(steps: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every costed step's guarantee, with its notion, unit and neighbouring relation."""
    out = []
    for step in steps.values():
        cost = step.get("cost")
        if not isinstance(cost, Mapping):
            continue
        out.append(
            {
                "scope": step["scope"],
                "step": step["step"],
                "notion": cost["notion"],
                "epsilon": cost["epsilon"],
                "delta": cost["delta"],
                "unit": cost["unit"],
                "neighbouring": NEIGHBOURING[str(cost["notion"])],
                "statement": step["guarantee"],
            }
        )
    return out


def _allowed(entry: Mapping[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k in fields}


def _public_masking(facts: RunFacts, counts: bool) -> list[dict[str, Any]]:
    """The masking entries the release shows; those that count dropped records (whether
    any record was dropped is a fact of the raw records) only with ``publish_counts``."""
    return [
        _allowed(entry, MaskingFacts.model_fields)
        for entry in facts.masking
        if counts or "dropped" not in entry
    ]


def _public_anonymization(info: Mapping[str, Any] | None, counts: bool) -> dict[str, Any] | None:
    if info is None:
        return None
    # Levels show in the release itself; the records suppressed are counted on the raw
    # table (with the released rows they give its size) and the information-loss
    # metrics are measured on it: the custodian's.
    public = _allowed(info, AnonymizationFacts.model_fields)
    if not counts:
        public.pop("suppressed", None)
    return public


def _public_share(info: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if info is None:
        return None
    public = _allowed(info, ShareFacts.model_fields)
    public["chosen"] = _allowed(info.get("chosen", {}), ShareChoice.model_fields)
    return public


def _public_allocation(info: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if info is None:
        return None
    columns = info.get("columns", {})
    return {
        "method": info.get("method"),
        "metric": info.get("metric"),
        "target": info.get("target"),
        "sample": info.get("sample_kind"),
        "epsilon": {str(c): v.get("epsilon") for c, v in columns.items()},
    }


def _public_risk(risk: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Risk after release (a function of the release alone) and what it counts as keys."""
    if risk is None or "after" not in risk:
        return None
    public: dict[str, Any] = {"after": risk["after"], "computed_on": risk.get("computed_on")}
    if risk.get("not_class_keys"):
        public["not_class_keys"] = list(risk["not_class_keys"])
    return public


def _carrier_leak(carrier: Carrier) -> str:
    """The public line of an acknowledged carrier: its name and reason, no evidence."""
    related = ", ".join(str(c) for c in carrier.related)
    what = _CARRIER_WHAT[carrier.reason].format(r=related)
    return f"acknowledge: {carrier.column!s} is released as it is although it {what}"


def _leaks(facts: RunFacts, counts: bool) -> list[str]:
    leaks = [*facts.leaks, *(_carrier_leak(c) for c in facts.carriers)]
    if counts:
        what = [
            label
            for label, present in (
                ("suppressed", bool(facts.anonymization and "suppressed" in facts.anonymization)),
                ("dropped", any("dropped" in m for m in facts.masking)),
            )
            if present
        ]
        if what:
            leaks.append(_COUNTS_LEAK.format(what=" and ".join(what)))
    return leaks


def _plan_sha256(plan: Mapping[str, Any]) -> str:
    text = json.dumps(plan, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _manifest(facts: RunFacts, created: str) -> dict[str, Any]:
    counts = facts.plan.output.publish_counts
    plan = public_plan(facts.plan)
    steps = _steps(facts)
    return validated(
        {
            "format": FORMAT,
            "confidentiality": PUBLIC,
            "veil_version": __version__,
            "created": created,
            "plan": plan,
            "plan_sha256": _plan_sha256(plan),
            "engine": facts.engine,
            "randomness": {"generator": str(facts.randomness.get("generator", ""))},
            "steps": steps,
            "guarantees": _guarantees(steps),
            "masking": _public_masking(facts, counts),
            "anonymization": _public_anonymization(facts.anonymization, counts),
            "share": _public_share(facts.share),
            "allocation": _public_allocation(facts.allocation),
            "totals": facts.ledger.totals(),
            "ledger_check": "the costs recorded by the steps equal the planned costs",
            "not_protected": not_protected(facts.plan, facts.dropped_unlisted, facts.ledger),
            "leaks": _leaks(facts, counts),
            "release": dict(facts.release),
            "outputs": dict(facts.outputs),
            "risk": _public_risk(facts.risk),
            "warnings": "in the custodian record (warnings may quote values of the input)",
            "custodian_record": (
                "kept by the custodian, apart from the release; it holds the input's hash, "
                "risk before release, measurements and timings"
            ),
        }
    )


def build_records(facts: RunFacts, caught: Sequence[warnings.WarningMessage]) -> Records:
    """The public manifest and the custodian record of a run (JSON-ready dicts).

    Parameters
    ----------
    facts : RunFacts
        What the run's phases recorded.
    caught : sequence of warnings.WarningMessage
        Every warning raised during the run (their text goes to the custodian record
        only).

    Returns
    -------
    Records

    Raises
    ------
    veil.gate.GateError
        The public manifest would hold a field its allow-list does not admit, or a
        credential (nothing is written).
    """
    created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    manifest = _manifest(facts, created)
    plan_file = None
    if facts.plan_source is not None:
        plan_file = {
            "path": str(facts.plan_source["path"]),
            "file": PurePath(str(facts.plan_source["path"])).name,
            "sha256": facts.plan_source["sha256"],
        }
    custodian = {
        "confidentiality": CONFIDENTIAL,
        "veil_version": __version__,
        "created": created,
        "plan_file": plan_file,
        "plan": _private_plan(facts.plan),
        "input": dict(facts.input_info),
        "randomness": dict(facts.randomness),
        "anonymization": None if facts.anonymization is None else dict(facts.anonymization),
        "share": None if facts.share is None else dict(facts.share),
        "allocation": None if facts.allocation is None else dict(facts.allocation),
        "risk": None if facts.risk is None else dict(facts.risk),
        "masking": [dict(m) for m in facts.masking],
        "carriers": [c.describe() for c in facts.carriers],
        "attacks": None if facts.attacks is None else dict(facts.attacks),
        "warnings": warning_records(caught),
        "timings_s": {k: round(v, 6) for k, v in facts.timings.items()},
        "execution": dict(facts.execution),
        "outputs": dict(facts.custodian_outputs),
    }
    return Records(manifest, dict(_secret_free(json.loads(json.dumps(custodian, default=str)))))
