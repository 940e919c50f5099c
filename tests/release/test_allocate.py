"""Budget allocation: equal and weighted splits of the declared total."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil import ldp
from veil.metrics import divergence_distributions
from veil.release import (
    BudgetError,
    PlanError,
    allocate,
    load_plan,
    plan_ledger,
    run,
    split_budget,
    target_allocate,
)
from veil.release.engine import DaskEngine
from veil.release.plan import LdpTreatment, PlanarLaplaceMask

NYC = [40.75, -73.98]  # a public centre for the location masks


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
                {
                    "lat": "a",
                    "lon": "b",
                    "centre": NYC,
                    "mask": {"method": "planar_laplace", "reports": 2},
                },
                {"lat": "c", "lon": "d", "centre": NYC, "mask": {"method": "planar_laplace"}},
            ],
            "budget": {"metric": {"epsilon": 0.02}, "allocation": "equal"},
        }
    )
    allocated = allocate(plan)
    masks = [loc.mask for loc in allocated.locations]
    assert all(isinstance(m, PlanarLaplaceMask) for m in masks)
    assert [m.epsilon for m in masks] == pytest.approx([0.005, 0.01])  # type: ignore[union-attr]
    assert plan_ledger(allocated).total("metric").epsilon == pytest.approx(0.02)


def _target_plan(tmp_path: Path, **target: Any) -> dict[str, Any]:
    """A target allocation; without a public ``sample`` it is measured on the input."""
    gen = np.random.default_rng(4)
    n = 4000
    frame = pd.DataFrame(
        {
            "c": gen.choice(["a", "b", "c", "d"], n, p=[0.55, 0.25, 0.15, 0.05]),
            "s": gen.choice(["x", "y"], n, p=[0.7, 0.3]),
        }
    )
    frame.to_csv(tmp_path / "public.csv", index=False)
    return {
        "input": {"path": str(tmp_path / "private.csv")},
        "columns": {
            "c": {
                "role": "sensitive",
                "treatment": {"method": "randomized_response", "domain": ["a", "b", "c", "d"]},
            },
            "s": {
                "role": "sensitive",
                "treatment": {"method": "randomized_response", "domain": ["x", "y"]},
            },
        },
        "budget": {
            "ldp": {"epsilon": 8.0},
            "allocation": "target",
            "target": {"metric": "tvd", "value": 0.05, "runs": 5, **target},
            "allow_data_dependent_allocation": "sample" not in target,
        },
        "output": {"report": False},
    }


def _privatize(column: str, eps: float, df: pd.DataFrame, g: np.random.Generator) -> pd.DataFrame:
    domain = {"c": ["a", "b", "c", "d"], "s": ["x", "y"]}[column]
    if len(domain) == 2:
        return ldp.dp_randomized_response_binary(df, column, eps, domain=domain, rng=g)
    return ldp.dp_randomized_response_kary(df, column, eps, domain=domain, rng=g)


def test_target_finds_the_least_epsilon_meeting_the_target(tmp_path: Path) -> None:
    plan = load_plan(_target_plan(tmp_path))
    sample = pd.read_csv(tmp_path / "public.csv")
    allocated, chosen = target_allocate(plan, sample, _privatize, np.random.default_rng(0))
    eps = _epsilons(allocated)
    assert set(chosen) == {"c", "s"}
    for column in ("c", "s"):
        assert chosen[column]["epsilon"] == eps[column]
        assert chosen[column]["tvd"] <= 0.05
        # Noticeably less epsilon misses the target (mean TVD over fresh draws).
        tvds = [
            divergence_distributions(
                sample,
                _privatize(column, eps[column] / 1.5, sample, np.random.default_rng(r)),
                column,
            )["tvd"]
            for r in range(10)
        ]
        assert np.mean(tvds) > 0.05
    # k-ary randomized response over 4 categories needs more than the binary one.
    assert eps["c"] > eps["s"]
    assert plan_ledger(allocated).total("ldp").epsilon == pytest.approx(eps["c"] + eps["s"])


def test_target_refuses_what_the_budget_cannot_reach(tmp_path: Path) -> None:
    plan = load_plan(_target_plan(tmp_path, value=0.001))
    sample = pd.read_csv(tmp_path / "public.csv")
    with pytest.raises(BudgetError, match=r"budget.ldp.epsilon: reaching tvd <= 0.001 needs"):
        target_allocate(plan, sample, _privatize, np.random.default_rng(0))
    plan = load_plan(_target_plan(tmp_path, value=1e-9))
    with pytest.raises(PlanError, match=r"budget.target.value: columns.c reaches tvd="):
        target_allocate(plan, sample, _privatize, np.random.default_rng(0))


def test_target_on_the_private_input_needs_an_explicit_opt_in(tmp_path: Path) -> None:
    plan = _target_plan(tmp_path)
    plan["budget"]["allow_data_dependent_allocation"] = False
    with pytest.raises(PlanError, match=r"budget.target.sample: required"):
        load_plan(plan)


def test_target_on_a_public_sample_runs_before_reading_the_input(tmp_path: Path) -> None:
    plan = _target_plan(tmp_path, sample=str(tmp_path / "public.csv"))
    # The input does not exist: the dry run never opens it.
    result = run(plan, dry_run=True, rng=1)
    eps = _epsilons(result.plan)
    assert 0 < eps["c"] + eps["s"] <= 8.0
    assert not any(w["category"] == "PrivacyLeakWarning" for w in result.warnings)


def test_target_on_the_input_warns_and_is_recorded(tmp_path: Path) -> None:
    plan = _target_plan(tmp_path)
    (tmp_path / "public.csv").rename(tmp_path / "private.csv")
    result = run(plan, tmp_path / "out", rng=1)
    assert "PrivacyLeakWarning" in {w["category"] for w in result.custodian["warnings"]}
    # The public manifest names the kind of sample and lists the choice as a leak; the
    # measurements themselves stay in the custodian record.
    public = result.manifest["allocation"]
    assert public["sample"] == "the private input (a leak)"
    assert set(public["epsilon"]) == {"c", "s"}
    assert any("allocation" in leak for leak in result.manifest["leaks"])
    allocation = result.custodian["allocation"]
    assert allocation["sample"] == "the input (private)"
    assert set(allocation["columns"]) == {"c", "s"}
    assert result.manifest["steps"]["c"]["cost"]["epsilon"] == pytest.approx(
        allocation["columns"]["c"]["epsilon"]
    )
    measured = repr(allocation["columns"]["c"]["tvd"])
    assert measured not in json.dumps(result.manifest)
    on_dask = run(plan, tmp_path / "dask", rng=1, engine=DaskEngine("threads", npartitions=2))
    note = on_dask.custodian["execution"]["steps"]["allocation (target)"]
    assert note.startswith("gathered in memory: the input was read whole")


def test_allocate_alone_cannot_run_a_target_allocation(tmp_path: Path) -> None:
    plan = load_plan(_target_plan(tmp_path, sample=str(tmp_path / "public.csv")))
    with pytest.raises(PlanError, match=r"budget.allocation: 'target' needs a sample"):
        allocate(plan)
