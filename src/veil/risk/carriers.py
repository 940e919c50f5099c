"""Columns that carry the information a treatment protects, left untouched beside it.

Masking two coordinate columns protects nothing when the same point is also in a text
column (``"(41.88, -87.63)"``), in a second coordinate pair (State Plane ``X``/``Y``), or
can be looked up from a record number or a street address kept next to it. A release plan
refuses columns it does not name; a one-off command must know which of the columns it
would copy are such *carriers*, to refuse or to warn naming them.

:func:`find_carriers` looks at every column that is not treated and reports the ones that
carry the treated information, or identify the record directly:

``"coordinates"``
    A numeric column that is a monotone function of a treated latitude or longitude
    (a projected coordinate, the same value in other units): Spearman's rank correlation
    with it (the evidence) is at least ``0.98`` in absolute value.
``"coordinate-text"``
    A text column holding the treated coordinates as numbers (``"(41.88, -87.63)"``,
    ``"POINT (-87.63 41.88)"``): the evidence is the share of rows whose two numbers
    equal the treated latitude and longitude to within 1e-6 degree (at least 0.5).
``"same-numbers"``
    A numeric column that is a monotone function of a treated numeric column (age and
    birth year), or a text column whose first number equals it: rank correlation, or the
    share of equal rows.
``"same-categories"``
    A column that gives a treated categorical column away (a code and its label): the
    evidence is Goodman and Kruskal's lambda of the treated column given it (at least
    0.95: knowing it removes 95 % of the errors of guessing the most frequent treated
    value), for a column with no more distinct values than the treated one has.
``"identifier"``
    An integer or text column whose non-missing values are (nearly) all distinct (share
    of distinct values >= 0.95, the evidence), or whose name says it is an identifier
    (``id``, ``uuid``, ``ssn``, ``record``, ``case number``, ``email``, ...; evidence
    the share of distinct values): it links each released row back to its source.
``"address"``
    Street addresses or blocks (``"012XX W MADISON ST"``): the share of values shaped
    like an address (at least 0.3), or the column's name (``address``, ``block``,
    ``street``); reported when a location or an identifier is treated.
``"pii-text"``
    Free text holding e-mail addresses, phone numbers, card numbers, IBANs or IP
    addresses, found by :func:`veil.masking.scan_pii` with its pattern engine: the share
    of rows with a finding (at least 0.01).

The checks are vectorized; those of values run on at most ``max_rows`` evenly spaced
rows, the count of distinct values on every row. They are a
safety net, not a proof: a column they do not name may still carry the information.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.errors import ColumnError, ParameterError

__all__ = ["Carrier", "CarrierReason", "find_carriers"]

CarrierReason = Literal[
    "coordinates",
    "coordinate-text",
    "same-numbers",
    "same-categories",
    "identifier",
    "address",
    "pii-text",
]

_RANK_CORRELATION = 0.98
_COORDINATE_SHARE = 0.5
_SAME_SHARE = 0.5
_CATEGORY_LAMBDA = 0.95
_UNIQUE_SHARE = 0.95
_ADDRESS_SHARE = 0.3
_PII_SHARE = 0.01
_DEGREE_TOLERANCE = 1e-6
# Fewer non-missing values than this say nothing about uniqueness.
_MIN_VALUES = 20

_NUMBER = r"[-+]?\d+(?:\.\d+)?"
_TWO_NUMBERS = rf"({_NUMBER})[^\d\-+]+({_NUMBER})"
_ID_NAME = re.compile(
    r"(?:^|[^a-z])(?:id|ids|uuid|guid|ssn|nhs|mrn|record|case ?(?:no|number|id)|"
    r"e-?mail|phone|passport|licen[cs]e)(?:$|[^a-z])",
    re.IGNORECASE,
)
_ID_NAME_JOINED = re.compile(r"(?:_id|Id|ID)$")
_ADDRESS_NAME = re.compile(r"address|block|street|addr\b", re.IGNORECASE)
_ADDRESS_VALUE = (
    r"^\s*\d[0-9X]*[A-Z]?\s+(?:[NSEW]\.?\s+)?(?:[\w.'-]+\s+)*?"
    r"(?:ST|STREET|AVE?|AVENUE|RD|ROAD|BLVD|DR|DRIVE|PL|PLACE|CT|COURT|LN|LANE|WAY|PKWY|"
    r"HWY|TER|TERRACE|SQ|CIR|PLAZA|ROW|CLOSE|CRES)\b"
)


@dataclasses.dataclass(frozen=True)
class Carrier:
    """One column that carries treated information, and why.

    Attributes
    ----------
    column : Hashable
        The column, not among the treated ones.
    reason : str
        One of the reasons of the module documentation (``"coordinates"``,
        ``"coordinate-text"``, ``"same-numbers"``, ``"same-categories"``,
        ``"identifier"``, ``"address"``, ``"pii-text"``).
    evidence : float
        The figure behind the reason, in [0, 1]: a rank correlation, Goodman and
        Kruskal's lambda, or a share of rows or of values.
    related : tuple of Hashable
        The treated columns whose information it carries (empty for an identifier,
        address or personal data in text, which identify the record by themselves).
    """

    column: Hashable
    reason: CarrierReason
    evidence: float
    related: tuple[Hashable, ...] = ()

    def describe(self) -> str:
        """One phrase: ``'Location' (coordinate-text: 100% of rows hold Latitude, ...)``."""
        what = {
            "coordinates": "rank correlation {e:.3f} with {r}",
            "coordinate-text": "{p} of rows hold the values of {r}",
            "same-numbers": "{e:.3f} with {r}",
            "same-categories": "Goodman-Kruskal lambda {e:.3f} for {r}",
            "identifier": "{p} of values distinct",
            "address": "{p} of values are addresses",
            "pii-text": "{p} of rows hold personal data",
        }[self.reason]
        related = ", ".join(str(c) for c in self.related)
        detail = what.format(e=self.evidence, p=f"{self.evidence:.0%}", r=related)
        return f"{self.column!s} ({self.reason}: {detail})"


def _rows(frame: pd.DataFrame, max_rows: int) -> pd.DataFrame:
    if len(frame) <= max_rows:
        return frame
    # Evenly spaced rows: deterministic, and not only the head of a sorted file.
    return frame.iloc[np.linspace(0, len(frame) - 1, max_rows).astype(np.int64)]


def _is_text(series: pd.Series) -> bool:
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return not pd.api.types.is_numeric_dtype(dtype.categories.dtype)
    return pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)


def _is_number(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(
        series.dtype
    )


def _text(series: pd.Series) -> pd.Series:
    """Non-missing values as strings (a column of mixed objects included)."""
    values = series.dropna()
    return values.astype(str) if len(values) else values.astype(object)


def _rank_correlation(a: pd.Series, b: pd.Series) -> float:
    both = pd.concat([a.astype("float64"), b.astype("float64")], axis=1).dropna()
    if len(both) < 3:
        return 0.0
    ranks = both.rank()
    x, y = ranks.iloc[:, 0].to_numpy(), ranks.iloc[:, 1].to_numpy()
    if x.std() == 0.0 or y.std() == 0.0:
        return 0.0
    return float(np.corrcoef(x, y)[0, 1])


def _numbers(frame: pd.DataFrame, column: Hashable) -> pd.Series | None:
    series = frame[column]
    if _is_number(series):
        return series.astype("float64")
    if _is_text(series):
        parsed = pd.to_numeric(series.astype(object), errors="coerce").astype("float64")
        if parsed.notna().sum() >= max(3, 0.9 * series.notna().sum()):
            return parsed
    return None


def _coordinate_share(text: pd.Series, lat: pd.Series, lon: pd.Series) -> float:
    if not len(text):
        return 0.0
    pair = text.str.extract(_TWO_NUMBERS)
    a = pd.to_numeric(pair[0], errors="coerce").to_numpy(dtype=np.float64)
    b = pd.to_numeric(pair[1], errors="coerce").to_numpy(dtype=np.float64)
    la = lat.reindex(text.index).to_numpy(dtype=np.float64)
    lo = lon.reindex(text.index).to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore"):
        same = (np.abs(a - la) <= _DEGREE_TOLERANCE) & (np.abs(b - lo) <= _DEGREE_TOLERANCE)
        swapped = (np.abs(a - lo) <= _DEGREE_TOLERANCE) & (np.abs(b - la) <= _DEGREE_TOLERANCE)
    return float(np.mean(same | swapped))


def _first_number_share(text: pd.Series, values: pd.Series) -> float:
    if not len(text):
        return 0.0
    first = pd.to_numeric(text.str.extract(f"({_NUMBER})")[0], errors="coerce")
    target = values.reindex(text.index).to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore"):
        equal = np.abs(first.to_numpy(dtype=np.float64) - target) <= 1e-9 * np.maximum(
            1.0, np.abs(target)
        )
    return float(np.mean(equal))


def _category_lambda(treated: pd.Series, other: pd.Series) -> float:
    """Goodman and Kruskal's lambda: how much knowing ``other`` improves guessing ``treated``.

    ``(hits - base) / (n - base)``, where ``hits`` counts rows whose treated value is the
    most frequent one for their ``other`` value and ``base`` the rows of the most frequent
    treated value overall (1: ``other`` gives the treated value away; 0: no help).
    """
    both = pd.DataFrame({"t": treated.astype(object), "o": other.astype(object)}).dropna()
    n = len(both)
    if n < _MIN_VALUES:
        return 0.0
    if both["o"].nunique() > both["t"].nunique() or both["o"].nunique() < 2:
        return 0.0
    pairs = both.groupby(["o", "t"], sort=False, observed=True).size()
    hits = float(pairs.groupby(level=0, sort=False).max().sum())
    base = float(both["t"].value_counts().iloc[0])
    return 0.0 if base >= n else (hits - base) / (n - base)


def _distinct_share(series: pd.Series) -> float:
    values = series.dropna()
    return float(values.nunique() / len(values)) if len(values) else 0.0


def _identifier(
    series: pd.Series, name: Hashable, counted: tuple[int, int] | None = None
) -> float | None:
    """The share of distinct values when ``series`` looks like an identifier, else None.

    ``counted`` is ``(distinct, present)``, the non-missing values' distinct count and
    count, when the caller has them already.
    """
    if counted is None:
        values = series.dropna()
        counted = (int(values.nunique()), len(values))
    distinct, present = counted
    share = distinct / present if present else 0.0
    label = str(name)
    named = bool(_ID_NAME.search(label) or _ID_NAME_JOINED.search(label))
    countable = pd.api.types.is_integer_dtype(series.dtype) or _is_text(series)
    if countable and present >= _MIN_VALUES and share >= _UNIQUE_SHARE:
        return share
    if named and share >= 0.5:
        return share
    return None


def stacked_text(
    frame: pd.DataFrame, columns: Sequence[Hashable]
) -> tuple[pd.Series, npt.NDArray[np.intp]]:
    """The non-missing values of ``columns`` as one text Series, and each one's column.

    A pattern is then matched once over every column's values, not once per column:
    pandas' per-call cost of a regular expression (parsing it, a pass into Arrow) would
    otherwise make a wide table's checks cost per column rather than per cell.
    """
    parts = [_text(frame[c]) for c in columns]
    codes = np.repeat(np.arange(len(parts), dtype=np.intp), [len(p) for p in parts])
    values = pd.concat([p.astype(object) for p in parts], ignore_index=True) if parts else None
    if values is None or not len(values):
        return pd.Series([], dtype=object), codes
    return values.astype(str), codes


def per_column_mean(
    hits: pd.Series, codes: npt.NDArray[np.intp], n_columns: int
) -> npt.NDArray[np.float64]:
    """The share of each column's values where ``hits`` is true (NaN for no value)."""
    flags = hits.to_numpy(dtype=bool, na_value=False)
    counts = np.bincount(codes, minlength=n_columns).astype(np.float64)
    found = np.bincount(codes, weights=flags, minlength=n_columns)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(found / counts, dtype=np.float64)


def address_shares(frame: pd.DataFrame, columns: Sequence[Hashable]) -> dict[Hashable, float]:
    """Per text column, the share of its values shaped like a street address."""
    values, codes = stacked_text(frame, columns)
    if not len(values):
        return {}
    hits = values.str.contains(_ADDRESS_VALUE, case=False, regex=True)
    means = per_column_mean(hits, codes, len(columns))
    return {c: float(m) for c, m in zip(columns, means, strict=True) if np.isfinite(m)}


def _address_share(series: pd.Series, name: Hashable, share: float | None) -> float | None:
    """The address evidence of a column, from its share of address-shaped values."""
    if share is None:
        return None
    if share >= _ADDRESS_SHARE or (_ADDRESS_NAME.search(str(name)) and share > 0.0):
        return share
    if _ADDRESS_NAME.search(str(name)) and _distinct_share(series) >= 0.1:
        return _distinct_share(series)
    return None


def _pii_shares(frame: pd.DataFrame, columns: list[Hashable]) -> dict[Hashable, float]:
    if not columns:
        return {}
    from veil.masking import scan_pii

    report = scan_pii(frame, columns, engine="patterns", n_examples=0)
    return {c: float(v) for c, v in report.share_with_pii.items()}


def _check(frame: pd.DataFrame, columns: Sequence[Hashable], parameter: str) -> list[Hashable]:
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        raise ColumnError(
            f"{parameter}: {', '.join(repr(c) for c in absent)} not in the frame's columns"
        )
    return list(columns)


def find_carriers(
    frame: pd.DataFrame,
    *,
    location: tuple[Hashable, Hashable] | None = None,
    numeric: Sequence[Hashable] = (),
    categorical: Sequence[Hashable] = (),
    identifiers: Sequence[Hashable] = (),
    among: Sequence[Hashable] | None = None,
    max_rows: int = 5_000,
) -> tuple[Carrier, ...]:
    """The columns, other than the treated ones, that carry the treated information.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table before treatment; not modified.
    location : (lat, lon), optional
        A treated latitude/longitude pair (degrees).
    numeric : sequence of column labels
        Treated numeric columns (noised, generalized).
    categorical : sequence of column labels
        Treated categorical columns (randomized response, generalized).
    identifiers : sequence of column labels
        Treated direct identifiers (pseudonymized, encrypted, redacted).
    among : sequence of column labels, optional
        The columns to look at (default: every column that is not treated). With
        ``among`` nothing needs to be treated: the columns are then only checked for
        what identifies a record by itself (an identifier, personal data in text).
    max_rows : int, default 5000
        The checks of values look at most at this many evenly spaced rows (>= 1); the
        share of distinct values of an identifier is counted over every row.

    Returns
    -------
    tuple of Carrier
        One entry per carrier column (its strongest reason), in the frame's column order.

    Raises
    ------
    veil.errors.ColumnError
        A treated column is not in ``frame``.
    veil.errors.ParameterError
        ``max_rows`` is not an integer >= 1, or no column is treated and ``among`` is
        not given.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({
    ...     "lat": [41.88, 41.75, 41.90], "lon": [-87.63, -87.55, -87.65],
    ...     "where": ["(41.88, -87.63)", "(41.75, -87.55)", "(41.9, -87.65)"],
    ...     "kind": ["theft", "theft", "battery"]})
    >>> [c.describe() for c in find_carriers(frame, location=("lat", "lon"))]
    ['where (coordinate-text: 100% of rows hold the values of lat, lon)']
    """
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise ParameterError(f"max_rows: must be an integer >= 1, got {max_rows!r}")
    loc = _check(frame, list(location or ()), "location")
    nums = _check(frame, numeric, "numeric")
    cats = _check(frame, categorical, "categorical")
    ids = _check(frame, identifiers, "identifiers")
    treated = [*loc, *nums, *cats, *ids]
    if not treated and among is None:
        raise ParameterError(
            "find_carriers: name the treated columns (location, numeric, categorical or "
            "identifiers)"
        )
    rows = _rows(frame, max_rows)
    looked_at = frame.columns if among is None else _check(frame, among, "among")
    others: list[Hashable] = [c for c in looked_at if c not in set(treated)]
    found: dict[Hashable, Carrier] = {}

    def note(carrier: Carrier) -> None:
        if carrier.column not in found:
            found[carrier.column] = carrier

    numbers = {c: _numbers(rows, c) for c in treated}
    addresses = (
        address_shares(rows, [c for c in others if _is_text(rows[c])]) if (loc or ids) else {}
    )
    for column in others:
        series = rows[column]
        as_number = series.astype("float64") if _is_number(series) else None
        text = _text(series) if _is_text(series) else None
        if loc:
            lat_values, lon_values = numbers[loc[0]], numbers[loc[1]]
            if lat_values is not None and lon_values is not None:
                if text is not None:
                    share = _coordinate_share(text, lat_values, lon_values)
                    if share >= _COORDINATE_SHARE:
                        note(Carrier(column, "coordinate-text", share, tuple(loc)))
                if as_number is not None:
                    best = max(
                        (
                            (abs(_rank_correlation(as_number, v)), c)
                            for c, v in ((loc[0], lat_values), (loc[1], lon_values))
                        ),
                        key=lambda item: item[0],
                    )
                    if best[0] >= _RANK_CORRELATION:
                        note(Carrier(column, "coordinates", best[0], (best[1],)))
        for name in nums:
            values = numbers[name]
            if values is None:
                continue
            if as_number is not None:
                rho = abs(_rank_correlation(as_number, values))
                if rho >= _RANK_CORRELATION:
                    note(Carrier(column, "same-numbers", rho, (name,)))
            elif text is not None:
                share = _first_number_share(text, values)
                if share >= _SAME_SHARE:
                    note(Carrier(column, "same-numbers", share, (name,)))
        for name in cats:
            share = _category_lambda(rows[name], series)
            if share >= _CATEGORY_LAMBDA:
                note(Carrier(column, "same-categories", share, (name,)))
        if text is not None and (loc or ids):
            address = _address_share(series, column, addresses.get(column))
            if address is not None:
                note(Carrier(column, "address", address))
        unique = _identifier(frame[column], column)
        if unique is not None:
            note(Carrier(column, "identifier", unique))
    text_columns: list[Hashable] = [c for c in others if c not in found and _is_text(rows[c])]
    for label, share in _pii_shares(rows, text_columns).items():
        if share >= _PII_SHARE:
            note(Carrier(label, "pii-text", share))
    return tuple(found[c] for c in others if c in found)
