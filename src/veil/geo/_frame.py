"""Reading coordinate columns into metres and writing masked ones back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from veil.errors import ColumnError, DataTypeError, MissingValueError, ParameterError
from veil.frames import output_frame, record_cost
from veil.geo.projection import (
    LocalProjection,
    ProjectionMethod,
    check_coordinates,
    local_projection,
)
from veil.mechanisms import PrivacyCost, PrivacyLedger


@dataclass(frozen=True)
class Points:
    """Projected coordinates of the rows that have both coordinates."""

    x: np.ndarray
    y: np.ndarray
    present: np.ndarray  # boolean per row: both coordinates present
    projection: LocalProjection


def _column(df: pd.DataFrame, name: Any) -> np.ndarray:
    if not isinstance(df, pd.DataFrame):
        raise DataTypeError(f"df: expected a pandas DataFrame, got {type(df).__name__}")
    if name not in df.columns:
        raise ColumnError(f"column: {name!r} is not in the dataframe")
    series = df[name]
    if not pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
        raise DataTypeError(f"column {name!r}: coordinates must be numeric, got {series.dtype}")
    return np.asarray(series.to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)


def read_points(
    df: pd.DataFrame,
    lat: Any,
    lon: Any,
    *,
    missing: str,
    projection: ProjectionMethod | LocalProjection,
) -> Points:
    """Project the coordinate columns to metres, applying the missing-value policy."""
    if missing not in ("error", "keep"):
        raise ParameterError(f"missing: must be 'error' or 'keep', got {missing!r}")
    lat_values = _column(df, lat)
    lon_values = _column(df, lon)
    present = ~(np.isnan(lat_values) | np.isnan(lon_values))
    if not present.all() and missing == "error":
        raise MissingValueError(
            f"columns {lat!r}, {lon!r}: {int((~present).sum())} rows lack a coordinate; pass "
            "missing='keep' to leave them missing"
        )
    lat_present, lon_present = lat_values[present], lon_values[present]
    check_coordinates(lat_present, lon_present, str(lat), str(lon))
    if isinstance(projection, LocalProjection):
        chosen = projection
    elif lat_present.size == 0:
        chosen = LocalProjection("aeqd", "+proj=aeqd +datum=WGS84 +units=m", 0.0, 0.0)
    else:
        chosen = local_projection(lat_present, lon_present, method=projection)
    if lat_present.size:
        x, y = chosen.forward(lat_present, lon_present)
    else:
        x = y = np.empty(0, dtype=np.float64)
    return Points(x=x, y=y, present=present, projection=chosen)


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
) -> pd.DataFrame:
    """A copy of ``df`` with the masked coordinates (and ``extra`` columns) written in.

    ``x``/``y`` hold one value per present row; NaN there marks a suppressed point,
    which is written as missing.
    """
    lat_out = np.full(points.present.shape, np.nan)
    lon_out = np.full(points.present.shape, np.nan)
    if x.size:
        finite = np.isfinite(x) & np.isfinite(y)
        back_lat = np.full(x.shape, np.nan)
        back_lon = np.full(x.shape, np.nan)
        if finite.any():
            back_lat[finite], back_lon[finite] = points.projection.inverse(x[finite], y[finite])
        lat_out[points.present] = back_lat
        lon_out[points.present] = back_lon
    out = output_frame(df)
    out[lat] = lat_out
    out[lon] = lon_out
    for name, values in (extra or {}).items():
        column = np.full(points.present.shape, np.nan)
        column[points.present] = values
        out[name] = column
    if cost is not None:
        record_cost(out, df, cost, ledger)
    return out
