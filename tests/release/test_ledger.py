"""The privacy ledger: costs from the mechanisms, budgets refused before any read."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from veil.mechanisms import Exponential, Gaussian, PlanarLaplace, ordinal_scores
from veil.release import (
    BudgetError,
    PlanError,
    allocate,
    check_budget,
    cross_check,
    load_plan,
    plan_ledger,
    render_ledger,
    run,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "veil" / "release" / "examples"


def _plan(columns: dict[str, Any], **sections: Any) -> dict[str, Any]:
    return {"input": {"path": "/nonexistent/never-read.csv"}, "columns": columns, **sections}


def _laplace(eps: float) -> dict[str, Any]:
    return {
        "role": "quasi_identifier",
        "treatment": {"method": "laplace", "epsilon": eps, "bounds": [16, 100]},
    }


def test_costs_come_from_the_mechanisms_exact_channel() -> None:
    domain = [f"c{i}" for i in range(5)]
    plan = load_plan(
        _plan(
            {
                "a": {
                    "role": "sensitive",
                    "treatment": {
                        "method": "exponential",
                        "epsilon": 2.0,
                        "calibration": "standard",
                        "domain": domain,
                    },
                },
                "b": {
                    "role": "sensitive",
                    "treatment": {
                        "method": "exponential",
                        "epsilon": 2.0,
                        "calibration": "standard",
                        "ordinal": True,
                        "domain": domain,
                    },
                },
                "c": {
                    "role": "sensitive",
                    "treatment": {
                        "method": "gaussian",
                        "epsilon": 0.5,
                        "delta": 1e-6,
                        "bounds": [0, 10],
                    },
                },
                "d": {
                    "role": "sensitive",
                    "treatment": {
                        "method": "randomized_response",
                        "epsilon": 1.0,
                        "domain": ["x", "y"],
                    },
                },
            },
            budget={"ldp": {"epsilon": 10, "delta": 1e-5}},
        )
    )
    steps = {s.scope: s for s in plan_ledger(plan).steps}
    cost_a, cost_b = steps["a"].cost, steps["b"].cost
    assert cost_a is not None and cost_b is not None
    # trasgoDP's standard calibration spends half the budget with the identity score.
    assert cost_a.epsilon == pytest.approx(1.0)
    assert cost_a.epsilon == Exponential(2.0, 5).cost().epsilon
    assert cost_b.epsilon == Exponential(2.0, scores=ordinal_scores(5)).cost().epsilon
    assert cost_b.epsilon < 2.0
    cost_c = steps["c"].cost
    assert cost_c is not None
    expected = Gaussian(0.5, 1e-6, 0, 10, calibration="analytic").cost()
    assert (cost_c.epsilon, cost_c.delta) == (expected.epsilon, expected.delta)
    assert steps["d"].cost is not None and steps["d"].cost.epsilon == 1.0


def test_adult_example_totals() -> None:
    ledger = plan_ledger(allocate(load_plan(EXAMPLES / "adult.yaml")))
    check_budget(ledger)
    total = ledger.total("ldp")
    assert total.epsilon == pytest.approx(6.0)
    assert total.delta == pytest.approx(1e-6)
    assert ledger.total("metric").epsilon == 0.0
    assert ledger.not_protected() == ["salary-class"]
    assert any("k_anonymity(k=5)" in line for line in ledger.syntactic())


def test_location_example_composes_metric_cost_per_metre() -> None:
    ledger = plan_ledger(allocate(load_plan(EXAMPLES / "location.yaml")))
    metric = ledger.total("metric")
    assert metric.epsilon == pytest.approx(0.01)
    assert metric.unit == "metre"
    check_budget(ledger)


def test_repeated_reports_compose() -> None:
    plan = load_plan(
        _plan(
            {},
            locations=[
                {
                    "lat": "la",
                    "lon": "lo",
                    "centre": [40.75, -73.98],
                    "mask": {"method": "planar_laplace", "epsilon": 0.004, "reports": 3},
                }
            ],
            budget={"metric": {"epsilon": 0.01}},
        )
    )
    ledger = plan_ledger(plan)
    one = PlanarLaplace(0.004).cost()
    assert ledger.total("metric").epsilon == pytest.approx(3 * one.epsilon)
    with pytest.raises(BudgetError, match=r"budget.metric.epsilon: the steps spend 0.012"):
        check_budget(ledger)


def test_over_budget_plan_is_refused_before_reading(tmp_path: Path) -> None:
    plan = _plan(
        {"age": _laplace(2.0), "hours": _laplace(1.5)},
        budget={"ldp": {"epsilon": 3.0}},
    )
    out = tmp_path / "out"
    # The input path does not exist: a read would raise another error.
    with pytest.raises(BudgetError) as info:
        run(plan, out)
    message = str(info.value)
    assert "budget.ldp.epsilon: the steps spend 3.5 per record, over the budget of 3" in message
    assert "age (laplace): epsilon=2" in message
    assert "hours (laplace): epsilon=1.5" in message
    assert "nothing was read" in message
    assert not out.exists()
    # Within budget, the same plan gets as far as opening the (missing) input.
    plan["budget"]["ldp"]["epsilon"] = 3.5
    with pytest.raises(PlanError, match=r"input.path: file '/nonexistent/never-read.csv'"):
        run(plan, out)


def test_budget_error_is_a_plan_error() -> None:
    assert issubclass(BudgetError, PlanError)


def test_spending_without_a_declared_budget_is_refused() -> None:
    ledger = plan_ledger(load_plan(_plan({"age": _laplace(1.0)})))
    with pytest.raises(BudgetError, match=r"budget.ldp: the plan spends epsilon=1 per record"):
        check_budget(ledger)


def test_delta_over_budget_is_refused() -> None:
    plan = _plan(
        {
            "x": {
                "role": "sensitive",
                "treatment": {
                    "method": "gaussian",
                    "epsilon": 0.5,
                    "delta": 1e-4,
                    "bounds": [0, 1],
                },
            }
        },
        budget={"ldp": {"epsilon": 1.0, "delta": 1e-6}},
    )
    with pytest.raises(BudgetError, match=r"budget.ldp.delta: the steps spend delta=0.0001"):
        check_budget(plan_ledger(load_plan(plan)))


def test_mechanism_refusals_name_the_field_path() -> None:
    plan = _plan(
        {
            "x": {
                "role": "sensitive",
                "treatment": {
                    "method": "gaussian",
                    "epsilon": 2.0,
                    "delta": 1e-6,
                    "bounds": [0, 1],
                    "calibration": "classic",
                },
            }
        },
        budget={"ldp": {"epsilon": 5}},
    )
    with pytest.raises(PlanError, match=r"columns.x.treatment: epsilon: the classic Gaussian"):
        plan_ledger(load_plan(plan))


def test_rendering_for_a_dry_run() -> None:
    ledger = plan_ledger(allocate(load_plan(EXAMPLES / "adult.yaml")))
    text = render_ledger(ledger)
    assert "ldp, per record: epsilon=6, delta=1e-06 (budget epsilon=6, delta=1e-06)" in text
    assert "Not protected (released as is): salary-class" in text
    assert "age" in text and "laplace" in text
    data = json.loads(ledger.to_json())
    assert data["totals"]["ldp"]["epsilon"] == pytest.approx(6.0)
    assert {s["scope"] for s in data["steps"]} >= {"age", "sex", "table"}


def _recorded(ledger: Any) -> list[dict[str, Any]]:
    return [
        dataclasses.asdict(s.cost)
        for s in ledger.steps
        if s.cost is not None and s.cost.notion in ("ldp", "metric")
    ]


def test_cross_check_accepts_exactly_the_planned_costs() -> None:
    ledger = plan_ledger(allocate(load_plan(EXAMPLES / "adult.yaml")))
    assert cross_check(ledger, _recorded(ledger)) == []


def test_cross_check_reports_every_disagreement() -> None:
    ledger = plan_ledger(allocate(load_plan(EXAMPLES / "adult.yaml")))
    recorded = _recorded(ledger)
    changed = [dict(e) for e in recorded]
    changed[0]["epsilon"] = changed[0]["epsilon"] / 2
    problems = cross_check(ledger, [*changed[:-1], {**recorded[0], "scope": "extra"}])
    text = "\n".join(problems)
    assert f"{recorded[0]['scope']}: planned epsilon=" in text
    assert f"{recorded[-1]['scope']}: planned a ldp cost but the step recorded none" in text
    assert "extra: recorded ldp" in text
