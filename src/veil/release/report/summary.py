"""The sections of the release report read from the manifest alone, besides the
ledger: the run's details, the warnings and what is not protected.

Warnings are kept apart by origin: veil's own (privacy warnings and the checks of the
run) are release warnings; a library's (a pandas ``DtypeWarning``, a ``FutureWarning``)
says nothing about the release and is listed on its own, folded away. No message shows
a file path of veil's or of a library's (a path names the machine, not the release).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any, Final

from veil.release.report.context import _Context
from veil.release.report.page import _describe, _e, _p, _table, _text

# A file path of Python code (veil's or a library's), with its line number.
_CODE_PATH: Final[re.Pattern[str]] = re.compile(
    r"(?:[A-Za-z]:)?(?:[\\/][^\s\\/:'\"()]+)+\.py[cd]?(?::\d+)?"
)
# Warning categories raised by veil that are not classes of veil's own.
_RELEASE_CATEGORIES: Final[frozenset[str]] = frozenset({"UserWarning"})


def _veil_categories() -> set[str]:
    """The names of the warning classes veil defines (those imported so far)."""
    names: set[str] = set()
    stack: list[type[Warning]] = [Warning]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            if sub.__module__.split(".")[0] == "veil":
                names.add(sub.__name__)
            stack.append(sub)
    return names


def _scrub(message: str) -> str:
    """``message`` with every path of Python code replaced by a neutral word."""
    return _CODE_PATH.sub("(code file)", message)


def _split_warnings(
    warnings: Sequence[Any],
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(release warnings, library messages), each as (category, scrubbed message)."""
    ours = _veil_categories() | _RELEASE_CATEGORIES
    release: list[tuple[str, str]] = []
    library: list[tuple[str, str]] = []
    for item in warnings:
        if isinstance(item, Mapping):
            category, message = _text(item.get("category")) or "—", _text(item.get("message"))
        else:
            category, message = "—", _text(item)
        entry = (category, _scrub(message))
        (release if category in ours or category == "—" else library).append(entry)
    return release, library


def _listed_warnings(manifest: Mapping[str, Any]) -> list[Any] | None:
    warnings = manifest.get("warnings")
    if isinstance(warnings, Sequence) and not isinstance(warnings, str):
        return list(warnings)
    return None


def _plan_file(value: Any) -> str:
    if isinstance(value, Mapping):
        name = PurePath(_text(value.get("file", value.get("path", "")))).name
        digest = _text(value.get("sha256"))
        return f"{name} (SHA-256 {digest})" if digest else name
    return _text(value)


def _details_section(ctx: _Context) -> str:
    """The run's facts: rows and columns, input, versions, totals, timings."""
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
    for key in ("veil_version", "engine", "created"):
        if manifest.get(key) is not None:
            rows.append((key.replace("_", " "), manifest[key]))
    if manifest.get("plan_file") is not None:
        rows.append(("plan file", _plan_file(manifest["plan_file"])))
    listed = _listed_warnings(manifest)
    if listed is not None:
        release, library = _split_warnings(listed)
        rows.append(("release warnings", len(release)))
        rows.append(("library messages (not about the release)", len(library)))
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
    listed = _listed_warnings(manifest)
    if listed is None:
        counts = manifest.get("warnings")
        by_category = counts.get("by_category") if isinstance(counts, Mapping) else None
        if isinstance(by_category, Mapping) and by_category:
            return _table(["category", "count"], list(by_category.items())) + _p(
                "The texts are in the custodian record.", "muted"
            )
        return None
    if not listed:
        return None
    release, library = _split_warnings(listed)
    parts = []
    if release:
        parts.append(_table(["category", "message"], release, full=True))
    else:
        parts.append(_p("The run raised no release warning."))
    if library:
        parts.append(
            f"<details><summary>{len(library)} message(s) from the libraries veil uses (not "
            "about the privacy of the release)</summary>"
            + _table(["category", "message"], library, full=True)
            + "</details>"
        )
    return "".join(parts)


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
