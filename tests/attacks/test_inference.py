"""Attribute inference: the release gives away a copy's secrets, not other people's."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

from veil.attacks import AttackSpec, inference
from veil.errors import ParameterError

from ._releases import adult_split

SPEC = AttackSpec(
    ["age", "sex", "race", "education", "marital-status", "native-country"],
    sensitive=["salary-class", "hours-per-week"],
    exact=["occupation", "fnlwgt"],
)


@functools.cache
def _parts() -> list[pd.DataFrame]:
    return adult_split((5000, 5000, 5000), seed=7)


def test_a_copy_gives_away_every_secret_beyond_what_the_population_tells() -> None:
    raw, control, _ = _parts()
    income, hours = inference(raw, raw.copy(), SPEC, control, rng=np.random.default_rng(1))
    assert (income.variant, hours.variant) == ("salary-class", "hours-per-week")
    for result in (income, hours):
        assert result.success.value > 0.99
        assert result.baseline_kind == "control"
        assert result.advantage[1] > 0.5 and result.is_finding()
        assert "fnlwgt" in result.columns  # the column that finds each person's own row
    assert income.baseline.value > 0.6  # most people earn <=50K: the population tells that


def test_a_release_of_other_people_tells_what_the_population_tells() -> None:
    raw, control, other = _parts()
    for result in inference(raw, other, SPEC, control, rng=np.random.default_rng(2)):
        low, high = result.advantage[1:]
        assert low < 0 < high, result.to_dict()


@pytest.mark.parametrize(("factor", "right"), [(1.03, True), (0.96, True), (1.1, False)])
def test_a_number_is_guessed_within_five_percent_of_the_truth(factor: float, right: bool) -> None:
    raw = pd.DataFrame({"id": [f"p{i}" for i in range(200)], "pay": np.arange(100.0, 300.0)})
    release = raw.assign(pay=raw["pay"] * factor)
    spec = AttackSpec(["id"], sensitive=["pay"])
    (result,) = inference(raw, release, spec, rng=np.random.default_rng(3))
    assert result.success.value == (1.0 if right else 0.0)


def test_missing_secrets_match_missing_guesses() -> None:
    raw = pd.DataFrame({"id": list("abcd"), "s": ["x", None, "y", None]})
    (result,) = inference(
        raw, raw, AttackSpec(["id"], sensitive=["s"]), rng=np.random.default_rng(4)
    )
    assert result.success.value == 1.0


def test_without_control_the_baseline_is_a_random_released_value() -> None:
    raw = _parts()[0]
    income, _ = inference(raw, raw, SPEC, n_attacks=1000, rng=np.random.default_rng(5))
    share = float((raw["salary-class"] == raw["salary-class"].mode()[0]).mean())
    assert income.baseline_kind == "chance"
    # A random guess from the release is right with chance sum of squared shares.
    assert income.baseline.value == pytest.approx(share**2 + (1 - share) ** 2, abs=0.05)


def test_inference_needs_a_secret_and_known_columns() -> None:
    raw = _parts()[0].iloc[:20]
    with pytest.raises(ParameterError, match="no sensitive column that the release holds"):
        inference(raw, raw.drop(columns=["salary-class", "hours-per-week"]), SPEC)
    with pytest.raises(ParameterError, match="none of the quasi-identifiers"):
        inference(raw, raw[["salary-class"]], SPEC)
    with pytest.raises(ParameterError, match="tolerance"):
        inference(raw, raw, SPEC, tolerance=1.5)
