"""Operator policy: limits a plan must meet before anything is read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from veil.release import run
from veil.release.ledger import plan_ledger
from veil.release.plan import load_plan
from veil.release.policy import Policy, PolicyError, check_policy, plan_leaks


def _plan(tmp_path: Path, **sections: Any) -> dict[str, Any]:
    plan: dict[str, Any] = {
        # The input does not exist: a plan the policy refuses must never read it.
        "input": {"path": str(tmp_path / "missing.csv")},
        "columns": {
            "age": {
                "role": "quasi_identifier",
                "treatment": {"method": "laplace", "epsilon": 1.5, "bounds": [16, 100]},
            },
            "zip": {"role": "quasi_identifier", "treatment": "keep"},
        },
        "locations": [
            {
                "lat": "lat",
                "lon": "lon",
                "centre": [40.75, -73.98],
                "mask": {"method": "planar_laplace", "epsilon": 0.02},
            }
        ],
        "anonymization": {
            "quasi_identifiers": {"zip": str(tmp_path / "zip.csv")},
            "models": [{"k_anonymity": 3}],
        },
        "budget": {"ldp": {"epsilon": 2.0}, "metric": {"epsilon": 0.05}},
    }
    plan.update(sections)
    return plan


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        (
            Policy(max_ldp_epsilon=1.0),
            "policy.max_ldp_epsilon: the plan spends 1.5, over the limit 1",
        ),
        (Policy(max_metric_epsilon=0.01), "policy.max_metric_epsilon: the plan spends 0.02"),
        (Policy(remaining_ldp_epsilon=0.5), "policy.remaining_ldp_epsilon: the plan spends 1.5"),
        (Policy(min_k=5), "policy.min_k: anonymization.models.0.k is 3, below the least k 5"),
        (
            Policy(allowed_methods=frozenset({"laplace", "keep", "anonymization"})),
            "policy.allowed_methods: the plan uses ['planar_laplace']",
        ),
    ],
)
def test_a_plan_over_the_policy_is_refused_before_reading(
    tmp_path: Path, policy: Policy, message: str
) -> None:
    with pytest.raises(PolicyError, match="nothing was read") as info:
        run(_plan(tmp_path), tmp_path / "out", policy=policy)
    assert message in str(info.value)
    assert not (tmp_path / "out").exists()
    # A dry run applies the same policy.
    with pytest.raises(PolicyError):
        run(_plan(tmp_path), dry_run=True, policy=policy)


def test_a_plan_within_the_policy_passes_its_dry_run(tmp_path: Path) -> None:
    policy = Policy(
        max_ldp_epsilon=2.0,
        max_metric_epsilon=0.05,
        remaining_ldp_epsilon=1.5,
        min_k=3,
        allowed_methods=frozenset({"laplace", "keep", "planar_laplace", "anonymization"}),
    )
    result = run(_plan(tmp_path), dry_run=True, policy=policy)
    assert result.totals["ldp"]["epsilon"] == pytest.approx(1.5)


def test_leaks_are_refused_unless_the_policy_allows_them(tmp_path: Path) -> None:
    plan = _plan(tmp_path, output={"keep_order": True})
    loaded = load_plan(plan)
    assert plan_leaks(loaded) == ["output.keep_order: records keep the input's order"]
    with pytest.raises(PolicyError, match=r"policy.allow_leaks: not allowed: output\.keep_order"):
        check_policy(loaded, plan_ledger(loaded), plan_leaks(loaded), Policy())
    check_policy(loaded, plan_ledger(loaded), plan_leaks(loaded), Policy(allow_leaks=True))
    check_policy(loaded, plan_ledger(loaded), plan_leaks(loaded), None)


def test_cloaking_k_is_held_to_the_least_k(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    plan["locations"][0]["mask"] = {"method": "cloak", "k": 2}
    loaded = load_plan(plan)
    with pytest.raises(PolicyError, match=r"locations.0.mask.k is 2, below the least k 3"):
        check_policy(loaded, plan_ledger(loaded), [], Policy(min_k=3))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_ldp_epsilon": -1.0}, "policy.max_ldp_epsilon: must be a finite number >= 0"),
        ({"remaining_metric_epsilon": float("nan")}, "policy.remaining_metric_epsilon"),
        ({"min_k": 0}, "policy.min_k: must be an integer >= 1, got 0"),
    ],
)
def test_a_bad_policy_names_its_field(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        Policy(**kwargs)
