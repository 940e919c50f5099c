"""The public manifest and the confidential custodian record of a release.

A release writes two records, and they must never travel together:

* the **public manifest** (``manifest.json``, beside the release file): releasable as it
  is. It holds the plan (file paths reduced to file names, database URLs without
  credentials), the ledger and its guarantees, what is not protected and what leaks,
  the SHA-256 of the released file, the veil version and a count of warnings by kind. It
  holds nothing computed from the raw records beyond what the release itself shows: no
  hash of the input (an adversary who knows every record but one could test candidate
  values of the last one against it), no risk measured on the raw table, no utility
  measured on private data, no timings, no seed, no warning text (warnings may quote
  values).
* the **custodian record** (``custodian.json``, in the custodian folder, by default a
  folder beside the release folder, never inside it): CONFIDENTIAL, for the data
  custodian's audit trail. It holds the input's path, SHA-256, rows and columns, the plan
  file's path, the seed of a seeded run, risk before and after, what a ``target``
  allocation measured, information-loss metrics, timings, where each step ran, the
  warnings in full and the hash of the custodian report (the HTML report compares the
  release with the original records, so it is as confidential as they are).

Neither holds key material: keyed treatments are identified by their key id only, and
database URLs lose their user name and password.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import urllib.parse
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from veil import __version__
from veil.release.ledger import ReleaseLedger
from veil.release.plan import LdpTreatment, Plan

__all__ = [
    "CONFIDENTIAL",
    "PUBLIC",
    "Records",
    "RunFacts",
    "build_records",
    "not_protected",
    "public_plan",
    "warning_records",
]

PUBLIC = (
    "public: releasable with the release; holds nothing computed from the raw records "
    "beyond what the release itself shows"
)
CONFIDENTIAL = (
    "CONFIDENTIAL custodian record: computed from the raw records (input hash, risk "
    "before release, measurements, timings); never publish it or place it beside the "
    "release"
)


def warning_records(caught: Sequence[warnings.WarningMessage]) -> list[dict[str, str]]:
    """Each caught warning as ``{"category", "message"}``, repeats removed, order kept."""
    seen: set[tuple[str, str]] = set()
    out: list[dict[str, str]] = []
    for w in caught:
        key = (w.category.__name__, str(w.message))
        if key not in seen:
            seen.add(key)
            out.append({"category": key[0], "message": key[1]})
    return out


def not_protected(
    plan: Plan, dropped_unlisted: Sequence[str], ledger: ReleaseLedger | None = None
) -> dict[str, Any]:
    """What the release leaves unprotected, by kind.

    ``masked_without_formal_guarantee`` lists the steps that change values but state no
    privacy guarantee (a generalization outside the anonymization, a grid, a jitter, a
    donut mask): they reduce precision, nothing more can be claimed for them.
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
    }


def _scrub_url(value: str) -> str:
    """A database URL without its user name and password."""
    parts = urllib.parse.urlsplit(value)
    if not parts.netloc or "@" not in parts.netloc:
        return value
    host = parts.netloc.rsplit("@", 1)[1]
    return urllib.parse.urlunsplit(parts._replace(netloc=host))


def _names_only(value: Any) -> Any:
    """Paths reduced to file names and URLs scrubbed, recursively (JSON-ready)."""
    if isinstance(value, PurePath):
        return value.name
    if isinstance(value, Mapping):
        return {str(k): _names_only(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_names_only(v) for v in value]
    if isinstance(value, str) and "://" in value:
        return _scrub_url(value)
    if isinstance(value, str) and os.path.isabs(value):
        return PurePath(value).name
    return value


def public_plan(plan: Plan) -> dict[str, Any]:
    """The plan as the public manifest shows it: file names only, URLs scrubbed.

    The folders a custodian keeps the data, keys and vaults in are not part of the
    release; a database URL loses its credentials.
    """
    dumped: dict[str, Any] = json.loads(
        json.dumps(_names_only(plan.model_dump(mode="python")), default=str)
    )
    return dumped


def _private_plan(plan: Plan) -> dict[str, Any]:
    """The plan with its full paths (custodian record); URLs still lose credentials."""
    dumped: dict[str, Any] = json.loads(
        json.dumps(_scrub_urls(plan.model_dump(mode="json")), default=str)
    )
    return dumped


def _scrub_urls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _scrub_urls(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub_urls(v) for v in value]
    if isinstance(value, str) and "://" in value:
        return _scrub_url(value)
    return value


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


@dataclass(frozen=True)
class Records:
    """The public manifest and the confidential custodian record of one run."""

    manifest: dict[str, Any]
    custodian: dict[str, Any]


def _steps(facts: RunFacts) -> dict[str, dict[str, Any]]:
    by_scope: dict[str, list[dict[str, Any]]] = {}
    for entry in facts.recorded:
        by_scope.setdefault(str(entry.get("scope", "")), []).append(dict(entry))
    key_ids: dict[str, str] = {}
    for entry in facts.masking:
        if "column" in entry and "key_id" in entry:
            key_ids[str(entry["column"])] = str(entry["key_id"])
    steps: dict[str, dict[str, Any]] = {}
    for step in facts.ledger.steps:
        item = _names_only(step.to_dict())
        item["recorded"] = by_scope.get(step.scope, [])
        # The planned cost comes from the plan's parameters alone; the recorded one also
        # knows the column's type (an integer column's grid, for example). The run has
        # checked that their epsilon and delta agree.
        item["planned_cost"] = item["cost"]
        if len(item["recorded"]) == 1:
            item["cost"] = item["recorded"][0]
        if step.scope in key_ids:
            item["key_id"] = key_ids[step.scope]
        if step.scope in facts.plan.columns:
            item["role"] = facts.plan.columns[step.scope].role
        steps[f"{step.scope}" if step.scope != "table" else "table (anonymization)"] = item
    return steps


def _public_anonymization(info: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if info is None:
        return None
    # Levels and suppressed records show in the release itself; the information-loss
    # metrics are measured on the raw table and stay with the custodian.
    return {k: v for k, v in info.items() if k != "metrics"}


# What a share step measured on the raw records (utility, linkage, effectiveness, the
# candidates' scores, PIF and the Table 2 review): the custodian's, not the public
# manifest's.
_SHARE_MEASURED = ("candidates", "details", "review")
_CHOSEN_PUBLIC = ("pair", "epsilon", "delta", "instance")


def _public_share(info: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if info is None:
        return None
    public = {k: v for k, v in info.items() if k not in _SHARE_MEASURED}
    chosen = info.get("chosen", {})
    public["chosen"] = {k: chosen[k] for k in _CHOSEN_PUBLIC if k in chosen}
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
    public = {"after": risk["after"], "computed_on": risk.get("computed_on")}
    if risk.get("not_class_keys"):
        public["not_class_keys"] = list(risk["not_class_keys"])
    return public


def _warning_counts(caught: Sequence[warnings.WarningMessage]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in warning_records(caught):
        counts[record["category"]] = counts.get(record["category"], 0) + 1
    return counts


def _randomness_public(randomness: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in randomness.items() if k != "seed"}


def build_records(facts: RunFacts, caught: Sequence[warnings.WarningMessage]) -> Records:
    """The public manifest and the custodian record of a run (JSON-ready dicts).

    Parameters
    ----------
    facts : RunFacts
        What the run's phases recorded.
    caught : sequence of warnings.WarningMessage
        Every warning raised during the run (their text goes to the custodian record
        only; the manifest counts them by category).

    Returns
    -------
    Records
    """
    created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    plan_file = None
    if facts.plan_source is not None:
        plan_file = {
            "file": PurePath(str(facts.plan_source["path"])).name,
            "sha256": facts.plan_source["sha256"],
        }
    manifest = {
        "confidentiality": PUBLIC,
        "veil_version": __version__,
        "created": created,
        "plan_file": plan_file,
        "plan": public_plan(facts.plan),
        "engine": facts.engine,
        "randomness": _randomness_public(facts.randomness),
        "steps": _steps(facts),
        "masking": [_names_only(dict(m)) for m in facts.masking],
        "anonymization": _public_anonymization(facts.anonymization),
        "share": _public_share(facts.share),
        "allocation": _public_allocation(facts.allocation),
        "totals": facts.ledger.totals(),
        "ledger_check": "the costs recorded by the steps equal the planned costs",
        "not_protected": not_protected(facts.plan, facts.dropped_unlisted, facts.ledger),
        "leaks": list(facts.leaks),
        "release": dict(facts.release),
        "warnings": {
            "by_category": _warning_counts(caught),
            "text": "in the custodian record (warnings may quote values of the input)",
        },
        "outputs": dict(facts.outputs),
        "risk": _public_risk(facts.risk),
        "custodian_record": (
            "kept by the custodian, apart from the release; it holds the input's hash, "
            "risk before release, measurements and timings"
        ),
    }
    custodian = {
        "confidentiality": CONFIDENTIAL,
        "veil_version": __version__,
        "created": created,
        "plan_file": None if facts.plan_source is None else dict(facts.plan_source),
        "plan": _private_plan(facts.plan),
        "input": dict(facts.input_info),
        "randomness": dict(facts.randomness),
        "anonymization": None if facts.anonymization is None else dict(facts.anonymization),
        "share": None if facts.share is None else dict(facts.share),
        "allocation": None if facts.allocation is None else dict(facts.allocation),
        "risk": None if facts.risk is None else dict(facts.risk),
        "warnings": warning_records(caught),
        "timings_s": {k: round(v, 6) for k, v in facts.timings.items()},
        "execution": dict(facts.execution),
        "outputs": dict(facts.custodian_outputs),
    }
    return Records(manifest, custodian)
