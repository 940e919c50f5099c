"""veil.geo.evaluate and veil.geo.synthetic: the linkage attack and utility measures."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from veil.errors import (
    ColumnError,
    DomainError,
    MissingValueError,
    ParameterError,
    ReproducibleNoiseWarning,
)
from veil.geo.evaluate import LocationEvaluation, evaluate, evaluate_xy
from veil.geo.projection import projection_at
from veil.geo.synthetic import synthetic_city


def _rng(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


@pytest.fixture(scope="module")
def city() -> pd.DataFrame:
    return synthetic_city(600, 250, 200, 150, rng=_rng(3))


def test_synthetic_city_shape_columns_and_zones() -> None:
    frame = synthetic_city(rng=_rng(0))
    assert list(frame.columns) == ["lat", "lon", "x_km", "y_km"]
    assert len(frame) == 2200 + 900 + 700 + 400
    core = frame.iloc[:2200]
    rural = frame.iloc[3800:]
    # Core centred on (0, 0) with sd 1.5 km; rural uniform over [-15, 15]^2 km.
    assert abs(core["x_km"].mean()) < 0.15 and abs(core["x_km"].std() - 1.5) < 0.1
    assert rural[["x_km", "y_km"]].abs().to_numpy().max() <= 15.0
    assert frame[["lat", "lon"]].notna().all().all()


def test_synthetic_city_km_coordinates_match_lat_lon_within_a_metre() -> None:
    frame = synthetic_city(100, 100, 100, 100, centre=(-33.9, 151.2), rng=_rng(1))
    x, y = projection_at(-33.9, 151.2, method="aeqd").forward(
        frame["lat"].to_numpy(), frame["lon"].to_numpy()
    )
    assert np.abs(x - frame["x_km"].to_numpy() * 1000).max() < 1.0
    assert np.abs(y - frame["y_km"].to_numpy() * 1000).max() < 1.0


def test_synthetic_city_seeded_is_reproducible_and_warns() -> None:
    with pytest.warns(ReproducibleNoiseWarning):
        first = synthetic_city(10, 10, 10, 10, rng=5)
    with pytest.warns(ReproducibleNoiseWarning):
        second = synthetic_city(10, 10, 10, 10, rng=5)
    pd.testing.assert_frame_equal(first, second)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"n_core": -1}, "n_core"), ({"n_rural": 2.5}, "n_rural"), ({"centre": (39.0,)}, "centre")],
)
def test_synthetic_city_rejects_bad_parameters(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ParameterError, match=name):
        synthetic_city(**kwargs, rng=_rng(0))  # type: ignore[arg-type]


def test_identical_release_is_fully_reidentified_with_full_utility(city: pd.DataFrame) -> None:
    result = evaluate(city, city.copy(), "lat", "lon", rng=_rng(4))
    assert isinstance(result, LocationEvaluation)
    assert result.n == len(city)
    assert result.reid_rate == 1.0
    assert result.suppressed_share == 0.0
    assert result.median_shift_m == result.mean_shift_m == result.p95_shift_m == 0.0
    assert result.density_corr == pytest.approx(1.0)
    assert result.n_probes == 500
    np.testing.assert_array_equal(result.k_anonymity, np.ones(len(city)))
    assert result.k_median == 1.0 and result.k_below_5_share == 1.0


def test_shuffled_release_reidentifies_only_the_fixed_points(city: pd.DataFrame) -> None:
    # Every released point is some true point: it links to its own row exactly when the
    # permutation leaves the row in place, about 1/n of the rows on average.
    permutation = _rng(5).permutation(len(city))
    released = city.copy()
    released[["lat", "lon"]] = city[["lat", "lon"]].to_numpy()[permutation]
    result = evaluate(city, released, "lat", "lon", rng=_rng(6))
    fixed = int((permutation == np.arange(len(city))).sum())
    assert result.reid_rate == pytest.approx(fixed / len(city))
    assert result.reid_rate < 5 / len(city)
    # The density surface is unchanged by a permutation.
    assert result.density_corr == pytest.approx(1.0)
    assert result.median_shift_m > 1000


def test_ties_are_shared_between_duplicate_locations() -> None:
    # Two residents at one address: the attacker picks one of them, right half the time.
    truth = np.array([[0.0, 0.0], [0.0, 0.0], [500.0, 0.0], [0.0, 800.0]])
    result = evaluate_xy(truth, truth.copy(), probes=[[0.0, 0.0], [600.0, 0.0]])
    assert result.reid_rate == pytest.approx((0.5 + 0.5 + 1 + 1) / 4)
    np.testing.assert_array_equal(result.k_anonymity, [2.0, 2.0, 1.0, 1.0])


def test_k_anonymity_counts_true_points_at_least_as_close() -> None:
    truth = np.array([[0.0, 0.0], [10.0, 0.0], [20.0, 0.0], [1000.0, 0.0]])
    masked = np.array([[15.0, 0.0], [10.0, 0.0], [20.0, 0.0], [1000.0, 0.0]])
    result = evaluate_xy(truth, masked, probes=[[0.0, 0.0], [900.0, 0.0]])
    # Row 0 released at 15 m: rows 1 and 2 (5 m away) are nearer than its own 15 m.
    np.testing.assert_array_equal(result.k_anonymity, [3.0, 1.0, 1.0, 1.0])
    assert result.reid_rate == pytest.approx(3 / 4)
    assert result.k_below_5_share == 1.0
    with pytest.raises(ValueError):
        result.k_anonymity[0] = 1.0  # read-only
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.reid_rate = 0.0  # type: ignore[misc]


def test_suppressed_points_count_as_not_reidentified(city: pd.DataFrame) -> None:
    released = city.copy()
    released.loc[released.index[:100], ["lat", "lon"]] = np.nan
    result = evaluate(city, released, "lat", "lon", rng=_rng(7))
    assert result.suppressed_share == pytest.approx(100 / len(city))
    assert result.reid_rate == pytest.approx(1 - 100 / len(city))
    assert np.isnan(result.k_anonymity[:100]).all()
    assert result.median_shift_m == 0.0
    assert result.summary()["suppressed_share"] == result.suppressed_share


def test_everything_suppressed_gives_missing_utility() -> None:
    truth = np.array([[0.0, 0.0], [100.0, 0.0], [0.0, 100.0]])
    result = evaluate_xy(truth, np.full((3, 2), np.nan), probes=[[0.0, 0.0], [100.0, 0.0]])
    assert result.reid_rate == 0.0 and result.suppressed_share == 1.0
    assert np.isnan(result.median_shift_m) and np.isnan(result.k_median)
    # Released density is 0 everywhere: constant, so no correlation.
    assert np.isnan(result.density_corr)


def test_given_probes_in_degrees_match_probes_in_metres(city: pd.DataFrame) -> None:
    projection = projection_at(39.0, -94.5)
    probes_deg = city[["lat", "lon"]].to_numpy()[:50]
    shifted = city.copy()
    shifted["lat"] += 0.002
    by_degrees = evaluate(city, shifted, "lat", "lon", probes=probes_deg, projection=projection)
    x, y = projection.forward(city["lat"].to_numpy(), city["lon"].to_numpy())
    sx, sy = projection.forward(shifted["lat"].to_numpy(), shifted["lon"].to_numpy())
    by_metres = evaluate_xy(
        np.column_stack([x, y]), np.column_stack([sx, sy]), probes=np.column_stack([x, y])[:50]
    )
    assert by_degrees.n_probes == 50
    assert by_degrees.density_corr == pytest.approx(by_metres.density_corr)
    assert by_degrees.median_shift_m == pytest.approx(222.0, rel=0.01)  # 0.002 deg of latitude


def test_seeded_probes_are_reproducible(city: pd.DataFrame) -> None:
    moved = city.copy()
    moved["lon"] += 0.003
    first = evaluate(city, moved, "lat", "lon", rng=_rng(8))
    second = evaluate(city, moved, "lat", "lon", rng=_rng(8))
    assert first.summary() == second.summary()


def test_length_mismatch_is_refused(city: pd.DataFrame) -> None:
    with pytest.raises(ParameterError, match="one row per row"):
        evaluate(city, city.iloc[:-1], "lat", "lon", rng=_rng(0))
    with pytest.raises(ParameterError, match="shape"):
        evaluate_xy(np.zeros((3, 2)), np.zeros((2, 2)))


def test_misaligned_index_is_refused(city: pd.DataFrame) -> None:
    with pytest.raises(ParameterError, match="row-aligned"):
        evaluate(city, city.iloc[::-1], "lat", "lon", rng=_rng(0))


def test_missing_columns_are_refused(city: pd.DataFrame) -> None:
    with pytest.raises(ColumnError, match="latitude"):
        evaluate(city, city, "latitude", "lon", rng=_rng(0))
    with pytest.raises(ColumnError, match="lon"):
        evaluate(city, city.drop(columns="lon"), "lat", "lon", rng=_rng(0))


def test_missing_true_coordinates_are_refused(city: pd.DataFrame) -> None:
    original = city.copy()
    original.loc[original.index[0], "lat"] = np.nan
    with pytest.raises(MissingValueError, match="lack a coordinate"):
        evaluate(original, city, "lat", "lon", rng=_rng(0))
    truth = np.array([[0.0, np.nan], [1.0, 1.0]])
    with pytest.raises(DomainError, match="true_xy"):
        evaluate_xy(truth, truth)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"density_radius_m": 0.0}, "density_radius_m"),
        ({"density_radius_m": float("nan")}, "density_radius_m"),
        ({"n_probes": 1}, "n_probes"),
        ({"probe_jitter_m": -1.0}, "probe_jitter_m"),
        ({"probes": np.zeros((3, 3))}, "probes"),
    ],
)
def test_bad_parameters_are_refused(kwargs: dict[str, object], name: str) -> None:
    truth = np.array([[0.0, 0.0], [100.0, 0.0], [0.0, 100.0]])
    with pytest.raises(ParameterError, match=name):
        evaluate_xy(truth, truth, rng=_rng(0), **kwargs)  # type: ignore[arg-type]
