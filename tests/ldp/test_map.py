"""Tests for the browser-drawn privacy map (veil.ldp._map)."""

from __future__ import annotations

import builtins
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

pytest.importorskip("folium")

from veil.errors import ParameterError
from veil.ldp._map import render_privacy_map

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


def _layer_data(html: str) -> list[dict[str, list[float]]]:
    """The JSON columns of every drawn layer, in drawing order."""
    return [json.loads(m) for m in re.findall(r"var d = (\{.*?\});", html)]


def test_writes_file_with_privatized_coordinates(tmp_path: Path) -> None:
    _, _, lat_dp, lon_dp, radius = _points(50)
    out = tmp_path / "map.html"
    fmap = render_privacy_map(lat_dp, lon_dp, radius, out)
    html = out.read_text(encoding="utf-8")
    assert fmap is not None
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
    assert "Original locations" not in html
    assert "Perturbation radius" not in html
    assert len(_layer_data(html)) == 1


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
        assert name in html
    assert "L.control.layers" in html


def test_view_centred_on_privatized_points(tmp_path: Path) -> None:
    lat, lon, lat_dp, lon_dp, radius = _points(200)
    fmap = render_privacy_map(
        lat_dp, lon_dp, radius, tmp_path / "map.html", lat=lat + 5.0, lon=lon + 5.0
    )
    assert fmap.location == pytest.approx([lat_dp.mean(), lon_dp.mean()])


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
    fmap = render_privacy_map(lat_dp, lon_dp, radius, out, lat=lat, lon=lon)
    html = out.read_text(encoding="utf-8")
    assert "NaN" not in html
    circles, lines, originals, privatized = _layer_data(html)
    assert len(privatized["lat"]) == 9  # row 3
    assert len(originals["lat"]) == 9  # row 5
    assert len(lines["lat"]) == 8  # rows 3 and 5
    assert len(circles["lat"]) == 8  # rows 5 and 7
    assert fmap.location == pytest.approx([np.nanmean(lat_dp), lon_dp[~np.isnan(lat_dp)].mean()])


def test_empty_input_centred_at_origin(tmp_path: Path) -> None:
    out = tmp_path / "map.html"
    empty = np.array([], dtype=np.float64)
    fmap = render_privacy_map(empty, empty, empty, out, lat=empty, lon=empty)
    assert fmap.location == [0.0, 0.0]
    assert "fitBounds" not in out.read_text(encoding="utf-8")


def test_all_nan_input_centred_at_origin(tmp_path: Path) -> None:
    out = tmp_path / "map.html"
    fmap = render_privacy_map(np.full(3, np.nan), np.zeros(3), None, out)
    assert fmap.location == [0.0, 0.0]
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

    monkeypatch.setattr("veil.ldp._map.os.replace", fail)
    with pytest.raises(OSError, match="disk full"):
        render_privacy_map(np.zeros(2), np.zeros(2), None, out)
    assert out.read_text(encoding="utf-8") == "old"
    assert list(tmp_path.iterdir()) == [out]


def test_missing_folium_raises_import_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def no_folium(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "folium" or name.startswith("folium."):
            raise ImportError("No module named 'folium'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_folium)
    with pytest.raises(ImportError, match=re.escape("pip install 'veil[geo]'")):
        render_privacy_map(np.zeros(2), np.zeros(2), None, tmp_path / "map.html")


def test_100k_points_writes_small_file(tmp_path: Path) -> None:
    lat, lon, lat_dp, lon_dp, radius = _points(100_000)
    out = tmp_path / "map.html"
    render_privacy_map(lat_dp, lon_dp, radius, out, lat=lat, lon=lon)
    assert out.exists()
    assert out.stat().st_size < 15_000_000
