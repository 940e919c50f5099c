"""Small bundled datasets for examples, the demo and tests.

* :func:`load_adult`: UCI Adult (1994 US census extract), 32 561 rows, 15 columns.
  Source: UCI Machine Learning Repository (Becker and Kohavi 1996), as shipped in the
  examples of trasgoDP and anjana. Licence: CC BY 4.0.
* :func:`load_nyc_taxi`: 998 NYC yellow taxi trips of 2016-06-09 with pickup and
  dropoff coordinates (10 of the 19 columns). Source: NYC Taxi and Limousine
  Commission trip records, as shipped in the nanocube project. Licence: NYC open data
  terms of use.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

__all__ = [
    "ADULT_BOUNDS",
    "ADULT_DOMAINS",
    "ADULT_LICENCE",
    "NYC_TAXI_LICENCE",
    "load_adult",
    "load_nyc_taxi",
]

ADULT_LICENCE = "UCI Adult, UCI Machine Learning Repository, CC BY 4.0"
NYC_TAXI_LICENCE = "NYC TLC yellow taxi trip records (2016-06-09 sample), NYC open data terms"


# The public domains of Adult's categorical attributes, as documented with the data
# set (UCI ``adult.names``), not read from the records. Education is listed in its
# natural order (the order of ``education-num``).
ADULT_DOMAINS: dict[str, tuple[str, ...]] = {
    "workclass": (
        "Private",
        "Self-emp-not-inc",
        "Self-emp-inc",
        "Federal-gov",
        "Local-gov",
        "State-gov",
        "Without-pay",
        "Never-worked",
    ),
    "education": (
        "Preschool",
        "1st-4th",
        "5th-6th",
        "7th-8th",
        "9th",
        "10th",
        "11th",
        "12th",
        "HS-grad",
        "Some-college",
        "Assoc-voc",
        "Assoc-acdm",
        "Bachelors",
        "Masters",
        "Prof-school",
        "Doctorate",
    ),
    "marital-status": (
        "Married-civ-spouse",
        "Divorced",
        "Never-married",
        "Separated",
        "Widowed",
        "Married-spouse-absent",
        "Married-AF-spouse",
    ),
    "occupation": (
        "Tech-support",
        "Craft-repair",
        "Other-service",
        "Sales",
        "Exec-managerial",
        "Prof-specialty",
        "Handlers-cleaners",
        "Machine-op-inspct",
        "Adm-clerical",
        "Farming-fishing",
        "Transport-moving",
        "Priv-house-serv",
        "Protective-serv",
        "Armed-Forces",
    ),
    "relationship": (
        "Wife",
        "Own-child",
        "Husband",
        "Not-in-family",
        "Other-relative",
        "Unmarried",
    ),
    "race": ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"),
    "sex": ("Female", "Male"),
    "native-country": (
        "United-States",
        "Cambodia",
        "England",
        "Puerto-Rico",
        "Canada",
        "Germany",
        "Outlying-US(Guam-USVI-etc)",
        "India",
        "Japan",
        "Greece",
        "South",
        "China",
        "Cuba",
        "Iran",
        "Honduras",
        "Philippines",
        "Italy",
        "Poland",
        "Jamaica",
        "Vietnam",
        "Mexico",
        "Portugal",
        "Ireland",
        "France",
        "Dominican-Republic",
        "Laos",
        "Ecuador",
        "Taiwan",
        "Haiti",
        "Columbia",
        "Hungary",
        "Guatemala",
        "Nicaragua",
        "Scotland",
        "Thailand",
        "Yugoslavia",
        "El-Salvador",
        "Trinadad&Tobago",
        "Peru",
        "Hong",
        "Holand-Netherlands",
    ),
    "salary-class": ("<=50K", ">50K"),
}

# Public bounds of Adult's numerical attributes: the working-age range used in the
# trasgoDP paper, the 16 education levels, the census coding of weekly hours (1-99)
# and of capital gains (top-coded at 99 999). None is read from the records.
ADULT_BOUNDS: dict[str, tuple[int, int]] = {
    "age": (16, 100),
    "education-num": (1, 16),
    "hours-per-week": (1, 99),
    "capital-gain": (0, 99999),
}


def _open(name: str) -> pd.DataFrame:
    path = resources.files("veil.datasets").joinpath("data").joinpath(name)
    with resources.as_file(path) as file:
        return pd.read_csv(file, skipinitialspace=True, na_values=["?"], keep_default_na=True)


def load_adult() -> pd.DataFrame:
    """Return the Adult table (32 561 rows); ``?`` is read as missing.

    Columns: age, workclass, fnlwgt, education, education-num, marital-status,
    occupation, relationship, race, sex, capital-gain, capital-loss, hours-per-week,
    native-country, salary-class.
    """
    return _open("adult.csv.gz")


def load_nyc_taxi() -> pd.DataFrame:
    """Return 998 NYC taxi trips with pickup/dropoff latitude and longitude."""
    return _open("nyc_taxi_2016_sample.csv.gz")
