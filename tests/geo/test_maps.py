"""Tests for the maps of masked locations (veil.geo.maps)."""

from __future__ import annotations

import json
import re
import struct
import warnings
from pathlib import Path
from typing import Any

import matplotlib  # noqa: F401  # the test extra installs it; a missing one fails
import numpy as np
import pandas as pd
import pyproj  # noqa: F401  # the test extra installs it; a missing one fails
import pytest

from veil.errors import ColumnError, ParameterError, PrivacyWarning
from veil.geo import jitter, projection_at
from veil.geo.maps import location_map, neighbourhood_png

ORIGINAL_LAT = 40.123457
ORIGINAL_LON = -3.654321
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _frames(n: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    gen = np.random.default_rng(seed)
    original = pd.DataFrame(
        {
            "lat": 40.4 + gen.normal(0.0, 0.02, n),
            "lon": -3.7 + gen.normal(0.0, 0.02, n),
            "value": np.arange(n),
        }
    )
    original.loc[0, ["lat", "lon"]] = [ORIGINAL_LAT, ORIGINAL_LON]
    masked = jitter(
        original,
        "lat",
        "lon",
        200.0,
        rng=np.random.default_rng(seed + 1),
        projection=projection_at(40.4, -3.7),  # public: the fixture's centre
    )
    return original, masked


def _spec(html: str) -> dict[str, Any]:
    (block,) = re.findall(
        r'<script type="application/json" id="veil-map-data">(.*?)</script>', html, re.S
    )
    spec: dict[str, Any] = json.loads(block)
    return spec


def _layer_data(html: str) -> list[dict[str, list[float]]]:
    return [part["data"] for o in _spec(html)["overlays"] for part in o["parts"]]


def _layer_names(html: str) -> list[str]:
    return [o["name"] for o in _spec(html)["overlays"]]


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == PNG_SIGNATURE
    assert head[12:16] == b"IHDR"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


# --- location_map ------------------------------------------------------------------------


def test_map_draws_masked_points_and_heat_map_by_default(tmp_path: Path) -> None:
    original, masked = _frames(200)
    out = tmp_path / "map.html"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        location_map(original, masked, "lat", "lon", out)
    html = out.read_text(encoding="utf-8")
    (points,) = _layer_data(html)
    assert len(points["lat"]) == 200
    assert points["lat"][0] == round(float(masked.loc[0, "lat"]), 6)
    assert _layer_names(html) == ["Masked locations", "Heat map of masked locations"]
    assert _spec(html)["tiles"] is None
    assert list(tmp_path.iterdir()) == [out]


def test_originals_not_in_the_html_by_default(tmp_path: Path) -> None:
    original, masked = _frames(50)
    out = tmp_path / "map.html"
    location_map(original, masked, "lat", "lon", out)
    html = out.read_text(encoding="utf-8")
    assert str(ORIGINAL_LAT) not in html and str(ORIGINAL_LON) not in html
    assert "Original locations" not in _layer_names(html)


def test_heat_map_can_be_left_out(tmp_path: Path) -> None:
    original, masked = _frames(50)
    out = tmp_path / "map.html"
    location_map(original, masked, "lat", "lon", out, heatmap=False)
    html = out.read_text(encoding="utf-8")
    assert _layer_names(html) == ["Masked locations"]
    assert "L.heatLayer=" not in html  # nor the plugin


def test_show_original_warns_and_draws_them(tmp_path: Path) -> None:
    original, masked = _frames(50)
    out = tmp_path / "map.html"
    with pytest.warns(PrivacyWarning, match="original locations"):
        location_map(original, masked, "lat", "lon", out, show_original=True)
    html = out.read_text(encoding="utf-8")
    assert str(ORIGINAL_LAT) in html
    # no lines unless a sample is asked for
    assert _layer_names(html) == [
        "Original locations",
        "Masked locations",
        "Heat map of masked locations",
    ]
    assert "keep it as private as the raw data" in html  # the page says so


def test_displacement_sample_and_highlight(tmp_path: Path) -> None:
    original, masked = _frames(300)
    out = tmp_path / "map.html"
    with pytest.warns(PrivacyWarning):
        location_map(
            original,
            masked,
            "lat",
            "lon",
            out,
            show_original=True,
            displacement_sample=25,
            highlight=0,
            rng=np.random.default_rng(5),
        )
    html = out.read_text(encoding="utf-8")
    lines, _, _, circle, highlight_line = _layer_data(html)
    assert len(lines["lat_dp"]) == 25
    assert circle["lat"] == [ORIGINAL_LAT] and circle["lon"] == [ORIGINAL_LON]
    assert 0.0 < circle["r"][0] <= 200.5  # a jitter of at most 200 m
    assert highlight_line["lat_dp"] == [round(float(masked.loc[0, "lat"]), 6)]
    assert _layer_names(html)[-1] == "Highlighted point"


@pytest.mark.parametrize(
    "kwargs", [{"displacement_sample": 5}, {"highlight": 0}], ids=["sample", "highlight"]
)
def test_lines_and_highlight_need_show_original(tmp_path: Path, kwargs: dict[str, Any]) -> None:
    original, masked = _frames(20)
    with pytest.raises(ParameterError, match="show_original=True"):
        location_map(original, masked, "lat", "lon", tmp_path / "map.html", **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_suppressed_points_are_skipped(tmp_path: Path) -> None:
    original, masked = _frames(20)
    masked.loc[[3, 4], ["lat", "lon"]] = np.nan
    out = tmp_path / "map.html"
    location_map(original, masked, "lat", "lon", out)
    (points,) = _layer_data(out.read_text(encoding="utf-8"))
    assert len(points["lat"]) == 18


@pytest.mark.parametrize("save_file", ["map.htm", "map.png", "map"])
def test_map_bad_suffix_raises_and_writes_nothing(tmp_path: Path, save_file: str) -> None:
    original, masked = _frames(10)
    with pytest.raises(ParameterError, match="save_file"):
        location_map(original, masked, "lat", "lon", tmp_path / save_file)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("function", [location_map, neighbourhood_png])
def test_misaligned_frames_raise(tmp_path: Path, function: Any) -> None:
    original, masked = _frames(10)
    suffix = ".html" if function is location_map else ".png"
    for other in (masked.iloc[:9], masked.iloc[::-1]):
        with pytest.raises(ParameterError, match="row-aligned"):
            function(original, other, "lat", "lon", tmp_path / f"out{suffix}")
    with pytest.raises(ColumnError, match="'nope'"):
        function(original, masked, "nope", "lon", tmp_path / f"out{suffix}")
    assert list(tmp_path.iterdir()) == []


def test_100k_point_map_writes(tmp_path: Path) -> None:
    n = 100_000
    gen = np.random.default_rng(0)
    original = pd.DataFrame(
        {"lat": 40.4 + gen.normal(0.0, 0.05, n), "lon": -3.7 + gen.normal(0.0, 0.05, n)}
    )
    masked = original + gen.normal(0.0, 0.002, (n, 2))
    out = tmp_path / "map.html"
    with pytest.warns(PrivacyWarning):
        location_map(
            original,
            masked,
            "lat",
            "lon",
            out,
            show_original=True,
            displacement_sample=1000,
            highlight=10,
            rng=np.random.default_rng(1),
        )
    assert out.stat().st_size < 15_000_000


# --- neighbourhood_png -------------------------------------------------------------------


def test_png_written_and_valid(tmp_path: Path) -> None:
    original, masked = _frames(500)
    out = tmp_path / "before_after.png"
    with pytest.warns(PrivacyWarning, match="original locations"):
        neighbourhood_png(original, masked, "lat", "lon", out, radius_m=1500, title="Madrid")
    assert _png_size(out) == (1500, 810)  # 10 x 5.4 inches at 150 dpi
    assert 10_000 < out.stat().st_size < 2_000_000
    assert list(tmp_path.iterdir()) == [out]


def test_svg_by_suffix(tmp_path: Path) -> None:
    original, masked = _frames(100)
    out = tmp_path / "before_after.svg"
    with pytest.warns(PrivacyWarning):
        neighbourhood_png(original, masked, "lat", "lon", out, centre=(40.4, -3.7))
    text = out.read_text(encoding="utf-8")
    assert "<svg" in text and "Before: original" in text


def test_png_overwrites_atomically(tmp_path: Path) -> None:
    original, masked = _frames(100)
    out = tmp_path / "before_after.PNG"
    out.write_bytes(b"old")
    with pytest.warns(PrivacyWarning):
        neighbourhood_png(original, masked, "lat", "lon", out)
    assert out.read_bytes()[:8] == PNG_SIGNATURE
    assert list(tmp_path.iterdir()) == [out]


@pytest.mark.parametrize("save_file", ["fig.jpg", "fig.html", "fig", "fig.png.tmp"])
def test_png_bad_suffix_raises_and_writes_nothing(tmp_path: Path, save_file: str) -> None:
    original, masked = _frames(10)
    with pytest.raises(ParameterError, match="save_file"):
        neighbourhood_png(original, masked, "lat", "lon", tmp_path / save_file)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "kwargs",
    [
        {"radius_m": 0},
        {"radius_m": -5.0},
        {"radius_m": float("nan")},
        {"radius_m": True},
        {"centre": (40.4,)},
        {"centre": "here"},
        {"centre": (95.0, 0.0)},
    ],
)
def test_png_bad_arguments_raise_and_write_nothing(tmp_path: Path, kwargs: dict[str, Any]) -> None:
    original, masked = _frames(10)
    with pytest.raises(ValueError, match=r"radius_m|centre"):
        neighbourhood_png(original, masked, "lat", "lon", tmp_path / "fig.png", **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_png_failed_write_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original, masked = _frames(10)

    def fail(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("veil.atomic.os.replace", fail)
    with pytest.raises(OSError, match="disk full"):
        neighbourhood_png(original, masked, "lat", "lon", tmp_path / "fig.png")
    assert list(tmp_path.iterdir()) == []


def test_default_centre_is_the_densest_area(tmp_path: Path) -> None:
    gen = np.random.default_rng(2)
    # A sparse spread over ~50 km and a dense cluster of 300 points 20 km east.
    lat = np.concatenate([40.4 + gen.uniform(-0.2, 0.2, 200), 40.5 + gen.normal(0, 0.002, 300)])
    lon = np.concatenate([-3.7 + gen.uniform(-0.3, 0.3, 200), -3.46 + gen.normal(0, 0.002, 300)])
    original = pd.DataFrame({"lat": lat, "lon": lon})
    masked = jitter(
        original,
        "lat",
        "lon",
        100.0,
        rng=np.random.default_rng(3),
        projection=projection_at(40.45, -3.6),
    )
    out = tmp_path / "fig.svg"
    with pytest.warns(PrivacyWarning):
        neighbourhood_png(original, masked, "lat", "lon", out, radius_m=1000)
    match = re.search(r"Neighbourhood of \((-?[\d.]+), (-?[\d.]+)\)", out.read_text("utf-8"))
    assert match is not None
    assert float(match.group(1)) == pytest.approx(40.5, abs=0.002)
    assert float(match.group(2)) == pytest.approx(-3.46, abs=0.002)


def test_png_without_any_original_point_needs_a_centre(tmp_path: Path) -> None:
    original = pd.DataFrame({"lat": [np.nan, np.nan], "lon": [np.nan, np.nan]})
    with pytest.raises(ParameterError, match="centre"):
        neighbourhood_png(original, original, "lat", "lon", tmp_path / "fig.png")
    assert list(tmp_path.iterdir()) == []
    with pytest.warns(PrivacyWarning):
        neighbourhood_png(original, original, "lat", "lon", tmp_path / "fig.png", centre=(0, 0))
    assert _png_size(tmp_path / "fig.png") == (1500, 810)
