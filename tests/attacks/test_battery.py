"""run_battery: the shadow release of a plan attacked by every applicable attack.

DP synthetic data at epsilon = 1 (MST) beats no baseline; a copy of the records does.
"""

from __future__ import annotations

import functools
import json

import numpy as np
import pandas as pd
import pytest

from veil.attacks import ATTACKS, AttackSpec, BatteryResult, run_battery
from veil.datasets import ADULT_BOUNDS, ADULT_DOMAINS
from veil.errors import ParameterError
from veil.synth import MST, TableDomain

from ._releases import adult

COLUMNS = ["age", "education", "marital-status", "relationship", "sex", "salary-class"]
SPEC = AttackSpec(
    ["age", "sex", "education", "marital-status"],
    sensitive=["salary-class"],
    exact=["relationship"],
    synthetic=True,
)


def _mst(frame: pd.DataFrame) -> pd.DataFrame:
    """The release function of a DP synthetic plan: MST at epsilon = 1, delta = 1e-6."""
    spec: dict[str, object] = {c: list(ADULT_DOMAINS[c]) for c in COLUMNS if c != "age"}
    spec["age"] = {"bounds": list(ADULT_BOUNDS["age"]), "bins": 85, "integer": True}
    model = MST(iters=300).fit(
        frame, TableDomain.from_dict(spec), 1.0, 1e-6, rng=np.random.default_rng(5)
    )
    return model.sample(len(frame), rng=np.random.default_rng(6))


@functools.cache
def _battery(release: str) -> BatteryResult:
    fn = _mst if release == "mst" else (lambda frame: frame.copy())
    return run_battery(adult()[COLUMNS], fn, SPEC, sample=4000, rng=np.random.default_rng(0))


def test_dp_synthetic_data_at_epsilon_one_beats_no_baseline() -> None:
    result = _battery("mst")
    assert result.shadow and result.n_released_records == 4000
    assert result.n_control == len(adult()) - 4000
    ran = {r.attack for r in result.results}
    assert ran == {"singling_out", "linkability", "inference", "membership"}
    for attack in result.results:
        low, high = attack.advantage[1:]
        assert low <= 0 <= high, attack.to_dict()
    assert result.findings() == ()
    assert result.skipped == {"location": "the spec names no location"}


def test_a_copy_of_the_records_is_caught_by_the_same_battery() -> None:
    result = _battery("copy")
    found = {(r.attack, r.variant) for r in result.findings()}
    assert ("singling_out", "multivariate") in found
    assert ("inference", "salary-class") in found
    assert ("membership", "distance to closest record") in found


def test_the_results_are_json_with_their_columns_and_edits() -> None:
    data = json.loads(json.dumps(_battery("copy").to_dict(), allow_nan=False))
    assert data["shadow"] is True and data["margin"] == 0.05
    assert set(data["seconds"]) >= {"release", "singling_out", "membership"}
    first = data["results"][0]
    assert set(first) >= {
        "attack",
        "variant",
        "success_rate",
        "success_ci",
        "baseline",
        "baseline_kind",
        "advantage",
        "advantage_ci",
        "n_targets",
        "finding",
        "columns",
        "suggestion",
    }
    for result in data["results"]:
        if result["finding"]:
            assert result["columns"] and result["suggestion"]


def test_a_given_release_without_control_uses_chance_baselines() -> None:
    raw = adult()[COLUMNS].iloc[:2000]
    spec = AttackSpec(["age", "sex", "education"], sensitive=["salary-class"])
    result = run_battery(
        raw,
        raw,
        spec,
        attacks=["singling_out", "inference", "membership", "location"],
        options={"singling_out": {"n_attacks": 100, "modes": ("univariate",)}},
        rng=np.random.default_rng(1),
    )
    assert not result.shadow and result.n_control == 0
    assert {r.baseline_kind for r in result.results} == {"chance"}
    assert result.results[0].n_targets == 100
    assert set(result.skipped) == {"membership", "location"}
    assert "control records" in result.skipped["membership"]


def test_no_input_is_modified() -> None:
    raw = adult()[COLUMNS].iloc[:1500]
    release, control = raw.iloc[:1000].copy(), raw.iloc[1000:].copy()
    spec = AttackSpec(["age", "sex", "education"], sensitive=["salary-class"])
    before = [frame.copy() for frame in (raw, release, control)]
    run_battery(
        raw,
        release,
        spec,
        attacks=list(ATTACKS),
        control=control,
        other=release,
        rng=np.random.default_rng(4),
    )
    for frame, copy in zip((raw, release, control), before, strict=True):
        pd.testing.assert_frame_equal(frame, copy)


def test_the_intersection_runs_on_both_shadow_releases() -> None:
    raw = adult()[COLUMNS].iloc[:3000]
    spec = AttackSpec(["age", "education"], sensitive=["salary-class"], exact=["relationship"])

    def decades(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.assign(age=frame["age"] // 10)

    def halves(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.assign(age=frame["age"] // 5)

    result = run_battery(
        raw, decades, spec, attacks=["intersection"], other=halves, rng=np.random.default_rng(2)
    )
    (attack,) = result.results
    assert attack.attack == "intersection" and attack.n_targets == 2000


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"attacks": ["singling_out", "reconstruction"]}, r"unknown \['reconstruction'\]"),
        ({"attacks": "location"}, "list of attack names"),
        ({"options": {"singling_out": {"rng": 3}}}, "set by the battery"),
        ({"options": {"decoding": {}}}, "must be an attack"),
        ({"options": [1]}, "must map attack names"),
        ({"other": lambda f: f}, "other: must be a release"),
    ],
)
def test_bad_battery_settings_are_named(kwargs: dict[str, object], message: str) -> None:
    raw = adult()[COLUMNS].iloc[:100]
    with pytest.raises(ParameterError, match=message):
        run_battery(raw, raw, SPEC, rng=np.random.default_rng(3), **kwargs)  # type: ignore[arg-type]


def test_every_attack_is_registered() -> None:
    assert list(ATTACKS) == [
        "singling_out",
        "linkability",
        "inference",
        "location",
        "membership",
        "intersection",
    ]
