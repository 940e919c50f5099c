"""The privacy ledger of a release plan, built before any data is read.

Each step of the plan gets the :class:`~veil.mechanisms.PrivacyCost` its mechanism
reports for the plan's parameters: each step kind (:mod:`veil.release.steps`) builds
the mechanism objects of :mod:`veil.mechanisms` (the same classes the data functions
use) and asks them for their cost, so that calibration details, such as the
exponential mechanism's exact channel epsilon, come from one place. Costs are then
composed per record under sequential composition (Dwork and Roth 2014, Theorem 3.16)
with :class:`~veil.mechanisms.PrivacyLedger`, per notion: ``ldp`` (epsilon and delta per
record), ``metric`` (epsilon per metre) and ``syntactic`` (k, l, t models; no epsilon).

A plan whose totals exceed its declared budget is refused (:func:`check_budget`) before
the input is opened. After a run, :func:`cross_check` compares the planned costs with
those the functions recorded in ``attrs["veil.privacy"]``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from veil.errors import ParameterError
from veil.mechanisms import PrivacyCost, PrivacyLedger
from veil.release.errors import BudgetError
from veil.release.plan import Budget, Plan
from veil.release.steps import ANONYMIZATION, LOCATIONS, SHARE, planned_column
from veil.release.steps.base import LedgerStep

__all__ = [
    "LedgerStep",
    "ReleaseLedger",
    "check_budget",
    "cross_check",
    "plan_ledger",
    "render_ledger",
]

_REL_TOL = 1e-9


@dataclass(frozen=True)
class ReleaseLedger:
    """Every step's cost and the totals per notion, against the declared budget."""

    name: str | None
    steps: tuple[LedgerStep, ...]
    budget: Budget

    def _composed(self) -> PrivacyLedger:
        ledger = PrivacyLedger()
        for step in self.steps:
            if step.cost is not None:
                ledger.record(step.cost)
        return ledger

    def total(self, notion: str) -> PrivacyCost:
        """Sequential composition of the steps of ``notion``.

        ``ldp`` is per record; ``metric`` is per metre; ``dp-synthetic`` (or
        ``synthetic``) is central DP per dataset (the synthetic part of a share step).
        """
        if notion == "ldp":
            return self._composed().total("ldp", "record")
        if notion == "metric":
            return self._composed().total("metric", "metre")
        if notion in ("dp-synthetic", "synthetic"):
            return self._composed().total("dp-synthetic", "dataset")
        raise ParameterError(f"notion: must be 'ldp', 'metric' or 'dp-synthetic', got {notion!r}")

    def syntactic(self) -> list[str]:
        """The syntactic guarantees (k-anonymity and the like), one line each."""
        return [
            f"{s.scope}: {s.cost.mechanism}"
            for s in self.steps
            if s.cost is not None and s.cost.notion == "syntactic"
        ]

    def not_protected(self) -> list[str]:
        """Columns released exactly as they are read (not even anonymized).

        A share step's exact columns (its Q) are among them: no DP covers them.
        """
        return [s.scope for s in self.steps if s.step in ("keep", "exact")]

    def without_guarantee(self) -> list[str]:
        """Steps that change values but state no privacy guarantee (``scope: step``).

        A generalization outside the anonymization, a grid, a jitter or a donut mask
        reduces precision; no formal guarantee can be claimed for it.
        """
        return [
            f"{s.scope}: {s.step}"
            for s in self.steps
            if s.step in ("generalize", "grid", "jitter", "donut")
        ]

    def totals(self) -> dict[str, Any]:
        """Totals per notion with their budgets, JSON-ready."""
        ldp, metric = self.total("ldp"), self.total("metric")
        return {
            "ldp": {
                "unit": "record",
                "epsilon": ldp.epsilon,
                "delta": ldp.delta,
                "budget_epsilon": None if self.budget.ldp is None else self.budget.ldp.epsilon,
                "budget_delta": None if self.budget.ldp is None else self.budget.ldp.delta,
            },
            "metric": {
                "unit": "metre",
                "epsilon": metric.epsilon,
                "budget_epsilon": (
                    None if self.budget.metric is None else self.budget.metric.epsilon
                ),
            },
            "synthetic": self._synthetic_total(),
            "syntactic": self.syntactic(),
        }

    def _synthetic_total(self) -> dict[str, Any]:
        synthetic, budget = self.total("dp-synthetic"), self.budget.synthetic
        return {
            "unit": "dataset",
            "epsilon": synthetic.epsilon,
            "delta": synthetic.delta,
            "budget_epsilon": None if budget is None else budget.epsilon,
            "budget_delta": None if budget is None else budget.delta,
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the steps, the totals and what is not protected."""
        return {
            "plan": self.name,
            "composition": "sequential, per record",
            "steps": [s.to_dict() for s in self.steps],
            "totals": self.totals(),
            "not_protected": self.not_protected(),
            "without_guarantee": self.without_guarantee(),
        }

    def to_json(self) -> str:
        """The ledger as indented JSON."""
        return json.dumps(self.to_dict(), indent=2)


def plan_ledger(plan: Plan) -> ReleaseLedger:
    """Build the ledger of an (allocated) plan without reading any data.

    Parameters
    ----------
    plan : Plan
        A validated plan whose randomized steps all have an epsilon (see
        :func:`veil.release.allocate.allocate`).

    Returns
    -------
    ReleaseLedger

    Raises
    ------
    PlanError
        A step's parameters are refused by its mechanism (for example a classic
        Gaussian with epsilon > 1); the message names the field path.
    """
    steps = [planned_column(name, spec.treatment) for name, spec in plan.columns.items()]
    if plan.anonymization is not None:
        # A kept quasi-identifier is generalized by the table-level step.
        qis = plan.anonymization.quasi_identifiers
        steps = [
            dataclasses.replace(
                s,
                step="quasi-identifier",
                guarantee="generalized by the table anonymization (see the table step)",
            )
            if s.scope in qis and s.step == "keep"
            else s
            for s in steps
        ]
    if plan.share is not None:
        synthesized, exact = set(plan.share.synthesized), set(plan.share.quasi_identifiers)
        steps = [
            dataclasses.replace(
                s,
                step="synthesized",
                guarantee="replaced by DP synthetic values (see the share step)",
            )
            if s.scope in synthesized
            else dataclasses.replace(
                s, step="exact", guarantee="released exactly by the share step: NOT covered by DP"
            )
            if s.scope in exact
            else s
            for s in steps
        ]
    steps.extend(LOCATIONS.planned(i, loc) for i, loc in enumerate(plan.locations))
    if plan.anonymization is not None:
        steps.append(ANONYMIZATION.planned(plan.anonymization))
    if plan.share is not None:
        steps.append(SHARE.planned(plan.share))
    return ReleaseLedger(plan.name, tuple(steps), plan.budget)


def _exceeds(value: float, limit: float) -> bool:
    return value > limit * (1.0 + _REL_TOL) + 1e-15


def check_budget(ledger: ReleaseLedger) -> None:
    """Refuse a ledger whose totals exceed the declared budget.

    Raises
    ------
    BudgetError
        A notion is spent without a declared budget, or its total epsilon (or delta)
        exceeds the budget; the message lists every step of that notion and its cost.
    """
    problems: list[str] = []
    # Each notion with the plan field that declares its budget (budget.synthetic for the
    # dp-synthetic notion): messages name the field the user writes.
    for notion, field, unit, declared in (
        ("ldp", "ldp", "per record", ledger.budget.ldp),
        ("metric", "metric", "per metre", ledger.budget.metric),
        ("dp-synthetic", "synthetic", "per dataset", ledger.budget.synthetic),
    ):
        total = ledger.total(notion)
        spending = [s for s in ledger.steps if s.cost is not None and s.cost.notion == notion]
        if not spending:
            continue
        listing = "; ".join(
            f"{s.scope} ({s.step}): epsilon={s.cost.epsilon:g}"
            + (f", delta={s.cost.delta:g}" if s.cost.delta else "")
            for s in spending
            if s.cost is not None
        )
        if declared is None:
            problems.append(
                f"budget.{field}: the plan spends epsilon={total.epsilon:g} {unit} but "
                f"declares no {field} budget; steps: {listing}"
            )
            continue
        if _exceeds(total.epsilon, declared.epsilon):
            problems.append(
                f"budget.{field}.epsilon: the steps spend {total.epsilon:g} {unit}, over the "
                f"budget of {declared.epsilon:g}; steps: {listing}"
            )
        budget_delta = getattr(declared, "delta", 0.0)
        if total.delta > budget_delta + 1e-15:
            problems.append(
                f"budget.{field}.delta: the steps spend delta={total.delta:g}, over the "
                f"budget of {budget_delta:g}; steps: {listing}"
            )
    if problems:
        raise BudgetError("plan refused (nothing was read):\n  " + "\n  ".join(problems))


def render_ledger(ledger: ReleaseLedger) -> str:
    """The ledger as a plain-text table (what ``--dry-run`` prints)."""
    rows = [("scope", "step", "notion", "epsilon", "delta", "guarantee")]
    for s in ledger.steps:
        if s.cost is None:
            rows.append((s.scope, s.step, "-", "-", "-", s.guarantee))
        else:
            unit = "/m" if s.cost.unit == "metre" else ""
            rows.append(
                (
                    s.scope,
                    s.step,
                    s.cost.notion,
                    f"{s.cost.epsilon:.6g}{unit}" if s.cost.notion != "syntactic" else "-",
                    f"{s.cost.delta:.3g}" if s.cost.notion != "syntactic" else "-",
                    s.guarantee,
                )
            )
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = [
        f"Privacy ledger{f' of {ledger.name!r}' if ledger.name else ''} "
        "(sequential composition per record)",
    ]
    for r in rows:
        cells = "  ".join(c.ljust(w) for c, w in zip(r[:5], widths, strict=True))
        lines.append(f"  {cells}  {r[5]}")
    totals = ledger.totals()
    ldp, metric = totals["ldp"], totals["metric"]
    lines.append("Totals")
    budget = (
        f" (budget epsilon={ldp['budget_epsilon']:g}, delta={ldp['budget_delta']:g})"
        if ldp["budget_epsilon"] is not None
        else " (no budget declared)"
    )
    lines.append(
        f"  ldp, per record: epsilon={ldp['epsilon']:.6g}, delta={ldp['delta']:.3g}{budget}"
    )
    budget = (
        f" (budget {metric['budget_epsilon']:g})"
        if metric["budget_epsilon"] is not None
        else " (no budget declared)"
    )
    lines.append(f"  metric, per metre: epsilon={metric['epsilon']:.6g}{budget}")
    synthetic = totals.get("synthetic")
    if synthetic and synthetic.get("epsilon"):
        budget = (
            f" (budget epsilon={synthetic['budget_epsilon']:g}, "
            f"delta={synthetic['budget_delta']:g})"
            if synthetic.get("budget_epsilon") is not None
            else " (no budget declared)"
        )
        lines.append(
            f"  synthetic, per dataset: epsilon={synthetic['epsilon']:.6g}, "
            f"delta={synthetic['delta']:.3g}{budget}"
        )
    for line in totals["syntactic"]:
        lines.append(f"  syntactic: {line}")
    kept = ledger.not_protected()
    lines.append("Not protected (released as is): " + (", ".join(kept) if kept else "none"))
    weak = ledger.without_guarantee()
    if weak:
        lines.append("Masked without a formal guarantee: " + ", ".join(weak))
    return "\n".join(lines)


def cross_check(ledger: ReleaseLedger, recorded: Sequence[dict[str, Any]]) -> list[str]:
    """Compare the planned costs with the costs the functions recorded.

    Parameters
    ----------
    ledger : ReleaseLedger
        The plan's ledger.
    recorded : sequence of dict
        Entries of ``attrs["veil.privacy"]`` (``PrivacyCost`` as dicts) gathered over
        the run.

    Returns
    -------
    list of str
        One line per disagreement: a planned step that recorded nothing, a recorded
        cost that differs from the planned one (epsilon, delta or notion), or a recorded
        cost no step planned. Empty when the run spent exactly what was planned.
    """
    problems: list[str] = []
    checked = ("ldp", "metric", "dp-synthetic")
    planned: dict[tuple[str, str], LedgerStep] = {
        (s.scope, s.cost.notion): s
        for s in ledger.steps
        if s.cost is not None and s.cost.notion in checked
    }
    seen: set[tuple[str, str]] = set()
    for entry in recorded:
        key = (str(entry.get("scope", "")), str(entry.get("notion", "")))
        if key[1] not in checked:
            continue
        step = planned.get(key)
        if step is None or step.cost is None:
            problems.append(
                f"{key[0]}: recorded {key[1]} epsilon={entry.get('epsilon')} that no step planned"
            )
            continue
        if key in seen:
            problems.append(f"{key[0]}: recorded more than one {key[1]} cost")
        seen.add(key)
        for field in ("epsilon", "delta"):
            want = float(getattr(step.cost, field))
            got = float(entry.get(field, math.nan))
            if key[1] == "dp-synthetic":
                # A synthetic step plans a bound (its choices are made on the data): it
                # may spend less, never more.
                if not got <= want * (1 + _REL_TOL) + 1e-15:
                    problems.append(
                        f"{key[0]}: planned at most {field}={want:g} but the step recorded {got:g}"
                    )
            elif not math.isclose(got, want, rel_tol=_REL_TOL, abs_tol=1e-15):
                problems.append(f"{key[0]}: planned {field}={want:g} but the step recorded {got:g}")
    for key in planned.keys() - seen:
        problems.append(f"{key[0]}: planned a {key[1]} cost but the step recorded none")
    return problems
