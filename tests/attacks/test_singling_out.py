"""Singling out: near 1 on a copy of the raw table, indistinguishable from chance on a
release of other people, low on a coarse release."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

from veil.attacks import AttackResult, AttackSpec, Release, singling_out
from veil.errors import ParameterError

from ._releases import adult_split

SPEC = AttackSpec(
    ["age", "sex", "race", "native-country", "education", "marital-status"],
    sensitive=["salary-class"],
    exact=["workclass", "occupation", "hours-per-week", "capital-gain", "fnlwgt"],
)


@functools.cache
def _parts() -> list[pd.DataFrame]:
    # raw, control, other people, a small control
    return adult_split((5000, 5000, 5000, 1500))


@functools.cache
def _copy() -> tuple[AttackResult, ...]:
    raw, control, _, _ = _parts()
    return singling_out(raw, raw.copy(), SPEC, control, rng=np.random.default_rng(1))


@pytest.mark.parametrize("mode", [0, 1])
def test_a_copy_of_the_raw_table_is_singled_out(mode: int) -> None:
    result = _copy()[mode]
    assert result.variant == ("univariate", "multivariate")[mode]
    assert result.success.value > 0.97
    assert result.details["predicates_found"] == result.n_targets == 500
    assert result.baseline_kind == "control"
    assert result.advantage[1] > 0.8
    assert result.is_finding()
    assert result.columns and set(result.columns) <= set(SPEC.tabular)
    assert all(" == " in e or " >= " in e or " <= " in e for e in result.details["examples"])


@pytest.mark.parametrize("control_part", [1, 3], ids=["larger control", "smaller control"])
def test_a_release_of_other_people_beats_no_baseline(control_part: int) -> None:
    # The predicates come from people who are not in raw: whatever they isolate there,
    # they isolate by chance, and the control-based baseline must say so (hypergeometric
    # with at least as many control records as raw ones, the Beta posterior below).
    parts = _parts()
    raw, other, control = parts[0], parts[2], parts[control_part]
    for result in singling_out(raw, other, SPEC, control, rng=np.random.default_rng(2)):
        low, high = result.advantage[1:]
        assert low < 0 < high, (result.variant, result.to_dict())
        assert not result.is_finding()


def test_a_coarse_release_isolates_few() -> None:
    raw, control, _, _ = _parts()
    coarse = pd.DataFrame(
        {
            "age": (raw["age"] // 20 * 20).to_numpy(),
            "sex": raw["sex"].to_numpy(),
            "race": "*",
            "salary-class": raw["salary-class"].to_numpy(),
        }
    )
    spec = AttackSpec(["age", "sex", "race"], sensitive=["salary-class"])
    uni, multi = singling_out(
        raw, coarse, spec, control, max_attempts=5000, rng=np.random.default_rng(3)
    )
    assert multi.details["attempts"] == 5000
    assert multi.success.value < 0.05
    assert uni.success.value < 0.05


def test_without_control_the_baseline_is_the_naive_attacker() -> None:
    raw = _parts()[0]
    (result,) = singling_out(
        raw, raw, SPEC, modes=("univariate",), n_attacks=200, rng=np.random.default_rng(4)
    )
    assert result.baseline_kind == "chance"
    assert result.baseline.value == result.details["naive_rate"] < 0.1


def test_the_same_seed_gives_the_same_figures() -> None:
    raw, control, _, _ = _parts()

    def run(seed: int) -> list[dict[str, object]]:
        results = singling_out(
            raw, raw, SPEC, control, n_attacks=100, rng=np.random.default_rng(seed)
        )
        return [r.to_dict() for r in results]

    assert run(5) == run(5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"modes": ("both",)}, "modes"),
        ({"modes": ()}, "modes"),
        ({"n_attacks": 0}, "n_attacks: must be an integer >= 1"),
        ({"n_cols": True}, "n_cols"),
        ({"max_attempts": 2.5}, "max_attempts"),
    ],
)
def test_bad_settings_are_named(kwargs: dict[str, object], message: str) -> None:
    raw = _parts()[0].iloc[:50]
    with pytest.raises(ParameterError, match=message):
        singling_out(raw, raw, SPEC, **kwargs)  # type: ignore[arg-type]


def test_a_release_without_the_spec_columns_is_refused() -> None:
    raw = _parts()[0].iloc[:50]
    with pytest.raises(ParameterError, match="holds none of the columns"):
        singling_out(raw, pd.DataFrame({"other": [1, 2]}), SPEC, rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match="holds no rows"):
        singling_out(raw, raw.iloc[:0], SPEC, rng=np.random.default_rng(0))


def test_generalized_columns_are_compared_through_the_public_hierarchy() -> None:
    raw, control, _, _ = _parts()

    def decade(age: pd.Series) -> pd.Series:
        return (age // 10 * 10).astype(str) + "s"

    frame = raw.assign(age=decade(raw["age"]))
    spec = AttackSpec(["age", "sex", "race"], exact=["fnlwgt", "hours-per-week", "occupation"])
    options = {"modes": ("multivariate",), "n_attacks": 200}
    (known,) = singling_out(
        raw,
        Release(frame, recode={"age": decade}),
        spec,
        control,
        rng=np.random.default_rng(6),
        **options,  # type: ignore[arg-type]
    )
    (unknown,) = singling_out(
        raw,
        frame,
        spec,
        control,
        rng=np.random.default_rng(6),
        **options,  # type: ignore[arg-type]
    )
    # An attacker who knows the hierarchy puts a person's age in its decade and finds them;
    # without it, "age == 30s" matches nobody's true age.
    assert known.success.value > 0.9
    assert unknown.success.value < known.success.value - 0.2
