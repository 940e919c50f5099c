"""Generalization hierarchies for quasi-identifiers.

A hierarchy is a table with one row per original (level-0) value and one column per
level; each level groups the values of the previous one into coarser groups, and the
last level is a single group (usually ``*``). It is public knowledge: it is declared
from the attribute's domain, never derived from the records, so using it to generalize
a column spends no privacy budget and reveals nothing about who is in the data.

Two file formats are read, both without a header: anjana's (comma separated) and ARX's
(semicolon separated) [1]_. For the lattice search every level is also integer-coded:
``codes(L)`` maps each level-0 value code to its level-``L`` group id, so generalizing an
encoded column is ``hierarchy.codes(L)[hierarchy.encode(column)]``, with no string work.

References
----------
.. [1] F. Prasser, F. Kohlmayer, "Putting Statistical Disclosure Control into Practice:
   The ARX Data Anonymization Tool", in Medical Data Privacy Handbook, Springer, 2015.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import itertools
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.errors import DataTypeError, DomainError, ParameterError
from veil.frames import factorize_objects

__all__ = ["Hierarchy"]

_MAX_LISTED = 20
_SNIFF_LINES = 50
_SEPARATORS = (",", ";")
_INTERVAL_STYLES = ("[a, b)", "[a, b[", "a-b")


def _listing(items: Iterable[object]) -> str:
    """``'a', 'b', ... (N in all)`` for an error message, at most 20 items shown."""
    shown = list(items)
    text = ", ".join(repr(x) for x in shown[:_MAX_LISTED])
    if len(shown) > _MAX_LISTED:
        text += f", ... ({len(shown)} in all)"
    return text


def _number(x: float) -> str:
    """A readable label for a bound: ``20`` rather than ``20.0``."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _read_only(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    array.flags.writeable = False
    return array


@dataclasses.dataclass(frozen=True)
class _LevelStructure:
    """A hierarchy's levels as integer arrays (see ``Hierarchy._level_structure``).

    ``codes[L]`` is the level-``L`` group of each level-0 value, ``groups[L]`` the
    number of groups, ``leaves[L]`` the level-0 values under each group, and
    ``maps[lo, hi]`` the level-``hi`` group of each level-``lo`` group.
    """

    codes: tuple[npt.NDArray[np.int64], ...]
    groups: tuple[int, ...]
    leaves: tuple[npt.NDArray[np.int64], ...]
    maps: Mapping[tuple[int, int], npt.NDArray[np.int64]]


class Hierarchy:
    """An immutable generalization hierarchy for one attribute.

    Level 0 holds the original values; level ``L + 1`` is a coarsening of level ``L``
    (no level-``L`` group is split across two level-``L + 1`` groups); the last level is
    a single group. The structure is checked on construction.

    Values are compared as strings: a data column's values are converted with ``str()``
    before lookup, so the integer ``39`` matches the label ``"39"`` (but the float
    ``39.0`` matches ``"39.0"``, and a missing value matches ``"nan"`` or ``"<NA>"``).

    Parameters
    ----------
    table : pandas.DataFrame
        One row per level-0 value, one column per level, left to right. Every cell is
        converted with ``str()``; missing cells are refused.

    Raises
    ------
    ParameterError
        If the table is empty, holds missing cells or duplicated level-0 values, a level
        is not a coarsening of the previous one, or the last level is not a single group.

    Examples
    --------
    >>> h = Hierarchy.masking(["65213", "65219", "65301"], steps=2)
    >>> h.levels
    4
    >>> h.generalize(pd.Series(["65219", "65301"]), 2).tolist()
    ['652**', '653**']
    >>> h.codes(2).tolist()
    [0, 0, 1]
    """

    __slots__ = ("_codes", "_index", "_labels", "_structure", "_table")

    _table: pd.DataFrame
    _codes: tuple[npt.NDArray[np.intp], ...]
    _labels: tuple[npt.NDArray[np.object_], ...]
    _index: pd.Index
    _structure: _LevelStructure | None

    def __init__(self, table: pd.DataFrame) -> None:
        if not isinstance(table, pd.DataFrame):
            raise DataTypeError(f"table must be a pandas DataFrame, got {type(table).__name__}")
        if table.shape[0] == 0 or table.shape[1] == 0:
            raise ParameterError(
                f"table must have at least one row and one column, got shape {table.shape}"
            )
        missing = table.isna().to_numpy()
        if missing.any():
            rows, cols = np.nonzero(missing)
            raise ParameterError(
                f"table holds {len(rows)} missing cell(s), first at row {int(rows[0])}, "
                f"level {int(cols[0])}; every cell must be a label"
            )
        columns = [
            np.array([str(x) for x in table.iloc[:, j].tolist()], dtype=object)
            for j in range(table.shape[1])
        ]
        codes: list[npt.NDArray[np.intp]] = []
        labels: list[npt.NDArray[np.object_]] = []
        for column in columns:
            level_codes, uniques = pd.factorize(column, sort=False)
            codes.append(_read_only(np.asarray(level_codes, dtype=np.intp)))
            labels.append(_read_only(np.asarray(uniques, dtype=object)))
        index = pd.Index(columns[0], dtype=object)
        if not index.is_unique:
            duplicated = pd.unique(columns[0][index.duplicated()])
            raise ParameterError(
                f"level-0 values must be unique, duplicated: {_listing(duplicated)}"
            )
        frame = pd.DataFrame(dict(enumerate(columns)), dtype=object)
        object.__setattr__(self, "_table", frame)
        object.__setattr__(self, "_codes", tuple(codes))
        object.__setattr__(self, "_labels", tuple(labels))
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_structure", None)
        self._check_structure()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Hierarchy is immutable; cannot set {name!r}")

    def __repr__(self) -> str:
        groups = [len(labels) for labels in self._labels]
        return f"Hierarchy(levels={self.levels}, groups per level={groups})"

    # ----------------------------------------------------------------- properties

    @property
    def levels(self) -> int:
        """Number of levels, level 0 (the original values) included: the table's width."""
        return len(self._codes)

    @property
    def values(self) -> npt.NDArray[np.object_]:
        """The level-0 values as strings, in table (file) order (read-only)."""
        return self._labels[0]

    @property
    def table(self) -> pd.DataFrame:
        """A copy of the label table: one row per level-0 value, columns ``0..levels-1``."""
        return self._table.copy()

    def codes(self, level: int) -> npt.NDArray[np.intp]:
        """Group id at ``level`` of each level-0 value (read-only, ids in first-seen order).

        ``codes(0)`` is ``0..n-1``; generalizing level-0 codes ``c`` is ``codes(level)[c]``.
        """
        return self._codes[self._check_level(level)]

    def labels(self, level: int) -> npt.NDArray[np.object_]:
        """Label of each group id at ``level`` (read-only): ``labels(L)[codes(L)]``."""
        return self._labels[self._check_level(level)]

    # ---------------------------------------------------------------- operations

    def encode(self, series: pd.Series) -> npt.NDArray[np.intp]:
        """Level-0 code of each entry of ``series`` (its values compared with ``str()``).

        Numbers are matched as numbers: a hierarchy written with ``1`` covers the value
        ``1.0`` of a column read as float.

        Raises
        ------
        DomainError
            If some values are not level-0 values of the hierarchy; the message lists
            (up to 20 of) them.
        """
        if not isinstance(series, pd.Series):
            raise DataTypeError(f"series must be a pandas Series, got {type(series).__name__}")
        exact = self._exact_codes(series)
        if exact is not None:
            return exact
        # Factorize first so str() runs once per distinct value, not once per record.
        data_codes, uniques = pd.factorize(series, sort=False, use_na_sentinel=False)
        keys = pd.Index([str(x) for x in list(uniques)], dtype=object)
        found = self._index.get_indexer(keys)
        absent = found < 0
        if absent.any():
            found = self._numeric_codes(list(uniques), found)
            absent = found < 0
        if absent.any():
            uncovered = sorted(keys[absent].tolist())
            raise DomainError(
                f"column {series.name!r} holds {len(uncovered)} value(s) the hierarchy does "
                f"not cover: {_listing(uncovered)}"
            )
        return np.asarray(found, dtype=np.intp)[np.asarray(data_codes, dtype=np.intp)]

    def _numeric_codes(
        self, uniques: list[object], found: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.intp]:
        """``found`` completed by matching numbers as numbers: ``1.0`` is the label ``1``.

        A column read with missing values becomes float (``1.0``) while its hierarchy
        was written with integers (``1``); both are the same number. Level-0 labels
        that read as finite numbers are compared by value with the numeric entries
        that found no label as text.
        """
        uniques_s = pd.Series(uniques, dtype=object)
        numeric = uniques_s.map(
            lambda x: isinstance(x, (int, float, np.number)) and not isinstance(x, bool)
        ).to_numpy(dtype=bool)
        wanted = numeric & (found < 0)
        if not wanted.any():
            return found
        values = pd.to_numeric(uniques_s[wanted], errors="coerce").to_numpy(dtype=np.float64)
        labels = pd.to_numeric(pd.Series(self._labels[0]), errors="coerce")
        labels = labels[np.isfinite(labels.to_numpy(dtype=np.float64))]
        first = labels[~labels.duplicated()]
        codes = pd.Index(first.to_numpy(dtype=np.float64)).get_indexer(values)
        out = found.copy()
        positions = first.index.to_numpy()
        out[wanted] = np.where(codes >= 0, positions[np.maximum(codes, 0)], -1)
        return out

    def _level_structure(self) -> _LevelStructure:
        """The groups of every level and the maps between levels (computed once).

        They depend on the hierarchy alone, which is immutable, so the lattice search
        reads them from here instead of rebuilding them on every call.
        """
        if self._structure is None:
            codes = tuple(c.astype(np.int64) for c in self._codes)
            groups = tuple(int(c.max()) + 1 for c in codes)
            leaves = tuple(
                _read_only(np.bincount(c, minlength=g)) for c, g in zip(codes, groups, strict=True)
            )
            maps: dict[tuple[int, int], npt.NDArray[np.int64]] = {}
            for lo in range(len(codes)):
                for hi in range(lo + 1, len(codes)):
                    up = np.zeros(groups[lo], dtype=np.int64)
                    up[codes[lo]] = codes[hi]
                    maps[lo, hi] = _read_only(up)
            structure = _LevelStructure(tuple(_read_only(c) for c in codes), groups, leaves, maps)
            object.__setattr__(self, "_structure", structure)
        assert self._structure is not None
        return self._structure

    def _exact_codes(self, series: pd.Series) -> npt.NDArray[np.intp] | None:
        """Level-0 codes when every entry is a level-0 label as a string, else None.

        The common case of a column the hierarchy covers, without ``str()`` per
        distinct value: one hash lookup per record for Arrow strings (``index_in``), a
        factorization and a lookup of the distinct values for objects. A string equals
        its ``str()``; anything else (missing values, numbers, values the hierarchy
        lacks) finds no label here and is left to :meth:`encode`'s general path, which
        also reports what is not covered.
        """
        dtype = series.dtype
        if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
            import pyarrow as pa
            import pyarrow.compute as pc

            values = pa.array(series.array)
            found = pc.index_in(values, value_set=pa.array(self._labels[0], values.type))
            if found.null_count:
                return None
            return np.asarray(found.to_numpy(), dtype=np.intp)
        if pd.api.types.is_object_dtype(dtype):
            codes, objects = factorize_objects(series.to_numpy())
            found = self._index.get_indexer(pd.Index(objects, dtype=object, copy=False))
            if (found < 0).any():
                return None
            return np.asarray(found, dtype=np.intp)[codes]
        return None

    def generalize(self, series: pd.Series, level: int) -> pd.Series:
        """Replace each value of ``series`` by its label at ``level``; the input is untouched.

        Returns a categorical Series (same index and name) whose categories are
        ``labels(level)`` and whose category codes are the group ids ``codes(level)``.

        Raises
        ------
        ParameterError
            If ``level`` is not in ``0..levels-1``.
        DomainError
            If ``series`` holds values the hierarchy does not cover.
        """
        level = self._check_level(level)
        group = self._codes[level][self.encode(series)]
        categorical = pd.Categorical.from_codes(group, categories=pd.Index(self._labels[level]))
        return pd.Series(categorical, index=series.index, name=series.name)

    def validate(self, series: pd.Series | None = None) -> None:
        """Check the structure and, when ``series`` is given, that it covers the data.

        Raises
        ------
        ParameterError
            If a level is not a coarsening of the previous one (the message names the
            level and the split groups) or the last level is not a single group.
        DomainError
            If ``series`` holds values the hierarchy does not cover (listed).
        """
        self._check_structure()
        if series is not None:
            self.encode(series)

    # -------------------------------------------------------------- constructors

    @classmethod
    def from_frame(cls, df: pd.DataFrame) -> Hierarchy:
        """Build from a label table (one column per level); ``df`` is not modified."""
        return cls(df)

    @classmethod
    def from_csv(cls, path: str | os.PathLike[str], sep: str | None = None) -> Hierarchy:
        """Load a hierarchy file with no header: one row per value, one column per level.

        Reads anjana's format (``,``) and ARX's (``;``). When ``sep`` is None the
        separator is sniffed: the candidate that splits the first lines into the same,
        largest number of columns wins. Cells are stripped of surrounding whitespace and
        kept as strings; blank lines are skipped.

        Raises
        ------
        ParameterError
            If ``sep`` is not one character, the separator cannot be sniffed, rows have
            different numbers of columns, or the hierarchy is malformed.
        """
        if sep is not None and (not isinstance(sep, str) or len(sep) != 1):
            raise ParameterError(f"sep must be a single character or None, got {sep!r}")
        with open(path, encoding="utf-8", newline="") as handle:
            text = handle.read()
        lines = [line for line in text.splitlines() if line.strip()]
        if not lines:
            raise ParameterError(f"hierarchy file {os.fspath(path)!r} is empty")
        if sep is None:
            sep = _sniff(lines[:_SNIFF_LINES], os.fspath(path))
        rows = [
            [cell.strip() for cell in row]
            for row in csv.reader(lines, delimiter=sep, skipinitialspace=True)
        ]
        widths = {len(row) for row in rows}
        if len(widths) != 1:
            first = len(rows[0])
            bad = next(i for i, row in enumerate(rows) if len(row) != first)
            raise ParameterError(
                f"hierarchy file {os.fspath(path)!r}: line {bad + 1} has {len(rows[bad])} "
                f"column(s) but line 1 has {first} (separator {sep!r})"
            )
        return cls(pd.DataFrame(rows, dtype=object))

    @classmethod
    def intervals(
        cls,
        values: Iterable[float],
        widths: Sequence[float] = (5, 10, 20),
        *,
        lower: float | None = None,
        upper: float | None = None,
        labels: str = "[a, b)",
    ) -> Hierarchy:
        """Numeric intervals of growing width, then ``*``.

        Build it from the declared (public) domain, e.g. ``range(17, 91)`` for ages, not
        from the data. Intervals at level ``i`` have width ``widths[i-1]`` and start at
        multiples of it counted from ``lower`` (or from 0). With ``lower`` / ``upper``,
        values below ``lower`` become ``<lower`` and values at or above ``upper`` become
        ``>=upper`` on every interval level (bottom/top coding), and the interval next to
        ``upper`` is cut there.

        Parameters
        ----------
        values : iterable of int or float
            The domain (level 0; labels are ``str(value)``). Finite numbers.
        widths : sequence of positive numbers
            Interval width per level, increasing, each a whole multiple of the previous
            one so that every level coarsens the previous.
        lower, upper : float, optional
            Bottom- and top-coding thresholds, ``lower < upper``.
        labels : {"[a, b)", "[a, b[", "a-b"}
            Label style: half-open ``[15, 20)``, anjana's ``[15, 20[``, or ARX's closed
            integer ``15-19`` (integer domains, widths and thresholds only).

        Examples
        --------
        >>> h = Hierarchy.intervals(range(17, 91), widths=(5, 10))
        >>> h.generalize(pd.Series([17, 39]), 1).tolist()
        ['[15, 20)', '[35, 40)']
        >>> Hierarchy.intervals(range(0, 100), (5, 10), labels="a-b").labels(2)[:2].tolist()
        ['0-9', '10-19']
        """
        raw = list(values)
        domain = _numeric(raw, "values")
        if labels not in _INTERVAL_STYLES:
            raise ParameterError(f"labels must be one of {_INTERVAL_STYLES}, got {labels!r}")
        steps = [float(w) for w in widths]
        if not steps:
            raise ParameterError("widths must hold at least one width, got an empty sequence")
        if not all(math.isfinite(w) and w > 0 for w in steps):
            raise ParameterError(f"widths must be finite and positive, got {tuple(widths)}")
        for previous, current in itertools.pairwise(steps):
            ratio = current / previous
            if ratio <= 1 or not math.isclose(ratio, round(ratio)):
                raise ParameterError(
                    "widths must increase, each a whole multiple of the previous one "
                    f"(so each level coarsens the last), got {tuple(widths)}"
                )
        for name, bound in (("lower", lower), ("upper", upper)):
            if bound is not None and not math.isfinite(bound):
                raise ParameterError(f"{name} must be a finite number or None, got {bound!r}")
        if lower is not None and upper is not None and not lower < upper:
            raise ParameterError(f"lower must be below upper, got lower={lower}, upper={upper}")
        if labels == "a-b":
            numbers = [*domain.tolist(), *steps, *(b for b in (lower, upper) if b is not None)]
            if not all(float(x).is_integer() for x in numbers):
                raise ParameterError(
                    'labels="a-b" needs integer values, widths and thresholds; '
                    'use "[a, b)" for a real-valued domain'
                )
        origin = 0.0 if lower is None else float(lower)
        below = np.zeros(len(domain), dtype=bool) if lower is None else domain < lower
        above = np.zeros(len(domain), dtype=bool) if upper is None else domain >= upper
        columns: list[list[str]] = [[str(x) for x in raw]]
        for width in steps:
            start = origin + np.floor((domain - origin) / width) * width
            stop = start + width if upper is None else np.minimum(start + width, upper)
            # One label per distinct interval: formatting runs over groups, not values.
            bounds, inverse = np.unique(
                np.stack([start, stop], axis=1), axis=0, return_inverse=True
            )
            names = np.array([_interval(a, b, labels) for a, b in bounds.tolist()], dtype=object)
            level = names[inverse.reshape(-1)]
            if lower is not None:
                level[below] = f"<{_number(lower)}"
            if upper is not None:
                level[above] = f">={_number(upper)}"
            columns.append(level.tolist())
        columns.append(["*"] * len(raw))
        return cls(pd.DataFrame(dict(enumerate(columns)), dtype=object))

    @classmethod
    def masking(
        cls, values: Iterable[object], *, mask_char: str = "*", steps: int | None = None
    ) -> Hierarchy:
        """Right-masking of codes (ZIP, NACE, ...): one more character per level, then ``*``.

        ``65213 -> 6521* -> 652** -> *`` is ``masking(zips, steps=2)``.

        Parameters
        ----------
        values : iterable
            The codes (converted with ``str()``).
        mask_char : str
            One character replacing the masked digits.
        steps : int, optional
            Number of masking levels between the codes and ``*``; by default every
            character but the first of the shortest code is masked, one per level.

        Examples
        --------
        >>> Hierarchy.masking(["65213"], steps=2).table.iloc[0].tolist()
        ['65213', '6521*', '652**', '*']
        """
        if not isinstance(mask_char, str) or len(mask_char) != 1:
            raise ParameterError(f"mask_char must be a single character, got {mask_char!r}")
        codes = pd.Series([str(x) for x in values], dtype=object)
        if codes.empty:
            raise ParameterError("values must hold at least one code, got none")
        shortest = int(codes.str.len().min())
        if steps is None:
            steps = max(shortest - 1, 0)
        if isinstance(steps, bool) or not isinstance(steps, int | np.integer):
            raise ParameterError(f"steps must be an integer or None, got {steps!r}")
        if not 0 <= steps <= shortest:
            raise ParameterError(
                f"steps must be in [0, {shortest}] (the length of the shortest code), got {steps}"
            )
        columns = {0: codes}
        for masked in range(1, int(steps) + 1):
            columns[masked] = codes.str[:-masked] + mask_char * masked
        columns[int(steps) + 1] = pd.Series(["*"] * len(codes), dtype=object)
        return cls(pd.DataFrame(columns, dtype=object))

    @classmethod
    def dates(cls, values: Iterable[object]) -> Hierarchy:
        """Dates: day -> month (``2024-03``) -> year (``2024``) -> ``*``.

        ``values`` are ISO 8601 dates (strings, ``datetime.date`` or timestamps); level 0
        labels are ``str(value)``, so pass the dates as they appear in the data.

        Examples
        --------
        >>> Hierarchy.dates(["2024-03-15"]).table.iloc[0].tolist()
        ['2024-03-15', '2024-03', '2024', '*']
        """
        raw = list(values)
        if not raw:
            raise ParameterError("values must hold at least one date, got none")
        try:
            parsed = pd.DatetimeIndex(pd.to_datetime(pd.Index(raw, dtype=object), format="ISO8601"))
        except (ValueError, TypeError) as exc:
            reason = str(exc).splitlines()[0]
            raise ParameterError(f"values must be ISO 8601 dates: {reason}") from exc
        if parsed.isna().any():
            raise ParameterError("values must not hold missing dates")
        columns = {
            0: [str(x) for x in raw],
            1: list(parsed.strftime("%Y-%m")),
            2: list(parsed.strftime("%Y")),
            3: ["*"] * len(raw),
        }
        return cls(pd.DataFrame(columns, dtype=object))

    @classmethod
    def from_mapping(
        cls, values: Iterable[object], mapping_levels: Sequence[Mapping[Any, Any]]
    ) -> Hierarchy:
        """Categorical groupings: ``mapping_levels[i]`` maps level-``i`` labels to level ``i+1``.

        Keys and targets are compared as strings. A final ``*`` level is added unless the
        last mapping already sends every value to one group. Being functions of the
        previous labels, the levels are coarsenings by construction.

        Raises
        ------
        ParameterError
            If a mapping leaves labels of its level unmapped (listed).

        Examples
        --------
        >>> h = Hierarchy.from_mapping(
        ...     ["Married", "Divorced", "Widowed"],
        ...     [{"Married": "Spouse present", "Divorced": "Alone", "Widowed": "Alone"}],
        ... )
        >>> h.labels(1).tolist()
        ['Spouse present', 'Alone']
        """
        current = pd.Series([str(x) for x in values], dtype=object)
        columns = {0: current}
        for i, mapping in enumerate(mapping_levels):
            if not isinstance(mapping, Mapping):
                raise ParameterError(
                    f"mapping_levels[{i}] must be a mapping, got {type(mapping).__name__}"
                )
            lookup = {str(k): str(v) for k, v in mapping.items()}
            following = current.map(lookup)
            unmapped = following.isna()
            if unmapped.any():
                raise ParameterError(
                    f"mapping_levels[{i}] does not map these level-{i} labels: "
                    f"{_listing(pd.unique(current[unmapped].to_numpy()))}"
                )
            current = following.astype(object)
            columns[i + 1] = current
        if current.nunique() > 1 or current.empty:
            columns[len(columns)] = pd.Series(["*"] * len(current), dtype=object)
        return cls(pd.DataFrame(columns, dtype=object))

    @classmethod
    def top_bottom_coding(
        cls, values: Iterable[float], lower: float | None, upper: float | None
    ) -> Hierarchy:
        """Bottom/top coding: level 1 turns values below ``lower`` into ``<lower`` and
        values at or above ``upper`` into ``>=upper``, others keep their label; then ``*``.

        Either threshold may be None (only one side coded), not both.

        Examples
        --------
        >>> h = Hierarchy.top_bottom_coding(range(15, 95), lower=18, upper=80)
        >>> h.generalize(pd.Series([16, 40, 90]), 1).tolist()
        ['<18', '40', '>=80']
        """
        raw = list(values)
        domain = _numeric(raw, "values")
        if lower is None and upper is None:
            raise ParameterError("give lower, upper or both; got neither")
        for name, bound in (("lower", lower), ("upper", upper)):
            if bound is not None and not math.isfinite(bound):
                raise ParameterError(f"{name} must be a finite number or None, got {bound!r}")
        if lower is not None and upper is not None and not lower < upper:
            raise ParameterError(f"lower must be below upper, got lower={lower}, upper={upper}")
        original = np.array([str(x) for x in raw], dtype=object)
        coded = original.copy()
        if lower is not None:
            coded[domain < lower] = f"<{_number(lower)}"
        if upper is not None:
            coded[domain >= upper] = f">={_number(upper)}"
        columns = {0: original, 1: coded, 2: np.full(len(raw), "*", dtype=object)}
        return cls(pd.DataFrame(columns, dtype=object))

    # ----------------------------------------------------------------- internals

    def _check_level(self, level: int) -> int:
        if isinstance(level, bool) or not isinstance(level, int | np.integer):
            raise ParameterError(f"level must be an integer, got {level!r}")
        if not 0 <= level < self.levels:
            raise ParameterError(f"level must be in [0, {self.levels - 1}], got {level}")
        return int(level)

    def _check_structure(self) -> None:
        for level in range(self.levels - 1):
            fine, coarse = self._codes[level], self._codes[level + 1]
            n_coarse = len(self._labels[level + 1])
            pairs = np.unique(fine.astype(np.int64) * n_coarse + coarse)
            groups, counts = np.unique(pairs // n_coarse, return_counts=True)
            split = groups[counts > 1]
            if split.size:
                raise ParameterError(
                    f"level {level + 1} is not a coarsening of level {level}: these "
                    f"level-{level} groups are split across several level-{level + 1} "
                    f"groups: {_listing(self._labels[level][split].tolist())}"
                )
        top = self._labels[-1]
        if len(top) != 1:
            raise ParameterError(
                f"the last level ({self.levels - 1}) must be a single group such as '*', "
                f"got {len(top)} groups: {_listing(top.tolist())}"
            )


def _sniff(lines: list[str], path: str) -> str:
    """The separator splitting every sample line into the same, largest column count."""
    best: tuple[int, str] | None = None
    for sep in _SEPARATORS:
        widths = {
            len(row)
            for row in csv.reader(
                io.StringIO("\n".join(lines)), delimiter=sep, skipinitialspace=True
            )
        }
        if len(widths) == 1:
            width = widths.pop()
            if best is None or width > best[0]:
                best = (width, sep)
    if best is None:
        raise ParameterError(
            f"cannot sniff the separator of {path!r} (tried {_SEPARATORS}); pass sep"
        )
    return best[1]


def _numeric(raw: list[Any], name: str) -> npt.NDArray[np.float64]:
    """``raw`` as finite float64, with errors naming ``name``."""
    if not raw:
        raise ParameterError(f"{name} must hold at least one number, got none")
    array = np.asarray(raw)
    if array.ndim != 1 or array.dtype.kind not in "iuf":
        raise DataTypeError(f"{name} must be integers or floats, got dtype {array.dtype}")
    domain = array.astype(np.float64)
    if not np.isfinite(domain).all():
        raise ParameterError(f"{name} must be finite, got {_listing(domain[~np.isfinite(domain)])}")
    return domain


def _interval(a: float, b: float, style: str) -> str:
    if style == "a-b":
        return f"{_number(a)}-{_number(b - 1)}"
    close = ")" if style == "[a, b)" else "["
    return f"[{_number(a)}, {_number(b)}{close}"
