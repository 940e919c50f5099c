"""Suggested roles of a table's columns: what a custodian should check first.

:func:`suggest_roles` reads a raw table and says, for each column, what it most likely
is: a direct identifier (by the share of records it singles out, or by its name), a
latitude or longitude of a location pair, free text holding personal data, a date, a
quasi-identifier (a fact an attacker may know: age, sex, postcode, by name, and dates),
or a sensitive attribute (the rest). It then scans the quasi-identifier combinations
(:func:`veil.risk.qi_scan`) and ranks them by the share of records they single out.

These are suggestions for a person to confirm, never decisions: whether an attribute
is known to an attacker is outside knowledge no table holds. Measures only; nothing is
released, and the figures are computed from the raw records (keep them with the
custodian).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Hashable, Mapping, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.errors import DataTypeError, ParameterError
from veil.risk.carriers import (
    _address_share,
    _identifier,
    _is_text,
    _pii_shares,
    address_shares,
    per_column_mean,
    stacked_text,
)
from veil.risk.reidentification import qi_scan

__all__ = ["ColumnRole", "RoleSuggestions", "suggest_roles", "zero_padded_columns"]

Kind = Literal[
    "identifier", "free-text", "latitude", "longitude", "date", "quasi-identifier", "sensitive"
]

# Words in column names, compared on the name split at _, -, spaces and case changes.
_QI_WORDS = {
    "age", "sex", "gender", "zip", "zipcode", "postcode", "postal", "plz", "race", "ethnic",
    "ethnicity", "birth", "dob", "born", "marital", "married", "education", "occupation",
    "job", "profession", "country", "nationality", "native", "region", "province", "state",
    "county", "city", "town", "municipality", "district", "neighbourhood", "neighborhood",
    "religion", "workclass", "residence", "relationship", "language", "height", "weight",
    "teacher", "school", "class", "grade_level", "department", "employer", "jobclass",
    "year",
}  # fmt: skip
# Words of sensitive attributes: a column named so is not suggested as a quasi-identifier
# even when it has few levels.
_SENSITIVE_WORDS = {
    "health", "disease", "diagnosis", "illness", "condition", "stroke", "cancer", "hiv",
    "diabetes", "hypertension", "heart", "glucose", "bmi", "blood", "medical", "medication",
    "drug", "smoking", "alcohol", "pregnant", "disability", "insurance", "ins", "income",
    "salary", "wage", "logwage", "earnings", "debt", "credit", "loan", "tax", "crime",
    "offence", "offense", "conviction", "score", "sexual", "orientation",
    "vote", "party",
}  # fmt: skip
# A column with at most this many levels is a quasi-identifier candidate: an attacker can
# know a fact of few levels (marital status, job class), rarely an exact measurement.
_FEW_LEVELS = 12
# Whole numbers in this range with at most _YEAR_LEVELS levels are years.
_YEARS = (1900.0, 2100.0)
_YEAR_LEVELS = 60
_LAT_WORDS = {"lat", "latitude"}
_LON_WORDS = {"lon", "lng", "long", "longitude"}
_DATE_WORDS = {"date", "datetime", "time", "timestamp", "day", "dt"}
# Names of columns that hold one person each (with many distinct values).
_PERSON_WORDS = {
    "name", "names", "surname", "firstname", "lastname", "student", "patient", "person",
    "customer", "client", "employee", "user", "username", "member", "citizen",
}  # fmt: skip
_TEXT_LENGTH = 25  # mean characters of a free-text column
_ROWS = 5_000


@dataclasses.dataclass(frozen=True)
class ColumnRole:
    """What one column most likely is.

    Attributes
    ----------
    column : Hashable
        The column.
    role : {"identifier", "quasi_identifier", "sensitive"}
        The suggested role (a location column is a quasi-identifier).
    kind : str
        ``identifier``, ``free-text``, ``latitude``, ``longitude``, ``date``,
        ``quasi-identifier`` or ``sensitive``.
    reason : str
        Why, in a few words. It holds no figure measured on the records, so a plan may
        quote it.
    evidence : str
        The figures behind the reason, measured on the raw records ("" when the name
        alone decides): for the custodian, never for a file that may be published.
    distinct : int
        Distinct values (missing counted as one).
    uniqueness : float
        Share of the records whose value no other record holds.
    numeric : bool
        Whether the column holds numbers.
    """

    column: Hashable
    role: Literal["identifier", "quasi_identifier", "sensitive"]
    kind: Kind
    reason: str
    evidence: str
    distinct: int
    uniqueness: float
    numeric: bool


@dataclasses.dataclass(frozen=True)
class RoleSuggestions:
    """Every column's suggested role, the location pairs and the riskiest QI combinations."""

    columns: tuple[ColumnRole, ...]
    locations: tuple[tuple[Hashable, Hashable], ...]
    combinations: pd.DataFrame

    def of(self, kind: str) -> list[Hashable]:
        """The columns of one kind (``"identifier"``, ``"quasi-identifier"``, ...)."""
        return [c.column for c in self.columns if c.kind == kind]

    @property
    def quasi_identifiers(self) -> list[Hashable]:
        """The suggested quasi-identifiers (dates included, locations not)."""
        return [c.column for c in self.columns if c.kind in ("quasi-identifier", "date")]

    @property
    def identifiers(self) -> list[Hashable]:
        """The suggested direct identifiers and free-text columns with personal data."""
        return [c.column for c in self.columns if c.role == "identifier"]

    def to_frame(self) -> pd.DataFrame:
        """One row per column: role, kind, reason, distinct, uniqueness, numeric."""
        rows = [dataclasses.asdict(c) for c in self.columns]
        return pd.DataFrame(rows).set_index("column")


def _words(name: Hashable) -> set[str]:
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(name))
    return {w for w in re.split(r"[\s_\-./]+", text.lower()) if w}


def _named(words: set[str], vocabulary: set[str]) -> str | None:
    """The first vocabulary word a name holds, whole or short of one letter (``maritl``
    for ``marital``), else None."""
    for word in sorted(words):
        for known in sorted(vocabulary):
            if word == known or (len(word) >= 6 and _one_letter_short(word, known)):
                return known
    return None


def _one_letter_short(word: str, known: str) -> bool:
    """Whether ``word`` is ``known`` with one letter left out."""
    if len(known) != len(word) + 1:
        return False
    return any(known[:i] + known[i + 1 :] == word for i in range(len(known)))


@dataclasses.dataclass(frozen=True)
class _Counts:
    """A column's values counted once: every check that needs a count reads it here."""

    present: int  # non-missing values
    distinct: int  # distinct non-missing values
    with_missing: int  # distinct values, missing counted as one
    uniqueness: float  # share of rows whose value (missing as a value) no other row has


def _counts(series: pd.Series) -> _Counts:
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    present = codes >= 0
    tally = np.bincount(codes[present], minlength=len(uniques))
    missing = int(len(codes) - present.sum())
    single = int((tally == 1).sum()) + (1 if missing == 1 else 0)
    return _Counts(
        int(present.sum()), len(uniques), len(uniques) + (missing > 0), single / max(len(codes), 1)
    )


def _numbers(series: pd.Series) -> npt.NDArray[np.float64]:
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    return np.asarray(values[np.isfinite(values)], dtype=np.float64)


def _within(values: npt.NDArray[np.float64], low: float, high: float) -> bool:
    return bool(values.size) and bool(values.min() >= low and values.max() <= high)


def _is_date(series: pd.Series, words: set[str]) -> bool:
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return True
    if not (_is_text(series) and words & _DATE_WORDS):
        return False
    sample = series.dropna().astype(str).head(200)
    parsed = pd.to_datetime(sample, errors="coerce", format="mixed")
    return bool(len(sample)) and float(parsed.notna().mean()) >= 0.95


def _free_text(pii: float | None, shape: tuple[float, float] | None) -> tuple[str, str] | None:
    """Free text, from a text column's PII share and its ``(mean length, spaced share)``."""
    if shape is None:
        return None
    mean_length, spaced = shape
    if pii is not None and pii > 0:
        return (
            "rows hold personal data (e-mail, phone, card, IBAN, IP)",
            f"{pii:.0%} of rows hold personal data",
        )
    if mean_length >= _TEXT_LENGTH and spaced >= 0.5:
        return "free text", f"mean {mean_length:.0f} characters"
    return None


def _person_column(series: pd.Series, words: set[str], counts: _Counts) -> float | None:
    """The share of distinct values of a column that holds one person per record."""
    if counts.present < 20:
        return None
    share = counts.distinct / counts.present
    if words & _PERSON_WORDS and share >= 0.5:
        return share
    # Whole numbers stored as floats (1.0, 2.0, ...) count as a counter when unique.
    if pd.api.types.is_float_dtype(series.dtype) and share >= 0.95:
        numbers = series.dropna().to_numpy(dtype=np.float64)
        if bool(np.all(numbers == np.round(numbers))):
            return share
    return None


def _coordinate(words: set[str], values: npt.NDArray[np.float64]) -> tuple[Kind, str, str] | None:
    """A latitude or longitude, by its name and its range (longitudes in -180..180 or
    0..360)."""
    if values.size == 0 or np.unique(values).size < 2:
        return None
    span = f"values from {values.min():g} to {values.max():g}"
    if words & _LAT_WORDS and _within(values, -90.0, 90.0):
        return "latitude", "named a latitude, values within +-90 degrees", span
    if words & _LON_WORDS and _within(values, -180.0, 180.0):
        return "longitude", "named a longitude, values within +-180 degrees", span
    if words & _LON_WORDS and _within(values, 0.0, 360.0):
        return (
            "longitude",
            "named a longitude, values in 0-360 degrees (east of Greenwich)",
            span,
        )
    return None


def _by_values(
    series: pd.Series, words: set[str], numeric: bool, counts: _Counts
) -> tuple[Kind, str, str] | None:
    """A quasi-identifier or sensitive attribute told by the column's values."""
    levels = counts.distinct
    if levels < 2:
        return "sensitive", "one value only: it tells nothing apart", f"{levels} distinct value"
    evidence = f"{levels} distinct values"
    sensitive = _named(words, _SENSITIVE_WORDS)
    if levels == 2 and (numeric or pd.api.types.is_bool_dtype(series.dtype)):
        return "sensitive", "a yes/no flag: an outcome more often than a known fact", evidence
    if numeric:
        numbers = _numbers(series)
        whole = bool(np.all(numbers == np.round(numbers)))
        if whole and levels <= _YEAR_LEVELS and _within(numbers, _YEARS[0], _YEARS[1]):
            return (
                "quasi-identifier",
                "whole numbers within 1900-2100 with few levels: years, which an attacker may know",
                evidence,
            )
        if sensitive is not None:
            return "sensitive", f"named like a sensitive attribute ({sensitive!r})", evidence
        if whole and 2 < levels <= _FEW_LEVELS:
            return (
                "quasi-identifier",
                "a code with few levels: a fact an attacker may know",
                evidence,
            )
        if whole:
            return "sensitive", "whole numbers with many levels, not a known fact", evidence
        return (
            "sensitive",
            "a measurement with many values (an attacker rarely knows it exactly)",
            evidence,
        )
    if sensitive is not None:
        return "sensitive", f"named like a sensitive attribute ({sensitive!r})", evidence
    if levels <= _FEW_LEVELS:
        return (
            "quasi-identifier",
            "a category with few levels: a fact an attacker may know",
            evidence,
        )
    return None


def _classify(
    name: Hashable, series: pd.Series, sample: pd.Series, text: _TextFacts, counts: _Counts
) -> tuple[Kind, str, str]:
    """The column's kind, why (in words, no figure), and the figures behind it."""
    words = _words(name)
    numeric = pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(
        series.dtype
    )
    if _is_date(sample, words):
        return "date", "dates (an attacker may know when an event happened)", ""
    share = _identifier(series, name, (counts.distinct, counts.present))
    if share is None:
        share = _person_column(series, words, counts)
    if share is not None:
        return (
            "identifier",
            "nearly every value is distinct (a record key), or the name says so",
            f"{share:.0%} of the values are distinct",
        )
    address = _address_share(sample, name, text.addresses.get(name))
    if address is not None:
        return "identifier", "an address", f"{address:.0%} of rows look like one"
    free = _free_text(text.pii.get(name), text.shapes.get(name))
    if free is not None:
        return "free-text", free[0], free[1]
    if name in text.zero_padded:
        return (
            "quasi-identifier",
            "digit codes with leading zeros (postcodes, area codes): read as text",
            "",
        )
    coordinate = _coordinate(words, _numbers(series)) if numeric else None
    if coordinate is not None:
        return coordinate
    known = _named(words, _QI_WORDS)
    if known is not None:
        return "quasi-identifier", f"named like a known fact ({known!r})", ""
    found = _by_values(series, words, numeric, counts)
    if found is not None:
        return found
    return "sensitive", "many distinct values, not recognised as a known fact", ""


def zero_padded_columns(frame: pd.DataFrame, columns: Sequence[Hashable]) -> set[Hashable]:
    """The text columns holding digit codes some of which start with 0, matched at once."""
    values, codes = stacked_text(frame, columns)
    if not len(values):
        return set()
    digits = per_column_mean(values.str.fullmatch(r"\d{2,}"), codes, len(columns))
    zeros = per_column_mean(values.str.startswith("0"), codes, len(columns))
    return {c for c, d, z in zip(columns, digits, zeros, strict=True) if d == 1.0 and z > 0}


@dataclasses.dataclass(frozen=True)
class _TextFacts:
    """What the checks of text values found, for every text column at once."""

    pii: Mapping[Hashable, float]
    addresses: Mapping[Hashable, float]
    zero_padded: set[Hashable]
    shapes: Mapping[Hashable, tuple[float, float]]


def _text_shapes(
    frame: pd.DataFrame, columns: Sequence[Hashable]
) -> dict[Hashable, tuple[float, float]]:
    """Per text column with a value: its mean length and the share of values with a space."""
    values, codes = stacked_text(frame, columns)
    if not len(values):
        return {}
    lengths = np.bincount(
        codes, weights=values.str.len().to_numpy(dtype=np.float64), minlength=len(columns)
    ) / np.maximum(np.bincount(codes, minlength=len(columns)), 1)
    spaced = per_column_mean(values.str.contains(" ", regex=False), codes, len(columns))
    return {
        c: (float(n), float(s))
        for c, n, s in zip(columns, lengths, spaced, strict=True)
        if np.isfinite(s)
    }


def _pairs(columns: list[ColumnRole]) -> list[tuple[Hashable, Hashable]]:
    """Latitude and longitude columns paired by what their names share."""
    lats = [c.column for c in columns if c.kind == "latitude"]
    lons = [c.column for c in columns if c.kind == "longitude"]
    pairs: list[tuple[Hashable, Hashable]] = []
    for lat in lats:
        rest = _words(lat) - _LAT_WORDS
        best = [lon for lon in lons if _words(lon) - _LON_WORDS == rest]
        if best and best[0] not in {p[1] for p in pairs}:
            pairs.append((lat, best[0]))
    return pairs


def suggest_roles(
    df: pd.DataFrame,
    *,
    max_rows: int = _ROWS,
    scan_size: int = 3,
    time_limit: float | None = 5.0,
) -> RoleSuggestions:
    """Suggest each column's role and rank the riskiest quasi-identifier combinations.

    No privacy guarantee: a measurement of the raw data, for the custodian.

    Parameters
    ----------
    df : pandas.DataFrame
        The raw table (not modified).
    max_rows : int, default 5000
        Values are checked (text, addresses, personal data, dates) on at most this many
        evenly spaced rows; distinct values and uniqueness count every row.
    scan_size : int, default 3
        Largest combination of suggested quasi-identifiers scanned.
    time_limit : float or None, default 5
        Seconds the combination scan may take (it returns the sizes it completed).

    Returns
    -------
    RoleSuggestions

    Examples
    --------
    >>> frame = pd.DataFrame({"id": range(100), "age": [20, 30] * 50, "y": [0, 1] * 50})
    >>> [(c.column, c.role) for c in suggest_roles(frame).columns]
    [('id', 'identifier'), ('age', 'quasi_identifier'), ('y', 'sensitive')]
    """
    if not isinstance(df, pd.DataFrame):
        raise DataTypeError(f"df: must be a pandas DataFrame, got {type(df).__name__}")
    for name, value in (("max_rows", max_rows), ("scan_size", scan_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ParameterError(f"{name}: must be an integer >= 1, got {value!r}")
    step = max(1, len(df) // max_rows)
    sample = df.iloc[::step]
    texts: list[Hashable] = [c for c in df.columns if _is_text(df[c])]
    facts = _TextFacts(
        _pii_shares(sample, texts),
        address_shares(sample, texts),
        zero_padded_columns(df, texts),
        _text_shapes(sample, texts),
    )
    columns: list[ColumnRole] = []
    for name in df.columns:
        series = df[name]
        counts = _counts(series)
        kind, reason, evidence = _classify(name, series, sample[name], facts, counts)
        distinct, uniqueness = counts.with_missing, counts.uniqueness
        role: Literal["identifier", "quasi_identifier", "sensitive"] = (
            "identifier"
            if kind in ("identifier", "free-text")
            else "sensitive"
            if kind == "sensitive"
            else "quasi_identifier"
        )
        numeric = bool(pd.api.types.is_numeric_dtype(series.dtype))
        columns.append(
            ColumnRole(name, role, kind, reason, evidence, distinct, uniqueness, numeric)
        )
    qis = [c.column for c in columns if c.kind in ("quasi-identifier", "date")]
    combinations = _combinations(df, qis, scan_size, time_limit)
    return RoleSuggestions(tuple(columns), tuple(_pairs(columns)), combinations)


def _combinations(
    df: pd.DataFrame, qis: Sequence[Hashable], size: int, time_limit: float | None
) -> pd.DataFrame:
    if not qis:
        return pd.DataFrame(columns=["n_qis", "n_classes", "unique_rate", "mean_risk", "max_risk"])
    import warnings

    with warnings.catch_warnings():
        # A scan cut short by the time limit says so in its attrs; the suggestion
        # reports what it completed.
        warnings.simplefilter("ignore")
        scanned = qi_scan(df, list(qis), max_size=min(size, len(qis)), time_limit=time_limit)
    order = np.lexsort((-scanned["n_qis"].to_numpy(), -scanned["unique_rate"].to_numpy()))
    return scanned.iloc[order]
