"""Intersection: two k-anonymous releases under different hierarchies, joined."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

from veil.attacks import AttackSpec, Release, intersection
from veil.errors import DataTypeError, ParameterError

SPEC = AttackSpec(["age", "zip"], sensitive=["disease"], exact=["visits"])
K = 5


@functools.cache
def _people() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(21)
    n = 6000
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 80, n),
            "zip": [f"4{z:04d}" for z in rng.integers(0, 400, n) * 7],
            "disease": rng.choice(list("ABCDEFGH"), n),
            "visits": rng.integers(0, 60, n),
        }
    )
    return frame.iloc[:4000], frame.iloc[4000:]


def _age_band(width: int) -> object:
    def recode(age: pd.Series) -> pd.Series:
        low = age // width * width
        return "[" + low.astype(str) + "-" + (low + width).astype(str) + ")"

    return recode


def _zip_prefix(digits: int) -> object:
    def recode(zip_code: pd.Series) -> pd.Series:
        return zip_code.str[:digits] + "*" * (5 - digits)

    return recode


def _k_anonymous(raw: pd.DataFrame, age_width: int, zip_digits: int) -> Release:
    """Global recoding of age and zip, classes under K records suppressed."""
    recode = {"age": _age_band(age_width), "zip": _zip_prefix(zip_digits)}
    out = raw.assign(age=recode["age"](raw["age"]), zip=recode["zip"](raw["zip"]))  # type: ignore[operator]
    sizes = out.groupby(["age", "zip"])["disease"].transform("size")
    out = out[sizes >= K]
    assert out.groupby(["age", "zip"]).size().min() >= K
    return Release(out, source=out.index, recode=recode)  # type: ignore[arg-type]


def test_two_hierarchies_joined_tell_more_than_either_release() -> None:
    raw, control = _people()
    first = _k_anonymous(raw, age_width=10, zip_digits=3)
    second = _k_anonymous(raw, age_width=30, zip_digits=4)
    (result,) = intersection(raw, first, SPEC, control, other=second, rng=np.random.default_rng(1))
    assert result.baseline_kind == "single release"
    assert result.baseline.value == max(
        result.details["first_release_rate"], result.details["second_release_rate"]
    )
    assert result.success.value > result.baseline.value + 0.1
    assert result.advantage[1] > 0.05 and result.is_finding()
    assert set(result.columns) == {"age", "zip"}
    assert result.details["isolated_share"] > 0.0
    # People not in the releases gain nothing from the join.
    assert result.details["control_rate"] < 0.25


def test_one_release_twice_adds_nothing() -> None:
    raw, _ = _people()
    first = _k_anonymous(raw, age_width=10, zip_digits=3)
    (result,) = intersection(raw, first, SPEC, other=first, rng=np.random.default_rng(2))
    low, high = result.advantage[1:]
    assert low < 0 < high and not result.is_finding()
    assert result.columns == ()


def test_a_coarsening_of_the_other_release_adds_nothing() -> None:
    raw, _ = _people()
    fine = _k_anonymous(raw, age_width=10, zip_digits=4)
    coarse = _k_anonymous(raw, age_width=20, zip_digits=3)
    (result,) = intersection(raw, fine, SPEC, other=coarse, rng=np.random.default_rng(3))
    assert result.advantage[1] < 0.05 and not result.is_finding()


def test_the_releases_must_share_what_is_joined() -> None:
    raw, _ = _people()
    first = _k_anonymous(raw, age_width=10, zip_digits=3)
    with pytest.raises(ParameterError, match="both releases must hold"):
        intersection(raw, first, SPEC, other=first.frame[["age", "zip"]])
    with pytest.raises(DataTypeError, match="other: must be a pandas DataFrame"):
        intersection(raw, first, SPEC, other=[1, 2])  # type: ignore[arg-type]
