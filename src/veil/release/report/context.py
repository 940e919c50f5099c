"""The inputs of the release report: the checked arguments, the two tables with
their shared columns, how their rows match, and the systematic samples the sections draw.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype

from veil.errors import ColumnError, ParameterError
from veil.release.report.ledger import _treatments

# A column with more distinct values than this share of its rows (and more than 50) is
# identifier-like: its values are never drawn, only counted.
_IDENTIFIER_SHARE: Final[float] = 0.5
_IDENTIFIER_MIN_VALUES: Final[int] = 50
# The measured sections build_report can be asked for (a plan's evaluation.metrics).
_METRICS: Final[tuple[str, ...]] = (
    "risk",
    "distributions",
    "divergence",
    "correlation",
    "ml_utility",
    "maps",
)


class _Context:
    """The two tables, their shared columns and how their rows match."""

    def __init__(
        self,
        original: pd.DataFrame,
        released: pd.DataFrame,
        manifest: Mapping[str, Any],
        pairs: list[tuple[Hashable, Hashable]],
    ) -> None:
        self.original = original
        self.released = released
        self.manifest = manifest
        self.location_columns = {c for pair in pairs for c in pair}
        self.pairs = pairs
        self.shared = [c for c in original.columns if c in released.columns]
        self.treatments = _treatments(manifest)
        self._identifier: dict[Hashable, bool] = {}
        self._matched: tuple[pd.DataFrame, pd.DataFrame] | None = None
        self._matched_done = False

    def identifier_like(self, column: Hashable) -> bool:
        if column not in self._identifier:
            flags = []
            for frame in (self.original, self.released):
                if column in frame.columns and len(frame) > 0:
                    distinct = int(frame[column].nunique(dropna=True))
                    flags.append(
                        distinct > _IDENTIFIER_MIN_VALUES
                        and distinct > _IDENTIFIER_SHARE * len(frame)
                        and not _is_number(frame[column])
                    )
            self._identifier[column] = any(flags)
        return self._identifier[column]

    def matched(self) -> tuple[pd.DataFrame, pd.DataFrame] | None:
        """Original and released rows in matching order (fresh indexes), or None."""
        if not self._matched_done:
            self._matched = _match_rows(self.original, self.released)
            self._matched_done = True
        return self._matched


def _check_metrics(metrics: Sequence[str] | None) -> set[str]:
    if metrics is None:
        return set(_METRICS)
    if isinstance(metrics, (str, bytes)):
        raise ParameterError(f"metrics: expected a sequence of section names, got {metrics!r}")
    unknown = [m for m in metrics if m not in _METRICS]
    if unknown:
        raise ParameterError(f"metrics: unknown sections {unknown!r}; allowed: {list(_METRICS)!r}")
    return set(metrics)


def _columns_of(df: pd.DataFrame, columns: Sequence[Hashable], parameter: str) -> list[Hashable]:
    if isinstance(columns, (str, bytes)):
        raise ParameterError(
            f"{parameter}: expected a sequence of column labels, got the string {columns!r}"
        )
    selected = list(columns)
    missing = [c for c in selected if c not in df.columns]
    if missing:
        raise ColumnError(f"{parameter}: columns {missing!r} are not in original")
    return selected


def _location_pairs(
    df: pd.DataFrame, locations: Sequence[tuple[Hashable, Hashable]]
) -> list[tuple[Hashable, Hashable]]:
    pairs: list[tuple[Hashable, Hashable]] = []
    for pair in locations:
        if isinstance(pair, (str, bytes)) or len(pair) != 2:
            raise ParameterError(f"locations: each entry must be a (lat, lon) pair, got {pair!r}")
        lat, lon = pair
        _columns_of(df, [lat, lon], "locations")
        pairs.append((lat, lon))
    return pairs


def _match_rows(
    original: pd.DataFrame, released: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    if len(released) == 0:
        return None
    if len(released) < len(original) and _fresh(released.index) and _fresh(original.index):
        # Records removed and the index reset: labels 0..m-1 would pair each kept record
        # with the wrong original one.
        return None
    if original.index.is_unique and released.index.is_unique:
        positions = original.index.get_indexer(released.index)
        if (positions >= 0).all():
            return (
                original.iloc[positions].reset_index(drop=True),
                released.reset_index(drop=True),
            )
    if len(original) == len(released):
        return original.reset_index(drop=True), released.reset_index(drop=True)
    return None


def _fresh(index: pd.Index[Any]) -> bool:
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1


def _is_number(series: pd.Series[Any]) -> bool:
    return bool(is_numeric_dtype(series.dtype)) and not is_bool_dtype(series.dtype)


def _systematic(n: int, limit: int) -> npt.NDArray[np.int64]:
    """Every k-th position, at most ``limit`` of them: a deterministic sample."""
    if n <= limit:
        return np.arange(n, dtype=np.int64)
    return np.unique(np.linspace(0, n - 1, limit).round().astype(np.int64))
