"""Maps of masked locations: an interactive HTML map and a static before/after figure.

* :func:`location_map` draws the masked points of a :mod:`veil.geo` mask on an
  interactive map (see :func:`veil.maps.render_privacy_map`), with an optional heat map
  and, only on request, the originals, a sample of displacement lines and the radius
  of one chosen point. The page is self-contained and fetches nothing unless base-map
  ``tiles`` are asked for. Usable with 100 000 points (canvas drawing; the file size
  is logged and is ``os.path.getsize(save_file)``).
* :func:`neighbourhood_png` draws one neighbourhood before and after masking, in
  projected metres, as a PNG (or SVG) for reports.

The figure needs the ``geo`` extra (pyproj and matplotlib); the map needs nothing extra.
"""

from __future__ import annotations

import math
import os
import warnings
from typing import Any

import numpy as np
import pandas as pd

from veil.atomic import write_atomic
from veil.errors import DataTypeError, ParameterError, PrivacyWarning
from veil.geo._frame import _column
from veil.geo.circle import longitude_centre, unwrap_longitudes, wrap_longitudes
from veil.geo.projection import check_coordinates, projection_at
from veil.maps import PrivacyMap, render_privacy_map
from veil.rng import RngLike

__all__ = ["location_map", "neighbourhood_png"]

_FIGURE_FORMATS = {".png": "png", ".svg": "svg"}
_ORIGINAL_COLOUR = "#bdbdbd"
_RELEASED_COLOUR = "#d62728"
_EARTH_RADIUS_M = 6_371_008.8


def location_map(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    lat: Any,
    lon: Any,
    save_file: str | os.PathLike[str],
    *,
    show_original: bool = False,
    heatmap: bool = True,
    displacement_sample: int = 0,
    highlight: int | None = None,
    rng: RngLike = None,
    tiles: str | None = None,
) -> PrivacyMap:
    """Write a self-contained interactive HTML map of masked locations.

    The page inlines everything it needs (pinned Leaflet and Leaflet.heat) under a
    Content-Security-Policy, and fetches nothing unless ``tiles`` is given. Neither
    its title nor its popups hold coordinates; the original locations are in the
    file only with ``show_original=True``.

    Parameters
    ----------
    original : pandas.DataFrame
        The data before masking.
    masked : pandas.DataFrame
        The output of a :mod:`veil.geo` mask on ``original``: same rows, same order.
    lat, lon : column labels
        The coordinate columns (degrees, WGS 84), in both frames.
    save_file : str or os.PathLike
        Must end in ``".html"``; written atomically.
    show_original : bool, default False
        Also draw the original points. The file then discloses what the mask
        protects and must be kept as private as the raw data; a
        :class:`~veil.errors.PrivacyWarning` says so.
    heatmap : bool, default True
        Add a heat-map layer of the masked points (toggled in the layer control).
    displacement_sample : int, default 0
        Draw the line from the original to the masked point for a random sample of
        this many rows (drawn with ``rng``). Needs ``show_original=True``.
    highlight : int, optional
        Position of one row (as in ``df.iloc``) whose displacement radius is drawn
        as a circle around its original point. Needs ``show_original=True``.
    rng : None, int or numpy.random.Generator
        Source of the displacement sample (see :mod:`veil.rng`).
    tiles : str, optional
        URL template of base-map tiles, such as
        ``"https://tile.openstreetmap.org/{z}/{x}/{y}.png"``; the viewer's browser
        then fetches them from that server, which learns which area is viewed (the
        page says so). Default: no tiles and no network request; the points are
        drawn on a latitude/longitude grid.

    Returns
    -------
    veil.maps.PrivacyMap
        What was written to ``save_file``: path, centre, bounds, layer names, tiles
        and size (also logged on the ``"veil.maps"`` logger).

    Raises
    ------
    ParameterError
        Bad ``save_file`` suffix (checked first), a ``tiles`` value that is not a
        tile URL template, frames of different lengths or
        indexes, a missing column, ``displacement_sample`` or ``highlight`` without
        ``show_original=True`` (see :func:`veil.maps.render_privacy_map` for the
        rest). Nothing is written.
    DataTypeError
        Non-numeric coordinate columns or arguments that are not data frames.
    """
    _check_suffix(save_file, {".html": "html"})
    lat_dp, lon_dp = _aligned_coordinates(original, masked, lat, lon)
    if not show_original and displacement_sample:
        raise ParameterError(
            "displacement_sample: displacement lines show the original locations; "
            "pass show_original=True (and keep the map private) to draw them"
        )
    if not show_original and highlight is not None:
        raise ParameterError(
            "highlight: the radius circle is centred on an original location; pass "
            "show_original=True (and keep the map private) to draw it"
        )
    lat_orig = lon_orig = None
    if show_original:
        lat_orig, lon_orig = _column(original, lat), _column(original, lon)
    result = render_privacy_map(
        lat_dp,
        lon_dp,
        None,
        save_file,
        lat=lat_orig,
        lon=lon_orig,
        tiles=tiles,
        heatmap=heatmap,
        displacement_sample=displacement_sample,
        highlight=highlight,
        released_label="Masked",
        rng=rng,
    )
    if show_original:
        warnings.warn(
            "the map shows the original locations: it discloses what the mask protects "
            "and must not be published",
            PrivacyWarning,
            stacklevel=2,
        )
    return result


def neighbourhood_png(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    lat: Any,
    lon: Any,
    save_file: str | os.PathLike[str],
    *,
    centre: tuple[float, float] | None = None,
    radius_m: float = 2500.0,
    title: str | None = None,
) -> None:
    """Draw one neighbourhood before and after masking, as a static figure for reports.

    Two panels share a square window of ``2 * radius_m`` metres around ``centre``,
    in an azimuthal equidistant projection centred on it (axes in metres east and
    north of the centre): on the left the original points (grey), on the right the
    masked points (red) over the original ones (light grey). Rows missing a
    coordinate are left out of the panel that lacks it.

    The figure shows original locations: it is as private as the raw data. A
    :class:`~veil.errors.PrivacyWarning` says so.

    Parameters
    ----------
    original, masked : pandas.DataFrame
        The data before and after a :mod:`veil.geo` mask (same rows, same order).
    lat, lon : column labels
        The coordinate columns, in both frames.
    save_file : str or os.PathLike
        Ends in ``".png"`` or ``".svg"`` (the format); written atomically.
    centre : (lat, lon), optional
        Centre of the neighbourhood in degrees. Default: the densest area of the
        original points (the median of the points in the most populated square of
        side ``2 * radius_m``).
    radius_m : float, default 2500
        Half the side of the square window, in metres (> 0).
    title : str, optional
        Figure title; default names the centre and the window.

    Raises
    ------
    ParameterError
        Bad ``save_file`` suffix (checked first), non-positive ``radius_m``, a bad
        ``centre``, frames of different lengths or indexes, or no original point.
        Nothing is written.
    DataTypeError
        Non-numeric coordinate columns or arguments that are not data frames.
    ImportError
        matplotlib or pyproj (the extra ``veil[geo]``) is missing.
    """
    fmt = _check_suffix(save_file, _FIGURE_FORMATS)
    if (
        isinstance(radius_m, bool)
        or not isinstance(radius_m, (int, float, np.integer, np.floating))
        or not np.isfinite(radius_m)
        or radius_m <= 0
    ):
        raise ParameterError(f"radius_m: must be a finite number > 0, got {radius_m!r}")
    lat_dp, lon_dp = _aligned_coordinates(original, masked, lat, lon)
    lat_orig, lon_orig = _column(original, lat), _column(original, lon)
    present = np.isfinite(lat_orig) & np.isfinite(lon_orig)
    if centre is None:
        if not present.any():
            raise ParameterError("original: no row has both coordinates; pass centre=")
        centre_lat, centre_lon = _densest_centre(
            lat_orig[present], lon_orig[present], float(radius_m)
        )
    else:
        centre_lat, centre_lon = _check_centre(centre)
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise ImportError("neighbourhood_png needs matplotlib: pip install 'veil[geo]'") from exc

    projection = projection_at(centre_lat, centre_lon)
    r = float(radius_m)
    x0, y0 = _window(projection, lat_orig, lon_orig, r)
    x1, y1 = _window(projection, lat_dp, lon_dp, r)

    fig = Figure(figsize=(10.0, 5.4), dpi=150, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2, sharex=True, sharey=True)
    size = _marker_size(max(x0.size, x1.size))
    axes[0].scatter(x0, y0, s=size, c="#8c8c8c", linewidths=0, rasterized=fmt == "svg")
    axes[0].set_title(f"Before: original ({x0.size} points)")
    axes[1].scatter(x0, y0, s=size, c=_ORIGINAL_COLOUR, linewidths=0, rasterized=fmt == "svg")
    axes[1].scatter(x1, y1, s=size, c=_RELEASED_COLOUR, linewidths=0, rasterized=fmt == "svg")
    axes[1].set_title(f"After: masked ({x1.size} points)")
    for ax in axes:
        ax.set_xlim(-r, r)
        ax.set_ylim(-r, r)
        ax.set_aspect("equal")
        ax.set_xlabel("metres east of centre")
        ax.grid(True, linewidth=0.3, alpha=0.5)
    axes[0].set_ylabel("metres north of centre")
    fig.suptitle(
        title
        if title is not None
        else f"Neighbourhood of ({centre_lat:.4f}, {centre_lon:.4f}), {r:g} m around the centre"
    )
    write_atomic(save_file, lambda tmp: fig.savefig(tmp, format=fmt))
    warnings.warn(
        "the figure shows original locations: keep it as private as the raw data",
        PrivacyWarning,
        stacklevel=2,
    )


def _check_suffix(save_file: str | os.PathLike[str], formats: dict[str, str]) -> str:
    path = os.fspath(save_file)
    suffix = os.path.splitext(path)[1].lower() if isinstance(path, str) else ""
    if suffix not in formats:
        allowed = " or ".join(repr(s) for s in formats)
        raise ParameterError(f"save_file: must end in {allowed}, got {save_file!r}")
    return formats[suffix]


def _aligned_coordinates(
    original: pd.DataFrame, masked: pd.DataFrame, lat: Any, lon: Any
) -> tuple[np.ndarray, np.ndarray]:
    """The masked coordinates, after checking that ``masked`` is row-aligned with ``original``."""
    for name, frame in (("original", original), ("masked", masked)):
        if not isinstance(frame, pd.DataFrame):
            raise DataTypeError(f"{name}: expected a pandas DataFrame, got {type(frame).__name__}")
    if len(original) != len(masked) or not original.index.equals(masked.index):
        raise ParameterError(
            f"masked: must hold the rows of original in the same order (row-aligned), got "
            f"{len(masked)} rows for {len(original)}"
            + ("" if len(original) != len(masked) else " with a different index")
        )
    _column(original, lat)
    _column(original, lon)
    return _column(masked, lat), _column(masked, lon)


def _check_centre(centre: Any) -> tuple[float, float]:
    try:
        centre_lat, centre_lon = (float(v) for v in centre)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"centre: expected (lat, lon) in degrees, got {centre!r}") from exc
    check_coordinates(
        np.array([centre_lat]), np.array([centre_lon]), "centre latitude", "centre longitude"
    )
    return centre_lat, centre_lon


def _densest_centre(lat: np.ndarray, lon: np.ndarray, radius_m: float) -> tuple[float, float]:
    """Median of the points in the most populated square cell of side ``2 * radius_m``.

    The cells are laid out in an equirectangular approximation (metres at the median
    latitude), which only has to find the busy area and works for data of any extent.
    """
    metres_per_degree = math.pi * _EARTH_RADIUS_M / 180.0
    # Longitudes as one run about their centre on the circle: a cluster across the
    # antimeridian is one busy area, not two at the ends of the world.
    lon = unwrap_longitudes(lon, longitude_centre(lon))
    x = lon * metres_per_degree * math.cos(math.radians(float(np.median(lat))))
    y = lat * metres_per_degree
    side = 2.0 * radius_m
    cells = np.stack([np.floor(x / side), np.floor(y / side)], axis=1)
    _, inverse, counts = np.unique(cells, axis=0, return_inverse=True, return_counts=True)
    inside = inverse.reshape(-1) == int(np.argmax(counts))
    return float(np.median(lat[inside])), float(wrap_longitudes([np.median(lon[inside])])[0])


def _window(
    projection: Any, lat: np.ndarray, lon: np.ndarray, radius_m: float
) -> tuple[np.ndarray, np.ndarray]:
    """Projected coordinates of the points inside the square window."""
    finite = np.isfinite(lat) & np.isfinite(lon)
    if not finite.any():
        empty = np.empty(0, dtype=np.float64)
        return empty, empty
    x, y = projection.forward(lat[finite], lon[finite])
    inside = (np.abs(x) <= radius_m) & (np.abs(y) <= radius_m)
    return x[inside], y[inside]


def _marker_size(n: int) -> float:
    """Marker area in points^2: large for a few points, small for thousands."""
    return float(np.clip(400.0 / np.sqrt(max(n, 1)), 1.5, 25.0))
