"""Tests for geo-indistinguishability and its map (veil.ldp.geoindis)."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.errors import (
    ColumnError,
    DataTypeError,
    DomainError,
    MissingValueError,
    ParameterError,
    PrivacyLeakWarning,
    PrivacyWarning,
    ReproducibleNoiseWarning,
)
from veil.ldp.geoindis import EARTH_RADIUS_M, metric_privacy, plot_metric_dp_map
from veil.mechanisms import PrivacyLedger


def _gen(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


def _haversine_m(
    lat1: np.ndarray, lon1: np.ndarray, lat2: np.ndarray, lon2: np.ndarray
) -> np.ndarray:
    p1, p2 = np.radians(lat1), np.radians(lat2)
    dlat = p2 - p1
    dlon = np.radians(lon2 - lon1)
    a = np.sin(dlat / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dlon / 2) ** 2
    return np.asarray(2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(a)))


def _points(n: int = 5, seed: int = 0) -> pd.DataFrame:
    rng = _gen(seed)
    return pd.DataFrame(
        {
            "lat": 40.75 + rng.normal(0, 0.02, n),
            "lon": -73.98 + rng.normal(0, 0.02, n),
            "fare": np.arange(n, dtype=np.float64),
        },
        index=np.arange(100, 100 + 3 * n, 3),
    )


# --- output columns -----------------------------------------------------------------


def test_new_cols_adds_lat_dp_lon_dp_and_radius_and_keeps_index() -> None:
    df = _points()
    out = metric_privacy(df, "lat", "lon", 0.01, new_cols=True, rng=_gen(1))
    assert list(out.columns) == ["lat", "lon", "fare", "lat_dp", "lon_dp", "radius_m"]
    assert out.index.equals(df.index)  # trasgoDP resets it; veil keeps it
    pd.testing.assert_frame_equal(out[["lat", "lon", "fare"]], df)
    assert (out["radius_m"] > 0).all()
    assert (out["lat_dp"] != df["lat"]).all()
    assert (out["lon_dp"] != df["lon"]).all()


def test_radius_column_warns_that_it_voids_the_guarantee_and_can_be_left_out() -> None:
    df = _points()
    with pytest.warns(PrivacyLeakWarning, match="radius_m"):
        with_radius = metric_privacy(df, "lat", "lon", 0.01, rng=_gen(5))
    assert "radius_m" in with_radius.columns
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        without = metric_privacy(df, "lat", "lon", 0.01, radius=False, rng=_gen(5))
    assert list(without.columns) == ["lat", "lon", "fare"]


def test_default_replaces_coordinates_and_adds_radius() -> None:
    df = _points()
    out = metric_privacy(df, "lat", "lon", 0.01, rng=_gen(2))
    assert list(out.columns) == ["lat", "lon", "fare", "radius_m"]
    assert out.index.equals(df.index)
    assert (out["lat"] != df["lat"]).all()
    pd.testing.assert_series_equal(out["fare"], df["fare"])


def test_output_coordinates_stay_valid_near_the_pole_and_antimeridian() -> None:
    # epsilon = 1e-4 per metre: mean displacement 20 km, larger than the distance to
    # the pole (11 m) and to the antimeridian (8 m at this latitude).
    df = pd.DataFrame(
        {"lat": [89.9999] * 200 + [10.0] * 200, "lon": [0.0] * 200 + [179.9999] * 200}
    )
    out = metric_privacy(df, "lat", "lon", 1e-4, new_cols=True, rng=_gen(3))
    assert out["lat_dp"].between(-90, 90).all()
    assert out["lon_dp"].between(-180, 180).all()
    assert (out["lon_dp"].iloc[200:] < 0).any()  # wrapped across the antimeridian


# --- errors -------------------------------------------------------------------------


@pytest.mark.parametrize("missing_col", ["lat", "lon"])
def test_missing_column_raises(missing_col: str) -> None:
    df = _points().drop(columns=[missing_col])
    with pytest.raises(ColumnError, match=missing_col):
        metric_privacy(df, "lat", "lon", 0.01)


@pytest.mark.parametrize(
    ("lat", "lon", "column"),
    [(90.5, 0.0, "lat"), (-91.0, 0.0, "lat"), (0.0, 180.5, "lon"), (0.0, -181.0, "lon")],
)
def test_coordinates_out_of_range_raise(lat: float, lon: float, column: str) -> None:
    df = pd.DataFrame({"lat": [40.0, lat], "lon": [-3.0, lon]})
    with pytest.raises(DomainError, match=f"column '{column}'"):
        metric_privacy(df, "lat", "lon", 0.01)


def test_coordinate_range_edges_are_accepted() -> None:
    df = pd.DataFrame({"lat": [-90.0, 90.0, 0.0, 0.0], "lon": [0.0, 0.0, -180.0, 180.0]})
    out = metric_privacy(df, "lat", "lon", 0.01, rng=_gen(4))
    assert out.shape == (4, 3)


@pytest.mark.parametrize("epsilon", [0, -0.01, math.inf, math.nan])
def test_epsilon_must_be_finite_and_positive(epsilon: float) -> None:
    with pytest.raises(ParameterError, match="epsilon"):
        metric_privacy(_points(), "lat", "lon", epsilon)


@pytest.mark.parametrize("radius", [0, -6_371_000])
def test_earth_radius_must_be_positive(radius: float) -> None:
    with pytest.raises(ParameterError, match="earth_radius_m"):
        metric_privacy(_points(), "lat", "lon", 0.01, False, radius)


def test_non_numeric_coordinates_raise() -> None:
    df = pd.DataFrame({"lat": ["40.7"], "lon": [-73.9]})
    with pytest.raises(DataTypeError):
        metric_privacy(df, "lat", "lon", 0.01)


def test_seed_and_rng_together_raise() -> None:
    with pytest.raises(ParameterError, match="seed"):
        metric_privacy(_points(), "lat", "lon", 0.01, seed=1, rng=_gen(0))


@pytest.mark.parametrize("bad", [math.inf, -math.inf])
def test_infinite_coordinates_raise(bad: float) -> None:
    df = pd.DataFrame({"lat": [40.0, bad], "lon": [-3.0, -3.0]})
    with pytest.raises(DomainError, match="infinite"):
        metric_privacy(df, "lat", "lon", 0.01, missing="keep")


def test_unknown_missing_policy_raises() -> None:
    with pytest.raises(ParameterError, match="missing"):
        metric_privacy(_points(), "lat", "lon", 0.01, missing="drop")


# --- missing values -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("lat", "lon"),
    [
        ([40.0, np.nan, 40.1], [-3.0, -3.1, -3.2]),
        ([40.0, 40.2, 40.1], [-3.0, np.nan, -3.2]),
        (pd.array([40.0, None, 40.1], dtype="Float64"), [-3.0, -3.1, -3.2]),
    ],
    ids=["nan-lat", "nan-lon", "Float64-NA"],
)
def test_missing_coordinates_raise_by_default(lat: Any, lon: Any) -> None:
    df = pd.DataFrame({"lat": lat, "lon": lon})
    with pytest.raises(MissingValueError, match="missing='keep'"):
        metric_privacy(df, "lat", "lon", 0.01)


def test_missing_coordinates_kept_at_the_same_rows() -> None:
    df = pd.DataFrame(
        {
            "lat": [40.0, np.nan, 40.1, 40.2],
            "lon": [-3.0, -3.1, np.nan, -3.3],
        },
        index=["a", "b", "c", "d"],
    )
    out = metric_privacy(df, "lat", "lon", 0.01, new_cols=True, missing="keep", rng=_gen(5))
    missing = [False, True, True, False]
    assert out["lat_dp"].isna().tolist() == missing
    assert out["lon_dp"].isna().tolist() == missing
    assert out["radius_m"].isna().tolist() == missing
    assert (out.loc[["a", "d"], "lat_dp"] != df.loc[["a", "d"], "lat"]).all()
    assert out.index.equals(df.index)


# --- randomness ---------------------------------------------------------------------


def test_default_noise_is_not_reproducible() -> None:
    df = _points(20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no default seed, nothing to warn about
        first = metric_privacy(df, "lat", "lon", 0.01, radius=False)
        second = metric_privacy(df, "lat", "lon", 0.01, radius=False)
    assert not first["lat"].equals(second["lat"])


@pytest.mark.parametrize("how", ["seed-positional", "seed", "rng"])
def test_integer_seed_is_reproducible_and_warns(how: str) -> None:
    df = _points(20)

    def run() -> pd.DataFrame:
        if how == "seed-positional":
            return metric_privacy(df, "lat", "lon", 0.01, True, EARTH_RADIUS_M, 42)
        return metric_privacy(df, "lat", "lon", 0.01, True, **{how: 42})

    with pytest.warns(ReproducibleNoiseWarning):
        first = run()
    with pytest.warns(ReproducibleNoiseWarning):
        second = run()
    pd.testing.assert_frame_equal(first, second)


def test_duplicate_coordinates_get_independent_noise() -> None:
    df = pd.DataFrame({"lat": [40.75] * 50, "lon": [-73.98] * 50})
    out = metric_privacy(df, "lat", "lon", 0.01, new_cols=True, rng=_gen(6))
    assert out[["lat_dp", "lon_dp"]].drop_duplicates().shape[0] == 50
    assert out["radius_m"].nunique() == 50


def test_shared_noise_for_duplicates_gives_one_draw_per_location() -> None:
    df = pd.DataFrame(
        {
            "lat": [40.75, 40.80, 40.75, 40.80, 40.75],
            "lon": [-73.98, -73.90, -73.98, -73.90, -73.98],
        }
    )
    out = metric_privacy(
        df, "lat", "lon", 0.01, new_cols=True, shared_noise_for_duplicates=True, rng=_gen(7)
    )
    first = out.iloc[[0, 2, 4]][["lat_dp", "lon_dp", "radius_m"]]
    second = out.iloc[[1, 3]][["lat_dp", "lon_dp", "radius_m"]]
    assert first.drop_duplicates().shape[0] == 1
    assert second.drop_duplicates().shape[0] == 1
    assert out.loc[0, "radius_m"] != out.loc[1, "radius_m"]


def test_attack_shared_noise_shows_which_records_share_a_location() -> None:
    # Issue 14 B13. Two neighbouring inputs: record 1 at record 0's location, or 1.1 cm
    # away. With shared noise the released points of records 0 and 1 are identical in
    # every run of the first input and never in the second: the attacker tells the two
    # apart with certainty, however small the move, so there is no per-record bound
    # e^(eps d). Independent draws (the default) never release identical points.
    lat, lon = 40.75, -73.98
    moved = lat + 0.011 / EARTH_RADIUS_M * 180.0 / math.pi  # 1.1 cm north
    together = pd.DataFrame({"lat": [lat, lat], "lon": [lon, lon]})
    apart = pd.DataFrame({"lat": [lat, moved], "lon": [lon, lon]})

    def identical_share(df: pd.DataFrame, shared: bool) -> float:
        same = 0
        for seed in range(200):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyLeakWarning)
                out = metric_privacy(
                    df, "lat", "lon", 0.01, shared_noise_for_duplicates=shared,
                    radius=False, rng=_gen(seed),
                )  # fmt: skip
            same += bool((out.iloc[0] == out.iloc[1]).all())
        return same / 200

    assert identical_share(together, shared=True) == 1.0
    assert identical_share(apart, shared=True) == 0.0
    assert identical_share(together, shared=False) == 0.0


def test_shared_noise_states_warns_and_records_its_per_location_guarantee() -> None:
    df = pd.DataFrame({"lat": [40.75, 40.75, 40.80], "lon": [-73.98, -73.98, -73.90]})
    ledger = PrivacyLedger()
    with pytest.warns(PrivacyLeakWarning, match="guarantee holds per distinct location"):
        out = metric_privacy(
            df, "lat", "lon", 0.01, shared_noise_for_duplicates=True, radius=False,
            rng=_gen(3), ledger=ledger,
        )  # fmt: skip
    (cost,) = ledger.entries
    assert (cost.notion, cost.unit, cost.epsilon) == ("metric", "metre", 0.01)
    assert "one draw per distinct location" in cost.mechanism
    assert "co-location released" in cost.mechanism
    assert out.attrs["veil.privacy"][-1]["mechanism"] == cost.mechanism
    doc = " ".join((metric_privacy.__doc__ or "").split())
    assert "per *distinct location*, not per record" in doc
    assert "The guarantee per record is the same" not in doc
    # The default's record says nothing of the kind, and does not warn.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        metric_privacy(df, "lat", "lon", 0.01, radius=False, rng=_gen(3), ledger=ledger)
    assert "distinct location" not in ledger.entries[-1].mechanism


def test_the_same_column_as_latitude_and_longitude_is_refused() -> None:
    df = pd.DataFrame({"lat": [10.0, 10.1], "lon": [10.0, 10.1]})
    with pytest.raises(ParameterError, match="column_lat, column_lon: both name the column 'lat'"):
        metric_privacy(df, "lat", "lat", 0.01, radius=False, rng=_gen(1))


# --- distribution -------------------------------------------------------------------


def test_radius_mean_is_two_over_epsilon() -> None:
    # radius ~ Gamma(2, 1/eps): mean 2/eps = 200 m at eps = 0.01, sd sqrt(2)/eps.
    # n = 20 000 gives a relative standard error of 0.5%; tolerance 3%.
    n = 20_000
    df = pd.DataFrame({"lat": np.full(n, 40.75), "lon": np.full(n, -73.98)})
    out = metric_privacy(df, "lat", "lon", 0.01, new_cols=True, rng=_gen(8))
    assert out["radius_m"].mean() == pytest.approx(200.0, rel=0.03)
    assert out["radius_m"].std() == pytest.approx(math.sqrt(2) * 100.0, rel=0.05)


def test_displacement_equals_radius() -> None:
    # The haversine distance between original and privatized points is radius_m within
    # 1% (plus 5 cm for the 7-decimal rounding of the output), at displacements of a few
    # hundred metres in New York.
    n = 5_000
    df = _points(n, seed=9)
    out = metric_privacy(df, "lat", "lon", 0.01, new_cols=True, rng=_gen(10))
    moved = _haversine_m(
        df["lat"].to_numpy(),
        df["lon"].to_numpy(),
        out["lat_dp"].to_numpy(),
        out["lon_dp"].to_numpy(),
    )
    np.testing.assert_allclose(moved, out["radius_m"].to_numpy(), rtol=0.01, atol=0.05)


def test_displacement_direction_is_uniform() -> None:
    # Mean east and north displacement is ~0 (each has sd ~ 141 m / sqrt(n) = 1.4 m at
    # n = 10 000); tolerance 8 m.
    n = 10_000
    df = pd.DataFrame({"lat": np.full(n, 0.0), "lon": np.full(n, 0.0)})
    out = metric_privacy(df, "lat", "lon", 0.01, new_cols=True, rng=_gen(11))
    metres_per_degree = EARTH_RADIUS_M * math.pi / 180
    assert abs(out["lat_dp"].mean() * metres_per_degree) < 8
    assert abs(out["lon_dp"].mean() * metres_per_degree) < 8


def test_nyc_taxi_pickups_are_privatized(nyc_taxi: pd.DataFrame) -> None:
    out = metric_privacy(
        nyc_taxi, "pickup_latitude", "pickup_longitude", 1e-3, new_cols=True, rng=_gen(12)
    )
    assert out.shape == (len(nyc_taxi), nyc_taxi.shape[1] + 3)
    assert out["lat_dp"].between(-90, 90).all()
    assert out["lon_dp"].between(-180, 180).all()
    assert out["radius_m"].mean() == pytest.approx(2000, rel=0.15)


# --- accounting, mutation, empty input ----------------------------------------------


def test_ledger_and_attrs_record_metric_cost() -> None:
    ledger = PrivacyLedger()
    out = metric_privacy(_points(), "lat", "lon", 0.005, rng=_gen(13), ledger=ledger)
    metric_privacy(out, "lat", "lon", 0.002, rng=_gen(14), ledger=ledger)
    (first, second) = ledger.entries
    assert (first.notion, first.unit, first.epsilon, first.delta) == ("metric", "metre", 0.005, 0.0)
    assert ledger.total("metric", "metre").epsilon == pytest.approx(0.007)
    assert ledger.total().epsilon == 0.0  # nothing spent as per-record LDP
    assert second.epsilon == 0.002
    assert out.attrs["veil.privacy"][0]["notion"] == "metric"


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"new_cols": True},
        {"missing": "keep"},
        {"missing": "keep", "new_cols": True, "shared_noise_for_duplicates": True},
    ],
    ids=["replace", "new-cols", "keep", "keep-new-shared"],
)
def test_input_frame_is_never_mutated(kwargs: dict[str, Any]) -> None:
    gap = np.nan if kwargs.get("missing") else 40.2
    df = pd.DataFrame(
        {
            "lat": [40.1, gap, 40.1, 40.3],
            "lon": pd.array([-3.1, -3.2, -3.1, -3.4], dtype="Float64"),
            "id": [1, 2, 3, 4],
        },
        index=[9, 8, 7, 6],
    )
    if kwargs.get("missing"):
        df.loc[6, "lon"] = pd.NA
    before = df.copy(deep=True)
    out = metric_privacy(df, "lat", "lon", 0.01, rng=_gen(15), **kwargs)
    pd.testing.assert_frame_equal(df, before)
    assert df.attrs == {}
    assert "radius_m" in out.columns and "radius_m" not in df.columns


def test_empty_frame_gives_an_empty_frame() -> None:
    df = pd.DataFrame({"lat": pd.Series([], dtype=float), "lon": pd.Series([], dtype=float)})
    for shared in (False, True):
        out = metric_privacy(
            df, "lat", "lon", 0.01, True, shared_noise_for_duplicates=shared, rng=_gen(16)
        )
        assert out.shape == (0, 5)
        assert list(out.columns) == ["lat", "lon", "lat_dp", "lon_dp", "radius_m"]


# --- the map ------------------------------------------------------------------------

# Distinctive 6-decimal coordinates: present in the HTML only if the original is drawn.
ORIGINAL_LAT = 40.712345
ORIGINAL_LON = -74.006543


def _privatized(new_cols: bool) -> pd.DataFrame:
    df = pd.DataFrame({"lat": [ORIGINAL_LAT, 40.75, 40.76], "lon": [ORIGINAL_LON, -73.98, -73.97]})
    return metric_privacy(df, "lat", "lon", 0.01, new_cols=new_cols, rng=_gen(17))


def test_map_written_without_the_originals(tmp_path: Path) -> None:
    import folium  # noqa: F401  # the test extra installs it; a missing one fails

    df_dp = _privatized(new_cols=True)
    path = tmp_path / "metric_dp_map.html"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fmap = plot_metric_dp_map(df_dp, "lat", "lon", str(path))
    assert fmap is not None
    html = path.read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html")
    assert f"{round(df_dp['lat_dp'].iloc[0], 6)}" in html
    assert str(ORIGINAL_LAT) not in html
    assert str(ORIGINAL_LON) not in html
    assert list(tmp_path.iterdir()) == [path]


def test_map_from_replaced_columns_draws_the_privatized_points(tmp_path: Path) -> None:
    import folium  # noqa: F401  # the test extra installs it; a missing one fails

    df_dp = _privatized(new_cols=False)
    path = tmp_path / "map.html"
    plot_metric_dp_map(df_dp, "lat", "lon", path)
    html = path.read_text(encoding="utf-8")
    assert f"{round(df_dp['lat'].iloc[0], 6)}" in html
    assert str(ORIGINAL_LAT) not in html


def test_map_with_originals_warns_and_draws_them(tmp_path: Path) -> None:
    import folium  # noqa: F401  # the test extra installs it; a missing one fails

    df_dp = _privatized(new_cols=True)
    path = tmp_path / "private_map.html"
    with pytest.warns(PrivacyWarning, match="original"):
        plot_metric_dp_map(df_dp, "lat", "lon", path, show_original=True)
    html = path.read_text(encoding="utf-8")
    assert str(ORIGINAL_LAT) in html and str(ORIGINAL_LON) in html


def test_map_with_originals_needs_the_original_columns(tmp_path: Path) -> None:
    import folium  # noqa: F401  # the test extra installs it; a missing one fails

    df_dp = _privatized(new_cols=False)
    path = tmp_path / "map.html"
    with pytest.raises(ParameterError, match="show_original"):
        plot_metric_dp_map(df_dp, "lat", "lon", path, show_original=True)
    assert not path.exists()


@pytest.mark.parametrize("name", ["map.htm", "map.png", "map", "map.html.txt"])
def test_map_file_must_end_in_html_and_nothing_is_written(tmp_path: Path, name: str) -> None:
    df_dp = _privatized(new_cols=True)
    with pytest.raises(ParameterError, match="save_file"):
        plot_metric_dp_map(df_dp, "lat", "lon", tmp_path / name)
    assert list(tmp_path.iterdir()) == []


def test_map_missing_column_raises(tmp_path: Path) -> None:
    import folium  # noqa: F401  # the test extra installs it; a missing one fails

    df_dp = _privatized(new_cols=True)
    with pytest.raises(ColumnError):
        plot_metric_dp_map(df_dp, "latitude", "lon", tmp_path / "map.html")
    assert list(tmp_path.iterdir()) == []
