"""Fixtures of the gate's tests: the command-line runner of the CLI tests, and small tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.datasets import load_nyc_taxi

from ..cli.conftest import Result as Result
from ..cli.conftest import Veil as Veil
from ..cli.conftest import veil as veil

CENTRE = (40.758, -73.9855)


@pytest.fixture
def taxi_with_copies(tmp_path: Path) -> Path:
    """The NYC taxi sample with the pickup point copied three ways and a trip id.

    ``X``/``Y`` repeat the pickup's longitude and latitude, ``Location`` holds it as
    ``"(lat, lon)"`` text, ``trip_id`` numbers the trips: what a city's open-data table
    holds beside the point a release masks (issue 18, defect 2).
    """
    taxi = load_nyc_taxi()
    taxi = taxi[(taxi["pickup_latitude"] != 0) & (taxi["dropoff_latitude"] != 0)].copy()
    taxi["X"] = taxi["pickup_longitude"]
    taxi["Y"] = taxi["pickup_latitude"]
    taxi["Location"] = (
        "("
        + taxi["pickup_latitude"].astype(str)
        + ", "
        + taxi["pickup_longitude"].astype(str)
        + ")"
    )
    taxi["trip_id"] = np.arange(len(taxi))
    path = tmp_path / "taxi.csv"
    taxi.to_csv(path, index=False)
    return path


@pytest.fixture
def people(tmp_path: Path) -> Path:
    """300 people: a name, an age, a town and a free-text note."""
    gen = np.random.default_rng(18)
    n = 300
    frame = pd.DataFrame(
        {
            "name": [f"person {i:03d}" for i in range(n)],
            "age": gen.integers(18, 90, n),
            "town": gen.choice(["Oviedo", "Gijón", "Avilés"], n),
            "note": gen.choice(["fine", "follow up"], n),
        }
    )
    path = tmp_path / "people.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    """A fresh 32-byte key, hex, mode 0600."""
    path = tmp_path / "k.key"
    path.write_text(np.random.default_rng(7).bytes(32).hex() + "\n", encoding="utf-8")
    path.chmod(0o600)
    return path
