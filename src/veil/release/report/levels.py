"""Generalization levels in words: "age in 20-year bands", "zip with its last 2
characters masked", "date to the month".

The words come from the plan's hierarchy (a recipe written in the plan, or a file) and
the level the release used, both read from the manifest; a released value is added as an
example ("such as [40, 60)").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from veil.release.report.page import _text

_YEARS = {"age", "ages", "year", "years", "yrs"}


def _num(value: Any) -> str:
    number = float(value)
    return str(int(number)) if number.is_integer() else f"{number:g}"


def _in_years(column: str) -> bool:
    words = re.split(r"[\s_\-./]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", column).lower())
    return bool(_YEARS & set(words))


def _intervals_words(column: str, recipe: Mapping[str, Any], level: int) -> str | None:
    widths = recipe.get("widths")
    if isinstance(widths, list) and widths:
        if level > len(widths):
            return None
        width = _num(widths[level - 1])
        return f"in {width}-year bands" if _in_years(column) else f"in bands {width} wide"
    bounds = recipe.get("bounds")
    if isinstance(bounds, list) and bounds:
        levels = bounds if isinstance(bounds[0], list) else [bounds]
        if level > len(levels):
            return None
        return "in ranges cut at " + ", ".join(_num(b) for b in levels[level - 1])
    return None


def _recipe_words(column: str, spec: Mapping[str, Any], level: int) -> str | None:
    """Words for level ``level`` >= 1 of a hierarchy spec; None means ``*``."""
    if isinstance(spec.get("intervals"), Mapping):
        return _intervals_words(column, spec["intervals"], level)
    mask = spec.get("mask")
    if isinstance(mask, Mapping):
        steps = mask.get("steps")
        if isinstance(steps, int) and level > steps:
            return None
        return f"with its last {level} character{'s' if level > 1 else ''} masked"
    if spec.get("dates"):
        return {1: "to the month", 2: "to the year"}.get(level)
    if spec.get("suppress"):
        return None
    mapping = spec.get("mapping")
    if isinstance(mapping, list):
        if level > len(mapping):
            return None
        return f"grouped by level {level} of the plan's mapping"
    path = spec.get("path")
    if path:
        return f"at level {level} of {PurePath(str(path)).name}"
    return f"at level {level} of its hierarchy"


def _level_words(
    column: str, spec: Any, level: Any, example: Any = None, *, all_suppressed: bool = False
) -> str:
    """How a generalized column was released, in words.

    Parameters
    ----------
    column : str
        The column.
    spec : mapping, str or None
        Its hierarchy as the manifest's plan records it (a dumped ``HierarchySpec``, a
        file name or ``"*"``).
    level : int or None
        The level the release used (0: exact).
    example : optional
        A released value to show.
    all_suppressed : bool
        Whether every released value is ``*``.
    """
    if all_suppressed:
        return "suppressed to * (nothing of it is left)"
    if isinstance(level, bool) or not isinstance(level, int):
        return "generalized" + (f", such as {_text(example)}" if example is not None else "")
    if level == 0:
        return "kept exact"
    if isinstance(spec, str):
        spec = {"suppress": True} if spec.strip() == "*" else {"path": spec}
    words = _recipe_words(column, spec, level) if isinstance(spec, Mapping) else None
    if words is None:
        if isinstance(spec, Mapping) and not spec.get("path"):
            return "suppressed to * (nothing of it is left)"
        words = f"at level {level} of its hierarchy"
    if example is not None and _text(example) != "*":
        words += f", such as {_text(example)}"
    return words
