"""Release plans: one declarative run from a raw table to a published release.

:func:`load_plan` validates a YAML plan, :func:`plan_ledger` computes what it spends
before any data is read (:func:`check_budget` refuses a plan over its budget, a
:class:`Policy` adds an operator's limits, :func:`render_ledger` prints it for a dry
run), and :func:`run` applies it: the release and its public ``manifest.json``, and
the custodian's confidential ``custodian.json`` and ``report.html``, written as one
set. A run reports :class:`Progress` events and stops at a :class:`CancelToken`.
Each treatment family is a step kind of :mod:`veil.release.steps`; the engines
(:mod:`veil.release.engine`) give the runner the few primitives the steps need. The
package orchestrates the public functions of :mod:`veil.ldp`, :mod:`veil.masking`,
:mod:`veil.geo` and :mod:`veil.anonymity`; it holds no privacy arithmetic of its own.

Example plans ship in ``veil/release/examples`` (:func:`example_plan`).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from veil.release.allocate import allocate, split_budget, target_allocate
from veil.release.engine import read_input
from veil.release.errors import BudgetError, LedgerMismatchError, PlanError
from veil.release.ledger import (
    LedgerStep,
    ReleaseLedger,
    check_budget,
    cross_check,
    plan_ledger,
    render_ledger,
)
from veil.release.plan import Plan, load_plan, plan_schema
from veil.release.policy import Policy, PolicyError
from veil.release.progress import Cancelled, CancelToken, Progress
from veil.release.runner import RunResult, run

__all__ = [
    "BudgetError",
    "CancelToken",
    "Cancelled",
    "LedgerMismatchError",
    "LedgerStep",
    "Plan",
    "PlanError",
    "Policy",
    "PolicyError",
    "Progress",
    "ReleaseLedger",
    "RunResult",
    "allocate",
    "check_budget",
    "cross_check",
    "example_plan",
    "load_plan",
    "plan_ledger",
    "plan_schema",
    "read_input",
    "render_ledger",
    "run",
    "split_budget",
    "target_allocate",
]


def example_plan(name: str) -> Path:
    """Path of a bundled example plan: ``"adult"`` or ``"location"``.

    Raises
    ------
    PlanError
        An unknown example name (the message lists the available ones).
    """
    folder = resources.files("veil.release").joinpath("examples")
    available = sorted(
        p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml")
    )
    if name not in available:
        raise PlanError(f"name: no example plan {name!r}; available: {available}")
    return Path(str(folder.joinpath(f"{name}.yaml")))
