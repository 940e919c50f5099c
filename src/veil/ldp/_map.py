"""Interactive map of geo-indistinguishable locations, drawn in the browser.

The coordinates are embedded once in the HTML as compact JSON arrays (rounded to
6 decimals, about 0.1 m) and turned into Leaflet ``circleMarker`` / ``circle`` /
``polyline`` layers by a short script on one shared ``L.canvas()`` renderer. Writing a
map therefore costs one JSON encoding per layer rather than one folium object per
point, and the page stays responsive with 100 000 points.

Original locations are drawn only when the caller passes them: a published map that
shows them discloses exactly what the privatized release protects.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from veil.atomic import write_text_atomic
from veil.errors import DataTypeError, ParameterError

if TYPE_CHECKING:
    import folium
    from folium import MacroElement

__all__ = ["render_privacy_map"]

_FOLIUM_MISSING = "plot_metric_dp_map needs folium: pip install 'veil[geo]'"

# Coordinates keep 6 decimals (~0.11 m at the equator): finer digits only add bytes.
_COORD_DECIMALS = 6
# Radii are drawn in metres; a decimetre is below what a map can show.
_RADIUS_DECIMALS = 1
# A single privatized point has zero-size bounds; without a cap fitBounds zooms to
# the tile server's maximum.
_FIT_MAX_ZOOM = 16

# One script per layer. ``d`` holds the layer's columns, ``make`` builds one Leaflet
# layer from row ``i`` and ``popup`` describes the clicked layer ``l``. The layers are
# built in one pass and added as one L.featureGroup, so the browser fires a single add
# event per layer instead of one per point.
_LAYER_SCRIPT = """
{% macro script(this, kwargs) %}
(function () {
  var d = {{ this.data }};
  var opts = {{ this.style }};
  opts.renderer = {{ this.renderer.get_name() }};
  var n = d.lat.length, layers = new Array(n);
  for (var i = 0; i < n; i++) { layers[i] = {{ this.make }}; }
  L.featureGroup(layers)
    .bindPopup(function (l) { return {{ this.popup }}; })
    .addTo({{ this._parent.get_name() }});
})();
{% endmacro %}
"""

_RENDERER_SCRIPT = """
{% macro script(this, kwargs) %}
var {{ this.get_name() }} = L.canvas({padding: 0.5});
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
) -> folium.Map:
    """Draw privatized locations on an interactive map and save it as HTML.

    The map draws the privatized points in red. Only when the caller passes the
    original ``lat`` and ``lon`` does it also draw the original points in blue and,
    for the first ``max_detail_points`` records, the perturbation radius around each
    original point and a line from each original to its privatized point. A layer
    control toggles the layers. The view is centred on the mean of the privatized
    points and fitted to their bounding box, so the originals do not steer it.

    Drawing adds no noise and spends no privacy budget. A map drawn from privatized
    points alone discloses nothing beyond the release; passing ``lat``/``lon``
    embeds the original locations in the file, which must then be kept as private
    as the raw data.

    Parameters
    ----------
    lat_dp, lon_dp : array_like of float, shape (n,)
        Privatized latitudes and longitudes, in decimal degrees (WGS 84).
    radius_m : array_like of float, shape (n,), or None
        Perturbation radius of each record, in metres. Drawn only together with the
        originals, as a circle around each original point; ``None`` draws no
        circles.
    save_file : str or os.PathLike
        Path of the HTML file to write; must end in ``".html"``. The file is written
        atomically: a temporary file in the same directory replaces it once
        complete, so a failed write leaves any previous map untouched.
    lat, lon : array_like of float, shape (n,), optional
        Original latitudes and longitudes, in decimal degrees. Give both or neither;
        when given, the originals are written into the HTML.
    max_detail_points : int, default 2000
        Number of leading records (``>= 0``) drawn with a radius circle and a
        displacement line. Points beyond it are drawn as points only, which keeps
        the file small and the browser responsive.
    tiles : str, default "OpenStreetMap"
        Base map tiles, any name :class:`folium.Map` accepts.

    Returns
    -------
    folium.Map
        The map that was written to ``save_file``.

    Raises
    ------
    ParameterError
        If ``save_file`` does not end in ``".html"`` (checked before anything
        else, and nothing is written), if only one of ``lat``/``lon`` is given, if
        the arrays are not one-dimensional with equal lengths, or if
        ``max_detail_points`` is not a non-negative integer.
    DataTypeError
        If an array cannot be converted to floating point.
    ImportError
        If folium (the optional extra ``veil[geo]``) is not installed.

    Notes
    -----
    Records whose coordinates are NaN or infinite are skipped, layer by layer: a
    record with a missing privatized location is absent from the red layer but its
    original point can still be drawn, and a circle or line is drawn only when all
    of its inputs (including the radius, for circles) are finite. With no finite
    privatized point the map is centred at (0, 0) at world zoom.

    Coordinates are rounded to 6 decimals (about 0.1 m) and radii to 0.1 m in the
    HTML.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import numpy as np
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "release_map.html"
    >>> lat_dp, lon_dp = np.array([40.4168, 40.4170]), np.array([-3.7038, -3.7040])
    >>> fmap = render_privacy_map(lat_dp, lon_dp, None, out)
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
    if (
        isinstance(max_detail_points, bool)
        or not isinstance(max_detail_points, (int, np.integer))
        or max_detail_points < 0
    ):
        raise ParameterError(
            f"max_detail_points must be an integer >= 0, got {max_detail_points!r}."
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

    canvas_renderer, canvas_layer = _element_types()
    renderer = canvas_renderer()
    fmap.add_child(renderer)

    def add_layer(
        name: str,
        columns: dict[str, npt.NDArray[np.float64]],
        style: dict[str, Any],
        make: str,
        popup: str,
    ) -> None:
        keep = np.logical_and.reduce([np.isfinite(c) for c in columns.values()])
        data = {
            k: np.round(c[keep], _RADIUS_DECIMALS if k == "r" else _COORD_DECIMALS).tolist()
            for k, c in columns.items()
        }
        layer = canvas_layer(json.dumps(data), json.dumps(style), renderer, make, popup)
        group = folium.FeatureGroup(name=name)
        group.add_child(layer)
        fmap.add_child(group)

    if y is not None and x is not None:
        detail = slice(0, int(max_detail_points))
        if radius is not None:
            add_layer(
                "Perturbation radius",
                {"lat": y[detail], "lon": x[detail], "r": radius[detail]},
                {"color": "gray", "weight": 1, "opacity": 0.5, "fill": False},
                _CIRCLE_JS,
                _CIRCLE_POPUP_JS,
            )
        add_layer(
            "Original to privatized",
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
    add_layer(
        "Privatized locations",
        {"lat": y_dp, "lon": x_dp},
        _point_style("red"),
        _POINT_JS,
        _POINT_POPUP_JS.format(label="Privatized"),
    )
    folium.LayerControl(collapsed=False).add_to(fmap)

    write_text_atomic(path, fmap.get_root().render())
    return fmap


@functools.cache
def _element_types() -> tuple[
    Callable[[], MacroElement],
    Callable[[str, str, MacroElement, str, str], MacroElement],
]:
    """Return the renderer and layer element types, built on first use.

    They subclass folium's ``MacroElement``, so they cannot be defined at import time
    without making folium a hard dependency.
    """
    from folium import MacroElement
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

    return CanvasRenderer, CanvasLayer


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
