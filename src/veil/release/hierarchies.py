"""Generalization hierarchies of a plan: a CSV file, or a recipe written in the plan itself.

A hierarchy in a plan is one of::

    hierarchy: hierarchies/age.csv                     # a file (anjana's or ARX's format)
    hierarchy: {path: age.csv, sep: ";"}
    hierarchy: {intervals: {widths: [5, 10, 20]}}      # [15, 20) -> [10, 20) -> [0, 20) -> *
    hierarchy: {intervals: {bounds: [0, 18, 65]}}      # <0, [0, 18), [18, 65), >=65 -> *
    hierarchy: {mask: 2}                               # 33012 -> 3301* -> 330** -> *
    hierarchy: {dates: true}                           # 2024-03-15 -> 2024-03 -> 2024 -> *
    hierarchy: {dates: {format: "%m/%d/%Y"}}           # 03/15/2024 -> 2024-03 -> 2024 -> *
    hierarchy: "*"                                     # every category -> *
    hierarchy: {mapping: [{Married: Couple, Divorced: Alone}, {Couple: "*", Alone: "*"}]}

A recipe is a public rule: the label of a value depends on the value and the rule only.
Its level-0 values are the declared ``values`` when given, else the values the column
holds, read when the step runs (which values occur is never released through a label).
A missing value stays missing (its own label on every level below ``*``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field, field_validator, model_validator

from veil import anonymity
from veil.release.errors import PlanError
from veil.release.schema import Scalar, SpecModel, resolve_path

__all__ = ["DatesRecipe", "HierarchySpec", "IntervalsRecipe", "MaskRecipe"]


class IntervalsRecipe(SpecModel):
    """Numeric intervals: of growing ``widths``, or cut at ``bounds``, then ``*``.

    ``widths`` (each a whole multiple of the previous one) give one level each, counted
    from ``lower`` (or 0); ``lower`` / ``upper`` bottom- and top-code. ``bounds`` are
    cut points of one level (a list) or of several, each coarser (a list of lists whose
    points are among the previous level's): values below the first point read
    ``<first``, at or above the last ``>=last``.
    """

    widths: list[Annotated[float, Field(gt=0, allow_inf_nan=False)]] | None = None
    bounds: list[float] | list[list[float]] | None = None
    lower: float | None = None
    upper: float | None = None
    labels: Literal["[a, b)", "[a, b[", "a-b"] = "[a, b)"

    @model_validator(mode="after")
    def _one_rule(self) -> IntervalsRecipe:
        if (self.widths is None) == (self.bounds is None):
            raise ValueError("give one of widths (e.g. [5, 10, 20]) or bounds (cut points)")
        if self.bounds is not None and (self.lower is not None or self.upper is not None):
            raise ValueError("lower and upper go with widths; bounds already cut the ends")
        for level in self._levels():
            if len(level) < 1 or any(not math.isfinite(b) for b in level):
                raise ValueError(f"bounds must be finite numbers, got {level}")
            if any(b >= a for a, b in itertools.pairwise(level[::-1])):
                raise ValueError(f"bounds must increase, got {level}")
        for finer, coarser in itertools.pairwise(self._levels()):
            if not set(coarser) <= set(finer):
                raise ValueError(
                    f"each level of bounds must keep only points of the previous one, got "
                    f"{coarser} after {finer}"
                )
        return self

    def _levels(self) -> list[list[float]]:
        if self.bounds is None or not self.bounds:
            return []
        if isinstance(self.bounds[0], list):
            return [list(map(float, level)) for level in self.bounds]
        return [list(map(float, self.bounds))]

    def build(self, values: Sequence[Any]) -> anonymity.Hierarchy:
        """The hierarchy over ``values`` (finite numbers)."""
        if self.widths is not None:
            return anonymity.Hierarchy.intervals(
                values, self.widths, lower=self.lower, upper=self.upper, labels=self.labels
            )
        numbers = np.asarray([float(v) for v in values], dtype=np.float64)
        columns: list[list[str]] = [[str(v) for v in values]]
        for cuts in self._levels():
            edges = np.asarray(cuts)
            slot = np.searchsorted(edges, numbers, side="right")
            names = [f"<{_num(cuts[0])}"]
            names += [_interval(a, b, self.labels) for a, b in itertools.pairwise(cuts)]
            names.append(f">={_num(cuts[-1])}")
            columns.append([names[i] for i in slot.tolist()])
        columns.append(["*"] * len(values))
        return anonymity.Hierarchy(pd.DataFrame(dict(enumerate(columns)), dtype=object))


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _interval(a: float, b: float, style: str) -> str:
    if style == "a-b":
        return f"{_num(a)}-{_num(b - 1)}"
    close = "[" if style == "[a, b[" else ")"
    return f"[{_num(a)}, {_num(b)}{close}"


class MaskRecipe(SpecModel):
    """Codes masked from the right, one more character per level (``steps`` levels)."""

    steps: Annotated[int, Field(ge=0)] | None = None
    char: Annotated[str, Field(min_length=1, max_length=1)] = "*"


class DatesRecipe(SpecModel):
    """Dates to month (``2024-03``), then year (``2024``), then ``*``.

    ``format`` is the dates' ``strftime`` format (``"%m/%d/%Y %I:%M:%S %p"``); default ISO
    8601 (``2024-03-15``, with or without a time).
    """

    format: str | None = None

    def build(self, values: Sequence[Any]) -> anonymity.Hierarchy:
        """The hierarchy over ``values`` (dates as the column holds them)."""
        text = pd.Index([str(v) for v in values], dtype=object)
        parsed = pd.to_datetime(text, format=self.format or "ISO8601", errors="coerce")
        if parsed.isna().any():
            bad = text[parsed.isna()][:5].tolist()
            expected = self.format or "ISO 8601"
            raise ValueError(f"values are not dates in {expected} format: {bad}")
        columns = {
            0: list(text),
            1: list(parsed.strftime("%Y-%m")),
            2: list(parsed.strftime("%Y")),
            3: ["*"] * len(text),
        }
        return anonymity.Hierarchy(pd.DataFrame(columns, dtype=object))


class HierarchySpec(SpecModel):
    """A hierarchy: a ``path`` to a CSV file, or one recipe (see the module docstring).

    ``values`` declares the public level-0 domain of a recipe (default: the values the
    column holds when the step runs).
    """

    path: Path | None = None
    sep: str | None = None
    intervals: IntervalsRecipe | None = None
    mask: MaskRecipe | None = None
    dates: bool | DatesRecipe | None = None
    suppress: bool | None = None
    mapping: list[dict[str, str]] | None = None
    values: list[Scalar] | None = None

    _resolve_path = field_validator("path")(resolve_path)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if isinstance(data, str) and data.strip() == "*":
            return {"suppress": True}
        if isinstance(data, (str, Path)):
            return {"path": data}
        if isinstance(data, Mapping) and isinstance(data.get("mask"), int):
            return {**data, "mask": {"steps": data["mask"]}}
        return data

    @model_validator(mode="after")
    def _one_source(self) -> HierarchySpec:
        given = [n for n in _SOURCES if getattr(self, n) not in (None, False)]
        if len(given) != 1:
            raise ValueError(
                f"give exactly one of {', '.join(_SOURCES)} (a file or a recipe), got "
                f"{', '.join(given) or 'none'}"
            )
        if self.sep is not None and self.path is None:
            raise ValueError("sep is for a path (a CSV file)")
        if self.values is not None and self.path is not None:
            raise ValueError("values is for a recipe; a file lists its own values")
        return self

    @property
    def from_file(self) -> bool:
        """Whether the hierarchy is a CSV file."""
        return self.path is not None

    @property
    def needs_values(self) -> bool:
        """Whether the recipe's level-0 values are read from the column when it runs."""
        return self.path is None and self.values is None

    def load(self, where: str, observed: Iterable[Any] | None = None) -> anonymity.Hierarchy:
        """The hierarchy: the file read, or the recipe built on its values.

        Parameters
        ----------
        where : str
            The plan field, for error messages.
        observed : iterable, optional
            The values the column holds (for a recipe without declared ``values``).
        """
        if self.path is not None:
            try:
                return anonymity.Hierarchy.from_csv(self.path, sep=self.sep)
            except UnicodeDecodeError as exc:
                raise PlanError(
                    f"{where}: {self.path.name!r} is not UTF-8 text (byte {exc.start}: "
                    f"{exc.reason}); save the hierarchy file as UTF-8"
                ) from None
            except (OSError, ValueError) as exc:
                reason = " ".join(str(exc).split())[:300]
                raise PlanError(f"{where}: cannot read {self.path.name!r} ({reason})") from None
        values = self.values if self.values is not None else observed
        if values is None:
            raise PlanError(f"{where}: the recipe's values are read from the column when it runs")
        present, missing = _split_missing(values)
        try:
            built = self._recipe(present) if present else None
        except (ValueError, TypeError) as exc:
            raise PlanError(f"{where}: {exc}") from None
        return _with_missing(built, missing, where)

    def _recipe(self, values: list[Any]) -> anonymity.Hierarchy:
        if self.intervals is not None:
            return self.intervals.build(values)
        if self.mask is not None:
            return anonymity.Hierarchy.masking(
                values, mask_char=self.mask.char, steps=self.mask.steps
            )
        if self.dates:
            recipe = self.dates if isinstance(self.dates, DatesRecipe) else DatesRecipe()
            return recipe.build(values)
        if self.mapping is not None:
            return anonymity.Hierarchy.from_mapping(values, self.mapping)
        return anonymity.Hierarchy.from_mapping(values, [])


_SOURCES = ("path", "intervals", "mask", "dates", "suppress", "mapping")


def _split_missing(values: Iterable[Any]) -> tuple[list[Any], list[str]]:
    """The distinct present values, and the labels of the missing ones (``nan``, ...)."""
    unique = pd.unique(pd.Series(list(values), dtype=object))
    missing = pd.isna(unique)
    present = [v for v, m in zip(unique.tolist(), missing.tolist(), strict=True) if not m]
    return present, sorted({str(v) for v, m in zip(unique.tolist(), missing, strict=True) if m})


def _with_missing(
    built: anonymity.Hierarchy | None, missing: list[str], where: str
) -> anonymity.Hierarchy:
    """``built`` with one row per missing label, kept as it is up to ``*``."""
    if built is None and not missing:
        raise PlanError(f"{where}: the recipe has no values to build on")
    if not missing:
        assert built is not None
        return built
    levels = built.levels if built is not None else 2
    rows = pd.DataFrame([[m] * (levels - 1) + ["*"] for m in missing], dtype=object)
    if built is None:
        return anonymity.Hierarchy(rows)
    table = pd.concat([built.table, rows.set_axis(built.table.columns, axis=1)])
    return anonymity.Hierarchy(table.reset_index(drop=True))
