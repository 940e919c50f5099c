"""A plan's YAML read strictly, and the bounds every plan's data must keep.

PyYAML's ``safe_load`` keeps the last of two equal keys (a second ``age:`` under
``columns:`` silently replaces the first), recurses once per nesting level (a plan nested
5000 deep ends in a ``RecursionError``), cannot convert an integer of more than 4300
digits, and expands aliases into as many values as they name (a few lines of anchors can
name a billion). :func:`read_plan_text` refuses each of these with a one-line
:class:`~veil.release.errors.PlanError` naming the line; :func:`check_plan_data` bounds
the depth and size of a plan given as a mapping by a calling program, so the same plan
fails the same way whichever way it arrives.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from veil.release.errors import PlanError
from veil.release.plan_errors import clip, shown

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "MAX_VALUES", "check_plan_data", "read_plan_text"]

MAX_DEPTH = 64
"""Deepest nesting of a plan: its sections nest about 8 levels."""

MAX_VALUES = 1_000_000
"""Most values (each scalar, list and mapping, aliases counted as often as used)."""

MAX_DIGITS = 309
"""Longest integer: the digits of the largest float (1.8e308); no plan field takes more."""
_HUGE = 10**MAX_DIGITS

_MERGE = "tag:yaml.org,2002:merge"


class _PlanLoader(yaml.SafeLoader):
    """``SafeLoader`` refusing duplicate keys, deep nesting and integers of huge length."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise _refusal(mark, f"nested more than {MAX_DEPTH} levels deep")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE or not isinstance(key_node, yaml.ScalarNode):
                continue  # merged keys may be overridden; other keys are not hashable
            key = self.construct_object(key_node)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise _refusal(
                    key_node.start_mark,
                    f"duplicate key {clip(repr(key))} (first at line {seen[key]}); a plan "
                    "says each key once (YAML would keep the last one silently)",
                )
            seen[key] = line
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        digits = sum(c.isdigit() for c in str(node.value))
        if digits > MAX_DIGITS:
            raise _refusal(
                node.start_mark,
                f"an integer of {digits} digits; a plan's numbers have at most "
                f"{MAX_DIGITS} digits (the range of a float, 1.8e308)",
            )
        value: int = super().construct_yaml_int(node)
        return value


_PlanLoader.add_constructor("tag:yaml.org,2002:int", _PlanLoader.construct_yaml_int)
# YAML 1.2 floats: PyYAML (YAML 1.1) reads 1e-6 and 1.0e6 as text, which a number field
# refuses; a quoted '1e-6' stays text.
_PlanLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


class _Refused(yaml.YAMLError):
    """A YAML text this reader refuses (not a syntax error: a plan's bound)."""


def _refusal(mark: yaml.Mark | None, text: str) -> _Refused:
    where = f"line {mark.line + 1}: " if mark is not None else ""
    return _Refused(where + text)


def read_plan_text(text: str, source: str | None = None) -> Any:
    """The data of a plan's YAML ``text``; ``source`` names it in errors (a file name).

    Raises
    ------
    PlanError
        The text is not YAML, holds a duplicate key (named, with its line and the line
        of the first), is nested more than :data:`MAX_DEPTH` levels, holds an integer of
        more than :data:`MAX_DIGITS` digits, or names more than :data:`MAX_VALUES`
        values (through aliases).
    """
    where = "plan: " if source is None else f"plan: {source}: "
    named = "plan:" if source is None else f"plan: {source}"
    try:
        # The reader checks the characters when it is made (a NUL is refused there).
        loader = _PlanLoader(text)
    except yaml.YAMLError as exc:
        raise PlanError(f"{named} is not valid YAML: {' '.join(str(exc).split())}") from None
    try:
        data = loader.get_single_data()
    except _Refused as exc:
        raise PlanError(f"{where}{exc}") from None
    except yaml.YAMLError as exc:
        raise PlanError(f"{named} is not valid YAML: {exc}") from None
    finally:
        loader.dispose()
    check_plan_data(data, source)
    return data


def check_plan_data(data: Any, source: str | None = None) -> None:
    """Refuse plan data nested deeper than :data:`MAX_DEPTH`, with a cycle, too large, or
    holding an integer of more than :data:`MAX_DIGITS` digits (as a value or a key).

    Values are counted as often as they are reached, as validation visits them: a list
    named by an alias ten times counts ten times.

    Raises
    ------
    PlanError
        Naming the limit passed (and the field of a huge integer).
    """
    where = "plan: " if source is None else f"plan: {source}: "
    sizes: dict[int, int] = {}
    open_: set[int] = set()

    def huge(value: Any, path: tuple[Any, ...]) -> None:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _HUGE:
            field = ".".join(clip(str(p)) for p in path) or "plan"
            raise PlanError(
                f"{where}{field}: {shown(value)}; a plan's numbers have at most "
                f"{MAX_DIGITS} digits (the range of a float, 1.8e308)"
            )

    def size(value: Any, depth: int, path: tuple[Any, ...]) -> int:
        huge(value, path)
        if not isinstance(value, (Mapping, list, tuple)):
            return 1
        if depth > MAX_DEPTH:
            raise PlanError(f"{where}nested more than {MAX_DEPTH} levels deep")
        key = id(value)
        if key in sizes:
            return sizes[key]
        if key in open_:
            raise PlanError(f"{where}a value contains itself (a YAML alias cycle)")
        open_.add(key)
        items = value.items() if isinstance(value, Mapping) else enumerate(value)
        total = 1
        for name, item in items:
            huge(name, path)
            total += size(item, depth + 1, (*path, name))
            if total > MAX_VALUES:
                raise PlanError(
                    f"{where}holds more than {MAX_VALUES:,} values (counting each "
                    "use of a YAML alias); a plan is a description, not data"
                )
        open_.discard(key)
        sizes[key] = total
        return total

    size(data, 1, ())
