"""The per-dataset ledger: sequential composition across releases, with reservations."""

from __future__ import annotations

import pytest

from veil.release import Policy, PolicyError, example_plan, load_plan
from veil.release.dataset_ledger import (
    DatasetBudget,
    DatasetLedger,
    LedgerEntry,
    Spend,
    planned_spend,
)
from veil.release.errors import BudgetError


def _ledger(*entries: LedgerEntry, eps: float | None = 3.0) -> DatasetLedger:
    return DatasetLedger(DatasetBudget(ldp_epsilon=eps, ldp_delta=1e-5), entries)


def test_spent_and_reserved_releases_add_up_against_the_budget() -> None:
    ledger = _ledger(
        LedgerEntry("a", Spend(1.0, 1e-6), "spent"),
        LedgerEntry("b", Spend(0.5), "reserved"),
    )
    assert ledger.spent() == Spend(1.0, 1e-6)
    assert ledger.reserved() == Spend(0.5)
    left = ledger.remaining()
    assert left["ldp_epsilon"] == pytest.approx(1.5)
    assert left["ldp_delta"] == pytest.approx(9e-6)
    assert left["metric_epsilon"] is None  # no metric limit


def test_a_plan_the_remainder_cannot_pay_for_is_refused_naming_the_figure() -> None:
    ledger = _ledger(LedgerEntry("a", Spend(2.5), "spent"))
    assert ledger.can_pay(Spend(0.5))
    with pytest.raises(PolicyError, match=r"ldp_epsilon: the plan needs 1 per record.*0\.5 of 3"):
        ledger.check(Spend(1.0))


def test_a_run_does_not_pay_against_its_own_reservation() -> None:
    ledger = _ledger(LedgerEntry("job-1", Spend(3.0), "reserved"))
    assert not ledger.can_pay(Spend(3.0))
    assert ledger.can_pay(Spend(3.0), exclude="job-1")
    policy = ledger.policy(Policy(max_ldp_epsilon=4.0), exclude="job-1")
    assert policy.remaining_ldp_epsilon == pytest.approx(3.0)
    assert policy.max_ldp_epsilon == 4.0


def test_the_policy_keeps_the_tighter_remaining_limit() -> None:
    ledger = _ledger(LedgerEntry("a", Spend(1.0), "spent"))
    assert ledger.policy(Policy(remaining_ldp_epsilon=0.5)).remaining_ldp_epsilon == 0.5
    assert ledger.policy(None).remaining_ldp_epsilon == pytest.approx(2.0)


def test_unlimited_budget_leaves_the_policy_unlimited() -> None:
    ledger = _ledger(LedgerEntry("a", Spend(100.0), "spent"), eps=None)
    assert ledger.can_pay(Spend(1e6))
    assert ledger.policy(None).remaining_ldp_epsilon is None


def test_bad_figures_and_repeated_keys_are_refused() -> None:
    with pytest.raises(BudgetError, match=r"spend\.ldp_epsilon: must be a finite number >= 0"):
        Spend(-1.0)
    with pytest.raises(BudgetError, match=r"budget\.ldp_epsilon"):
        DatasetBudget(ldp_epsilon=float("nan"))
    with pytest.raises(BudgetError, match=r"entry\.state"):
        LedgerEntry("a", Spend(), "pending")  # type: ignore[arg-type]
    with pytest.raises(BudgetError, match="repeated: \\['a'\\]"):
        _ledger(LedgerEntry("a", Spend(), "spent"), LedgerEntry("a", Spend(), "reserved"))


def test_planned_spend_is_the_plans_ledger_totals() -> None:
    plan = load_plan(example_plan("adult"))
    assert planned_spend(plan) == Spend(6.0, 1e-6, 0.0)


def test_a_target_allocation_reserves_its_whole_declared_budget(tmp_path) -> None:
    sample = tmp_path / "sample.csv"
    sample.write_text("age\n30\n")
    plan = load_plan(
        {
            "input": {"path": "in.csv"},
            "columns": {
                "age": {"role": "quasi_identifier", "treatment": {"laplace": {"bounds": [0, 100]}}}
            },
            "budget": {
                "ldp": {"epsilon": 2.0},
                "allocation": "target",
                "target": {"value": 0.1, "sample": "sample.csv"},
            },
        },
        base_dir=tmp_path,
    )
    assert planned_spend(plan) == Spend(2.0, 0.0, 0.0)


def test_to_dict_reports_every_figure() -> None:
    data = _ledger(LedgerEntry("a", Spend(1.0), "spent")).to_dict()
    assert data["spent"]["ldp_epsilon"] == 1.0
    assert data["remaining"]["ldp_epsilon"] == 2.0
    assert Spend.from_dict(data["spent"]) == Spend(1.0)
