"""The attack phase of a run: the plan's release attacked on a shadow release (issue 22).

The plan runs again in memory on a random part of the records and the rest is the
held-out control; the results go to the custodian record, never to the public manifest;
an operator's policy can refuse a release whose attacks succeed too often.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

from veil.release import load_plan, run
from veil.release.attack import attack_spec, release_records
from veil.release.policy import Policy, PolicyError
from veil.rng import resolve_rng

from ._quakes import QUAKES, exact_measures_plan

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "veil" / "release" / "examples"


def _with_attacks(path: Path, attacks: list[str], **output: Any) -> Any:
    plan = load_plan(path)
    return plan.model_copy(
        update={
            "evaluation": plan.evaluation.model_copy(
                update={"attacks": attacks, "attack_seed": 22}
            ),
            "output": plan.output.model_copy(update={"report": False, **output}),
        }
    )


def _findings(result: Any) -> list[dict[str, Any]]:
    return [r for r in result.custodian["attacks"]["results"] if r["finding"]]


def test_the_taxi_example_is_attacked_and_its_location_risk_is_a_finding(
    tmp_path: Path,
) -> None:
    # Issue 22: the nearest masked pickup finds the right trip far above chance, and
    # more with the drop-off cell and the passenger count an attacker would know.
    result = run(_with_attacks(EXAMPLES / "location.yaml", ["location"]), tmp_path / "r")
    battery = result.custodian["attacks"]
    assert battery["shadow"] is True
    assert battery["n_control"] > 0 and battery["n_released_records"] < battery["n_records"]
    by_variant = {r["variant"]: r for r in battery["results"]}
    alone = by_variant["alone: pickup_latitude/pickup_longitude"]
    assert alone["finding"] and alone["success_rate"] > 0.1 > 0.01 > alone["baseline"]
    joint = next(r for v, r in by_variant.items() if v.startswith("with "))
    assert joint["success_rate"] > alone["success_rate"]
    assert "passenger_count" in joint["columns"] and joint["suggestion"]
    # Measured on the raw records: custodian side only.
    assert "success_rate" not in json.dumps(result.manifest)
    assert not any(p.name.startswith(".") for p in (tmp_path / "r").iterdir())


def test_exact_quake_measures_beside_masked_points_re_link_them(tmp_path: Path) -> None:
    # Issue 22: the exact depth, magnitude and station count re-link nearly every masked
    # quake; the location attack with them is a finding.
    plan = exact_measures_plan(str(QUAKES), attack_seed=3)
    plan["output"] = {"report": False}
    result = run(plan, tmp_path / "q")
    joint = [r for r in _findings(result) if r["variant"].startswith("with ")]
    assert joint and joint[0]["success_rate"] > 0.9
    assert {"depth", "mag", "stations"} & set(joint[0]["columns"])


def test_a_policy_limit_on_an_attack_refuses_the_release(tmp_path: Path) -> None:
    plan = _with_attacks(EXAMPLES / "location.yaml", [])
    with pytest.raises(PolicyError, match=r"max_attack_success: .*location .* above 0\.05"):
        run(plan, tmp_path / "r", policy=Policy(max_attack_success={"location": 0.05}))
    assert not (tmp_path / "r").exists() and not (tmp_path / "r.custodian").exists()
    # A limit the release meets lets it through, with the policy's attack recorded.
    result = run(plan, tmp_path / "ok", policy=Policy(max_attack_success={"location": 1.0}))
    assert {r["attack"] for r in result.custodian["attacks"]["results"]} == {"location"}


def test_an_unknown_attack_in_a_policy_is_named() -> None:
    with pytest.raises(PolicyError, match=r"unknown attack 'guessing'; allowed: singling_out"):
        Policy(max_attack_success={"guessing": 0.1})


def test_a_plan_without_attacks_runs_none(tmp_path: Path) -> None:
    plan = _with_attacks(EXAMPLES / "location.yaml", [])
    assert run(plan, tmp_path / "r").custodian["attacks"] is None


def test_the_shadow_release_is_the_plans_release_in_memory(tmp_path: Path) -> None:
    plan = load_plan(EXAMPLES / "adult.yaml")
    from veil.datasets import load_adult
    from veil.release.allocate import allocate

    allocated = allocate(plan)
    adult = load_adult().head(3000)
    before = adult.copy()
    released, facts = release_records(allocated, adult, rng=resolve_rng(5))
    pd.testing.assert_frame_equal(adult, before)  # the caller's records are not modified
    assert set(released.index) <= set(adult.index)  # each row keeps its record's label
    assert "levels" in facts["anonymization"]
    assert list(released.columns) == [c for c in adult.columns if c in released.columns]
    spec = attack_spec(allocated)
    assert "education" in spec.quasi_identifiers and "salary-class" in spec.sensitive
    assert spec.exact == ()  # salary-class is kept but sensitive, not an attacker's key
    assert not list(tmp_path.iterdir())


def test_an_adult_release_battery_names_what_made_an_attack_succeed(tmp_path: Path) -> None:
    # The k-anonymous Adult example: the battery runs singling out, linkability and
    # inference on a shadow release; each result carries its baseline and interval.
    plan = _with_attacks(EXAMPLES / "adult.yaml", ["singling_out", "linkability", "inference"])
    plan = plan.model_copy(
        update={
            "evaluation": plan.evaluation.model_copy(update={"attack_sample": 4000}),
        }
    )
    result = run(plan, tmp_path / "a")
    results = result.custodian["attacks"]["results"]
    assert {r["attack"] for r in results} == {"singling_out", "linkability", "inference"}
    for r in results:
        low, high = r["advantage_ci"]
        assert low <= r["advantage"] <= high
        assert r["n_targets"] > 0 and 0.0 <= r["baseline"] <= 1.0
    assert result.custodian["attacks"]["n_released_records"] <= 4000


def test_dp_synthetic_data_at_epsilon_one_shows_no_advantage(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    n = 1500
    frame = pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "region": rng.choice(["a", "b", "c"], n),
            "age": rng.integers(18, 90, n),
        }
    )
    frame["y"] = np.where(frame["age"] + rng.normal(0, 10, n) > 50, "hi", "lo")
    frame.to_csv(tmp_path / "people.csv", index=False)
    plan = {
        "input": {"path": str(tmp_path / "people.csv")},
        "columns": {c: {"role": "sensitive", "treatment": "keep"} for c in ("age", "y")}
        | {c: {"role": "quasi_identifier", "treatment": "keep"} for c in ("sex", "region")},
        "share": {
            "quasi_identifiers": ["sex", "region"],
            "synthesized": ["age", "y"],
            "label": "y",
            "domain": {"sex": ["F", "M"], "region": ["a", "b", "c"],
                       "age": {"bounds": [18, 90], "integer": True, "bins": 8},
                       "y": ["hi", "lo"]},
            "pairs": [[1.0, 1e-6]],
            "synthesizer": "independent",
            "instances": 1,
            "e_threshold": 0.0,
        },
        "budget": {"synthetic": {"epsilon": 5.0, "delta": 1e-4}},
        "evaluation": {"attacks": ["membership", "inference"], "attack_seed": 4},
        "output": {"report": False},
    }  # fmt: skip
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(plan), encoding="utf-8")
    result = run(path, tmp_path / "s", rng=2)
    battery = result.custodian["attacks"]
    assert {r["attack"] for r in battery["results"]} >= {"membership"}
    for r in battery["results"]:
        if r["attack"] == "membership":
            low, high = r["advantage_ci"]
            assert low <= 0.0 <= high, r
