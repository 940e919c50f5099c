"""What kind of values a column holds, for drawing and comparing it as what it is.

A column is drawn as its type: codes (0/1 flags, small integer codes, booleans) as bars
in the order of their values, numbers as a histogram, categories as bars by frequency,
and generalized intervals (``[40, 60)``, ``[40, 60[``, ``[40-60[``, ``40-59``, ``<18``,
``>=65``, ``*``) as bars in the order of the intervals, with the original numbers counted into the
same intervals so that the two sides compare bar for bar.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype

# A numeric column with at most this many distinct whole values is a set of codes.
_CODES_MAX: Final[int] = 12
_NUMBER: Final[str] = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_BRACKETS: Final[re.Pattern[str]] = re.compile(
    rf"^\s*([\[(])\s*({_NUMBER})\s*[,;-]\s*({_NUMBER})\s*([)\][])\s*$"
)
_DASH: Final[re.Pattern[str]] = re.compile(rf"^\s*({_NUMBER})\s*-\s*({_NUMBER})\s*$")
_OPEN: Final[re.Pattern[str]] = re.compile(rf"^\s*(<=|>=|<|>)\s*({_NUMBER})\s*$")
_SUPPRESSED: Final[str] = "*"


@dataclass(frozen=True)
class _Interval:
    """``low`` to ``high``, each end closed or open."""

    low: float
    high: float
    low_closed: bool = True
    high_closed: bool = False

    def contains(self, values: np.ndarray[Any, np.dtype[np.float64]]) -> np.ndarray[Any, Any]:
        above = values >= self.low if self.low_closed else values > self.low
        below = values <= self.high if self.high_closed else values < self.high
        return np.asarray(above & below)

    @property
    def width(self) -> float:
        return self.high - self.low


def _parse_interval(label: str) -> _Interval | None:
    """The interval a generalized label names, or None if it names none."""
    match = _BRACKETS.match(label)
    if match:
        opening, low, high, closing = match.groups()
        return _Interval(float(low), float(high), opening == "[", closing == "]")
    match = _DASH.match(label)
    if match:
        low, high = float(match.group(1)), float(match.group(2))
        if low > high:
            return None
        # "40-59" (whole numbers) is the hierarchy style for [40, 60).
        whole = low.is_integer() and high.is_integer()
        return _Interval(low, high + 1.0 if whole else high, True, not whole)
    match = _OPEN.match(label)
    if match:
        sign, value = match.group(1), float(match.group(2))
        if sign.startswith("<"):
            return _Interval(-math.inf, value, False, sign == "<=")
        return _Interval(value, math.inf, sign == ">=", False)
    return None


def _intervals(series: pd.Series[Any]) -> dict[Any, _Interval | None] | None:
    """Each distinct label of a generalized column and its interval (``*``: None).

    None when the column is not made of interval labels (at least one real interval,
    every other label ``*``).
    """
    if is_numeric_dtype(series.dtype) or is_bool_dtype(series.dtype):
        return None
    labels = pd.unique(series.dropna())
    if len(labels) == 0 or len(labels) > 500:
        return None
    parsed: dict[Any, _Interval | None] = {}
    for label in labels:
        text = str(label)
        if text == _SUPPRESSED:
            parsed[label] = None
            continue
        interval = _parse_interval(text)
        if interval is None:
            return None
        parsed[label] = interval
    return parsed if any(v is not None for v in parsed.values()) else None


def _interval_order(parsed: dict[Any, _Interval | None]) -> list[Any]:
    """The labels in the order of their intervals; ``*`` last."""

    def key(label: Any) -> tuple[float, float, str]:
        interval = parsed[label]
        if interval is None:
            return (math.inf, math.inf, str(label))
        return (interval.low, interval.high, str(label))

    return sorted(parsed, key=key)


def _bin_into(values: pd.Series[Any], parsed: dict[Any, _Interval | None]) -> pd.Series[Any]:
    """Original numbers as the interval labels that hold them (missing where none does)."""
    numbers = values.to_numpy(dtype=np.float64, na_value=np.nan)
    labels = np.full(numbers.shape, None, dtype=object)
    free = ~np.isnan(numbers)
    # The narrowest interval first: under local recoding a value may sit in several.
    for label in sorted(
        (k for k, v in parsed.items() if v is not None),
        key=lambda k: _width(parsed[k]),
    ):
        interval = parsed[label]
        assert interval is not None
        inside = free & interval.contains(numbers)
        labels[inside] = label
        free &= ~inside
    return pd.Series(labels, index=values.index, dtype=object)


def _width(interval: _Interval | None) -> float:
    return math.inf if interval is None else interval.width


def _is_number(series: pd.Series[Any]) -> bool:
    return bool(is_numeric_dtype(series.dtype)) and not is_bool_dtype(series.dtype)


def _is_codes(*columns: pd.Series[Any]) -> bool:
    """Booleans, or whole numbers with few distinct values (0/1 flags, codes)."""
    seen: set[Any] = set()
    for series in columns:
        if is_bool_dtype(series.dtype):
            seen.update(series.dropna().unique().tolist())
            continue
        if not _is_number(series):
            return False
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        values = values[np.isfinite(values)]
        if not bool(np.all(values == np.round(values))):
            return False
        seen.update(np.unique(values).tolist())
        if len(seen) > _CODES_MAX:
            return False
    return 0 < len(seen) <= _CODES_MAX


def _code_order(*columns: pd.Series[Any]) -> list[Any]:
    """The distinct values of code columns, in increasing order."""
    values: set[Any] = set()
    for series in columns:
        values.update(series.dropna().unique().tolist())
    return sorted(values, key=lambda v: (float(v), str(v)))


@dataclass(frozen=True)
class _Drawn:
    """How one column is drawn: its kind and the two sides as labels, where needed."""

    kind: str  # "numbers", "codes", "intervals", "categories" or "mixed"
    before: pd.Series[Any]
    after: pd.Series[Any]
    order: Sequence[Hashable] | None = None
    note: str = ""


def _drawn(before: pd.Series[Any], after: pd.Series[Any]) -> _Drawn:
    """How ``before`` and ``after`` (one column, two tables) are best drawn side by side."""
    if _is_codes(before, after):
        return _Drawn("codes", before, after, _code_order(before, after))
    numeric = (_is_number(before), _is_number(after))
    if numeric == (True, True):
        return _Drawn("numbers", before, after)
    parsed = _intervals(after)
    if parsed is not None and numeric[0]:
        binned = _bin_into(before, parsed)
        return _Drawn(
            "intervals",
            binned,
            after,
            _interval_order(parsed),
            "original values counted into the released intervals",
        )
    if parsed is not None:
        both = _intervals(pd.concat([before, after], ignore_index=True))
        if both is not None:
            return _Drawn("intervals", before, after, _interval_order(both))
    if numeric == (False, False):
        return _Drawn("categories", before, after)
    return _Drawn("mixed", before, after)
