"""``veil geo`` end to end on small files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from .conftest import Veil


def test_geo_planar_laplace_with_a_map(veil: Veil, taxi_csv: Path, tmp_path: Path) -> None:
    out, map_file = tmp_path / "geo.csv", tmp_path / "map.html"
    result = veil(
        "geo", taxi_csv, "--lat", "pickup_latitude", "--lon", "pickup_longitude",
        "--mask", "planar-laplace", "--epsilon", "0.01", "--centre", "40.758,-73.9855",
        "--out", out, "--map", map_file, "--json", "--keep-other",
    )  # fmt: skip
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["costs"][0]["notion"] == "metric"
    assert data["costs"][0]["epsilon"] == pytest.approx(0.01)
    original, masked = pd.read_csv(taxi_csv), pd.read_csv(out)
    assert len(masked) == len(original)
    assert not masked["pickup_latitude"].isin(original["pickup_latitude"]).any()
    assert data["scale"]["metres"] == pytest.approx(167.83, abs=0.01)
    assert map_file.stat().st_size > 0


@pytest.mark.parametrize(
    "args",
    [
        ["--mask", "grid", "--cell-m", "250", "--min-count", "3"],
        ["--mask", "donut", "--r-min-m", "50", "--r-max-m", "200", "--seed", "1"],
        ["--mask", "jitter", "--radius-m", "100", "--kind", "gaussian", "--seed", "1"],
        ["--mask", "cloak", "--k", "5"],
        ["--mask", "cloak", "--k", "5", "--root-m=-30000,-30000,60000"],
    ],
)
def test_geo_masks_without_a_formal_guarantee(
    veil: Veil, taxi_csv: Path, tmp_path: Path, args: list[str]
) -> None:
    out = tmp_path / "geo.csv"
    result = veil(
        "geo", taxi_csv, "--lat", "dropoff_latitude", "--lon", "dropoff_longitude", *args,
        "--centre", "40.758,-73.9855", "--out", out, "--json", "--drop-other",
    )  # fmt: skip
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["costs"] == []
    assert sorted(data["released_columns"]) == ["dropoff_latitude", "dropoff_longitude"]
    assert data["guarantee"]
    assert len(pd.read_csv(out)) == data["rows"]
    if args[1] == "cloak":
        # A root square from the data shows in the release; a public one does not.
        leak = "PrivacyLeakWarning" in [w["category"] for w in data["warnings"]]
        assert leak == ("--root-m=-30000,-30000,60000" not in args)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mask", "planar-laplace"], "--epsilon: required by --mask planar-laplace"),
        (["--mask", "grid", "--cell-m", "10", "--epsilon", "1"], "--epsilon: not for --mask grid"),
        (
            ["--mask", "donut", "--r-min-m", "500", "--r-max-m", "100", "--centre", "40.7,-74"],
            "r_min_m",
        ),
        (["--mask", "grid", "--cell-m", "100"], "give exactly one public projection"),
        (
            ["--mask", "grid", "--cell-m", "100", "--centre", "40.7,-74", "--crs", "EPSG:32618"],
            "give one of them, not both",
        ),
        (["--mask", "grid", "--cell-m", "100", "--crs", "32618"], "--crs: expected EPSG:CODE"),
        (
            ["--mask", "grid", "--cell-m", "100", "--projection", "data", "--crs", "EPSG:32618"],
            "not both",
        ),
        (["--mask", "grid", "--cell-m", "nan", "--centre", "40.7,-74"], "--cell-m: must be a"),
        (["--mask", "cloak", "--k", "5", "--map", "map.png"], "--map: must end in .html"),
    ],
)
def test_geo_usage_errors(
    veil: Veil, taxi_csv: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    result = veil(
        "geo", taxi_csv, "--lat", "pickup_latitude", "--lon", "pickup_longitude", *args,
        "--out", tmp_path / "x.csv", "--drop-other",
    )  # fmt: skip
    assert result.code == 2
    assert message in result.err
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--mask", "planar-laplace", "--epsilon", "0"],
            "epsilon: must be finite and > 0, got 0.0",
        ),
        (["--mask", "jitter", "--radius-m", "5", "--kind", "square"], "kind: must be 'disc' or"),
    ],
)
def test_geo_parameters_out_of_range_are_refused_before_the_scale_is_said(
    veil: Veil, taxi_csv: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    # The displacement is worked out before any data is read (veil.geo.expected_scale),
    # which refuses what the mask would refuse: --epsilon 0 once divided by zero there.
    result = veil(
        "geo", taxi_csv, "--lat", "pickup_latitude", "--lon", "pickup_longitude", *args,
        "--centre", "40.7,-74", "--out", tmp_path / "x.csv", "--drop-other",
    )  # fmt: skip
    assert result.code == 2
    assert result.err.startswith(f"veil: error: {message}")
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert not (tmp_path / "x.csv").exists()
