"""docs/plans.md documents every field of every plan section the schema has."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from veil.release import plan_schema

DOCS = Path(__file__).resolve().parents[2] / "docs" / "plans.md"


def _sections(text: str) -> dict[str, str]:
    """The text after each ``<!-- model: Name -->`` marker, up to the next heading."""
    out: dict[str, str] = {}
    for match in re.finditer(r"<!-- model: (\w+) -->", text):
        rest = text[match.end() :]
        end = re.search(r"\n#", rest)
        out[match.group(1)] = rest if end is None else rest[: end.start()]
    return out


def _properties(definition: dict[str, Any]) -> list[str]:
    if "properties" in definition:
        return list(definition["properties"])
    for option in definition.get("anyOf", []):
        if isinstance(option, dict) and "properties" in option:
            return list(option["properties"])
    return []


def test_every_field_of_every_section_is_documented() -> None:
    schema = plan_schema()
    sections = _sections(DOCS.read_text(encoding="utf-8"))
    models = {"Plan": schema, **schema["$defs"]}
    undocumented = {
        name: [f for f in _properties(d) if f"`{f}`" not in sections.get(name, "")]
        for name, d in models.items()
    }
    assert {k: v for k, v in undocumented.items() if v} == {}
    assert set(models) <= set(sections), sorted(set(models) - set(sections))
