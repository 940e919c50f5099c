"""Interactive and static maps of released locations.

:func:`render_privacy_map` writes an interactive HTML map (folium / Leaflet) of
released locations: privatized points from :mod:`veil.ldp`, masked points from
:mod:`veil.geo` (see :func:`veil.geo.maps.location_map` for data frames, and
:func:`veil.geo.maps.neighbourhood_png` for a static before/after figure).

The coordinates are embedded once in the HTML as compact JSON arrays (rounded to
6 decimals, about 0.1 m) and turned into Leaflet ``circleMarker`` / ``circle`` /
``polyline`` layers by a short script on one shared ``L.canvas()`` renderer. Writing a
map therefore costs one JSON encoding per layer rather than one folium object per
point, and the page stays responsive with 100 000 points. The optional heat map is
built in the browser from the same array as the released points, so it adds no data
to the file.

Original locations are drawn only when the caller passes them: a published map that
shows them discloses exactly what the release protects.

The size of the written file is logged (logger ``"veil.maps"``, level ``INFO``); it
is also ``os.path.getsize(save_file)``.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from veil.atomic import write_text_atomic
from veil.errors import DataTypeError, ParameterError
from veil.rng import RngLike, resolve_rng

if TYPE_CHECKING:
    import folium
    from folium import MacroElement

__all__ = ["render_privacy_map"]

_logger = logging.getLogger(__name__)

_FOLIUM_MISSING = "maps need folium: pip install 'veil[geo]'"

# Coordinates keep 6 decimals (~0.11 m at the equator): finer digits only add bytes.
_COORD_DECIMALS = 6
# Radii are drawn in metres; a decimetre is below what a map can show.
_RADIUS_DECIMALS = 1
# A single released point has zero-size bounds; without a cap fitBounds zooms to the
# tile server's maximum.
_FIT_MAX_ZOOM = 16
# Leaflet's sphere (L.CRS.Earth.R): the highlight radius matches its distanceTo.
_LEAFLET_EARTH_RADIUS_M = 6_371_000.0

# One script per layer. ``d`` holds the layer's columns, ``make`` builds one Leaflet
# layer from row ``i`` and ``popup`` describes the clicked layer ``l``. The layers are
# built in one pass and added as one L.featureGroup, so the browser fires a single add
# event per layer instead of one per point. The columns stay reachable under the
# element's name, so that the heat map can reuse them.
_LAYER_SCRIPT = """
{% macro script(this, kwargs) %}
var {{ this.get_name() }} = (function () {
  var d = {{ this.data }};
  var opts = {{ this.style }};
  opts.renderer = {{ this.renderer.get_name() }};
  var n = d.lat.length, layers = new Array(n);
  for (var i = 0; i < n; i++) { layers[i] = {{ this.make }}; }
  L.featureGroup(layers)
    .bindPopup(function (l) { return {{ this.popup }}; })
    .addTo({{ this._parent.get_name() }});
  return d;
})();
{% endmacro %}
"""

_RENDERER_SCRIPT = """
{% macro script(this, kwargs) %}
var {{ this.get_name() }} = L.canvas({padding: 0.5});
{% endmacro %}
"""

# A leaflet.heat layer over the columns of another canvas layer (``this.source``).
_HEAT_SCRIPT = """
{% macro script(this, kwargs) %}
var {{ this.get_name() }} = (function () {
  var src = {{ this.source.get_name() }};
  var n = src.lat.length, pts = new Array(n);
  for (var i = 0; i < n; i++) { pts[i] = [src.lat[i], src.lon[i]]; }
  return L.heatLayer(pts, {{ this.options|tojavascript }});
})();
{% endmacro %}
"""

_POINT_JS = "L.circleMarker([d.lat[i], d.lon[i]], opts)"
_CIRCLE_JS = "L.circle([d.lat[i], d.lon[i]], L.extend({radius: d.r[i]}, opts))"
_LINE_JS = "L.polyline([[d.lat[i], d.lon[i]], [d.lat_dp[i], d.lon_dp[i]]], opts)"

_POINT_POPUP_JS = (
    "'{label}: (' + l.getLatLng().lat.toFixed(6) + ', ' + l.getLatLng().lng.toFixed(6) + ')'"
)
_CIRCLE_POPUP_JS = "'Perturbation radius: ' + l.getRadius().toFixed(0) + ' m'"
_LINE_POPUP_JS = (
    "'Displacement: ' + l.getLatLngs()[0].distanceTo(l.getLatLngs()[1]).toFixed(0) + ' m'"
)


def render_privacy_map(
    lat_dp: npt.ArrayLike,
    lon_dp: npt.ArrayLike,
    radius_m: npt.ArrayLike | None,
    save_file: str | os.PathLike[str],
    *,
    lat: npt.ArrayLike | None = None,
    lon: npt.ArrayLike | None = None,
    max_detail_points: int = 2000,
    tiles: str = "OpenStreetMap",
    heatmap: bool = False,
    displacement_sample: int | None = None,
    highlight: int | None = None,
    released_label: str = "Privatized",
    rng: RngLike = None,
) -> folium.Map:
    """Draw released locations on an interactive map and save it as HTML.

    The map draws the released (privatized or masked) points in red. Only when the
    caller passes the original ``lat`` and ``lon`` does it also draw the original
    points in blue and, for some records, the perturbation radius around the original
    point and a line from the original to the released point. A layer control toggles
    the layers. The view is centred on the mean of the released points and fitted to
    their bounding box, so the originals do not steer it.

    Drawing adds no noise and spends no privacy budget. A map drawn from released
    points alone discloses nothing beyond the release; passing ``lat``/``lon``
    embeds the original locations in the file, which must then be kept as private
    as the raw data.

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
    tiles : str, default "OpenStreetMap"
        Base map tiles, any name :class:`folium.Map` accepts.
    heatmap : bool, default False
        Add a heat-map layer of the released points (``folium.plugins.HeatMap``,
        built in the browser from the released points' array, so the coordinates are
        embedded once), listed in the layer control.
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
        Word for the released points in layer names and popups (``"Masked"`` for
        :mod:`veil.geo`).
    rng : None, int or numpy.random.Generator
        Source of the displacement sample (see :mod:`veil.rng`); unused otherwise.

    Returns
    -------
    folium.Map
        The map that was written to ``save_file``. The file's size is logged at
        ``INFO`` level on the ``"veil.maps"`` logger and is
        ``os.path.getsize(save_file)``.

    Raises
    ------
    ParameterError
        If ``save_file`` does not end in ``".html"`` (checked before anything
        else, and nothing is written), if only one of ``lat``/``lon`` is given, if
        the arrays are not one-dimensional with equal lengths, if
        ``max_detail_points`` or ``displacement_sample`` is not a non-negative
        integer, if ``displacement_sample > 0`` or ``highlight`` is given without
        the originals, or if ``highlight`` is not the position of a record with
        finite original and released coordinates. Nothing is written.
    DataTypeError
        If an array cannot be converted to floating point.
    ImportError
        If folium (the optional extra ``veil[geo]``) is not installed.

    Notes
    -----
    Records whose coordinates are NaN or infinite are skipped, layer by layer: a
    record with a missing released location is absent from the red layer but its
    original point can still be drawn, and a circle or line is drawn only when all
    of its inputs (including the radius, for circles) are finite. With no finite
    released point the map is centred at (0, 0) at world zoom.

    Coordinates are rounded to 6 decimals (about 0.1 m) and radii to 0.1 m in the
    HTML. With 100 000 released points and originals the file is about 4.5 MB; the
    heat map adds no data.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import numpy as np
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "release_map.html"
    >>> lat_dp, lon_dp = np.array([40.4168, 40.4170]), np.array([-3.7038, -3.7040])
    >>> fmap = render_privacy_map(lat_dp, lon_dp, None, out, heatmap=True)
    >>> "40.4168" in out.read_text(encoding="utf-8")
    True
    """
    path = os.fspath(save_file)
    if not isinstance(path, str) or not path.endswith(".html"):
        raise ParameterError(f"save_file must be a path ending in '.html', got {save_file!r}.")

    try:
        import folium
    except ImportError as exc:
        raise ImportError(_FOLIUM_MISSING) from exc

    if (lat is None) != (lon is None):
        raise ParameterError(
            "lat and lon must be given together (to draw the originals) or both "
            f"omitted, got lat={'None' if lat is None else 'an array'} and "
            f"lon={'None' if lon is None else 'an array'}."
        )
    _check_count(max_detail_points, "max_detail_points")
    if displacement_sample is not None:
        _check_count(displacement_sample, "displacement_sample")
    has_original = lat is not None
    if not has_original and displacement_sample:
        raise ParameterError(
            "displacement_sample: displacement lines need the original lat and lon; "
            f"got displacement_sample={displacement_sample} without them."
        )
    if not has_original and highlight is not None:
        raise ParameterError(
            "highlight: the radius circle is drawn around the original point and needs "
            "the original lat and lon."
        )

    y_dp = _as_coordinates(lat_dp, "lat_dp")
    x_dp = _as_coordinates(lon_dp, "lon_dp")
    radius = None if radius_m is None else _as_coordinates(radius_m, "radius_m")
    y = None if lat is None else _as_coordinates(lat, "lat")
    x = None if lon is None else _as_coordinates(lon, "lon")
    named = {"lon_dp": x_dp, "radius_m": radius, "lat": y, "lon": x}
    mismatched = {k: len(v) for k, v in named.items() if v is not None and len(v) != len(y_dp)}
    if mismatched:
        lengths = ", ".join(f"{k} has {n}" for k, n in mismatched.items())
        raise ParameterError(
            f"all arrays must have the length of lat_dp ({len(y_dp)}), but {lengths}."
        )

    highlighted: dict[str, npt.NDArray[np.float64]] | None = None
    if highlight is not None and y is not None and x is not None:
        highlighted = _highlight_columns(highlight, y, x, y_dp, x_dp, radius)

    released = released_label.strip() or "Released"
    shown = np.isfinite(y_dp) & np.isfinite(x_dp)
    if shown.any():
        y_shown, x_shown = y_dp[shown], x_dp[shown]
        fmap = folium.Map(location=[float(y_shown.mean()), float(x_shown.mean())], tiles=tiles)
        fmap.fit_bounds(
            [
                [float(y_shown.min()), float(x_shown.min())],
                [float(y_shown.max()), float(x_shown.max())],
            ],
            max_zoom=_FIT_MAX_ZOOM,
        )
    else:
        fmap = folium.Map(location=[0.0, 0.0], zoom_start=2, tiles=tiles)

    canvas_renderer, canvas_layer, heat_layer = _element_types()
    renderer = canvas_renderer()
    fmap.add_child(renderer)

    def add_layer(
        name: str,
        columns: dict[str, npt.NDArray[np.float64]],
        style: dict[str, Any],
        make: str,
        popup: str,
        group: folium.FeatureGroup | None = None,
    ) -> MacroElement:
        keep = np.logical_and.reduce([np.isfinite(c) for c in columns.values()])
        data = {
            k: np.round(c[keep], _RADIUS_DECIMALS if k == "r" else _COORD_DECIMALS).tolist()
            for k, c in columns.items()
        }
        layer = canvas_layer(json.dumps(data), json.dumps(style), renderer, make, popup)
        if group is None:
            group = folium.FeatureGroup(name=name)
            fmap.add_child(group)
        group.add_child(layer)
        return layer

    if y is not None and x is not None:
        detail: slice | npt.NDArray[np.intp]
        if displacement_sample is None:
            detail = slice(0, int(max_detail_points))
            draw_detail = True
        else:
            detail = _sample_rows(int(displacement_sample), y, x, y_dp, x_dp, rng)
            draw_detail = detail.size > 0
        if draw_detail:
            if radius is not None:
                add_layer(
                    "Perturbation radius",
                    {"lat": y[detail], "lon": x[detail], "r": radius[detail]},
                    {"color": "gray", "weight": 1, "opacity": 0.5, "fill": False},
                    _CIRCLE_JS,
                    _CIRCLE_POPUP_JS,
                )
            add_layer(
                f"Original to {released.lower()}",
                {
                    "lat": y[detail],
                    "lon": x[detail],
                    "lat_dp": y_dp[detail],
                    "lon_dp": x_dp[detail],
                },
                {"color": "black", "weight": 1, "opacity": 0.6},
                _LINE_JS,
                _LINE_POPUP_JS,
            )
        add_layer(
            "Original locations",
            {"lat": y, "lon": x},
            _point_style("blue"),
            _POINT_JS,
            _POINT_POPUP_JS.format(label="Original"),
        )
    released_layer = add_layer(
        f"{released} locations",
        {"lat": y_dp, "lon": x_dp},
        _point_style("red"),
        _POINT_JS,
        _POINT_POPUP_JS.format(label=released),
    )
    if heatmap:
        fmap.add_child(heat_layer(released_layer, f"Heat map of {released.lower()} locations"))
    if highlighted is not None:
        group = folium.FeatureGroup(name="Highlighted point")
        fmap.add_child(group)
        style = {"color": "orange", "weight": 3, "opacity": 0.9}
        add_layer(
            "",
            {k: highlighted[k] for k in ("lat", "lon", "r")},
            {**style, "fill": True, "fillOpacity": 0.1},
            _CIRCLE_JS,
            _CIRCLE_POPUP_JS,
            group,
        )
        add_layer(
            "",
            {k: highlighted[k] for k in ("lat", "lon", "lat_dp", "lon_dp")},
            style,
            _LINE_JS,
            _LINE_POPUP_JS,
            group,
        )
    folium.LayerControl(collapsed=False).add_to(fmap)

    write_text_atomic(path, fmap.get_root().render())
    _logger.info("wrote %s (%d bytes)", path, os.path.getsize(path))
    return fmap


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


@functools.cache
def _element_types() -> tuple[
    Callable[[], MacroElement],
    Callable[[str, str, MacroElement, str, str], MacroElement],
    Callable[[MacroElement, str], MacroElement],
]:
    """Return the renderer, layer and heat-map element types, built on first use.

    They subclass folium's elements, so they cannot be defined at import time
    without making folium a hard dependency.
    """
    from folium import MacroElement
    from folium.plugins import HeatMap
    from folium.template import Template

    class CanvasRenderer(MacroElement):
        """One ``L.canvas()`` renderer shared by every layer of the map."""

        _template = Template(_RENDERER_SCRIPT)

        def __init__(self) -> None:
            super().__init__()  # type: ignore[no-untyped-call]
            self._name = "CanvasRenderer"

    class CanvasLayer(MacroElement):
        """Leaflet layers built in the browser from JSON columns (see ``_LAYER_SCRIPT``)."""

        _template = Template(_LAYER_SCRIPT)

        def __init__(
            self, data: str, style: str, renderer: MacroElement, make: str, popup: str
        ) -> None:
            super().__init__()  # type: ignore[no-untyped-call]
            self._name = "CanvasLayer"
            self.data = data
            self.style = style
            self.renderer = renderer
            self.make = make
            self.popup = popup

    class SharedHeatMap(HeatMap):
        """A ``HeatMap`` drawn from the columns of a :class:`CanvasLayer` (no copy)."""

        _template = Template(_HEAT_SCRIPT)

        def __init__(self, source: MacroElement, name: str) -> None:
            super().__init__(  # type: ignore[no-untyped-call]
                [], name=name, min_opacity=0.3, radius=12, blur=15
            )
            self._name = "SharedHeatMap"
            self.source = source

    return CanvasRenderer, CanvasLayer, SharedHeatMap


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
