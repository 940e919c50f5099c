"""Membership inference by distance to the closest record."""

from __future__ import annotations

import numpy as np
import pytest

from veil.attacks import AttackSpec, membership
from veil.errors import ParameterError

from ._releases import adult_split

SPEC = AttackSpec(
    ["age", "sex", "race", "education", "marital-status"],
    sensitive=["salary-class"],
    exact=["fnlwgt", "hours-per-week", "occupation"],
)


def test_a_copy_gives_members_away() -> None:
    raw, control = adult_split((3000, 3000), seed=9)
    (result,) = membership(raw, raw.copy(), SPEC, control, rng=np.random.default_rng(1))
    assert result.baseline_kind == "chance" and result.baseline.value == 0.5
    assert result.n_targets == 4000
    assert result.success.value > 0.95
    assert result.details["exact_copies_members"] == 1.0
    assert result.details["exact_copies_non_members"] < 0.05
    assert result.is_finding()
    assert "fnlwgt" in result.columns  # the column that copies each record


def test_a_release_of_other_people_tells_nothing_about_membership() -> None:
    raw, control, other = adult_split((3000, 3000, 3000), seed=10)
    (result,) = membership(raw, other, SPEC, control, rng=np.random.default_rng(2))
    low, high = result.advantage[1:]
    assert low < 0 < high and not result.is_finding()


def test_ties_are_called_at_random_not_in_favour_of_members() -> None:
    # Every distance is 0: the attacker can only toss a coin.
    raw, control = adult_split((1000, 1000), seed=11)
    spec = AttackSpec(["sex"])
    (result,) = membership(raw, raw, spec, control, rng=np.random.default_rng(3))
    assert result.details["median_dcr_non_members"] == 0.0
    low, high = result.advantage[1:]
    assert low < 0 < high


def test_membership_needs_control_records() -> None:
    raw = adult_split((50,), seed=12)[0]
    with pytest.raises(ParameterError, match="membership: needs control records"):
        membership(raw, raw, SPEC)
