"""What the attacks need to know about a release: its columns' roles and how it was made.

:class:`AttackSpec` describes the plan's columns (quasi-identifiers, sensitive columns,
columns released exactly, masked locations); it is a small typed description of its own, so
that :mod:`veil.attacks` does not depend on the release plan. :class:`Release` is a released
frame with what a custodian knows about it: which record each released row came from (for
the attacks that score a re-identification) and the public recodings an attacker can apply
to a target's true values to compare them with released ones (a generalization hierarchy, a
grid of cells).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from veil.errors import ColumnError, DataTypeError, ParameterError

__all__ = ["AttackSpec", "CellRecoder", "Location", "Recoder", "Release", "as_release"]

Recoder = Callable[[pd.Series], pd.Series]
"""Maps a column's true values to their released form (a generalization hierarchy)."""

CellRecoder = Callable[[pd.DataFrame], pd.DataFrame]
"""Maps a frame's true coordinates (its lat and lon columns) to their released cells."""


def _names(value: Any, field_name: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ParameterError(f"{field_name}: must be a list of column names, got {value!r}")
    names = tuple(value)
    for name in names:
        if not isinstance(name, str) or not name:
            raise ParameterError(
                f"{field_name}: column names must be non-empty strings, got {name!r}"
            )
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ParameterError(f"{field_name}: names column {name!r} twice")
        seen.add(name)
    return names


@dataclass(frozen=True)
class Location:
    """A masked location: its latitude and longitude columns, in degrees.

    Attributes
    ----------
    lat, lon : str
        The coordinate columns (the same names in the raw records and the release).
    """

    lat: str
    lon: str

    def __post_init__(self) -> None:
        for name, value in (("lat", self.lat), ("lon", self.lon)):
            if not isinstance(value, str) or not value:
                raise ParameterError(f"location.{name}: must be a column name, got {value!r}")
        if self.lat == self.lon:
            raise ParameterError(f"location: lat and lon are one column, {self.lat!r}")

    @property
    def name(self) -> str:
        """``"lat/lon"``, the location's name in results."""
        return f"{self.lat}/{self.lon}"


@dataclass(frozen=True)
class AttackSpec:
    """The roles of a release's columns, as the attacks read them.

    Attributes
    ----------
    quasi_identifiers : sequence of str
        Columns an attacker may know about a person from elsewhere (age, sex, postcode).
    sensitive : sequence of str
        Columns the attacker wants to learn; attribute inference attacks each one.
    exact : sequence of str
        Columns released unchanged (any role): an attacker who knows a target's value
        finds it verbatim in the release.
    locations : sequence of Location
        Masked locations, in the order given (the first is the one the issue's "nearest
        released point" means when only one is named).
    link_split : (sequence of str, sequence of str), optional
        The two sets of columns an attacker holds in two separate sources, for the
        linkability attack. By default the quasi-identifiers on one side and the other
        released columns (exact and sensitive) on the other, or, when either side would be
        empty, the quasi-identifiers split in two alternately.
    synthetic : bool, default False
        The release's rows are synthetic (drawn from a model), not the records themselves,
        so no released row belongs to anybody: the attacks that score a re-identification
        (location) do not apply.
    """

    quasi_identifiers: tuple[str, ...]
    sensitive: tuple[str, ...] = ()
    exact: tuple[str, ...] = ()
    locations: tuple[Location, ...] = ()
    link_split: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    synthetic: bool = False

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "quasi_identifiers", _names(self.quasi_identifiers, "quasi_identifiers"))
        set_(self, "sensitive", _names(self.sensitive, "sensitive"))
        set_(self, "exact", _names(self.exact, "exact"))
        both = set(self.quasi_identifiers) & set(self.sensitive)
        if both:
            raise ParameterError(
                f"sensitive: {sorted(both)} also listed as quasi-identifiers; a column is one or "
                "the other"
            )
        locations = tuple(self.locations) if isinstance(self.locations, Iterable) else None
        if locations is None or not all(isinstance(x, Location) for x in locations):
            raise ParameterError(f"locations: must be a list of Location, got {self.locations!r}")
        set_(self, "locations", locations)
        coordinates = [c for loc in locations for c in (loc.lat, loc.lon)]
        clash = set(coordinates) & set(self.tabular)
        if clash or len(set(coordinates)) != len(coordinates):
            raise ParameterError(
                f"locations: coordinate columns {sorted(clash) or coordinates} are named twice"
            )
        if self.link_split is not None:
            set_(self, "link_split", self._check_split(self.link_split))
        if not isinstance(self.synthetic, bool):
            raise ParameterError(f"synthetic: must be True or False, got {self.synthetic!r}")

    @staticmethod
    def _check_split(split: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if not isinstance(split, (tuple, list)) or len(split) != 2:
            raise ParameterError(f"link_split: must be two lists of columns, got {split!r}")
        first = _names(split[0], "link_split[0]")
        second = _names(split[1], "link_split[1]")
        if not first or not second:
            raise ParameterError("link_split: each side must name at least one column")
        if set(first) & set(second):
            raise ParameterError(
                f"link_split: {sorted(set(first) & set(second))} on both sides; an attacker's "
                "two sources share no column"
            )
        return first, second

    @property
    def tabular(self) -> tuple[str, ...]:
        """Quasi-identifiers, then exact and sensitive columns not already named."""
        out = list(self.quasi_identifiers)
        out += [c for c in (*self.exact, *self.sensitive) if c not in out]
        return tuple(out)

    @property
    def coordinates(self) -> tuple[str, ...]:
        """Every location's lat and lon columns."""
        return tuple(c for loc in self.locations for c in (loc.lat, loc.lon))

    def check(self, raw: pd.DataFrame, name: str = "raw") -> None:
        """Refuse a frame that lacks a column the spec names."""
        if not isinstance(raw, pd.DataFrame):
            raise DataTypeError(f"{name}: must be a pandas DataFrame, got {type(raw).__name__}")
        split = self.link_split or ((), ())
        for column in (*self.tabular, *self.coordinates, *split[0], *split[1]):
            if column not in raw.columns:
                raise ColumnError(f"{name}: has no column {column!r} (named in the attack spec)")


@dataclass(frozen=True)
class Release:
    """A released frame and what the custodian knows about how it was made.

    Attributes
    ----------
    frame : pandas.DataFrame
        The released rows.
    source : pandas.Index, optional
        For each released row, the index label of the raw record it came from. Needed by
        the attacks that score whether the attacker found the right record (location,
        intersection's singling out); absent for synthetic data, where no row is anybody's.
    recode : mapping of str to callable, optional
        For a column released in another form than the raw one (a generalization to
        intervals), the public function that maps a true value to its released form. An
        attacker who knows the hierarchy applies it to what they know of a target.
    cells : mapping of (lat, lon) to callable, optional
        For a location released as cells (a grid), the public function that maps a frame's
        true coordinates to the released cell's coordinates.
    """

    frame: pd.DataFrame
    source: pd.Index | None = None
    recode: Mapping[str, Recoder] = field(default_factory=dict)
    cells: Mapping[tuple[str, str], CellRecoder] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.frame, pd.DataFrame):
            raise DataTypeError(
                f"release: must be a pandas DataFrame, got {type(self.frame).__name__}"
            )
        if self.source is not None:
            source = pd.Index(self.source)
            if len(source) != len(self.frame):
                raise ParameterError(
                    f"release.source: has {len(source)} labels for {len(self.frame)} rows"
                )
            if not source.is_unique:
                raise ParameterError("release.source: names one record for two released rows")
            object.__setattr__(self, "source", source)
        for name, table in (("recode", self.recode), ("cells", self.cells)):
            if not isinstance(table, Mapping) or not all(callable(f) for f in table.values()):
                raise ParameterError(f"release.{name}: must map names to functions")

    def view(
        self, raw: pd.DataFrame, columns: Iterable[str], locations: Iterable[Location] = ()
    ) -> pd.DataFrame:
        """``raw``'s columns in the release's form, as an attacker who knows them would put them.

        Each column recoder is applied; a location of ``locations`` whose two columns are
        among ``columns`` and that has a cell recoder gets its cells. ``raw`` is not
        modified.
        """
        out: dict[str, pd.Series] = {}
        for column in columns:
            values = raw[column]
            recoder = self.recode.get(column)
            if recoder is not None:
                coded = recoder(values)
                if not isinstance(coded, pd.Series) or len(coded) != len(values):
                    raise ParameterError(
                        f"release.recode[{column!r}]: must return a Series of {len(values)} "
                        f"values, got {type(coded).__name__}"
                    )
                values = pd.Series(coded.to_numpy(), index=raw.index, name=column)
            out[column] = values
        for location in locations:
            if location.lat in out and location.lon in out:
                cells = self.cell_view(raw, location)
                if cells is not None:
                    out[location.lat] = pd.Series(cells[location.lat].to_numpy(), index=raw.index)
                    out[location.lon] = pd.Series(cells[location.lon].to_numpy(), index=raw.index)
        return pd.DataFrame(out, index=raw.index)

    def cell_view(self, raw: pd.DataFrame, location: Location) -> pd.DataFrame | None:
        """``raw``'s coordinates of ``location`` as released cells, or None without a recoder."""
        recoder = self.cells.get((location.lat, location.lon))
        if recoder is None:
            return None
        coded = recoder(raw[[location.lat, location.lon]].copy())
        if (
            not isinstance(coded, pd.DataFrame)
            or len(coded) != len(raw)
            or not {location.lat, location.lon} <= set(coded.columns)
        ):
            raise ParameterError(
                f"release.cells[{location.name!r}]: must return a frame of {len(raw)} rows with "
                f"columns {location.lat!r} and {location.lon!r}"
            )
        return coded


def as_release(value: pd.DataFrame | Release, name: str = "release") -> Release:
    """A :class:`Release` from a release or a bare frame (no source, no recoders)."""
    if isinstance(value, Release):
        return value
    if isinstance(value, pd.DataFrame):
        return Release(value)
    raise DataTypeError(
        f"{name}: must be a pandas DataFrame or a veil.attacks.Release, got {type(value).__name__}"
    )
