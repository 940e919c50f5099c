"""Columns that carry treated information: coordinates as text, a second coordinate pair,
identifiers, addresses, the same numbers or categories, personal data in free text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.errors import ColumnError, ParameterError
from veil.risk import find_carriers
from veil.risk.carriers import Carrier

CHICAGO = Path(__file__).parents[1] / "data" / "chicago_crime_sample.csv"


@pytest.fixture(scope="module")
def chicago() -> pd.DataFrame:
    return pd.read_csv(CHICAGO)


def _by_column(carriers: tuple[Carrier, ...]) -> dict[str, Carrier]:
    return {str(c.column): c for c in carriers}


def test_chicago_location_is_carried_by_text_state_plane_block_and_ids(
    chicago: pd.DataFrame,
) -> None:
    found = _by_column(find_carriers(chicago, location=("Latitude", "Longitude")))
    assert found["Location"].reason == "coordinate-text"
    assert found["Location"].evidence == pytest.approx(1.0)
    assert found["Location"].related == ("Latitude", "Longitude")
    assert found["X Coordinate"].reason == "coordinates"
    assert found["X Coordinate"].related == ("Longitude",)
    assert found["Y Coordinate"].reason == "coordinates"
    assert found["Y Coordinate"].evidence > 0.99
    assert found["Block"].reason == "address"
    assert found["ID"].reason == "identifier"
    assert found["Case Number"].reason == "identifier"
    # Columns about the event, not the place or the record, are not named.
    for column in ("Primary Type", "Description", "Arrest", "Domestic", "Year"):
        assert column not in found


def test_the_frame_is_not_modified(chicago: pd.DataFrame) -> None:
    before = chicago.copy()
    find_carriers(chicago, location=("Latitude", "Longitude"), max_rows=50)
    pd.testing.assert_frame_equal(chicago, before)


def test_coordinates_as_wkt_text_in_lon_lat_order_are_found() -> None:
    rng = np.random.default_rng(1)
    lat, lon = rng.uniform(41.6, 42.0, 100), rng.uniform(-87.9, -87.5, 100)
    frame = pd.DataFrame(
        {
            "lat": lat,
            "lon": lon,
            "geom": [f"POINT ({float(b)} {float(a)})" for a, b in zip(lat, lon, strict=True)],
        }
    )
    (carrier,) = find_carriers(frame, location=("lat", "lon"))
    assert (carrier.column, carrier.reason) == ("geom", "coordinate-text")


def test_a_second_number_column_with_the_same_order_carries_a_numeric_column() -> None:
    rng = np.random.default_rng(2)
    age = rng.integers(18, 90, 500)
    frame = pd.DataFrame(
        {
            "age": age,
            "birth_year": 2026 - age,
            "note": [f"{a} years old" for a in age],
            "income": rng.normal(30_000, 5_000, 500),
        }
    )
    found = _by_column(find_carriers(frame, numeric=["age"]))
    assert found["birth_year"].reason == "same-numbers"
    assert found["birth_year"].evidence == pytest.approx(1.0)
    assert found["note"].reason == "same-numbers"
    assert "income" not in found


def test_a_code_of_a_category_carries_it_but_a_majority_class_does_not() -> None:
    rng = np.random.default_rng(3)
    education = rng.choice(["school", "college", "degree", "phd"], 1000)
    codes = {"school": 1, "college": 2, "degree": 3, "phd": 4}
    frame = pd.DataFrame(
        {
            "education": education,
            "education_num": [codes[e] for e in education],
            # 95 % zeros: guessing 0 is right 95 % of the time without any column.
            "stroke": (rng.random(1000) < 0.05).astype(int),
            "married": rng.choice(["yes", "no"], 1000),
        }
    )
    found = _by_column(find_carriers(frame, categorical=["education"]))
    assert found["education_num"].reason == "same-categories"
    assert found["education_num"].evidence == pytest.approx(1.0)
    assert "Goodman-Kruskal lambda" in found["education_num"].describe()
    assert _by_column(find_carriers(frame, categorical=["stroke"])) == {}


def test_identifiers_by_uniqueness_and_by_name() -> None:
    n = 200
    frame = pd.DataFrame(
        {
            "email": [f"person{i}@example.org" for i in range(n)],
            "record": np.arange(n) % 150,
            "uuid": [f"{i:032x}" for i in range(n)],
            "weight": np.linspace(50.0, 90.0, n),
            "town": ["Leeds", "York"] * (n // 2),
        }
    )
    found = _by_column(find_carriers(frame, identifiers=["email"]))
    assert found["uuid"].reason == "identifier"
    assert found["record"].reason == "identifier"
    # A float measurement with distinct values is not an identifier.
    assert "weight" not in found and "town" not in found


def test_personal_data_in_free_text_is_found() -> None:
    frame = pd.DataFrame(
        {
            "name": [f"n{i}" for i in range(40)],
            "comment": ["call me at bob@example.com"] * 5 + ["fine"] * 35,
        }
    )
    found = _by_column(find_carriers(frame, identifiers=["name"]))
    assert found["comment"].reason == "pii-text"
    assert found["comment"].evidence == pytest.approx(5 / 40)


def test_errors_name_the_parameter() -> None:
    frame = pd.DataFrame({"a": [1, 2], "b": [3, 4]})
    with pytest.raises(ColumnError, match="location: 'lat'"):
        find_carriers(frame, location=("lat", "a"))
    with pytest.raises(ParameterError, match="max_rows"):
        find_carriers(frame, numeric=["a"], max_rows=0)
    with pytest.raises(ParameterError, match="name the treated columns"):
        find_carriers(frame)


def test_large_frames_are_checked_on_a_sample_but_ids_on_every_row() -> None:
    n = 40_000
    rng = np.random.default_rng(4)
    lat = rng.uniform(41.6, 42.0, n)
    frame = pd.DataFrame(
        {
            "lat": lat,
            "lon": rng.uniform(-87.9, -87.5, n),
            "y": 1_800_000 + (lat - 41.6) * 364_000,
            # 4,000 values each used 10 times: distinct in a 5,000-row sample, not overall.
            "minute": np.repeat(np.arange(n // 10), 10),
        }
    )
    found = _by_column(find_carriers(frame, location=("lat", "lon")))
    assert found["y"].reason == "coordinates"
    assert "minute" not in found
