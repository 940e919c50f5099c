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


def _parameters(parameters: Any) -> str:
    """A step's parameters in one line, without the method (the treatment column has it)."""
    if not isinstance(parameters, Mapping):
        return _describe(parameters) if parameters else "—"
    parts = []
    for key, value in parameters.items():
        if key == "method" or value is None:
            continue
        if key == "models" and isinstance(value, list):
            value = ", ".join(
                _text(m.get("model"))
                + "("
                + ", ".join(f"{k}={_text(v)}" for k, v in m.items() if k != "model")
                + ")"
                if isinstance(m, Mapping)
                else _text(m)
                for m in value
            )
        elif isinstance(value, (list, tuple)):
            value = ", ".join(_fmt(v) for v in value)
            value = f"[{value}]"
        parts.append(f"{str(key).replace('_', ' ')} = {_fmt(value)}")
    return "; ".join(parts) or "—"


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
            row.append(_text(entry.get("role")).replace("_", " ") or "—")
        treatment = _text(entry.get("treatment", entry.get("step"))) or "—"
        row.append("generalized" if treatment == "quasi-identifier" else treatment)
        row.append(_parameters(entry.get("parameters")))
        row.append(_describe_cost(entry.get("cost")))
        if show_guarantee:
            row.append(_text(entry.get("guarantee")) or "—")
        rows.append(row)
    widths = [14] + ([10] if show_role else []) + [12, 26, 16]
    widths += [22] if show_guarantee else []
    scale = 100 / sum(widths)
    return _table(header, rows, widths=[round(w * scale) for w in widths]) + _p(
        "Costs compose sequentially per record (the costs of a record's columns add up): "
        "the totals per notion are in the verdict and the run details.",
        "muted",
    )
