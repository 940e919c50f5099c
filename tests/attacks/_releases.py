"""Releases of known strength for the attack tests, built from the bundled datasets."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import pandas as pd

from veil.attacks import AttackSpec, Location, Release
from veil.datasets import load_adult, load_nyc_taxi
from veil.geo import grid, planar_laplace, projection_at

# The public centre of the NYC example plan (src/veil/release/examples/location.yaml).
TIMES_SQUARE = (40.7580, -73.9855)
PICKUP = Location("pickup_latitude", "pickup_longitude")
DROPOFF = Location("dropoff_latitude", "dropoff_longitude")
TAXI_SPEC = AttackSpec(
    quasi_identifiers=["trip_distance"],
    sensitive=["fare_amount", "tip_amount"],
    exact=["passenger_count"],
    locations=[PICKUP, DROPOFF],
)
TAXI_COLUMNS = [
    "passenger_count",
    "trip_distance",
    "fare_amount",
    "tip_amount",
    PICKUP.lat,
    PICKUP.lon,
    DROPOFF.lat,
    DROPOFF.lon,
]


@functools.cache
def adult() -> pd.DataFrame:
    return load_adult()


def adult_split(sizes: tuple[int, ...], seed: int = 3) -> list[pd.DataFrame]:
    """Disjoint random parts of Adult of the given sizes."""
    order = np.random.default_rng(seed).permutation(len(adult()))
    bounds = np.cumsum([0, *sizes])
    return [adult().iloc[order[bounds[i] : bounds[i + 1]]] for i in range(len(sizes))]


def taxi_release_fn(epsilon: float, seed: int) -> Callable[[pd.DataFrame], Release]:
    """The example plan's location treatment, as a release function for a shadow release.

    Pickup: planar Laplace at ``epsilon`` per metre in the projection fixed at Times
    Square; drop-off: 250 m cells, suppressed below 3 trips; passenger count exact; rows
    shuffled, index labels kept (as veil's release steps keep them).
    """
    projection = projection_at(*TIMES_SQUARE)

    def release(frame: pd.DataFrame) -> Release:
        rng = np.random.default_rng(seed)
        out = planar_laplace(
            frame,
            PICKUP.lat,
            PICKUP.lon,
            epsilon,
            projection=projection,
            outside="drop",
            rng=rng,
        )
        out = grid(
            out,
            DROPOFF.lat,
            DROPOFF.lon,
            250,
            min_count=3,
            projection=projection,
            outside="drop",
        )
        out = out[TAXI_COLUMNS].iloc[rng.permutation(len(out))]
        return Release(out, source=out.index, cells={(DROPOFF.lat, DROPOFF.lon): cells})

    def cells(frame: pd.DataFrame) -> pd.DataFrame:
        # What an attacker who read the plan computes: the 250 m cell of a true point.
        return grid(frame, DROPOFF.lat, DROPOFF.lon, 250, projection=projection)

    return release


def quakes_like(n: int = 1000, seed: int = 11) -> pd.DataFrame:
    """Earthquakes near Fiji shaped like R's ``quakes`` (which cannot be downloaded here).

    Depth in whole km (40-680), magnitude in tenths (4.0-6.4, most near 4.5), the number of
    reporting stations growing with the magnitude (10-132): the three exact columns that
    re-linked 379 of 382 masked points of a quakes release. The epicentres lie in a 670 by
    310 km box west of the antimeridian, within the reach of a projection centred on it.
    """
    rng = np.random.default_rng(seed)
    magnitude = np.clip(np.round(4.0 + rng.exponential(0.45, n), 1), 4.0, 6.4)
    stations = np.clip(np.round(10 + (magnitude - 4.0) * 45 + rng.normal(0, 8, n)), 10, 132)
    return pd.DataFrame(
        {
            "lat": rng.uniform(-23.0, -17.0, n),
            "long": rng.uniform(176.5, 179.5, n),
            "depth": rng.integers(40, 681, n),
            "mag": magnitude,
            "stations": stations.astype(int),
        }
    )


@functools.cache
def taxi() -> pd.DataFrame:
    return load_nyc_taxi()
