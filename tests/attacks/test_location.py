"""Location re-identification on the NYC taxi example and a quakes-like release."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

from veil.attacks import AttackResult, AttackSpec, Location, Release, location, run_battery
from veil.errors import ParameterError
from veil.geo import planar_laplace, projection_at

from ._releases import DROPOFF, PICKUP, TAXI_SPEC, quakes_like, taxi, taxi_release_fn

QUAKE = Location("lat", "long")
QUAKES_SPEC = AttackSpec(["depth", "mag"], exact=["depth", "mag", "stations"], locations=[QUAKE])


@functools.cache
def _taxi_results() -> tuple[AttackResult, ...]:
    release = taxi_release_fn(0.01, seed=1)(taxi())
    return location(taxi(), release, TAXI_SPEC, rng=np.random.default_rng(1))


def test_the_nearest_masked_pickup_finds_trips_far_above_chance() -> None:
    pickup = _taxi_results()[0]
    assert pickup.variant == f"alone: {PICKUP.name}"
    assert pickup.baseline_kind == "chance"
    assert pickup.baseline.value == pytest.approx(1 / pickup.n_targets)  # 983 trips released
    assert 0.15 < pickup.success.value < 0.3  # the issue measured 21.3 %
    assert pickup.advantage[1] > 0.15 and pickup.is_finding()
    assert 120 < pickup.details["median_displacement_m"] < 220  # epsilon 0.01 per metre


def test_the_drop_off_cell_and_passenger_count_find_much_more() -> None:
    pickup, dropoff, joined = _taxi_results()
    assert dropoff.variant == f"alone: {DROPOFF.name}"
    assert joined.variant.startswith("with ") and "passenger_count" in joined.columns
    assert joined.success.value > 0.55  # the issue measured 66.1 %
    assert joined.success.value > 2 * pickup.success.value
    assert joined.details["single_candidate_share"] > 0.08  # the issue: 13.7 %
    assert joined.advantage[1] > 0.5 and joined.is_finding()
    assert joined.details["mean_candidates"] < 0.5 * dropoff.details["mean_candidates"] + 983


def test_the_shadow_release_of_the_taxi_plan_raises_location_findings() -> None:
    result = run_battery(
        taxi(),
        taxi_release_fn(0.01, seed=2),
        TAXI_SPEC,
        attacks=["location"],
        rng=np.random.default_rng(2),
    )
    assert result.shadow and result.n_released_records == int(0.8 * len(taxi()))
    found = {r.variant for r in result.findings()}
    assert f"alone: {PICKUP.name}" in found
    assert any(v.startswith("with ") for v in found)


@functools.cache
def _quakes() -> tuple[pd.DataFrame, Release]:
    quakes = quakes_like()
    masked = planar_laplace(
        quakes,
        QUAKE.lat,
        QUAKE.lon,
        0.0002,
        projection=projection_at(-20.0, 178.0),
        rng=np.random.default_rng(3),
    )
    masked = masked.iloc[np.random.default_rng(4).permutation(len(masked))]
    return quakes, Release(masked, source=masked.index)


def test_exact_depth_magnitude_and_stations_relink_nearly_every_quake() -> None:
    quakes, release = _quakes()
    alone, joined = location(quakes, release, QUAKES_SPEC, rng=np.random.default_rng(5))
    assert alone.success.value < 0.6  # 10 km of noise hides many points on their own
    assert joined.success.value > 0.97  # the issue: 379 of 382
    assert joined.details["single_candidate_share"] > 0.9
    assert joined.is_finding()
    assert "generalize or drop depth, mag, stations" in joined.suggestion


def test_a_location_that_tells_nothing_finds_nobody_beyond_chance() -> None:
    quakes, release = _quakes()
    same = release.frame.assign(lat=-20.0, long=178.0)  # every point in one place
    (alone,) = location(
        quakes,
        Release(same, source=release.source),
        AttackSpec(["depth"], locations=[QUAKE]),
        rng=np.random.default_rng(6),
    )
    assert alone.success.value == pytest.approx(1 / len(quakes))
    low, high = alone.advantage[1:]
    assert low < 0 < high


def test_a_suppressed_point_is_never_the_nearest() -> None:
    quakes, release = _quakes()
    spec = AttackSpec(["depth"], locations=[QUAKE])
    half = release.frame.copy()
    half.iloc[::2, half.columns.get_loc("lat")] = np.nan
    (partly,) = location(
        quakes, Release(half, source=release.source), spec, rng=np.random.default_rng(7)
    )
    # The suppressed half is never found, so at most the other half is.
    assert 0.0 < partly.success.value <= 0.5
    everything = release.frame.assign(lat=np.nan)
    (none,) = location(
        quakes, Release(everything, source=release.source), spec, rng=np.random.default_rng(8)
    )
    # With no point left the attacker can only guess.
    assert none.success.value == pytest.approx(1 / len(quakes))


def test_location_needs_to_know_whose_rows_are_released() -> None:
    quakes, release = _quakes()
    with pytest.raises(ParameterError, match=r"needs release\.source"):
        location(quakes, release.frame, QUAKES_SPEC)
    stranger = Release(release.frame, source=pd.Index(np.arange(len(quakes)) + 5000))
    with pytest.raises(ParameterError, match="1000 labels are not records of raw"):
        location(quakes, stranger, QUAKES_SPEC)
    synthetic = AttackSpec(["depth"], locations=[QUAKE], synthetic=True)
    with pytest.raises(ParameterError, match="synthetic release"):
        location(quakes, release, synthetic)
    with pytest.raises(ParameterError, match="none of the spec's locations"):
        location(quakes, Release(release.frame[["depth"]], source=release.source), QUAKES_SPEC)


def test_targets_without_a_true_location_are_left_out() -> None:
    quakes, release = _quakes()
    unknown = quakes.assign(lat=np.nan)
    alone, joined = location(unknown, release, QUAKES_SPEC, rng=np.random.default_rng(9))
    assert alone.n_targets == joined.n_targets == 0
    assert alone.details["mean_candidates"] is None and not alone.is_finding()
