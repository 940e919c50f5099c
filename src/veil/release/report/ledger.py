"""The privacy ledger of the release report: the manifest's per-column entries
(treatment, parameters, cost) and the section that lists them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from veil.release.report.page import _describe, _fmt, _p, _table, _text


def _ledger_entries(manifest: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    entries = manifest.get("columns", manifest.get("steps"))
    out: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(entries, Mapping):
        for name, entry in entries.items():
            out.append((str(name), entry if isinstance(entry, Mapping) else {"cost": entry}))
    elif isinstance(entries, Sequence) and not isinstance(entries, (str, bytes)):
        for entry in entries:
            if isinstance(entry, Mapping):
                name = entry.get("column", entry.get("name", entry.get("scope", "")))
                out.append((str(name), entry))
    return out


def _treatments(manifest: Mapping[str, Any]) -> dict[str, str]:
    """Column name -> treatment, from the manifest's per-column entries."""
    return {
        name: _text(entry.get("treatment", entry.get("step", "")))
        for name, entry in _ledger_entries(manifest)
    }


def _describe_cost(cost: Any) -> str:
    if cost is None:
        return "no formal guarantee"
    if isinstance(cost, Mapping) and "epsilon" in cost:
        notion = cost.get("notion")
        if notion == "syntactic":
            return f"syntactic: {_text(cost.get('mechanism', ''))}".rstrip(": ")
        text = f"ε = {_fmt(cost['epsilon'])}"
        if cost.get("delta"):
            text += f", δ = {_fmt(cost['delta'])}"
        if cost.get("unit"):
            text += f" per {_text(cost['unit'])}"
        if notion:
            text += f" ({_text(notion)})"
        return text
    if isinstance(cost, (list, tuple)):
        return "; ".join(_describe_cost(c) for c in cost) or "no formal guarantee"
    return _describe(cost)


def _ledger_section(manifest: Mapping[str, Any]) -> str | None:
    entries = _ledger_entries(manifest)
    if not entries:
        return None
    show_role = any("role" in e for _, e in entries)
    show_guarantee = any("guarantee" in e for _, e in entries)
    header = ["column"] + (["role"] if show_role else []) + ["treatment", "parameters", "cost"]
    header += ["guarantee"] if show_guarantee else []
    rows = []
    for name, entry in entries:
        row: list[Any] = [name]
        if show_role:
            row.append(_text(entry.get("role")) or "—")
        parameters = entry.get("parameters")
        row.append(_text(entry.get("treatment", entry.get("step"))) or "—")
        row.append(_describe(parameters) if parameters else "—")
        row.append(_describe_cost(entry.get("cost")))
        if show_guarantee:
            row.append(_text(entry.get("guarantee")) or "—")
        rows.append(row)
    return _table(header, rows) + _p(
        "Costs compose sequentially per record: the totals per notion are in the summary.",
        "muted",
    )
