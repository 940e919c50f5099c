"""A privacy model and its table check agree on the same table: one tolerance, one range."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import (
    EntropyLDiversity,
    Hierarchy,
    RecursiveCLDiversity,
    entropy_l_diversity,
    evaluate,
    recursive_c_l_diversity,
)
from veil.errors import ParameterError


def _one_class(values: list[str]) -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    df = pd.DataFrame({"g": ["x"] * len(values), "s": values})
    return df, {"g": Hierarchy.from_frame(pd.DataFrame({0: ["x"], 1: ["*"]}))}


def _accepts(df: pd.DataFrame, hierarchies: dict[str, Hierarchy], model: object) -> bool:
    result = evaluate(df, hierarchies, {"g": 0}, model, max_suppression=0.0)  # type: ignore[arg-type]
    return bool(result.lattice["feasible"].iloc[0])


@pytest.mark.parametrize("l", range(2, 27))
def test_a_class_spread_evenly_over_l_values_has_entropy_level_exactly_l(l: int) -> None:  # noqa: E741
    # exp(log(l)) is l - 2e-15 for 12 of these l: the check reported that.
    df, hierarchies = _one_class([f"v{i}" for i in range(l)] * 3)
    assert entropy_l_diversity(df, ["g"], ["s"]) == l
    assert _accepts(df, hierarchies, EntropyLDiversity("s", l))
    assert not _accepts(df, hierarchies, EntropyLDiversity("s", l + 1e-9))


def test_entropy_model_accepts_exactly_when_the_check_reaches_l() -> None:
    rng = np.random.default_rng(7)
    for _ in range(60):
        size = int(rng.integers(2, 30))
        values = [f"v{v}" for v in rng.integers(0, int(rng.integers(1, 8)), size)]
        df, hierarchies = _one_class(values)
        level = entropy_l_diversity(df, ["g"], ["s"])
        for l in (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, level):  # noqa: E741
            assert _accepts(df, hierarchies, EntropyLDiversity("s", l)) == (level >= l)


@pytest.mark.parametrize("l", [1, 0, -3, 2.0, "2", True])
def test_recursive_cl_diversity_needs_l_of_at_least_2_like_its_check(l: object) -> None:  # noqa: E741
    with pytest.raises(ParameterError, match=r"l must be an integer >= 2 .*got"):
        RecursiveCLDiversity("s", 2.0, l)  # type: ignore[arg-type]
    df, _ = _one_class(["a", "b", "b"])
    with pytest.raises(ParameterError, match="l must be an integer >= 2"):
        recursive_c_l_diversity(df, ["g"], ["s"], l=l)  # type: ignore[arg-type]


def test_recursive_cl_diversity_model_and_check_agree_at_l_2() -> None:
    # Counts (3, 1): r_1 = 3 < c * (r_2) = c holds for c > 3; the check returns c = 4.
    df, hierarchies = _one_class(["a", "a", "a", "b"])
    c, l = recursive_c_l_diversity(df, ["g"], ["s"], l=2)  # noqa: E741
    assert (c, l) == (4.0, 2)
    assert _accepts(df, hierarchies, RecursiveCLDiversity("s", c, 2))
    assert not _accepts(df, hierarchies, RecursiveCLDiversity("s", 3.0, 2))


@pytest.mark.parametrize("c", [0, -1.0, float("nan"), float("inf"), "2"])
def test_recursive_cl_diversity_refuses_a_bad_c(c: object) -> None:
    with pytest.raises(ParameterError, match="c must be a positive finite number"):
        RecursiveCLDiversity("s", c, 2)  # type: ignore[arg-type]
