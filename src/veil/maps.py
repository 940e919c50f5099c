"""Interactive maps of released locations, written as self-contained HTML pages.

:func:`render_privacy_map` writes an interactive map (Leaflet) of released locations:
privatized points from :mod:`veil.ldp`, masked points from :mod:`veil.geo` (see
:func:`veil.geo.maps.location_map` for data frames, and
:func:`veil.geo.maps.neighbourhood_png` for a static before/after figure).

The page needs no network. Leaflet 1.9.4 and the Leaflet.heat plugin are inlined from
the pinned copies in ``veil/assets`` (see its ``README.md``), and a
Content-Security-Policy lets the browser run only those scripts (by their SHA-256),
load images only from ``data:`` URIs, and connect nowhere. Without ``tiles`` the
points are drawn on a plain background with a latitude/longitude grid and a scale bar;
with a ``tiles`` URL template, the page says which server the tiles come from (that
server learns which area is viewed) and the policy admits that origin only.

The coordinates are embedded once, as compact JSON columns (rounded to 6 decimals,
about 0.1 m) in a data block, and turned into Leaflet ``circleMarker`` / ``circle`` /
``polyline`` layers on one shared canvas by the page's script. The page stays
responsive with 100 000 points. The optional heat map is built in the browser from the
same columns as the released points, so it adds no data to the file.

Original locations are drawn only when the caller passes them: a published map that
shows them discloses exactly what the release protects. The page title, layer names
and popups never hold coordinates.

The size of the written file is logged (logger ``"veil.maps"``, level ``INFO``); it
is also :attr:`PrivacyMap.size_bytes`.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import json
import logging
import math
import os
import re
import urllib.parse
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from veil.atomic import write_text_atomic
from veil.errors import DataTypeError, ParameterError
from veil.rng import RngLike, resolve_rng

__all__ = ["PrivacyMap", "render_privacy_map"]

_logger = logging.getLogger(__name__)

# Coordinates keep 6 decimals (~0.11 m at the equator): finer digits only add bytes.
_COORD_DECIMALS = 6
# Radii are drawn in metres; a decimetre is below what a map can show.
_RADIUS_DECIMALS = 1
# A single released point has zero-size bounds; without a cap fitBounds zooms in to
# the map's maximum.
_FIT_MAX_ZOOM = 16
_MAX_ZOOM = 19
# Leaflet's sphere (L.CRS.Earth.R): the highlight radius matches its distanceTo.
_LEAFLET_EARTH_RADIUS_M = 6_371_000.0
_HEAT_OPTIONS: Final[dict[str, float]] = {"minOpacity": 0.3, "radius": 12, "blur": 15}

# The files of veil/assets that a page inlines, in page order.
_LEAFLET_JS: Final = "leaflet/leaflet.js"
_LEAFLET_CSS: Final = "leaflet/leaflet.css"
_HEAT_JS: Final = "leaflet_heat/leaflet-heat.js"
_MAP_JS: Final = "veil_map.js"
_MAP_CSS: Final = "veil_map.css"
# Source maps are for debugging tools, and a browser's tools would fetch them.
_SOURCE_MAP = re.compile(r"\n//# sourceMappingURL=\S+\s*$")
_CSS_IMAGE = re.compile(r"url\(images/([\w.-]+\.png)\)")

# Placeholders Leaflet fills in a tile URL template; {s} only as the first host label.
_TILE_PLACEHOLDERS: Final = frozenset({"s", "z", "x", "y", "r"})
_HOST = re.compile(r"(?:\{s\}\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)*")


@dataclass(frozen=True)
class PrivacyMap:
    """The map page :func:`render_privacy_map` wrote.

    Attributes
    ----------
    path : str
        The HTML file.
    centre : tuple of float
        ``(lat, lon)`` mean of the drawn released points, in degrees; ``(0.0, 0.0)``
        when none is finite (the page then shows the world).
    bounds : tuple of two (lat, lon) tuples, or None
        South-west and north-east corners of the released points, which the view is
        fitted to; ``None`` when no released point is finite.
    layers : tuple of str
        Names of the layers in the page's layer control, in order.
    tiles : str or None
        The tile URL template the page fetches its base map from, or ``None`` for a
        page that fetches nothing.
    size_bytes : int
        Size of the written file.
    """

    path: str
    centre: tuple[float, float]
    bounds: tuple[tuple[float, float], tuple[float, float]] | None
    layers: tuple[str, ...]
    tiles: str | None
    size_bytes: int


def render_privacy_map(
    lat_dp: npt.ArrayLike,
    lon_dp: npt.ArrayLike,
    radius_m: npt.ArrayLike | None,
    save_file: str | os.PathLike[str],
    *,
    lat: npt.ArrayLike | None = None,
    lon: npt.ArrayLike | None = None,
    max_detail_points: int = 2000,
    tiles: str | None = None,
    heatmap: bool = False,
    displacement_sample: int | None = None,
    highlight: int | None = None,
    released_label: str = "Privatized",
    rng: RngLike = None,
) -> PrivacyMap:
    """Draw released locations on an interactive map and save it as self-contained HTML.

    The map draws the released (privatized or masked) points in red. Only when the
    caller passes the original ``lat`` and ``lon`` does it also draw the original
    points in blue and, for some records, the perturbation radius around the original
    point and a line from the original to the released point. A layer control toggles
    the layers. The view is fitted to the bounding box of the released points, so the
    originals do not steer it.

    Drawing adds no noise and spends no privacy budget. A map drawn from released
    points alone discloses nothing beyond the release; passing ``lat``/``lon``
    embeds the original locations in the file, which must then be kept as private
    as the raw data (the page then says so at the top).

    The page loads nothing from the network unless ``tiles`` is given: scripts and
    styles are inline, and its Content-Security-Policy forbids every other source.

    Parameters
    ----------
    lat_dp, lon_dp : array_like of float, shape (n,)
        Released latitudes and longitudes, in decimal degrees (WGS 84).
    radius_m : array_like of float, shape (n,), or None
        Perturbation radius of each record, in metres. Drawn only together with the
        originals, as a circle around each detailed original point; ``None`` draws
        no such circles.
    save_file : str or os.PathLike
        Path of the HTML file to write; must end in ``".html"``. The file is written
        atomically: a temporary file in the same directory replaces it once
        complete, so a failed write leaves any previous map untouched.
    lat, lon : array_like of float, shape (n,), optional
        Original latitudes and longitudes, in decimal degrees. Give both or neither;
        when given, the originals are written into the HTML.
    max_detail_points : int, default 2000
        Number of leading records (``>= 0``) drawn with a radius circle and a
        displacement line, when ``displacement_sample`` is ``None``. Points beyond
        it are drawn as points only, which keeps the file small and the browser
        responsive.
    tiles : str, optional
        URL template of a base map's tiles, such as
        ``"https://tile.openstreetmap.org/{z}/{x}/{y}.png"`` (``http`` or ``https``;
        placeholders ``{z}``, ``{x}``, ``{y}``, ``{r}`` and ``{s}``, the last only as
        the first label of the host). The viewer's browser then fetches tiles from
        that server, which learns which area is viewed; the page says so, and its
        Content-Security-Policy admits images from that origin only. Default: no
        tiles, a plain background with a latitude/longitude grid, and no request at
        all.
    heatmap : bool, default False
        Add a heat-map layer of the released points (Leaflet.heat, built in the
        browser from the released points' columns, so the coordinates are embedded
        once), off at first and listed in the layer control.
    displacement_sample : int, optional
        Draw the displacement lines (and radius circles, with ``radius_m``) for a
        random sample of this many records (``>= 0``; all of them when fewer have
        finite original and released coordinates) instead of the first
        ``max_detail_points``; ``0`` draws none and leaves their layers out. Needs
        the originals when positive. The sample is drawn with ``rng``.
    highlight : int, optional
        Position (``0 <= highlight < n``) of one record to highlight: a circle of
        its perturbation radius around its original point (``radius_m`` of the
        record when given and finite, else the length of its displacement) and its
        displacement line, in their own layer. Needs the originals.
    released_label : str, default "Privatized"
        Word for the released points in the title, layer names and popups
        (``"Masked"`` for :mod:`veil.geo`).
    rng : None, int or numpy.random.Generator
        Source of the displacement sample (see :mod:`veil.rng`); unused otherwise.

    Returns
    -------
    PrivacyMap
        What was written to ``save_file``: its path, centre, bounds, layer names,
        tiles and size. The size is also logged at ``INFO`` level on the
        ``"veil.maps"`` logger.

    Raises
    ------
    ParameterError
        If ``save_file`` does not end in ``".html"`` (checked before anything
        else, and nothing is written), if ``tiles`` is not such a URL template, if
        only one of ``lat``/``lon`` is given, if the arrays are not one-dimensional
        with equal lengths, if ``max_detail_points`` or ``displacement_sample`` is
        not a non-negative integer, if ``displacement_sample > 0`` or ``highlight``
        is given without the originals, or if ``highlight`` is not the position of a
        record with finite original and released coordinates. Nothing is written.
    DataTypeError
        If an array cannot be converted to floating point.

    Notes
    -----
    Records whose coordinates are NaN or infinite are skipped, layer by layer: a
    record with a missing released location is absent from the red layer but its
    original point can still be drawn, and a circle or line is drawn only when all
    of its inputs (including the radius, for circles) are finite. With no finite
    released point the map shows the world, centred at (0, 0).

    Coordinates are rounded to 6 decimals (about 0.1 m) and radii to 0.1 m in the
    HTML. The inlined Leaflet adds about 150 kB; with 100 000 released points and
    originals the file is about 4.5 MB; the heat map adds its 5 kB plugin and no
    data.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import numpy as np
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "release_map.html"
    >>> lat_dp, lon_dp = np.array([40.4168, 40.4170]), np.array([-3.7038, -3.7040])
    >>> page = render_privacy_map(lat_dp, lon_dp, None, out, heatmap=True)
    >>> page.layers
    ('Privatized locations', 'Heat map of privatized locations')
    >>> "40.4168" in out.read_text(encoding="utf-8")
    True
    """
    path = os.fspath(save_file)
    if not isinstance(path, str) or not path.endswith(".html"):
        raise ParameterError(f"save_file must be a path ending in '.html', got {save_file!r}.")
    tile_origin = None if tiles is None else _tile_origin(tiles)
    _check_options(lat, lon, max_detail_points, displacement_sample, highlight)
    y_dp = _as_coordinates(lat_dp, "lat_dp")
    x_dp = _as_coordinates(lon_dp, "lon_dp")
    radius = None if radius_m is None else _as_coordinates(radius_m, "radius_m")
    y = None if lat is None else _as_coordinates(lat, "lat")
    x = None if lon is None else _as_coordinates(lon, "lon")
    _check_lengths(y_dp, {"lon_dp": x_dp, "radius_m": radius, "lat": y, "lon": x})
    # Longitudes as one run about the released points' centre on the circle, so points
    # on both sides of the antimeridian are drawn side by side (Leaflet takes 181).
    x_dp, x = _unwrapped(x_dp, x)
    released = released_label.strip() or "Released"
    overlays = _overlays(
        released,
        (y_dp, x_dp),
        None if y is None or x is None else (y, x),
        radius,
        max_detail_points=max_detail_points,
        displacement_sample=displacement_sample,
        rng=rng,
    )
    if heatmap:
        overlays.append(
            {
                "name": f"Heat map of {released.lower()} locations",
                "show": False,
                "parts": [],
                "heat": {"source": len(overlays) - 1, "options": _HEAT_OPTIONS},
            }
        )
    if highlight is not None and y is not None and x is not None:
        overlays.append(_highlight_overlay(_highlight_columns(highlight, y, x, y_dp, x_dp, radius)))
    centre, bounds = _view(y_dp, x_dp)
    spec = {
        "centre": centre,
        "bounds": bounds,
        "fitMaxZoom": _FIT_MAX_ZOOM,
        "maxZoom": _MAX_ZOOM,
        "tiles": tiles,
        "overlays": overlays,
    }
    notices = _notices(lat is not None, tile_origin)
    page = _page(f"{released} locations", spec, notices, heatmap, tile_origin)
    write_text_atomic(path, page)
    size = os.path.getsize(path)
    _logger.info("wrote %s (%d bytes)", path, size)
    return PrivacyMap(
        path=path,
        centre=centre,
        bounds=bounds,
        layers=tuple(o["name"] for o in overlays),
        tiles=tiles,
        size_bytes=size,
    )


def _check_options(
    lat: Any, lon: Any, max_detail_points: Any, displacement_sample: Any, highlight: Any
) -> None:
    """The arguments that need no array: originals given together, counts, needs."""
    if (lat is None) != (lon is None):
        raise ParameterError(
            "lat and lon must be given together (to draw the originals) or both "
            f"omitted, got lat={'None' if lat is None else 'an array'} and "
            f"lon={'None' if lon is None else 'an array'}."
        )
    _check_count(max_detail_points, "max_detail_points")
    if displacement_sample is not None:
        _check_count(displacement_sample, "displacement_sample")
    if lat is None and displacement_sample:
        raise ParameterError(
            "displacement_sample: displacement lines need the original lat and lon; "
            f"got displacement_sample={displacement_sample} without them."
        )
    if lat is None and highlight is not None:
        raise ParameterError(
            "highlight: the radius circle is drawn around the original point and needs "
            "the original lat and lon."
        )


def _check_lengths(
    y_dp: npt.NDArray[np.float64], named: dict[str, npt.NDArray[np.float64] | None]
) -> None:
    mismatched = {k: len(v) for k, v in named.items() if v is not None and len(v) != len(y_dp)}
    if mismatched:
        lengths = ", ".join(f"{k} has {n}" for k, n in mismatched.items())
        raise ParameterError(
            f"all arrays must have the length of lat_dp ({len(y_dp)}), but {lengths}."
        )


_Pair = tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]


def _overlays(
    released: str,
    masked: _Pair,
    original: _Pair | None,
    radius: npt.NDArray[np.float64] | None,
    *,
    max_detail_points: int,
    displacement_sample: int | None,
    rng: RngLike,
) -> list[dict[str, Any]]:
    """The layers: radius circles, displacement lines and originals (if given), released."""
    y_dp, x_dp = masked
    overlays: list[dict[str, Any]] = []

    def overlay(name: str, *parts: dict[str, Any]) -> None:
        overlays.append({"name": name, "show": True, "parts": list(parts)})

    if original is not None:
        y, x = original
        detail: slice | npt.NDArray[np.intp]
        if displacement_sample is None:
            detail = slice(0, int(max_detail_points))
            draw_detail = True
        else:
            detail = _sample_rows(int(displacement_sample), y, x, y_dp, x_dp, rng)
            draw_detail = detail.size > 0
        if draw_detail and radius is not None:
            overlay(
                "Perturbation radius",
                _part(
                    "circle",
                    {"lat": y[detail], "lon": x[detail], "r": radius[detail]},
                    {"color": "gray", "weight": 1, "opacity": 0.5, "fill": False},
                ),
            )
        if draw_detail:
            columns = {"lat": y[detail], "lon": x[detail]}
            columns |= {"lat_dp": y_dp[detail], "lon_dp": x_dp[detail]}
            line = {"color": "black", "weight": 1, "opacity": 0.6}
            overlay(f"Original to {released.lower()}", _part("line", columns, line))
        overlay(
            "Original locations",
            _part("point", {"lat": y, "lon": x}, _point_style("blue"), "Original location"),
        )
    overlay(
        f"{released} locations",
        _part("point", {"lat": y_dp, "lon": x_dp}, _point_style("red"), f"{released} location"),
    )
    return overlays


def _highlight_overlay(highlighted: dict[str, npt.NDArray[np.float64]]) -> dict[str, Any]:
    style = {"color": "orange", "weight": 3, "opacity": 0.9}
    parts = [
        _part(
            "circle",
            {k: highlighted[k] for k in ("lat", "lon", "r")},
            {**style, "fill": True, "fillOpacity": 0.1},
        ),
        _part("line", {k: highlighted[k] for k in ("lat", "lon", "lat_dp", "lon_dp")}, style),
    ]
    return {"name": "Highlighted point", "show": True, "parts": parts}


def _unwrapped(
    x_dp: npt.NDArray[np.float64], x: npt.NDArray[np.float64] | None
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64] | None]:
    """Both longitude arrays as one run about the released points' centre on the circle."""
    # veil.geo draws its maps with this module: its circle helpers are imported here.
    from veil.geo.circle import longitude_centre, unwrap_longitudes

    finite = x_dp[np.isfinite(x_dp)]
    if not finite.size:
        return x_dp, x
    about = longitude_centre(finite)
    return unwrap_longitudes(x_dp, about), None if x is None else unwrap_longitudes(x, about)


def _view(
    y_dp: npt.NDArray[np.float64], x_dp: npt.NDArray[np.float64]
) -> tuple[tuple[float, float], Any]:
    """The centre and bounds of the released points (the world at (0, 0) if none).

    ``x_dp`` is unwrapped about the points' centre on the circle (see
    :func:`veil.geo.circle.unwrap_longitudes`), so the mean and the extent hold for
    points around the antimeridian too.
    """
    shown = np.isfinite(y_dp) & np.isfinite(x_dp)
    if not shown.any():
        return (0.0, 0.0), None
    y_shown, x_shown = y_dp[shown], x_dp[shown]
    centre = (float(y_shown.mean()), float(x_shown.mean()))
    bounds = (
        (float(y_shown.min()), float(x_shown.min())),
        (float(y_shown.max()), float(x_shown.max())),
    )
    return centre, bounds


def _notices(has_original: bool, tile_origin: str | None) -> list[tuple[str, str]]:
    notices = []
    if has_original:
        notices.append(
            (
                "veil-warning",
                "This map shows original locations: keep it as private as the raw data "
                "and do not publish it.",
            )
        )
    if tile_origin is not None:
        notices.append(
            (
                "veil-warning",
                f"The base map is fetched from {tile_origin}: that server learns which "
                "area is viewed, and from where.",
            )
        )
    else:
        notices.append(
            ("", "No base map: the points are drawn on a latitude/longitude grid, offline.")
        )
    return notices


def _part(
    kind: str,
    columns: dict[str, npt.NDArray[np.float64]],
    style: dict[str, Any],
    label: str = "",
) -> dict[str, Any]:
    """One kind of Leaflet layer drawn from JSON columns, without non-finite rows."""
    keep = np.logical_and.reduce([np.isfinite(c) for c in columns.values()])
    data = {
        k: np.round(c[keep], _RADIUS_DECIMALS if k == "r" else _COORD_DECIMALS).tolist()
        for k, c in columns.items()
    }
    return {"kind": kind, "style": style, "label": label, "data": data}


def _tile_origin(tiles: Any) -> str:
    """The origin (``scheme://host[:port]``, ``*.`` for ``{s}``) of a tile URL template."""
    allowed = (
        "a URL template such as 'https://tile.example.org/{z}/{x}/{y}.png' (http or "
        "https, with {z}, {x} and {y}; {s} only as the first label of the host)"
    )
    if not isinstance(tiles, str):
        raise ParameterError(f"tiles must be {allowed} or None, got {tiles!r}.")
    parts = urllib.parse.urlsplit(tiles)
    host, _, port = parts.netloc.rpartition(":") if ":" in parts.netloc else (parts.netloc, "", "")
    placeholders = set(re.findall(r"\{([^{}]*)\}", tiles))
    path_placeholders = set(re.findall(r"\{([^{}]*)\}", parts.path + parts.query))
    if (
        parts.scheme not in ("http", "https")
        or not _HOST.fullmatch(host)
        or (port and not port.isdigit())
        or not placeholders <= _TILE_PLACEHOLDERS
        or not {"z", "x", "y"} <= path_placeholders
        or "s" in path_placeholders
        or any(c in tiles for c in " \t\r\n\"'<>;,\\")
    ):
        raise ParameterError(f"tiles must be {allowed}, got {tiles!r}.")
    origin_host = "*." + host.removeprefix("{s}.") if host.startswith("{s}.") else host
    return f"{parts.scheme}://{origin_host.lower()}" + (f":{port}" if port else "")


def _page(
    title: str,
    spec: dict[str, Any],
    notices: list[tuple[str, str]],
    heatmap: bool,
    tile_origin: str | None,
) -> str:
    """The HTML page: inline assets, the data block and a hash-based CSP."""
    scripts = [_script(_LEAFLET_JS), *([_script(_HEAT_JS)] if heatmap else []), _script(_MAP_JS)]
    style = _leaflet_css() + _text_asset(_MAP_CSS)
    # Nothing but "<" can end a data block early; escaping it keeps the JSON valid.
    data = json.dumps(spec, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")
    policy = "; ".join(
        [
            "default-src 'none'",
            "script-src " + " ".join(_csp_hash(s) for s in scripts),
            f"style-src {_csp_hash(style)}",
            "img-src data:" + (f" {tile_origin}" if tile_origin else ""),
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )
    banner = "".join(
        f'<div class="veil-notice {cls}" role="note">{html.escape(text)}</div>'
        for cls, text in notices
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{html.escape(title)}</title><style>{style}</style></head><body>"
        f'{banner}<div id="veil-map"></div>'
        f'<script type="application/json" id="veil-map-data">{data}</script>'
        + "".join(f"<script>{s}</script>" for s in scripts)
        + "</body></html>\n"
    )


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


@functools.cache
def _asset_bytes(name: str) -> bytes:
    return resources.files("veil").joinpath("assets", *name.split("/")).read_bytes()


def _text_asset(name: str) -> str:
    # The HTML parser turns CR LF into LF before the CSP hash is checked.
    return _asset_bytes(name).decode("utf-8").replace("\r\n", "\n")


@functools.cache
def _script(name: str) -> str:
    return _SOURCE_MAP.sub("\n", _text_asset(name))


@functools.cache
def _leaflet_css() -> str:
    def data_uri(match: re.Match[str]) -> str:
        image = base64.b64encode(_asset_bytes(f"leaflet/images/{match.group(1)}"))
        return f"url(data:image/png;base64,{image.decode('ascii')})"

    return _CSS_IMAGE.sub(data_uri, _text_asset(_LEAFLET_CSS))


def _check_count(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ParameterError(f"{name} must be an integer >= 0, got {value!r}.")


def _sample_rows(
    size: int,
    y: npt.NDArray[np.float64],
    x: npt.NDArray[np.float64],
    y_dp: npt.NDArray[np.float64],
    x_dp: npt.NDArray[np.float64],
    rng: RngLike,
) -> npt.NDArray[np.intp]:
    """Sorted positions of a uniform sample of ``size`` records with finite lines."""
    drawable = np.flatnonzero(
        np.isfinite(y) & np.isfinite(x) & np.isfinite(y_dp) & np.isfinite(x_dp)
    )
    if size == 0 or drawable.size == 0:
        return np.empty(0, dtype=np.intp)
    if size >= drawable.size:
        return drawable
    generator = resolve_rng(rng, stacklevel=4)
    return np.sort(generator.choice(drawable, size=size, replace=False))


def _highlight_columns(
    highlight: Any,
    y: npt.NDArray[np.float64],
    x: npt.NDArray[np.float64],
    y_dp: npt.NDArray[np.float64],
    x_dp: npt.NDArray[np.float64],
    radius: npt.NDArray[np.float64] | None,
) -> dict[str, npt.NDArray[np.float64]]:
    """Columns of the highlighted record: original, released point and radius."""
    n = len(y_dp)
    if (
        isinstance(highlight, bool)
        or not isinstance(highlight, (int, np.integer))
        or not 0 <= highlight < n
    ):
        raise ParameterError(
            f"highlight must be the position of a record, an integer in [0, {n}), "
            f"got {highlight!r}."
        )
    i = int(highlight)
    point = (float(y[i]), float(x[i]), float(y_dp[i]), float(x_dp[i]))
    if not all(math.isfinite(v) for v in point):
        raise ParameterError(
            f"highlight: record {i} lacks a finite original or released location, "
            f"got original ({point[0]}, {point[1]}) and released ({point[2]}, {point[3]})."
        )
    r = float(radius[i]) if radius is not None else math.nan
    if not math.isfinite(r):
        r = _haversine_m(*point)
    return {
        "lat": np.array([point[0]]),
        "lon": np.array([point[1]]),
        "lat_dp": np.array([point[2]]),
        "lon_dp": np.array([point[3]]),
        "r": np.array([r]),
    }


def _haversine_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    a = (
        math.sin((phi2 - phi1) / 2) ** 2
        + math.cos(phi1) * math.cos(phi2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    )
    return 2 * _LEAFLET_EARTH_RADIUS_M * math.asin(math.sqrt(min(1.0, a)))


def _point_style(color: str) -> dict[str, Any]:
    return {
        "radius": 4,
        "color": color,
        "weight": 1,
        "fill": True,
        "fillColor": color,
        "fillOpacity": 0.5,
    }


def _as_coordinates(values: npt.ArrayLike, name: str) -> npt.NDArray[np.float64]:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataTypeError(f"{name} must hold numbers convertible to float, got {exc}.") from exc
    if arr.ndim != 1:
        raise ParameterError(f"{name} must be one-dimensional, got an array of shape {arr.shape}.")
    return arr
