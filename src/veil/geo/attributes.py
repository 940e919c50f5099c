"""Attributes attached to locations: swap or bin them within grid cells.

After the spatial treatment, an exact rare attribute value in a sparse cell (the one
mansion in a rural cell) can undo the spatial protection. Swapping the attribute among
the records of the same cell keeps its spatial pattern while breaking the link to any
household; binning coarsens the value itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil.errors import ColumnError, ParameterError
from veil.frames import output_frame
from veil.geo._frame import read_points
from veil.geo.projection import LocalProjection, ProjectionMethod
from veil.mechanisms._validation import check_positive
from veil.rng import RngLike, resolve_rng

__all__ = ["bin_attribute", "swap_within_cells"]


def swap_within_cells(
    df: pd.DataFrame,
    lat: str,
    lon: str,
    column: str,
    cell_m: float,
    *,
    projection: ProjectionMethod | LocalProjection = "auto",
    rng: RngLike = None,
) -> pd.DataFrame:
    """Randomly permute ``column`` among the records of each square cell of ``cell_m``.

    The cells are those of :func:`veil.geo.grid` with the same ``cell_m`` and
    projection, so calling this on the masked frame swaps within the released cells.
    Every cell keeps exactly its multiset of values (its histogram, mean, extremes); a
    cell with one record keeps its value, which is why ``grid(..., min_count=...)``
    should come first. Rows lacking a coordinate are left unchanged.
    """
    step = check_positive(cell_m, "cell_m")
    if column not in df.columns:
        raise ColumnError(f"column: {column!r} is not in the dataframe")
    points = read_points(df, lat, lon, missing="keep", projection=projection)
    generator = resolve_rng(rng, stacklevel=3)
    cells = np.stack([np.floor(points.x / step), np.floor(points.y / step)], axis=1)
    codes = pd.factorize(cells.view(np.complex128).ravel())[0]
    # Sort rows by (cell, random key): within each cell the rows come in random order,
    # and pairing the cell's rows in index order with that order is a uniform shuffle.
    keys = generator.random(codes.size)
    shuffled = np.lexsort((keys, codes))
    ordered = np.argsort(codes, kind="stable")
    positions = np.flatnonzero(points.present)
    source = positions[shuffled]
    target = positions[ordered]
    values = df[column].to_numpy(copy=True)
    values[target] = df[column].to_numpy()[source]
    out = output_frame(df)
    out[column] = pd.Series(values, index=df.index, dtype=df[column].dtype)
    return out


def bin_attribute(
    df: pd.DataFrame,
    column: str,
    edges: Sequence[float],
    *,
    labels: Sequence[Any] | None = None,
) -> pd.DataFrame:
    """Replace a numeric ``column`` by the interval of public ``edges`` it falls in.

    Intervals are left-closed (``[a, b)``), the last one closed; values outside the
    edges raise, since the edges must be a public cover of the domain. Labels default
    to ``"[a, b)"`` strings.
    """
    if column not in df.columns:
        raise ColumnError(f"column: {column!r} is not in the dataframe")
    bounds = np.asarray(edges, dtype=np.float64)
    if bounds.ndim != 1 or bounds.size < 2 or not np.all(np.diff(bounds) > 0):
        raise ParameterError(f"edges: need at least two strictly increasing values, got {edges!r}")
    if labels is not None and len(labels) != bounds.size - 1:
        raise ParameterError(
            f"labels: need {bounds.size - 1} labels for {bounds.size} edges, got {len(labels)}"
        )
    values = df[column].to_numpy(dtype=np.float64, na_value=np.nan)
    present = ~np.isnan(values)
    outside = present & ((values < bounds[0]) | (values > bounds[-1]))
    if outside.any():
        raise ParameterError(
            f"edges: {int(outside.sum())} values of {column!r} fall outside "
            f"[{bounds[0]:g}, {bounds[-1]:g}], e.g. {values[outside][:3].tolist()}"
        )
    index = np.clip(np.searchsorted(bounds, values, side="right") - 1, 0, bounds.size - 2)
    names = (
        list(labels)
        if labels is not None
        else [
            f"[{bounds[i]:g}, {bounds[i + 1]:g}" + (")" if i < bounds.size - 2 else "]")
            for i in range(bounds.size - 1)
        ]
    )
    codes = np.where(present, index, -1)
    out = output_frame(df)
    out[column] = pd.Categorical.from_codes(codes, categories=pd.Index(names), ordered=True)
    return out
