"""Tests for the bundled datasets (veil.datasets)."""

from __future__ import annotations

import pandas as pd

from veil.datasets import ADULT_LICENCE, NYC_TAXI_LICENCE, load_adult, load_nyc_taxi

ADULT_COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "salary-class",
]


def test_adult_shape_and_columns(adult: pd.DataFrame) -> None:
    assert adult.shape == (32561, 15)
    assert list(adult.columns) == ADULT_COLUMNS
    assert isinstance(adult.index, pd.RangeIndex)


def test_adult_numeric_columns_are_integers(adult: pd.DataFrame) -> None:
    numeric = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
    for column in numeric:
        assert pd.api.types.is_integer_dtype(adult[column].dtype), column
    assert adult["age"].between(17, 90).all()


def test_adult_question_marks_are_read_as_missing(adult: pd.DataFrame) -> None:
    text = adult[["workclass", "occupation", "native-country", "sex"]]
    assert not (text == "?").any().any()
    missing = adult.isna().sum()
    assert missing[missing > 0].to_dict() == {
        "workclass": 1836,
        "occupation": 1843,
        "native-country": 583,
    }


def test_adult_values_have_no_leading_spaces(adult: pd.DataFrame) -> None:
    assert set(adult["sex"]) == {"Female", "Male"}
    assert set(adult["salary-class"]) == {"<=50K", ">50K"}
    text = adult[["workclass", "education", "sex", "salary-class"]].stack()
    assert not text.str.startswith(" ").any()


def test_nyc_taxi_coordinates_in_range(nyc_taxi: pd.DataFrame) -> None:
    assert len(nyc_taxi) == 998
    for prefix in ("pickup", "dropoff"):
        lat = nyc_taxi[f"{prefix}_latitude"]
        lon = nyc_taxi[f"{prefix}_longitude"]
        assert lat.dtype.kind == "f" and lon.dtype.kind == "f"
        assert lat.notna().all() and lon.notna().all()
        assert lat.between(-90, 90).all()
        assert lon.between(-180, 180).all()
    # Almost every pickup is in New York City (a few raw TLC records carry (0, 0)).
    in_nyc = nyc_taxi["pickup_latitude"].between(40.4, 41.0) & nyc_taxi["pickup_longitude"].between(
        -74.3, -73.6
    )
    assert in_nyc.mean() > 0.95


def test_loaders_return_fresh_frames() -> None:
    first = load_nyc_taxi()
    first.loc[0, "pickup_latitude"] = -1.0
    assert load_nyc_taxi().loc[0, "pickup_latitude"] != -1.0
    assert load_adult() is not load_adult()


def test_licences_are_stated() -> None:
    assert "CC BY 4.0" in ADULT_LICENCE
    assert "NYC" in NYC_TAXI_LICENCE
