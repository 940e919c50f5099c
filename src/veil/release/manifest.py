"""The release manifest: what was released, from what, how, at what privacy cost.

The manifest is JSON written next to the release. It records the input's SHA-256 and row
count, the (allocated) plan, the veil version, each column's treatment, public
parameters and cost, the totals per notion, every warning raised during the run, what
is not protected, the timings and the SHA-256 of every output file. It never holds key
material: keyed treatments are identified by their key id only, and a seed appears only
when the run was seeded on purpose.
"""

from __future__ import annotations

import datetime as _dt
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from veil import __version__
from veil.release.ledger import ReleaseLedger
from veil.release.plan import LdpTreatment, Plan

__all__ = ["build_manifest", "not_protected", "warning_records"]


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


def not_protected(plan: Plan, dropped_unlisted: Sequence[str]) -> dict[str, Any]:
    """What the release leaves unprotected, by kind."""
    kept = [n for n, s in plan.columns.items() if s.treatment.method == "keep"]
    anonymized = set(plan.anonymization.quasi_identifiers) if plan.anonymization else set()
    missing = [
        n
        for n, s in plan.columns.items()
        if isinstance(s.treatment, LdpTreatment) and s.treatment.missing == "keep"
    ]
    missing += [f"{loc.lat}, {loc.lon}" for loc in plan.locations if loc.missing == "keep"]
    return {
        "columns_kept_as_is": [n for n in kept if n not in anonymized],
        "quasi_identifiers_generalized_only": sorted(anonymized),
        "missingness_released_as_is": missing,
        "unlisted_columns_dropped": list(dropped_unlisted),
    }


def build_manifest(
    *,
    plan: Plan,
    plan_source: Mapping[str, str] | None,
    ledger: ReleaseLedger,
    input_info: Mapping[str, Any],
    engine: str,
    randomness: Mapping[str, Any],
    masking: Sequence[Mapping[str, Any]],
    recorded: Sequence[Mapping[str, Any]],
    anonymization: Mapping[str, Any] | None,
    allocation: Mapping[str, Any] | None,
    dropped_unlisted: Sequence[str],
    caught: Sequence[warnings.WarningMessage],
    timings: Mapping[str, float],
    outputs: Mapping[str, Any],
    risk: Mapping[str, Any] | None = None,
    execution: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Assemble the manifest (a JSON-ready dict).

    Parameters
    ----------
    plan : Plan
        The allocated plan that ran.
    plan_source : mapping or None
        ``path`` and ``sha256`` of the plan file, if the plan came from one.
    ledger : ReleaseLedger
        The planned costs.
    input_info : mapping
        ``source``, ``sha256``, ``rows`` and ``columns`` of the input.
    engine : str
        The engine's name.
    randomness : mapping
        How noise was generated (``"secure"``, ``"seeded"`` with the seed, or
        ``"caller generator"``).
    masking : sequence of mapping
        Entries recorded in ``attrs["veil.masking"]`` (key ids, never keys).
    recorded : sequence of mapping
        Privacy costs recorded by the steps (``attrs["veil.privacy"]``).
    anonymization : mapping or None
        Levels, suppressed records and metrics of the table-level step.
    allocation : mapping or None
        How a ``target`` allocation chose the epsilons (metric, sample, per column).
    dropped_unlisted : sequence of str
        Input columns the plan does not list, dropped (``unlisted: drop``).
    caught : sequence of warnings.WarningMessage
        Every warning raised during the run.
    timings : mapping of str to float
        Seconds per step.
    outputs : mapping
        The files written, with their SHA-256.
    risk : mapping, optional
        Re-identification risk (:func:`veil.risk.summary`) before and after, on the
        released quasi-identifiers, computed on every record.
    execution : mapping, optional
        Where each step ran: ``engine``, ``steps`` (per step: ``"in memory"``, ``"per
        partition"``, ``"distributed: ..."`` or ``"gathered in memory: ..."``) and, for
        a Dask run, ``report`` (the sample the report was built from).
    """
    by_scope: dict[str, list[dict[str, Any]]] = {}
    for entry in recorded:
        by_scope.setdefault(str(entry.get("scope", "")), []).append(dict(entry))
    key_ids: dict[str, str] = {}
    for entry in masking:
        if "column" in entry and "key_id" in entry:
            key_ids[str(entry["column"])] = str(entry["key_id"])
    steps: dict[str, dict[str, Any]] = {}
    for step in ledger.steps:
        item = step.to_dict()
        item["recorded"] = by_scope.get(step.scope, [])
        # The planned cost comes from the plan's parameters alone; the recorded one also
        # knows the data (an integer column's grid, for example). The run has checked
        # that their epsilon and delta agree.
        item["planned_cost"] = item["cost"]
        if len(item["recorded"]) == 1:
            item["cost"] = item["recorded"][0]
        if step.scope in key_ids:
            item["key_id"] = key_ids[step.scope]
        if step.scope in plan.columns:
            item["role"] = plan.columns[step.scope].role
        steps[f"{step.scope}" if step.scope != "table" else "table (anonymization)"] = item
    return {
        "veil_version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "plan_file": None if plan_source is None else dict(plan_source),
        "plan": plan.model_dump(mode="json"),
        "input": dict(input_info),
        "engine": engine,
        "randomness": dict(randomness),
        "steps": steps,
        "masking": [dict(m) for m in masking],
        "anonymization": None if anonymization is None else dict(anonymization),
        "allocation": None if allocation is None else dict(allocation),
        "totals": ledger.totals(),
        "ledger_check": "the costs recorded by the steps equal the planned costs",
        "not_protected": not_protected(plan, dropped_unlisted),
        "warnings": warning_records(caught),
        "timings_s": {k: round(v, 6) for k, v in timings.items()},
        "outputs": dict(outputs),
        "risk": None if risk is None else dict(risk),
        "execution": None if execution is None else dict(execution),
    }
