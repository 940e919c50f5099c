"""What a custodian learns about a table when it arrives: profile, sample, risk guidance.

:func:`profile_csv` reads a CSV by streaming, a block of rows at a time, so a file of
any size is profiled in bounded memory: it counts the rows, and per column the missing
values and the type the values take (``integer``, ``float``, ``text`` or ``empty``).
While it streams it keeps a uniform random sample of at most ``sample_size`` rows (each
row gets a key from the random stream and the rows with the smallest keys are kept, so
every subset of that size is equally likely whatever the file's order).

:func:`risk_guidance` looks at that sample with :func:`veil.risk.suggest_roles`: the
columns that identify a record by themselves (near-unique values, identifier names,
addresses), free text holding personal data, latitude/longitude pairs, and the columns
an attacker could know and link on (suggested quasi-identifiers, dates among them); then
the re-identification risk of those together (:func:`veil.risk.summary`) and the
riskiest of their small combinations.

Everything here is computed from the raw records and is confidential to the custodian:
none of it is a public domain or bound (a plan's bounds and domains must still come from
public knowledge), and none of it goes into a release.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np
import pandas as pd

from veil.errors import ParameterError
from veil.formats import space_aligned, space_aligned_refusal
from veil.risk import suggest_roles, summary
from veil.rng import RngLike, resolve_rng

__all__ = [
    "ColumnProfile",
    "Profile",
    "RiskGuidance",
    "profile_csv",
    "read_header",
    "risk_guidance",
]

Source = str | os.PathLike[str] | Callable[[], IO[bytes]]
"""A CSV file's path, or a function opening it as a binary stream (read from the start)."""

_MAX_COMBINATIONS = 10


@dataclass
class ColumnProfile:
    """One column of a profile.

    Attributes
    ----------
    name : str
    type : {"integer", "float", "text", "empty"}
        ``integer`` when every value read is a whole number, ``float`` when every value
        is a number, ``text`` otherwise, ``empty`` when every value is missing.
    missing : int
        Missing (empty or ``NA``-like) cells.
    """

    name: str
    type: str = "empty"
    missing: int = 0
    _numbers: bool = field(default=True, repr=False)
    _integers: bool = field(default=True, repr=False)
    _values: int = field(default=0, repr=False)

    def _update(self, column: pd.Series) -> None:
        present = column.dropna()
        self.missing += int(len(column) - len(present))
        self._values += len(present)
        if not len(present) or not self._numbers:
            return
        numbers = pd.to_numeric(present, errors="coerce")
        if bool(numbers.isna().any()):
            self._numbers = self._integers = False
            return
        values = numbers.to_numpy(dtype=np.float64)
        if self._integers and not bool(np.all(np.isfinite(values) & (values == np.round(values)))):
            self._integers = False

    def _finish(self) -> None:
        if self._values == 0:
            self.type = "empty"
        elif not self._numbers:
            self.type = "text"
        else:
            self.type = "integer" if self._integers else "float"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"name": self.name, "type": self.type, "missing": self.missing}


@dataclass
class Profile:
    """A streamed profile of a table.

    Attributes
    ----------
    rows : int
        Records (lines after the header).
    columns : list of ColumnProfile
        In the file's order.
    sample : pandas.DataFrame
        A uniform random sample of at most ``sample_size`` rows (all rows when the
        file is smaller), numeric columns parsed as numbers; confidential.
    sampled : bool
        Whether ``sample`` is a strict subset of the rows.
    """

    rows: int
    columns: list[ColumnProfile]
    sample: pd.DataFrame = field(repr=False)
    sampled: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (without the sample)."""
        return {
            "rows": self.rows,
            "columns": [c.to_dict() for c in self.columns],
            "sample_rows": len(self.sample),
            "sampled": self.sampled,
        }


def _opener(source: Source) -> Callable[[], IO[bytes]]:
    if callable(source):
        return source
    path = os.fspath(source)
    return lambda: open(path, "rb")


def _space_aligned(open_file: Callable[[], IO[bytes]], encoding: str) -> int:
    """:func:`veil.formats.space_aligned` on the file's first 50 lines."""
    with open_file() as raw, io.TextIOWrapper(raw, encoding=encoding, errors="replace") as text:
        return space_aligned([line for line, _ in zip(text, range(50), strict=False)])


def _header(open_file: Callable[[], IO[bytes]], sep: str, encoding: str) -> list[str]:
    with open_file() as raw, io.TextIOWrapper(raw, encoding=encoding, newline="") as text:
        try:
            first = next(csv.reader(text, delimiter=sep), None)
        except UnicodeDecodeError:
            raise ParameterError(f"file: the header is not {encoding} text") from None
        except csv.Error as exc:
            raise ParameterError(f"file: the header is not valid CSV ({exc})") from None
    if not first or all(not c.strip() for c in first):
        raise ParameterError("file: is empty or has an empty header line; a CSV with a header")
    blank = [i + 1 for i, c in enumerate(first) if not c.strip()]
    if blank:
        raise ParameterError(f"file: header columns {blank} have no name; name every column")
    seen: set[str] = set()
    repeated = sorted({c for c in first if c in seen or seen.add(c)})  # type: ignore[func-returns-value]
    if repeated:
        raise ParameterError(f"file: the header repeats the column names {repeated}")
    return list(first)


def read_header(source: Source, *, sep: str = ",", encoding: str = "utf-8") -> list[str]:
    """The column names of a CSV file's header line, checked (reads only that line).

    Parameters
    ----------
    source : path or callable
        The file, or a function that opens it as a binary stream.
    sep, encoding : str
        CSV options.

    Returns
    -------
    list of str

    Raises
    ------
    ParameterError
        The file is empty, the header is not ``encoding`` text or not CSV, a column
        has no name, or a name is repeated.
    """
    return _header(_opener(source), sep, encoding)


def _typed(sample: pd.DataFrame, columns: list[ColumnProfile]) -> pd.DataFrame:
    out: dict[str, Any] = {}
    for col in columns:
        values = sample[col.name]
        if col.type in ("integer", "float"):
            numbers = pd.to_numeric(values)
            whole = col.type == "integer" and not bool(numbers.isna().any())
            out[col.name] = numbers.astype("int64" if whole else "float64")
        else:
            out[col.name] = values
    return pd.DataFrame(out, index=pd.RangeIndex(len(sample)))


def profile_csv(
    source: Source,
    *,
    rng: RngLike,
    sep: str = ",",
    encoding: str = "utf-8",
    sample_size: int = 50_000,
    chunk_rows: int = 100_000,
    progress: Callable[[int], None] | None = None,
) -> Profile:
    """Profile a CSV file by streaming it, keeping a uniform random sample.

    Parameters
    ----------
    source : path or callable
        The file, or a function that opens it as a binary stream (called twice: once
        for the header, once for the rows), such as a decrypting reader.
    rng : None, int or numpy.random.Generator
        Randomness for the sample (see :mod:`veil.rng`); None is secure.
    sep, encoding : str
        CSV options.
    sample_size : int, default 50 000
        Most rows kept in the sample (>= 1).
    chunk_rows : int, default 100 000
        Rows read at a time (>= 1): memory is bounded by about ``chunk_rows +
        sample_size`` rows of text.
    progress : callable, optional
        Called with the number of records read so far after each block of rows.

    Returns
    -------
    Profile

    Raises
    ------
    ParameterError
        The file is empty, has no or a repeated column name, is not ``encoding`` text,
        or a line has another number of fields than the header (the message gives the
        line), or an option is out of range.
    """
    for name, value in (("sample_size", sample_size), ("chunk_rows", chunk_rows)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ParameterError(f"{name}: must be an integer >= 1, got {value!r}")
    generator = resolve_rng(rng)
    open_file = _opener(source)
    names = _header(open_file, sep, encoding)
    if len(names) == 1 and (width := _space_aligned(open_file, encoding)):
        raise ParameterError(f"file: {space_aligned_refusal(width)}")
    columns = [ColumnProfile(n) for n in names]
    rows = 0
    kept: pd.DataFrame | None = None
    kept_keys = np.empty(0)
    with open_file() as raw:
        try:
            reader = pd.read_csv(
                raw,
                sep=sep,
                encoding=encoding,
                dtype=str,
                chunksize=chunk_rows,
                header=0,
                names=names,
                on_bad_lines="error",
                engine="c",
            )
            for chunk in reader:
                for col in columns:
                    col._update(chunk[col.name])
                keys = generator.random(len(chunk))
                chunk.index = pd.RangeIndex(rows, rows + len(chunk))
                rows += len(chunk)
                if kept is None:
                    kept, kept_keys = chunk, keys
                else:
                    kept = pd.concat([kept, chunk])
                    kept_keys = np.concatenate([kept_keys, keys])
                if len(kept) > sample_size:
                    order = np.argpartition(kept_keys, sample_size - 1)[:sample_size]
                    kept, kept_keys = kept.iloc[order], kept_keys[order]
                if progress is not None:
                    progress(rows)
        except pd.errors.ParserError as exc:
            raise ParameterError(f"file: not a valid CSV table ({str(exc).strip()})") from None
        except UnicodeDecodeError:
            raise ParameterError(f"file: is not {encoding} text") from None
    for col in columns:
        col._finish()
    if kept is None:
        kept = pd.DataFrame({n: pd.Series(dtype=object) for n in names})
    sample = _typed(kept.sort_index().reset_index(drop=True), columns)
    return Profile(rows, columns, sample, sampled=rows > len(sample))


@dataclass(frozen=True)
class RiskGuidance:
    """Suggested roles of a table's columns, and the risk of its quasi-identifiers.

    Attributes
    ----------
    identifiers : list of dict
        ``column``, ``kind`` (``identifier`` or ``free-text``), ``reason`` and
        ``uniqueness`` (share of records whose value no other record holds) of each
        column that identifies records by itself or holds personal data in text.
    quasi_identifiers : list of str
        Suggested quasi-identifiers: facts an attacker may know (dates included).
    locations : list of dict
        ``latitude`` and ``longitude`` column pairs.
    roles : list of dict
        Every column's ``column``, suggested ``role`` (identifier, quasi_identifier or
        sensitive), ``kind`` and ``reason``, in the file's order.
    summary : dict or None
        :func:`veil.risk.summary` of the suggested quasi-identifiers together.
    combinations : list of dict
        The riskiest combinations of up to three of them (at most 10), most records
        singled out first.
    sample_rows : int
        Records the figures were measured on.
    sampled : bool
        Whether those were a sample of the table (figures are then estimates).
    scanned : dict
        How far the combination scan went: ``complete``, and ``scanned`` of ``total``
        combinations when its time limit stopped it (the others were not measured).
    """

    identifiers: list[dict[str, Any]]
    quasi_identifiers: list[str]
    locations: list[dict[str, str]]
    roles: list[dict[str, str]]
    summary: dict[str, Any] | None
    combinations: list[dict[str, Any]]
    sample_rows: int
    sampled: bool
    scanned: dict[str, Any] = field(default_factory=lambda: {"complete": True})

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dict(self.__dict__)


def risk_guidance(profile: Profile, *, time_limit: float = 10.0) -> RiskGuidance:
    """Suggested identifiers, quasi-identifiers and locations of a profiled table, and risk.

    A heuristic for the custodian, who decides the roles (see
    :func:`veil.risk.suggest_roles`): a column not named here may still identify
    people, and a suggested one may be public knowledge. No privacy guarantee: a
    measurement of the raw sample, confidential to the custodian.

    Parameters
    ----------
    profile : Profile
        From :func:`profile_csv`.
    time_limit : float, default 10
        Seconds the combination scan may take.

    Returns
    -------
    RiskGuidance
    """
    sample = profile.sample
    if len(sample) == 0:
        return RiskGuidance([], [], [], [], None, [], 0, profile.sampled)
    suggested = suggest_roles(sample, time_limit=time_limit)
    identifiers = [
        {
            "column": str(c.column),
            "kind": c.kind,
            "reason": c.reason,
            "uniqueness": round(c.uniqueness, 4),
        }
        for c in suggested.columns
        if c.role == "identifier"
    ]
    roles = [
        {"column": str(c.column), "role": c.role, "kind": c.kind, "reason": c.reason}
        for c in suggested.columns
    ]
    locations = [{"latitude": str(a), "longitude": str(b)} for a, b in suggested.locations]
    qis = [str(c) for c in suggested.quasi_identifiers]
    if not qis:
        return RiskGuidance(
            identifiers, [], locations, roles, None, [], len(sample), profile.sampled
        )
    risk = summary(sample, qis)
    top = suggested.combinations.head(_MAX_COMBINATIONS).reset_index()
    combinations = [
        {str(k): (str(v) if k == "combination" else float(v)) for k, v in entry.items()}
        for entry in top.to_dict("records")
    ]
    return RiskGuidance(
        identifiers,
        qis,
        locations,
        roles,
        dataclasses.asdict(risk),
        combinations,
        len(sample),
        profile.sampled,
        dict(suggested.combinations.attrs.get("veil.qi_scan", {"complete": True})),
    )
