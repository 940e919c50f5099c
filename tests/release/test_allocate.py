"""Budget allocation: equal and weighted splits of the declared total."""

from __future__ import annotations

from typing import Any

import pytest

from veil.release import PlanError, allocate, load_plan, plan_ledger, split_budget
from veil.release.plan import LdpTreatment, PlanarLaplaceMask


def _column(eps: float | None = None, weight: float = 1.0) -> dict[str, Any]:
    treatment: dict[str, Any] = {"method": "laplace", "bounds": [0, 10], "weight": weight}
    if eps is not None:
        treatment["epsilon"] = eps
    return {"role": "sensitive", "treatment": treatment}


def _epsilons(plan: Any) -> dict[str, float]:
    out = {}
    for name, spec in plan.columns.items():
        assert isinstance(spec.treatment, LdpTreatment)
        assert spec.treatment.epsilon is not None
        out[name] = spec.treatment.epsilon
    return out


def test_split_budget() -> None:
    assert split_budget(3.0, {"a": 1, "b": 2}, equal=False) == {"a": 1.0, "b": 2.0}
    assert split_budget(1.0, {"a": 5, "b": 1}, equal=True) == {"a": 0.5, "b": 0.5}
    assert split_budget(1.0, {}, equal=True) == {}
    with pytest.raises(PlanError, match="total: must be > 0"):
        split_budget(0.0, {"a": 1}, equal=True)


def test_equal_shares_what_explicit_epsilons_leave() -> None:
    plan = load_plan(
        {
            "input": {"dataset": "adult"},
            "columns": {"a": _column(1.0), "b": _column(), "c": _column(), "d": _column()},
            "budget": {"ldp": {"epsilon": 4.0}, "allocation": "equal"},
        }
    )
    eps = _epsilons(allocate(plan))
    assert eps == pytest.approx({"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0})
    assert plan_ledger(allocate(plan)).total("ldp").epsilon == pytest.approx(4.0)


def test_weights_share_proportionally() -> None:
    plan = load_plan(
        {
            "input": {"dataset": "adult"},
            "columns": {"a": _column(weight=3), "b": _column(weight=1)},
            "budget": {"ldp": {"epsilon": 2.0}, "allocation": "weights"},
        }
    )
    assert _epsilons(allocate(plan)) == pytest.approx({"a": 1.5, "b": 0.5})


def test_explicit_allocation_returns_the_plan_unchanged() -> None:
    plan = load_plan(
        {
            "input": {"dataset": "adult"},
            "columns": {"a": _column(0.3)},
            "budget": {"ldp": {"epsilon": 1.0}},
        }
    )
    assert allocate(plan) is plan


def test_nothing_left_to_share_is_an_error() -> None:
    plan = load_plan(
        {
            "input": {"dataset": "adult"},
            "columns": {"a": _column(2.0), "b": _column()},
            "budget": {"ldp": {"epsilon": 2.0}, "allocation": "equal"},
        }
    )
    with pytest.raises(PlanError, match=r"budget.ldp.epsilon: .* use 2 of 2, leaving nothing"):
        allocate(plan)


def test_sharing_needs_a_budget() -> None:
    plan = load_plan(
        {
            "input": {"dataset": "adult"},
            "columns": {"a": _column()},
            "budget": {"allocation": "equal"},
        }
    )
    with pytest.raises(PlanError, match=r"budget.ldp.epsilon: required to allocate"):
        allocate(plan)


def test_metric_budget_is_shared_over_planar_laplace_reports() -> None:
    plan = load_plan(
        {
            "input": {"dataset": "nyc_taxi"},
            "locations": [
                {"lat": "a", "lon": "b", "mask": {"method": "planar_laplace", "reports": 2}},
                {"lat": "c", "lon": "d", "mask": {"method": "planar_laplace"}},
            ],
            "budget": {"metric": {"epsilon": 0.02}, "allocation": "equal"},
        }
    )
    allocated = allocate(plan)
    masks = [loc.mask for loc in allocated.locations]
    assert all(isinstance(m, PlanarLaplaceMask) for m in masks)
    assert [m.epsilon for m in masks] == pytest.approx([0.005, 0.01])  # type: ignore[union-attr]
    assert plan_ledger(allocated).total("metric").epsilon == pytest.approx(0.02)


def test_target_allocation_is_declared_but_not_available() -> None:
    plan = load_plan(
        {
            "input": {"dataset": "adult"},
            "columns": {"a": _column()},
            "budget": {
                "ldp": {"epsilon": 1.0},
                "allocation": "target",
                "target": {"value": 0.05},
            },
        }
    )
    with pytest.raises(PlanError, match=r"budget.allocation: 'target' .* allowed: explicit"):
        allocate(plan)
