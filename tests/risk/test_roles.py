"""Suggested roles of a table's columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.datasets import load_adult, load_nyc_taxi
from veil.errors import DataTypeError, ParameterError
from veil.risk import suggest_roles

from .._data import DATA


def _kinds(frame: pd.DataFrame) -> dict[str, str]:
    return {str(c.column): c.kind for c in suggest_roles(frame).columns}


def test_adult_has_its_demographics_as_quasi_identifiers() -> None:
    roles = suggest_roles(load_adult())
    assert {"age", "sex", "race", "education", "marital-status", "native-country"} <= set(
        roles.quasi_identifiers
    )
    assert "hours-per-week" not in roles.quasi_identifiers
    assert roles.identifiers == []
    # The riskiest combination singles out more records than any single attribute.
    top = roles.combinations.iloc[0]
    assert top["n_qis"] >= 2 and top["unique_rate"] > roles.combinations["unique_rate"].min()


def test_identifiers_by_uniqueness_and_by_name() -> None:
    gen = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "Student": np.arange(1, 201, dtype=float),  # whole numbers stored as floats
            "record_id": gen.permutation(200),
            "name": [f"person {i % 150}" for i in range(200)],
            "score": gen.normal(60, 10, 200),  # unique floats: a measurement, not an id
            "sex": gen.choice(["F", "M"], 200),
        }
    )
    kinds = _kinds(frame)
    assert kinds["Student"] == kinds["record_id"] == kinds["name"] == "identifier"
    assert kinds["score"] == "sensitive"
    assert kinds["sex"] == "quasi-identifier"


def test_locations_are_paired_by_their_names() -> None:
    roles = suggest_roles(load_nyc_taxi())
    assert set(roles.locations) == {
        ("pickup_latitude", "pickup_longitude"),
        ("dropoff_latitude", "dropoff_longitude"),
    }
    assert _kinds(load_nyc_taxi())["tpep_pickup_datetime"] == "date"


def test_chicago_crimes_name_every_carrier_of_the_location() -> None:
    chicago = pd.read_csv(DATA / "chicago_crime_sample.csv")
    kinds = _kinds(chicago)
    assert kinds["Date"] == "date"
    for column in ("ID", "Case Number", "Block", "Location", "X Coordinate"):
        assert kinds[column] == "identifier", column
    assert suggest_roles(chicago).locations == (("Latitude", "Longitude"),)


def test_free_text_with_personal_data_is_flagged() -> None:
    notes = [f"called back on +34 600 123 {i:03d}, wrote to p{i}@example.org" for i in range(50)]
    frame = pd.DataFrame({"notes": notes, "grade": ["a", "b"] * 25})
    roles = suggest_roles(frame)
    (notes_role,) = [c for c in roles.columns if c.column == "notes"]
    assert notes_role.kind in ("free-text", "identifier") and notes_role.role == "identifier"


def test_the_table_is_not_modified_and_bad_arguments_are_named() -> None:
    frame = load_adult().head(500)
    before = frame.copy()
    suggest_roles(frame)
    pd.testing.assert_frame_equal(frame, before)
    with pytest.raises(DataTypeError, match="df: must be a pandas DataFrame"):
        suggest_roles([1, 2])  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="scan_size: must be an integer >= 1, got 0"):
        suggest_roles(frame, scan_size=0)
