"""The map pages in a real browser with the network cut off (veil.maps, veil.geo.maps).

Each test opens a written ``map.html`` in headless Chromium (see ``conftest.py``): every
request to anything but ``file:``/``data:`` is aborted and counted, console errors and
CSP refusals are collected, and the drawn layers are counted in the page.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.geo.maps import location_map
from veil.maps import render_privacy_map

from ._page import OfflinePage

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# Layers of an overlay that Leaflet has put on the map's canvas inside the view.
_COUNT_JS = """
(name) => {
  const map = window.veilMap.map, group = window.veilMap.overlays[name];
  if (!map.hasLayer(group)) { return {total: 0, drawn: 0}; }
  const view = map.getBounds();
  let total = 0, drawn = 0;
  group.eachLayer((part) => part.eachLayer((layer) => {
    total++;
    const onCanvas = layer._map === map && layer._renderer instanceof L.Canvas
      && layer._pxBounds !== undefined;
    const where = layer.getLatLng ? layer.getLatLng() : layer.getBounds().getCenter();
    if (onCanvas && view.contains(where)) { drawn++; }
  }));
  return {total: total, drawn: drawn};
}
"""

# Pixels of a colour family on the canvases matching ``selector``.
_PIXELS_JS = """
([selector, colour]) => {
  let n = 0;
  for (const canvas of document.querySelectorAll(selector)) {
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    for (let i = 0; i < data.length; i += 4) {
      const r = data[i], g = data[i + 1], b = data[i + 2], a = data[i + 3];
      if (a < 60) { continue; }
      if (colour === "red" ? r > 180 && g < 90 && b < 90
          : colour === "blue" ? b > 180 && r < 90 && g < 90 : true) { n++; }
    }
  }
  return n;
}
"""
_POINTS_CANVAS = ".leaflet-overlay-pane canvas:not(.leaflet-heatmap-layer)"
_HEAT_CANVAS = ".leaflet-overlay-pane canvas.leaflet-heatmap-layer"


def _points(
    n: int, seed: int = 0
) -> tuple[
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
]:
    rng = np.random.default_rng(seed)
    lat = 40.4 + rng.normal(0.0, 0.03, n)
    lon = -3.7 + rng.normal(0.0, 0.03, n)
    return (
        lat,
        lon,
        lat + rng.normal(0.0, 0.002, n),
        lon + rng.normal(0.0, 0.002, n),
        rng.uniform(50.0, 300.0, n),
    )


def _count(page: OfflinePage, overlay: str) -> dict[str, int]:
    counts: dict[str, int] = page.page.evaluate(_COUNT_JS, overlay)
    return counts


def _pixels(page: OfflinePage, selector: str, colour: str) -> int:
    pixels: int = page.page.evaluate(_PIXELS_JS, [selector, colour])
    return pixels


def _wait_for_pixels(page: OfflinePage, selector: str, colour: str) -> None:
    page.page.wait_for_function(f"() => ({_PIXELS_JS})({[selector, colour]!r}) > 0", timeout=10_000)


def _screenshot(page: OfflinePage, path: Path) -> None:
    page.page.screenshot(path=str(path))
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    print(f"screenshot: {path}")


def _assert_offline(page: OfflinePage) -> None:
    """No request to any host was even attempted, and nothing went wrong in the page."""
    assert page.network_requests() == []
    assert page.routed == []
    assert page.console_errors == []


def test_release_map_draws_every_point_without_the_network(
    offline_page: OfflinePage, tmp_path: Path
) -> None:
    n = 400
    _, _, lat_dp, lon_dp, _ = _points(n)
    out = tmp_path / "map.html"
    render_privacy_map(lat_dp, lon_dp, None, out, heatmap=True)
    offline_page.open(out)
    _wait_for_pixels(offline_page, _POINTS_CANVAS, "red")
    assert _count(offline_page, "Privatized locations") == {"total": n, "drawn": n}
    assert _pixels(offline_page, _POINTS_CANVAS, "red") > n  # a few pixels per point at least
    assert _pixels(offline_page, _POINTS_CANVAS, "blue") == 0  # no originals
    assert _count(offline_page, "Heat map of privatized locations") == {"total": 0, "drawn": 0}
    # The grid and the scale bar stand in for tiles.
    assert offline_page.page.locator(".veil-grid-label").count() >= 4
    assert offline_page.page.locator(".leaflet-control-scale-line").is_visible()
    assert offline_page.page.locator("img").count() == 0
    _screenshot(offline_page, tmp_path / "release_map.png")
    _assert_offline(offline_page)


def test_private_map_draws_every_layer_without_the_network(
    offline_page: OfflinePage, tmp_path: Path
) -> None:
    n, detail = 300, 40
    lat, lon, lat_dp, lon_dp, radius = _points(n, seed=1)
    out = tmp_path / "map.html"
    render_privacy_map(
        lat_dp,
        lon_dp,
        radius,
        out,
        lat=lat,
        lon=lon,
        max_detail_points=detail,
        heatmap=True,
        highlight=5,
    )
    offline_page.open(out)
    _wait_for_pixels(offline_page, _POINTS_CANVAS, "red")
    expected = {
        "Perturbation radius": detail,
        "Original to privatized": detail,
        "Original locations": n,
        "Privatized locations": n,
        "Highlighted point": 2,
    }
    for overlay, count in expected.items():
        assert _count(offline_page, overlay) == {"total": count, "drawn": count}, overlay
    assert _pixels(offline_page, _POINTS_CANVAS, "blue") > 0
    assert offline_page.page.get_by_text("This map shows original locations").is_visible()

    # The heat map is off at first; the layer control turns it on.
    assert offline_page.page.locator(_HEAT_CANVAS).count() == 0
    offline_page.page.get_by_label("Heat map of privatized locations").check()
    _wait_for_pixels(offline_page, _HEAT_CANVAS, "any")
    # A click on the highlighted point opens a popup with a length, not coordinates.
    x, y = offline_page.page.evaluate(
        """() => {
          const map = window.veilMap.map, box = map.getContainer().getBoundingClientRect();
          let centre = null;
          window.veilMap.overlays["Highlighted point"].eachLayer((part) => part.eachLayer(
            (l) => { if (l.getLatLng) { centre = map.latLngToContainerPoint(l.getLatLng()); } }));
          return [box.left + centre.x, box.top + centre.y];
        }"""
    )
    offline_page.page.mouse.click(x, y)
    popup = offline_page.page.locator(".leaflet-popup-content").inner_text(timeout=5_000)
    assert popup.startswith(("Displacement: ", "Perturbation radius: ")) and popup.endswith(" m")
    _screenshot(offline_page, tmp_path / "private_map.png")
    _assert_offline(offline_page)


def test_location_map_of_masked_frames_draws_without_the_network(
    offline_page: OfflinePage, tmp_path: Path
) -> None:
    n = 250
    lat, lon, lat_dp, lon_dp, _ = _points(n, seed=2)
    original = pd.DataFrame({"lat": lat, "lon": lon})
    masked = pd.DataFrame({"lat": lat_dp, "lon": lon_dp})
    masked.loc[[3, 7], ["lat", "lon"]] = np.nan  # suppressed records are left out
    out = tmp_path / "map.html"
    location_map(original, masked, "lat", "lon", out)
    offline_page.open(out)
    _wait_for_pixels(offline_page, _POINTS_CANVAS, "red")
    assert _count(offline_page, "Masked locations") == {"total": n - 2, "drawn": n - 2}
    assert offline_page.page.title() == "Masked locations"
    _screenshot(offline_page, tmp_path / "location_map.png")
    _assert_offline(offline_page)


def test_tiles_come_only_from_the_named_server(offline_page: OfflinePage, tmp_path: Path) -> None:
    _, _, lat_dp, lon_dp, _ = _points(50, seed=3)
    out = tmp_path / "map.html"
    render_privacy_map(lat_dp, lon_dp, None, out, tiles="https://tiles.example.org/{z}/{x}/{y}.png")
    offline_page.open(out)
    offline_page.page.wait_for_function(
        "() => document.querySelectorAll('img.leaflet-tile').length > 0", timeout=10_000
    )
    notice = offline_page.page.get_by_text("The base map is fetched from https://tiles.example.org")
    assert notice.is_visible()
    # The recorder sees requests: the offline tests' empty lists are not vacuous.
    requests = offline_page.network_requests()
    assert requests
    assert all(url.startswith("https://tiles.example.org/") for url in requests), requests
    # Aborted tiles log load failures; nothing was refused by the page's policy.
    assert not [e for e in offline_page.console_errors if "Content Security Policy" in e]


def test_page_policy_refuses_any_other_request(offline_page: OfflinePage, tmp_path: Path) -> None:
    out = tmp_path / "map.html"
    render_privacy_map(np.array([40.4]), np.array([-3.7]), None, out)
    offline_page.open(out)
    outcome = offline_page.page.evaluate(
        """async () => {
          const img = new Image();
          img.src = "https://tiles.example.org/0/0/0.png";
          const script = document.createElement("script");
          script.src = "https://cdn.example.org/leaflet.js";
          document.head.appendChild(script);
          try { await fetch("https://example.org/beacon"); return "fetched"; }
          catch (error) { return "refused"; }
        }"""
    )
    offline_page.page.wait_for_timeout(200)
    assert outcome == "refused"
    assert offline_page.routed == []  # nothing got past the policy
    assert sorted(offline_page.network_requests()) == sorted(offline_page.refused)
    assert set(offline_page.refused) == {
        "https://tiles.example.org/0/0/0.png",
        "https://cdn.example.org/leaflet.js",
    }
    refused = [e for e in offline_page.console_errors if "Content Security Policy" in e]
    assert len(refused) >= 3, offline_page.console_errors  # the fetch too


def test_large_map_draws_within_seconds(offline_page: OfflinePage, tmp_path: Path) -> None:
    # One canvas for every point: 100 000 points take about 6 s on a slow CI machine,
    # 20 000 about 1 s (per-point DOM or SVG elements would take minutes).
    n = 20_000
    _, _, lat_dp, lon_dp, _ = _points(n, seed=4)
    out = tmp_path / "map.html"
    render_privacy_map(lat_dp, lon_dp, None, out, heatmap=True)
    start = time.perf_counter()
    offline_page.open(out)
    _wait_for_pixels(offline_page, _POINTS_CANVAS, "red")
    elapsed = time.perf_counter() - start
    assert _count(offline_page, "Privatized locations")["total"] == n
    assert elapsed < 15.0, f"{n} points took {elapsed:.1f} s to draw"
    _assert_offline(offline_page)
