"""Reading coordinate columns into metres and writing masked ones back.

The projection policy of every mask lives here: a public projection by default, one
chosen from the data only on request (warned and recorded in the output's
``attrs["veil.leaks"]``), and the region check with its ``outside`` policy.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from veil.errors import (
    ColumnError,
    DataTypeError,
    DomainError,
    MissingValueError,
    ParameterError,
    PrivacyLeakWarning,
)
from veil.frames import output_frame, record_cost, record_masking
from veil.geo.projection import (
    LocalProjection,
    check_coordinates,
    local_projection,
)
from veil.mechanisms import PrivacyCost, PrivacyLedger

LEAKS_ATTR = "veil.leaks"
"""Key of ``DataFrame.attrs`` listing what a step derived from the private data.

Each entry is a dict with ``scope`` (the columns), ``leak`` (what was derived, e.g.
``"projection chosen from the data"``) and ``detail`` (why it matters).
"""

ProjectionArg = LocalProjection | str | None
# Strings that ask for a projection chosen from the data: "data", and the legacy names
# of local_projection's methods.
_DATA_METHODS = {"data": "auto", "auto": "auto", "utm": "utm", "aeqd": "aeqd"}
_NO_PROJECTION = (
    "projection: a mask needs a public projection, independent of the records: "
    "projection_at(lat, lon) of a public centre, projection_for_region(south, west, "
    "north, east) of a public box, or projection_for_crs('EPSG:...'); or "
    "projection='data' to choose it from the records (a leak, warned and recorded)"
)


@dataclass(frozen=True)
class Points:
    """Projected coordinates of the rows that have both coordinates."""

    x: np.ndarray
    y: np.ndarray
    present: np.ndarray  # boolean per row: both coordinates present (and not dropped)
    projection: LocalProjection
    dropped: np.ndarray | None = None  # boolean per row: outside the region, dropped
    leaks: list[dict[str, str]] = field(default_factory=list)

    @property
    def kept(self) -> np.ndarray:
        """Boolean per input row: the row is in the output."""
        if self.dropped is None:
            return np.ones(self.present.shape, dtype=bool)
        return np.asarray(~self.dropped)


def _column(df: pd.DataFrame, name: Any) -> np.ndarray:
    if not isinstance(df, pd.DataFrame):
        raise DataTypeError(f"df: expected a pandas DataFrame, got {type(df).__name__}")
    if name not in df.columns:
        raise ColumnError(f"column: {name!r} is not in the dataframe")
    series = df[name]
    if not pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
        raise DataTypeError(f"column {name!r}: coordinates must be numeric, got {series.dtype}")
    if series.dtype == np.float64:
        # NaN already marks missing values: the column's own array, read, never written.
        return np.asarray(series.to_numpy(), dtype=np.float64)
    return np.asarray(series.to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)


def _resolve(projection: Any, lat: np.ndarray, lon: np.ndarray, public: bool) -> LocalProjection:
    if isinstance(projection, LocalProjection):
        return projection
    if projection is None:
        if public:
            raise ParameterError(_NO_PROJECTION)
        projection = "auto"
    if not isinstance(projection, str) or projection not in _DATA_METHODS:
        raise ParameterError(
            f"projection: must be a LocalProjection (projection_at, projection_for_region, "
            f"projection_for_crs) or 'data' ('auto', 'utm', 'aeqd' choose from the data "
            f"too), got {projection!r}"
        )
    if lat.size == 0:
        return LocalProjection("aeqd", "+proj=aeqd +datum=WGS84 +units=m", 0.0, 0.0, from_data=True)
    return local_projection(lat, lon, method=_DATA_METHODS[projection])  # type: ignore[arg-type]


MAX_OUTSIDE = 0.2
"""Default largest share of the records ``outside="drop"`` may drop (20 %).

A centre with a sign typo (``[40.758, 73.9855]`` for New York) puts every point outside
the projection's region: dropping them would empty the release without an error."""


def _share(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ParameterError(f"{name}: must be a share in [0, 1], got {value!r}")
    share = float(value)
    if not 0.0 <= share <= 1.0:
        raise ParameterError(f"{name}: must be a share in [0, 1], got {value!r}")
    return share


def check_outside_share(
    dropped: int, rows: int, limit: float, where: str, projection: LocalProjection
) -> None:
    """Refuse dropping more than ``limit`` of ``rows`` as outside ``projection``'s region.

    Raises
    ------
    DomainError
        ``dropped / rows > limit``: the message names the projection (its centre), the
        count and the share, and the two ways out.
    """
    if rows == 0 or dropped / rows <= limit:
        return
    raise DomainError(
        f"{where}: {dropped} of {rows} records ({dropped / rows:.0%}) lie outside the region "
        f"of the projection {projection.describe()} and would be dropped, more than "
        f"max_outside {limit:g}; check the centre (a sign or a swapped latitude and "
        "longitude empties a release), or set max_outside to the largest share the "
        "release may lose"
    )


def read_points(
    df: pd.DataFrame,
    lat: Any,
    lon: Any,
    *,
    missing: str,
    projection: ProjectionArg,
    outside: str | None = "error",
    max_outside: float = MAX_OUTSIDE,
    public: bool = True,
    stacklevel: int = 3,
) -> Points:
    """Project the coordinate columns to metres, applying the missing-value policy.

    Parameters
    ----------
    projection : LocalProjection, str or None
        See :data:`_NO_PROJECTION`; ``None`` is refused when ``public``.
    outside : {"error", "drop"} or None
        Policy for points beyond the projection's 0.1 % region; ``None`` skips the
        check (evaluation, not release).
    max_outside : float, default 0.2
        With ``outside="drop"``, the largest share of the rows that may be dropped
        (:func:`check_outside_share`).
    public : bool
        The caller releases the result: refuse ``None``, and warn and record a
        projection chosen from the data.
    """
    if missing not in ("error", "keep"):
        raise ParameterError(f"missing: must be 'error' or 'keep', got {missing!r}")
    if outside not in ("error", "drop", None):
        raise ParameterError(f"outside: must be 'error' or 'drop', got {outside!r}")
    limit = _share(max_outside, "max_outside")
    if lat == lon:
        raise ParameterError(
            f"lat, lon: both name the column {lat!r}; give the latitude and the longitude columns"
        )
    lat_values = _column(df, lat)
    lon_values = _column(df, lon)
    present = ~(np.isnan(lat_values) | np.isnan(lon_values))
    complete = bool(present.all())
    if not complete and missing == "error":
        raise MissingValueError(
            f"columns {lat!r}, {lon!r}: {int((~present).sum())} rows lack a coordinate; pass "
            "missing='keep' to leave them missing"
        )
    if complete:
        lat_present, lon_present = lat_values, lon_values
    else:
        lat_present, lon_present = lat_values[present], lon_values[present]
    check_coordinates(lat_present, lon_present, str(lat), str(lon))
    chosen = _resolve(projection, lat_present, lon_present, public)
    leaks: list[dict[str, str]] = []
    if chosen.from_data and public:
        warnings.warn(
            f"columns {lat!r}, {lon!r}: the projection ({chosen.method}) is chosen from the "
            "data, so every masked location depends on the other records; pass a public "
            "projection (projection_at, projection_for_region, projection_for_crs)",
            PrivacyLeakWarning,
            stacklevel=stacklevel,
        )
        leaks.append(
            {
                "scope": f"{lat}, {lon}",
                "leak": "projection chosen from the data",
                "detail": (
                    f"{chosen.method}: the planar system's centre or zone was computed from "
                    "the records, so each masked location depends on the others"
                ),
            }
        )
    if lat_present.size:
        x, y = chosen.forward(lat_present, lon_present)
    else:
        x = y = np.empty(0, dtype=np.float64)
    dropped = None
    if outside is not None and x.size:
        far, beyond_km = chosen.outside(lat_present, lon_present, x, y)
        if far.any():
            if outside == "error":
                raise DomainError(
                    f"columns {lat!r}, {lon!r}: {int(far.sum())} records lie outside the "
                    f"region where the projection {chosen.describe()} keeps distances within "
                    f"0.1 % (the farthest {beyond_km:,.0f} km beyond it); give a projection "
                    "for their region, or outside='drop' to leave them out of the output"
                )
            check_outside_share(
                int(far.sum()), present.size, limit, f"columns {lat!r}, {lon!r}", chosen
            )
            positions = np.flatnonzero(present)[far]
            dropped = np.zeros(present.shape, dtype=bool)
            dropped[positions] = True
            present = present & ~dropped
            x, y = x[~far], y[~far]
    return Points(x=x, y=y, present=present, projection=chosen, dropped=dropped, leaks=leaks)


def _inverse_present(points: Points, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Degrees per input row: NaN where a row is missing, dropped or suppressed (NaN x)."""
    lat_out = np.full(points.present.shape, np.nan)
    lon_out = np.full(points.present.shape, np.nan)
    if x.size:
        finite = np.isfinite(x) & np.isfinite(y)
        back_lat = np.full(x.shape, np.nan)
        back_lon = np.full(x.shape, np.nan)
        if finite.all():
            back_lat, back_lon = points.projection.inverse(x, y)
        elif finite.any():
            back_lat[finite], back_lon[finite] = points.projection.inverse(x[finite], y[finite])
        lat_out[points.present] = back_lat
        lon_out[points.present] = back_lon
    return lat_out, lon_out


def write_points(
    df: pd.DataFrame,
    lat: Any,
    lon: Any,
    points: Points,
    x: np.ndarray,
    y: np.ndarray,
    *,
    cost: PrivacyCost | None = None,
    ledger: PrivacyLedger | None = None,
    extra: dict[str, np.ndarray] | None = None,
    leaks: list[dict[str, str]] | None = None,
) -> pd.DataFrame:
    """A copy of ``df`` with the masked coordinates (and ``extra`` columns) written in.

    ``x``/``y`` hold one value per present row; NaN there marks a suppressed point,
    which is written as missing. Rows dropped as outside the projection's region are
    left out, and their number recorded in ``attrs["veil.masking"]``; the leaks of
    ``points`` (and ``leaks``) are appended to ``attrs["veil.leaks"]``.
    """
    # A sum is finite exactly when every term is (metres stay far below overflow).
    if x.size and bool(points.present.all()) and np.isfinite(np.sum(x) + np.sum(y)):
        lat_out, lon_out = points.projection.inverse(x, y)
    else:
        lat_out, lon_out = _inverse_present(points, x, y)
    kept = points.kept
    dropping = not kept.all()
    # take, not df[kept]: pandas 2 marks a boolean selection as a copy of a slice and
    # warns when its columns are then set.
    out = df.take(np.flatnonzero(kept)) if dropping else output_frame(df)
    columns = {lat: lat_out, lon: lon_out}
    for name, values in (extra or {}).items():
        columns[name] = np.full(points.present.shape, np.nan)
        columns[name][points.present] = values
    for name, column in columns.items():
        # A Series over the new arrays: setting a bare array would copy it.
        out[name] = pd.Series(column[kept] if dropping else column, index=out.index, copy=False)
    if cost is not None:
        record_cost(out, df, cost, ledger)
    if dropping:
        record_masking(
            out,
            out,
            [
                {
                    "method": "outside the projection's region: dropped",
                    "columns": [str(lat), str(lon)],
                    "projection": points.projection.describe(),
                    "dropped": int((~kept).sum()),
                }
            ],
        )
    new_leaks = [*points.leaks, *(leaks or [])]
    if new_leaks:
        history = [*out.attrs.get(LEAKS_ATTR, []), *new_leaks]
        out.attrs = {**out.attrs, LEAKS_ATTR: history}
    return out


MAX_METRES = 20_000_000.0
"""Largest length a mask parameter may take: half the Earth's circumference, 20,000 km."""


def check_metres(value: Any, name: str, *, zero: bool = False) -> float:
    """``value`` as a float after checking it is a finite length in metres.

    Lengths beyond :data:`MAX_METRES` cannot be represented by any local projection
    (``cell_m=1e308`` gave infinite coordinates); zero is allowed only with ``zero``.
    """
    low = "[0" if zero else "(0"
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ParameterError(
            f"{name}: must be a number of metres in {low}, {MAX_METRES:,.0f}], got {value!r}"
        )
    number = float(value)
    if not (np.isfinite(number) and (number >= 0 if zero else number > 0)) or number > MAX_METRES:
        raise ParameterError(
            f"{name}: must be a number of metres in {low}, {MAX_METRES:,.0f}] (20,000 km, "
            f"what a projection can represent), got {value!r}"
        )
    return number
