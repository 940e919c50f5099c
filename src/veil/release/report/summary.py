"""The sections of the release report read from the manifest alone, besides the
ledger: the summary, the warnings and what is not protected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from veil.release.report.context import _Context
from veil.release.report.page import _describe, _e, _table, _text


def _summary_section(ctx: _Context) -> str:
    original, released, manifest = ctx.original, ctx.released, ctx.manifest
    n_in, n_out = len(original), len(released)
    dropped = [c for c in original.columns if c not in released.columns]
    added = [c for c in released.columns if c not in original.columns]
    info = manifest.get("input")
    rows: list[tuple[str, Any]] = [
        ("rows in", n_in),
        ("rows out", n_out),
        ("rows removed", n_in - n_out if n_out <= n_in else None),
        ("columns in", len(original.columns)),
        ("columns out", len(released.columns)),
        ("columns not released", ", ".join(map(str, dropped)) or "none"),
        ("columns added", ", ".join(map(str, added)) or "none"),
    ]
    if isinstance(info, Mapping):
        for key in ("source", "rows", "sha256"):
            if key in info:
                rows.append((f"input {key}", info[key]))
    for key in ("veil_version", "engine", "created", "plan_file"):
        if manifest.get(key) is not None:
            rows.append((key.replace("_", " "), manifest[key]))
    warnings = manifest.get("warnings")
    if isinstance(warnings, Sequence) and not isinstance(warnings, str):
        rows.append(("warnings", len(warnings)))
    parts = [_table(["", "value"], rows)]

    totals = manifest.get("totals")
    if isinstance(totals, Mapping) and totals:
        parts.append("<h3>Privacy totals per notion</h3>")
        parts.append(
            _table(["notion", "total"], [(notion, _describe(v)) for notion, v in totals.items()])
        )
    anonymization = manifest.get("anonymization")
    if isinstance(anonymization, Mapping) and anonymization:
        parts.append("<h3>Table-level anonymization</h3>")
        parts.append(_table(["", "value"], [(k, _describe(v)) for k, v in anonymization.items()]))
    timings = manifest.get("timings", manifest.get("timings_s"))
    if isinstance(timings, Mapping) and timings:
        parts.append("<h3>Timings</h3>")
        parts.append(_table(["step", "seconds"], list(timings.items())))
    return "".join(parts)


def _warnings_section(manifest: Mapping[str, Any]) -> str | None:
    warnings = manifest.get("warnings")
    if not isinstance(warnings, Sequence) or isinstance(warnings, str) or not warnings:
        return None
    rows = []
    for item in warnings:
        if isinstance(item, Mapping):
            rows.append((_text(item.get("category")) or "—", _text(item.get("message"))))
        else:
            rows.append(("—", _text(item)))
    return _table(["category", "message"], rows)


def _unprotected_section(manifest: Mapping[str, Any]) -> str | None:
    value = manifest.get("unprotected", manifest.get("not_protected"))
    if value is None or (isinstance(value, (Mapping, list, tuple)) and not value):
        return None
    if isinstance(value, Mapping):
        items = [
            f"<li><b>{_e(str(kind).replace('_', ' '))}</b>: {_e(_describe(v))}</li>"
            for kind, v in value.items()
        ]
    elif isinstance(value, (list, tuple)):
        items = [f"<li>{_e(_describe(v))}</li>" for v in value]
    else:
        items = [f"<li>{_e(value)}</li>"]
    return "<ul>" + "".join(items) + "</ul>"
