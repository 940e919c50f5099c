"""Tests for the browser-drawn maps of released locations (veil.maps)."""

from __future__ import annotations

import base64
import builtins
import hashlib
import html.parser
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import veil
from veil.errors import ParameterError
from veil.maps import PrivacyMap, render_privacy_map

_ASSETS = Path(veil.__file__).parent / "assets"

# Distinctive 6-decimal values: they appear in the HTML only if that point is drawn.
ORIGINAL_LAT = 40.123457
ORIGINAL_LON = -3.654321
PRIVATE_LAT = 40.131313
PRIVATE_LON = -3.646464


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
    lat = 40.4 + rng.normal(0.0, 0.05, n)
    lon = -3.7 + rng.normal(0.0, 0.05, n)
    lat_dp = lat + rng.normal(0.0, 0.002, n)
    lon_dp = lon + rng.normal(0.0, 0.002, n)
    radius = rng.uniform(50.0, 500.0, n)
    lat[0], lon[0] = ORIGINAL_LAT, ORIGINAL_LON
    lat_dp[0], lon_dp[0] = PRIVATE_LAT, PRIVATE_LON
    return lat, lon, lat_dp, lon_dp, radius


def _spec(html: str) -> dict[str, Any]:
    """The page's data block: view, tiles and layers."""
    (block,) = re.findall(
        r'<script type="application/json" id="veil-map-data">(.*?)</script>', html, re.S
    )
    spec: dict[str, Any] = json.loads(block)
    return spec


def _layer_data(html: str) -> list[dict[str, list[float]]]:
    """The JSON columns of every drawn layer, in drawing order."""
    return [part["data"] for o in _spec(html)["overlays"] for part in o["parts"]]


def test_writes_file_with_privatized_coordinates(tmp_path: Path) -> None:
    _, _, lat_dp, lon_dp, radius = _points(50)
    out = tmp_path / "map.html"
    page = render_privacy_map(lat_dp, lon_dp, radius, out)
    html = out.read_text(encoding="utf-8")
    assert isinstance(page, PrivacyMap)
    assert page.path == str(out)
    assert page.layers == ("Privatized locations",)
    assert str(PRIVATE_LAT) in html and str(PRIVATE_LON) in html
    assert "Privatized locations" in html
    assert list(tmp_path.iterdir()) == [out]  # no temporary file left behind


def test_originals_absent_unless_passed(tmp_path: Path) -> None:
    _, _, lat_dp, lon_dp, radius = _points(50)
    out = tmp_path / "map.html"
    render_privacy_map(lat_dp, lon_dp, radius, out)
    html = out.read_text(encoding="utf-8")
    assert str(ORIGINAL_LAT) not in html
    assert str(ORIGINAL_LON) not in html
    assert _layer_names(html) == ["Privatized locations"]
    assert len(_layer_data(html)) == 1
    assert "original locations" not in html  # no private-map warning either


def test_originals_present_when_passed(tmp_path: Path) -> None:
    lat, lon, lat_dp, lon_dp, radius = _points(50)
    out = tmp_path / "map.html"
    render_privacy_map(lat_dp, lon_dp, radius, out, lat=lat, lon=lon)
    html = out.read_text(encoding="utf-8")
    assert str(ORIGINAL_LAT) in html and str(ORIGINAL_LON) in html
    for name in (
        "Original locations",
        "Privatized locations",
        "Perturbation radius",
        "Original to privatized",
    ):
        assert name in _layer_names(html)


def test_view_centred_on_privatized_points(tmp_path: Path) -> None:
    lat, lon, lat_dp, lon_dp, radius = _points(200)
    out = tmp_path / "map.html"
    page = render_privacy_map(lat_dp, lon_dp, radius, out, lat=lat + 5.0, lon=lon + 5.0)
    assert page.centre == pytest.approx((lat_dp.mean(), lon_dp.mean()))
    spec = _spec(out.read_text(encoding="utf-8"))
    assert spec["bounds"] == [
        [pytest.approx(lat_dp.min()), pytest.approx(lon_dp.min())],
        [pytest.approx(lat_dp.max()), pytest.approx(lon_dp.max())],
    ]


def test_detail_limited_to_max_detail_points(tmp_path: Path) -> None:
    lat, lon, lat_dp, lon_dp, radius = _points(300)
    out = tmp_path / "map.html"
    render_privacy_map(lat_dp, lon_dp, radius, out, lat=lat, lon=lon, max_detail_points=25)
    circles, lines, originals, privatized = _layer_data(out.read_text(encoding="utf-8"))
    assert len(circles["r"]) == 25
    assert len(lines["lat_dp"]) == 25
    assert len(originals["lat"]) == 300
    assert len(privatized["lat"]) == 300


def test_zero_detail_points_draws_only_point_layers(tmp_path: Path) -> None:
    lat, lon, lat_dp, lon_dp, radius = _points(30)
    out = tmp_path / "map.html"
    render_privacy_map(lat_dp, lon_dp, radius, out, lat=lat, lon=lon, max_detail_points=0)
    circles, lines, originals, privatized = _layer_data(out.read_text(encoding="utf-8"))
    assert circles["lat"] == [] and lines["lat"] == []
    assert len(originals["lat"]) == len(privatized["lat"]) == 30


@pytest.mark.parametrize("save_file", ["map.htm", "map.png", "map", "map.html.bak"])
def test_bad_save_file_raises_and_writes_nothing(tmp_path: Path, save_file: str) -> None:
    _, _, lat_dp, lon_dp, radius = _points(10)
    with pytest.raises(ParameterError, match=r"save_file.*\.html"):
        render_privacy_map(lat_dp, lon_dp, radius, tmp_path / save_file)
    assert list(tmp_path.iterdir()) == []


def test_bad_save_file_checked_before_other_arguments(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="save_file"):
        render_privacy_map(np.zeros(3), np.zeros(2), None, tmp_path / "map.txt")


def test_bad_save_file_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=re.escape("map.txt")):
        render_privacy_map(np.zeros(1), np.zeros(1), None, str(tmp_path / "map.txt"))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"lon_dp": np.zeros(4)},
        {"radius_m": np.zeros(4)},
        {"lat": np.zeros(4), "lon": np.zeros(5)},
    ],
)
def test_mismatched_lengths_raise(tmp_path: Path, kwargs: dict[str, Any]) -> None:
    args: dict[str, Any] = {
        "lat_dp": np.zeros(5),
        "lon_dp": np.zeros(5),
        "radius_m": None,
        "save_file": tmp_path / "map.html",
    }
    args.update(kwargs)
    with pytest.raises(ParameterError, match="length"):
        render_privacy_map(**args)
    assert not (tmp_path / "map.html").exists()


def test_only_one_of_lat_lon_raises(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="lat and lon"):
        render_privacy_map(np.zeros(3), np.zeros(3), None, tmp_path / "map.html", lat=np.zeros(3))


@pytest.mark.parametrize("bad", [-1, 2.5, True])
def test_bad_max_detail_points_raises(tmp_path: Path, bad: Any) -> None:
    with pytest.raises(ParameterError, match="max_detail_points"):
        render_privacy_map(
            np.zeros(3), np.zeros(3), None, tmp_path / "map.html", max_detail_points=bad
        )


def test_nan_coordinates_skipped(tmp_path: Path) -> None:
    lat, lon, lat_dp, lon_dp, radius = _points(10)
    lat_dp[3] = np.nan
    lon[5] = np.nan
    radius[7] = np.nan
    out = tmp_path / "map.html"
    page = render_privacy_map(lat_dp, lon_dp, radius, out, lat=lat, lon=lon)
    html = out.read_text(encoding="utf-8")
    assert "NaN" not in json.dumps(_spec(html))
    circles, lines, originals, privatized = _layer_data(html)
    assert len(privatized["lat"]) == 9  # row 3
    assert len(originals["lat"]) == 9  # row 5
    assert len(lines["lat"]) == 8  # rows 3 and 5
    assert len(circles["lat"]) == 8  # rows 5 and 7
    assert page.centre == pytest.approx((np.nanmean(lat_dp), lon_dp[~np.isnan(lat_dp)].mean()))


def test_empty_input_centred_at_origin(tmp_path: Path) -> None:
    out = tmp_path / "map.html"
    empty = np.array([], dtype=np.float64)
    page = render_privacy_map(empty, empty, empty, out, lat=empty, lon=empty)
    assert page.centre == (0.0, 0.0)
    assert page.bounds is None
    assert _spec(out.read_text(encoding="utf-8"))["bounds"] is None


def test_all_nan_input_centred_at_origin(tmp_path: Path) -> None:
    out = tmp_path / "map.html"
    page = render_privacy_map(np.full(3, np.nan), np.zeros(3), None, out)
    assert page.centre == (0.0, 0.0)
    assert out.exists()


def test_overwrites_existing_file(tmp_path: Path) -> None:
    out = tmp_path / "map.html"
    out.write_text("old", encoding="utf-8")
    render_privacy_map(np.array([PRIVATE_LAT]), np.array([PRIVATE_LON]), None, out)
    assert str(PRIVATE_LAT) in out.read_text(encoding="utf-8")
    assert list(tmp_path.iterdir()) == [out]


def test_failed_write_keeps_previous_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "map.html"
    out.write_text("old", encoding="utf-8")

    def fail(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("veil.atomic.os.replace", fail)
    with pytest.raises(OSError, match="disk full"):
        render_privacy_map(np.zeros(2), np.zeros(2), None, out)
    assert out.read_text(encoding="utf-8") == "old"
    assert list(tmp_path.iterdir()) == [out]


def test_maps_need_no_folium(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_folium(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "folium" or name.startswith("folium."):
            raise ImportError("No module named 'folium'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_folium)
    out = tmp_path / "map.html"
    render_privacy_map(np.array([PRIVATE_LAT]), np.array([PRIVATE_LON]), None, out, heatmap=True)
    assert str(PRIVATE_LAT) in out.read_text(encoding="utf-8")


def test_100k_points_writes_small_file(tmp_path: Path) -> None:
    lat, lon, lat_dp, lon_dp, radius = _points(100_000)
    out = tmp_path / "map.html"
    render_privacy_map(lat_dp, lon_dp, radius, out, lat=lat, lon=lon)
    assert out.exists()
    assert out.stat().st_size < 15_000_000


# --- heat map, displacement sample, highlight ------------------------------------------


def _layer_names(html: str) -> list[str]:
    """Overlay names listed in the layer control."""
    return [o["name"] for o in _spec(html)["overlays"]]


@pytest.mark.parametrize("heatmap", [False, True])
def test_heat_map_layer_present_only_on_request(tmp_path: Path, heatmap: bool) -> None:
    _, _, lat_dp, lon_dp, _ = _points(40)
    out = tmp_path / "map.html"
    render_privacy_map(lat_dp, lon_dp, None, out, heatmap=heatmap)
    html = out.read_text(encoding="utf-8")
    assert ("L.heatLayer=" in html) is heatmap  # the inlined plugin
    assert ("Heat map of privatized locations" in _layer_names(html)) is heatmap


def test_heat_map_reuses_the_released_points(tmp_path: Path) -> None:
    _, _, lat_dp, lon_dp, _ = _points(40)
    lat_dp[5] = 40.4242424  # inside the bounds: appears once per copy of the data
    out = tmp_path / "map.html"
    render_privacy_map(lat_dp, lon_dp, None, out, heatmap=True)
    html = out.read_text(encoding="utf-8")
    assert html.count("40.424242") == 1  # the coordinates are embedded once
    overlays = _spec(html)["overlays"]
    heat = overlays[-1]["heat"]
    assert overlays[heat["source"]]["name"] == "Privatized locations"
    assert overlays[-1]["parts"] == []


def test_heat_map_adds_little_to_the_file(tmp_path: Path) -> None:
    _, _, lat_dp, lon_dp, _ = _points(5000)
    plain, heat = tmp_path / "plain.html", tmp_path / "heat.html"
    render_privacy_map(lat_dp, lon_dp, None, plain)
    render_privacy_map(lat_dp, lon_dp, None, heat, heatmap=True)
    plugin = (_ASSETS / "leaflet_heat" / "leaflet-heat.js").stat().st_size
    assert heat.stat().st_size - plain.stat().st_size < plugin + 500


@pytest.mark.parametrize("sample", [0, 1, 7, 50, 1000])
def test_displacement_sample_draws_at_most_the_sample(tmp_path: Path, sample: int) -> None:
    lat, lon, lat_dp, lon_dp, _ = _points(50)
    out = tmp_path / "map.html"
    render_privacy_map(
        lat_dp,
        lon_dp,
        None,
        out,
        lat=lat,
        lon=lon,
        displacement_sample=sample,
        rng=np.random.default_rng(3),
    )
    html = out.read_text(encoding="utf-8")
    lines = [d for d in _layer_data(html) if "lat_dp" in d]
    if sample == 0:
        assert lines == []
        assert "Original to privatized" not in html
    else:
        (drawn,) = lines
        assert len(drawn["lat"]) == min(sample, 50)
        assert "Original to privatized" in _layer_names(html)


def test_displacement_sample_is_random_and_uses_rng(tmp_path: Path) -> None:
    lat, lon, lat_dp, lon_dp, _ = _points(500)

    def sampled(seed: int) -> list[float]:
        out = tmp_path / f"map{seed}.html"
        render_privacy_map(
            lat_dp,
            lon_dp,
            None,
            out,
            lat=lat,
            lon=lon,
            displacement_sample=20,
            rng=np.random.default_rng(seed),
        )
        (lines,) = [d for d in _layer_data(out.read_text(encoding="utf-8")) if "lat_dp" in d]
        return lines["lat"]

    first = sampled(1)
    assert first == sampled(1)
    assert first != sampled(2)
    assert first != np.round(lat[:20], 6).tolist()  # not the leading rows


def test_displacement_sample_skips_rows_without_a_line(tmp_path: Path) -> None:
    lat, lon, lat_dp, lon_dp, _ = _points(6)
    lat_dp[:3] = np.nan
    out = tmp_path / "map.html"
    render_privacy_map(lat_dp, lon_dp, None, out, lat=lat, lon=lon, displacement_sample=5, rng=None)
    (lines,) = [d for d in _layer_data(out.read_text(encoding="utf-8")) if "lat_dp" in d]
    assert len(lines["lat"]) == 3


@pytest.mark.parametrize(
    "kwargs", [{"displacement_sample": 3}, {"highlight": 0}], ids=["sample", "highlight"]
)
def test_lines_and_highlight_need_the_originals(tmp_path: Path, kwargs: dict[str, Any]) -> None:
    _, _, lat_dp, lon_dp, _ = _points(10)
    with pytest.raises(ParameterError, match="original"):
        render_privacy_map(lat_dp, lon_dp, None, tmp_path / "map.html", **kwargs)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("bad", [-1, 2.5, True])
def test_bad_displacement_sample_raises(tmp_path: Path, bad: Any) -> None:
    lat, lon, lat_dp, lon_dp, _ = _points(5)
    with pytest.raises(ParameterError, match="displacement_sample"):
        render_privacy_map(
            lat_dp, lon_dp, None, tmp_path / "map.html", lat=lat, lon=lon, displacement_sample=bad
        )
    assert list(tmp_path.iterdir()) == []


def test_highlight_circle_uses_the_displacement_length(tmp_path: Path) -> None:
    lat, lon, lat_dp, lon_dp, _ = _points(30)
    lat_dp[4], lon_dp[4] = lat[4] + 0.01, lon[4]  # 0.01 degree north: 1 111.9 m
    out = tmp_path / "map.html"
    render_privacy_map(lat_dp, lon_dp, None, out, lat=lat, lon=lon, highlight=4)
    html = out.read_text(encoding="utf-8")
    assert "Highlighted point" in _layer_names(html)
    circle, line = _layer_data(html)[-2:]
    assert circle["lat"] == [round(lat[4], 6)] and circle["lon"] == [round(lon[4], 6)]
    assert circle["r"] == [pytest.approx(1111.9, abs=0.2)]
    assert line["lat_dp"] == [round(lat_dp[4], 6)]


def test_highlight_circle_uses_the_given_radius(tmp_path: Path) -> None:
    lat, lon, lat_dp, lon_dp, radius = _points(30)
    out = tmp_path / "map.html"
    render_privacy_map(
        lat_dp, lon_dp, radius, out, lat=lat, lon=lon, highlight=7, max_detail_points=0
    )
    circle = _layer_data(out.read_text(encoding="utf-8"))[-2]
    assert circle["r"] == [round(radius[7], 1)]


def test_no_highlight_layer_by_default(tmp_path: Path) -> None:
    lat, lon, lat_dp, lon_dp, _ = _points(10)
    out = tmp_path / "map.html"
    render_privacy_map(lat_dp, lon_dp, None, out, lat=lat, lon=lon)
    assert "Highlighted point" not in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("bad", [-1, 10, 1.0, True, "0"])
def test_bad_highlight_raises(tmp_path: Path, bad: Any) -> None:
    lat, lon, lat_dp, lon_dp, _ = _points(10)
    with pytest.raises(ParameterError, match="highlight"):
        render_privacy_map(
            lat_dp, lon_dp, None, tmp_path / "map.html", lat=lat, lon=lon, highlight=bad
        )
    assert list(tmp_path.iterdir()) == []


def test_highlight_of_a_missing_point_raises(tmp_path: Path) -> None:
    lat, lon, lat_dp, lon_dp, _ = _points(10)
    lat_dp[2] = np.nan
    with pytest.raises(ParameterError, match="highlight: record 2"):
        render_privacy_map(
            lat_dp, lon_dp, None, tmp_path / "map.html", lat=lat, lon=lon, highlight=2
        )
    assert list(tmp_path.iterdir()) == []


def test_released_label_names_the_layers(tmp_path: Path) -> None:
    lat, lon, lat_dp, lon_dp, _ = _points(10)
    out = tmp_path / "map.html"
    render_privacy_map(
        lat_dp, lon_dp, None, out, lat=lat, lon=lon, heatmap=True, released_label="Masked"
    )
    html = out.read_text(encoding="utf-8")
    assert _layer_names(html) == [
        "Original to masked",
        "Original locations",
        "Masked locations",
        "Heat map of masked locations",
    ]
    assert "Privatized" not in html


def test_file_size_is_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    _, _, lat_dp, lon_dp, _ = _points(10)
    out = tmp_path / "map.html"
    with caplog.at_level("INFO", logger="veil.maps"):
        render_privacy_map(lat_dp, lon_dp, None, out)
    assert f"({out.stat().st_size} bytes)" in caplog.text


def test_100k_points_with_every_layer_writes_small_file(tmp_path: Path) -> None:
    lat, lon, lat_dp, lon_dp, radius = _points(100_000)
    out = tmp_path / "map.html"
    render_privacy_map(
        lat_dp,
        lon_dp,
        radius,
        out,
        lat=lat,
        lon=lon,
        heatmap=True,
        displacement_sample=1000,
        highlight=0,
        rng=np.random.default_rng(0),
    )
    assert out.stat().st_size < 15_000_000


# --- self-contained page: no network, pinned assets, content security policy ------------

TILES = "https://{s}.tile.example.org/{z}/{x}/{y}.png"


class _Tags(html.parser.HTMLParser):
    """Every start tag with its attributes, and the text of each script and style."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.texts: list[tuple[str, dict[str, str | None], str]] = []
        self._open: tuple[str, dict[str, str | None]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._open = (tag, dict(attrs))

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self.texts.append((*self._open, data))

    def handle_endtag(self, tag: str) -> None:
        self._open = None


def _parse(page: str) -> _Tags:
    tags = _Tags()
    tags.feed(page)
    tags.close()
    return tags


def _policy(tags: _Tags) -> dict[str, list[str]]:
    (content,) = [
        a["content"]
        for t, a in tags.tags
        if t == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy"
    ]
    assert content is not None
    directives = [d.split() for d in content.split(";")]
    return {d[0]: d[1:] for d in directives if d}


def _full_map(tmp_path: Path, **kwargs: Any) -> str:
    lat, lon, lat_dp, lon_dp, radius = _points(100)
    out = tmp_path / "full.html"
    render_privacy_map(
        lat_dp, lon_dp, radius, out, lat=lat, lon=lon, heatmap=True, highlight=1, **kwargs
    )
    return out.read_text(encoding="utf-8")


def test_page_references_nothing_on_the_network(tmp_path: Path) -> None:
    tags = _parse(_full_map(tmp_path))
    assert not [t for t, _ in tags.tags if t in ("link", "img", "iframe", "object", "embed")]
    for tag, attrs in tags.tags:
        for name in ("src", "href", "srcset", "action", "data", "poster", "background"):
            assert attrs.get(name) is None, (tag, attrs)
    for tag, _, text in tags.texts:
        if tag == "style":
            # Every CSS url() is a data: URI (Leaflet's images are inlined).
            assert re.findall(r"url\((?!data:|#default#VML\))", text) == []
    lowered = _full_map(tmp_path).lower()
    for leftover in ("cdn.", "jquery", "bootstrap", "font-awesome", "folium", "sourcemappingurl"):
        assert leftover not in lowered


def test_csp_admits_exactly_the_inline_scripts_and_style(tmp_path: Path) -> None:
    tags = _parse(_full_map(tmp_path))
    policy = _policy(tags)
    assert policy["default-src"] == ["'none'"]
    assert policy["img-src"] == ["data:"]
    assert policy["base-uri"] == ["'none'"]
    assert "connect-src" not in policy  # falls back to default-src 'none'

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    scripts = [text for tag, a, text in tags.texts if tag == "script" and not a.get("type")]
    styles = [text for tag, _, text in tags.texts if tag == "style"]
    assert len(scripts) == 3  # Leaflet, Leaflet.heat, veil's drawing script
    assert policy["script-src"] == [digest(s) for s in scripts]
    assert policy["style-src"] == [digest(s) for s in styles]
    joined = " ".join(" ".join(v) for v in policy.values())
    assert "unsafe" not in joined and "http" not in joined


def test_tiles_are_off_by_default_and_the_page_says_so(tmp_path: Path) -> None:
    page = _full_map(tmp_path)
    assert _spec(page)["tiles"] is None
    assert "No base map" in page
    assert "tile" not in page.split("<body>", 1)[1].split("<script", 1)[0].lower()


def test_tiles_admit_their_origin_only_and_show_a_notice(tmp_path: Path) -> None:
    _, _, lat_dp, lon_dp, _ = _points(10)
    out = tmp_path / "map.html"
    page = render_privacy_map(lat_dp, lon_dp, None, out, tiles=TILES)
    text = out.read_text(encoding="utf-8")
    assert page.tiles == TILES
    assert _spec(text)["tiles"] == TILES
    assert _policy(_parse(text))["img-src"] == ["data:", "https://*.tile.example.org"]
    notice = re.search(r'<div class="veil-notice[^"]*" role="note">([^<]*)</div>', text)
    assert notice is not None
    assert "fetched from https://*.tile.example.org" in notice.group(1)
    assert "learns which area" in notice.group(1)


@pytest.mark.parametrize(
    ("tiles", "origin"),
    [
        ("https://tile.openstreetmap.org/{z}/{x}/{y}.png", "https://tile.openstreetmap.org"),
        ("http://localhost:8080/tiles/{z}/{x}/{y}{r}.png", "http://localhost:8080"),
        ("https://Tiles.Example.org/{z}/{y}/{x}?key=abc", "https://tiles.example.org"),
    ],
)
def test_tile_origin_in_the_policy(tmp_path: Path, tiles: str, origin: str) -> None:
    out = tmp_path / "map.html"
    render_privacy_map(np.zeros(1), np.zeros(1), None, out, tiles=tiles)
    assert _policy(_parse(out.read_text(encoding="utf-8")))["img-src"] == ["data:", origin]


@pytest.mark.parametrize(
    "bad",
    [
        "OpenStreetMap",  # a folium tile-set name is not a URL
        "ftp://tiles.example.org/{z}/{x}/{y}.png",
        "https://tiles.example.org/{z}/{x}.png",
        "https://user@tiles.example.org/{z}/{x}/{y}.png",
        "https://tiles.example.org/{z}/{x}/{y}/{key}.png",
        "https://a.{s}.example.org/{z}/{x}/{y}.png",
        "https://tiles.example.org/{s}/{z}/{x}/{y}.png",
        "https://tiles.example.org;script-src */{z}/{x}/{y}.png",
        "https://tiles.example.org/{z}/{x}/{y}.png' onload='x",
        "",
        3,
    ],
)
def test_bad_tiles_raise_and_write_nothing(tmp_path: Path, bad: Any) -> None:
    with pytest.raises(ParameterError, match=r"tiles must be a URL template .*got"):
        render_privacy_map(np.zeros(1), np.zeros(1), None, tmp_path / "map.html", tiles=bad)
    assert list(tmp_path.iterdir()) == []


def test_title_and_text_hold_no_coordinates(tmp_path: Path) -> None:
    page = _full_map(tmp_path)
    title = re.search(r"<title>(.*?)</title>", page)
    assert title is not None and title.group(1) == "Privatized locations"
    body = page.split("<body>", 1)[1]
    text = re.sub(r"<script.*?</script>|<[^>]+>", " ", body, flags=re.S)
    assert "original locations" in text  # the private map says what it holds
    assert not re.search(r"\d", text)


def test_released_label_cannot_break_out_of_the_page(tmp_path: Path) -> None:
    out = tmp_path / "map.html"
    label = "</script><script>alert(1)</script><b>x"
    render_privacy_map(np.zeros(2), np.zeros(2), None, out, released_label=label)
    page = out.read_text(encoding="utf-8")
    assert "<script>alert" not in page and "<b>x" not in page
    tags = _parse(page)
    assert sum(t == "script" for t, _ in tags.tags) == 3  # data block, Leaflet, veil
    assert _layer_names(page) == [f"{label} locations"]


# SHA-256 of the vendored files, as in src/veil/assets/README.md.
PINNED = {
    "leaflet/leaflet.js": "db49d009c841f5ca34a888c96511ae936fd9f5533e90d8b2c4d57596f4e5641a",
    "leaflet/leaflet.css": "a7837102824184820dfa198d1ebcd109ff6d0ff9a2672a074b9a1b4d147d04c6",
    "leaflet/images/layers.png": "1dbbe9d028e292f36fcba8f8b3a28d5e8932754fc2215b9ac69e4cdecf5107c6",
    "leaflet/images/layers-2x.png": (
        "066daca850d8ffbef007af00b06eac0015728dee279c51f3cb6c716df7c42edf"
    ),
    "leaflet/images/marker-icon.png": (
        "574c3a5cca85f4114085b6841596d62f00d7c892c7b03f28cbfa301deb1dc437"
    ),
    "leaflet_heat/leaflet-heat.js": (
        "eb952aae5806a1102729f291bab887dde783ace859819a354827a776e73e486a"
    ),
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_vendored_assets_are_the_pinned_files(name: str) -> None:
    digest = hashlib.sha256((_ASSETS / name).read_bytes()).hexdigest()
    assert digest == PINNED[name]
    readme = (_ASSETS / "README.md").read_text(encoding="utf-8")
    assert f"`{name}`" in readme and digest in readme


def test_vendored_assets_carry_their_licences() -> None:
    for folder, holder in (("leaflet", "Volodymyr Agafonkin"), ("leaflet_heat", "Agafonkin")):
        licence = (_ASSETS / folder / "LICENSE").read_text(encoding="utf-8")
        assert holder in licence and "Redistribution and use" in licence
    assert "Leaflet 1.9.4" in (_ASSETS / "leaflet" / "leaflet.js").read_text(encoding="utf-8")


def test_page_inlines_the_vendored_leaflet(tmp_path: Path) -> None:
    page = _full_map(tmp_path)
    leaflet = (_ASSETS / "leaflet" / "leaflet.js").read_text(encoding="utf-8")
    body = leaflet[: leaflet.rindex("//# sourceMappingURL=")]
    assert body in page
