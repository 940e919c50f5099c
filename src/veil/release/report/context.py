"""The inputs of the release report: the checked arguments, the two tables with
their shared columns, what the manifest says was done to each column, how their rows
match, and the systematic samples the sections draw.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.errors import ColumnError, ParameterError
from veil.release.report.kinds import _is_number
from veil.release.report.ledger import _ledger_entries

# A column with more distinct values than this share of its rows (and more than 50) is
# identifier-like: its values are never drawn, only counted.
_IDENTIFIER_SHARE: Final[float] = 0.5
_IDENTIFIER_MIN_VALUES: Final[int] = 50
# Treatments that randomize values (local DP): a noised value is no class key.
_NOISE: Final[frozenset[str]] = frozenset(
    {"laplace", "gaussian", "exponential", "randomized_response"}
)
# Treatments that replace values by keyed pseudonyms, tokens or a redaction mark.
_PSEUDONYMS: Final[frozenset[str]] = frozenset({"hmac", "token", "ff1", "redact"})
# The measured sections build_report can be asked for (a plan's evaluation.metrics).
_METRICS: Final[tuple[str, ...]] = (
    "risk",
    "distributions",
    "divergence",
    "correlation",
    "ml_utility",
    "maps",
)


@dataclass(frozen=True)
class _Dropped:
    """Records a location mask dropped (``outside: drop``): which pair, how many, where."""

    columns: tuple[str, ...]
    count: int
    projection: str


class _Context:
    """The two tables, their shared columns and how their rows match.

    Every fact the report reads from the run's records goes through the accessors
    below (``rows_in``, ``suppressed``, ``dropped``, ``method``, ``parameters``, ``k``,
    ``anonymized``, ``attacks``): the public manifest and the custodian record may move a
    fact from one to the other without the sections noticing.
    """

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
        self.steps: dict[str, Mapping[str, Any]] = dict(_ledger_entries(manifest))
        self.treatments = {
            name: str(entry.get("treatment", entry.get("step", "")) or "")
            for name, entry in self.steps.items()
        }
        plan = manifest.get("plan")
        self.plan: Mapping[str, Any] = plan if isinstance(plan, Mapping) else {}
        anonymization = manifest.get("anonymization")
        self.anonymization: Mapping[str, Any] = (
            anonymization if isinstance(anonymization, Mapping) else {}
        )
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

    def method(self, column: Hashable) -> str:
        """The treatment the manifest records for ``column`` ("" when it records none)."""
        return self.treatments.get(str(column), "")

    def noised(self, column: Hashable) -> bool:
        """Whether the column's values were randomized (local DP)."""
        return self.method(column) in _NOISE

    def pseudonymized(self, column: Hashable) -> bool:
        """Whether the column's values were replaced by pseudonyms, tokens or a mark."""
        return self.method(column) in _PSEUDONYMS

    def share(self) -> Mapping[str, Any]:
        """The share step's facts (OptimShare), empty without one."""
        share = self.manifest.get("share")
        return share if isinstance(share, Mapping) else {}

    def synthesized(self, column: Hashable) -> bool:
        """Whether the share step replaced the column by DP synthetic values (its S)."""
        s = self.share().get("s")
        return isinstance(s, list) and str(column) in {str(c) for c in s}

    def exact_share(self) -> list[str]:
        """The columns the share step releases exactly, not covered by DP (its Q)."""
        q = self.share().get("q")
        return [str(c) for c in q] if isinstance(q, list) else []

    def attacks_recorded(self) -> bool:
        """Whether the facts say if the release was attacked (the custodian record's
        ``attacks``: None when the plan named no attack, absent from a public manifest)."""
        return "attacks" in self.manifest

    def attacks(self) -> Mapping[str, Any] | None:
        """The attack battery's results on a shadow release, or None (see ``attacks_recorded``)."""
        battery = self.manifest.get("attacks")
        return battery if isinstance(battery, Mapping) else None

    def parameters(self, column: Hashable) -> Mapping[str, Any]:
        """The treatment parameters the manifest records for ``column``."""
        entry = self.steps.get(str(column), {})
        parameters = entry.get("parameters")
        return parameters if isinstance(parameters, Mapping) else {}

    def anonymized(self) -> list[str]:
        """The quasi-identifiers the plan's table anonymization generalizes."""
        section = self.plan.get("anonymization")
        if isinstance(section, Mapping) and isinstance(section.get("quasi_identifiers"), Mapping):
            return [str(q) for q in section["quasi_identifiers"]]
        levels = self.anonymization.get("levels")
        return [str(q) for q in levels] if isinstance(levels, Mapping) else []

    def k(self) -> int | None:
        """The k of the plan's k-anonymity model, if it has one."""
        section = self.plan.get("anonymization")
        models = section.get("models") if isinstance(section, Mapping) else None
        for model in models if isinstance(models, list) else []:
            if isinstance(model, Mapping):
                k = model.get("k", model.get("k_anonymity"))
                if isinstance(k, int) and not isinstance(k, bool):
                    return k
        return None

    def rows_in(self) -> int:
        """The records the run read (the report's original may be a sample of them)."""
        source = self.manifest.get("input")
        rows = source.get("rows") if isinstance(source, Mapping) else None
        if isinstance(rows, int) and not isinstance(rows, bool) and rows >= len(self.original):
            return rows
        return len(self.original)

    def suppressed(self) -> int:
        """Records the table anonymization suppressed (0 when it records none)."""
        value = self.anonymization.get("suppressed")
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def dropped(self) -> list[_Dropped]:
        """Records the location masks dropped as outside their projection's region."""
        entries = self.manifest.get("masking")
        out = []
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, Mapping):
                continue
            count = entry.get("dropped")
            if isinstance(count, int) and not isinstance(count, bool) and count > 0:
                columns = entry.get("columns")
                named = tuple(str(c) for c in columns) if isinstance(columns, list) else ()
                out.append(_Dropped(named, count, str(entry.get("projection") or "")))
        return out

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


def _systematic(n: int, limit: int) -> npt.NDArray[np.int64]:
    """Every k-th position, at most ``limit`` of them: a deterministic sample."""
    if n <= limit:
        return np.arange(n, dtype=np.int64)
    return np.unique(np.linspace(0, n - 1, limit).round().astype(np.int64))
