"""Linkability: near 1 for a release of one record per class, chance for other people."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import pytest

from veil.attacks import AttackSpec, linkability
from veil.attacks.linkability import _chance, default_split
from veil.errors import ParameterError

from ._releases import adult_split

QIS = ["age", "sex", "race", "education", "marital-status", "native-country"]
OTHERS = ["occupation", "hours-per-week", "fnlwgt", "workclass"]
SPEC = AttackSpec(QIS, exact=OTHERS, sensitive=["salary-class"])


@functools.cache
def _parts() -> list[pd.DataFrame]:
    return adult_split((6000, 6000, 3000), seed=5)


def _one_per_class(frame: pd.DataFrame) -> pd.DataFrame:
    """The records alone in their class on each of the attacker's two sources."""
    alone = ~frame.duplicated(QIS, keep=False) & ~frame.duplicated(OTHERS, keep=False)
    return frame[alone]


def test_a_release_of_one_record_per_class_links_nearly_everybody() -> None:
    raw, control, _ = _parts()
    unique = _one_per_class(raw)
    assert len(unique) > 1000
    (result,) = linkability(unique, unique.copy(), SPEC, control, rng=np.random.default_rng(1))
    assert result.success.value > 0.97
    assert result.baseline_kind == "control" and result.baseline.value < 0.1
    assert result.advantage[1] > 0.8 and result.is_finding()
    assert result.details["sources"] == [QIS, [*OTHERS, "salary-class"]]
    assert result.columns and set(result.columns) <= set(QIS + OTHERS + ["salary-class"])


def test_a_release_of_other_people_links_nobody_beyond_the_control() -> None:
    raw, control, other = _parts()
    (result,) = linkability(raw, other, SPEC, control, rng=np.random.default_rng(2))
    low, high = result.advantage[1:]
    assert low < 0 < high
    assert not result.is_finding()


def test_without_control_the_baseline_is_two_random_picks_meeting() -> None:
    raw = _parts()[0].iloc[:500]
    (result,) = linkability(raw, raw, SPEC, n_neighbors=3, rng=np.random.default_rng(3))
    assert result.baseline_kind == "chance"
    assert result.baseline.value == pytest.approx(_chance(500, 3))


@pytest.mark.parametrize(("n", "k"), [(10, 1), (10, 3), (100, 7), (5, 3)])
def test_chance_is_the_combinatorial_one(n: int, k: int) -> None:
    exact = 1 - math.comb(n - k, k) / math.comb(n, k)
    assert _chance(n, k) == pytest.approx(exact)


def test_the_attacker_s_sources_follow_the_spec() -> None:
    held = ["a", "b", "c", "d"]
    assert default_split(AttackSpec(["a", "b"], exact=["c"]), held) == (["a", "b"], ["c"])
    assert default_split(AttackSpec(["a", "b", "c"]), held) == (["a", "c"], ["b"])
    split = AttackSpec(["a"], link_split=(["d"], ["b", "c"]))
    assert default_split(split, held) == (["d"], ["b", "c"])
    with pytest.raises(ParameterError, match="needs a column on each side"):
        default_split(AttackSpec(["a"]), held)
    with pytest.raises(ParameterError, match="needs a column on each side"):
        default_split(AttackSpec(["a"], exact=["z"]), held)


def test_bad_settings_are_named() -> None:
    raw = _parts()[0].iloc[:30]
    with pytest.raises(ParameterError, match="n_neighbors"):
        linkability(raw, raw, SPEC, n_neighbors=0)
    with pytest.raises(ParameterError, match="n_attacks"):
        linkability(raw, raw, SPEC, n_attacks=-1)
