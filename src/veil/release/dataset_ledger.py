"""One privacy ledger per dataset, across all its releases, with reservations.

Every release of a dataset is computed from the same records, so what its releases spend
adds up per record under sequential composition (Dwork and Roth 2014, Theorem 3.16):
local-DP epsilons and deltas sum per record, geo-indistinguishability epsilons sum per
metre. A dataset's budget caps that sum. A release being prepared *reserves* what its
plan may spend before it runs (so two runs queued together cannot both pay from the same
remainder); the reservation becomes *spent* once the release is committed, and is
released if the run fails, is cancelled or is interrupted before its commit point
(nothing was released, so nothing was spent).

A spent entry stays in the ledger whatever happens to the release afterwards (deleted,
never published): its outputs existed and were seen by the curator.

:class:`DatasetLedger` is plain data in and out: the web platform stores the entries and
asks it what remains, whether a plan can be paid for, and the
:class:`~veil.release.Policy` a run must meet (its ``remaining_*`` limits).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from veil.release.allocate import allocate, needs_sample
from veil.release.errors import BudgetError
from veil.release.ledger import ReleaseLedger, plan_ledger
from veil.release.plan import Plan
from veil.release.policy import Policy, PolicyError

__all__ = [
    "DatasetBudget",
    "DatasetLedger",
    "EntryState",
    "LedgerEntry",
    "Spend",
    "planned_spend",
]

EntryState = Literal["reserved", "spent"]
_TOLERANCE = 1e-9


def _check_amount(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BudgetError(f"{name}: must be a number >= 0, got {value!r}")
    value = float(value)
    if not (math.isfinite(value) and value >= 0):
        raise BudgetError(f"{name}: must be a finite number >= 0, got {value!r}")
    return value


@dataclass(frozen=True)
class Spend:
    """What one release spends of a dataset's budget.

    Attributes
    ----------
    ldp_epsilon, ldp_delta : float
        Local DP, per record (sequential composition over the release's columns).
    metric_epsilon : float
        Geo-indistinguishability, per metre, over the release's location masks.
    """

    ldp_epsilon: float = 0.0
    ldp_delta: float = 0.0
    metric_epsilon: float = 0.0

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            object.__setattr__(
                self, field.name, _check_amount(f"spend.{field.name}", getattr(self, field.name))
            )

    def __add__(self, other: Spend) -> Spend:
        return Spend(
            self.ldp_epsilon + other.ldp_epsilon,
            self.ldp_delta + other.ldp_delta,
            self.metric_epsilon + other.metric_epsilon,
        )

    @classmethod
    def from_ledger(cls, ledger: ReleaseLedger) -> Spend:
        """The totals of a release's ledger (per record and per metre)."""
        ldp, metric = ledger.total("ldp"), ledger.total("metric")
        return cls(ldp.epsilon, ldp.delta, metric.epsilon)

    def to_dict(self) -> dict[str, float]:
        """JSON-ready form."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Spend:
        """The inverse of :meth:`to_dict` (missing figures are 0)."""
        return cls(
            float(data.get("ldp_epsilon", 0.0)),
            float(data.get("ldp_delta", 0.0)),
            float(data.get("metric_epsilon", 0.0)),
        )


def planned_spend(plan: Plan) -> Spend:
    """The most a plan can spend, known before any record is read.

    For a plan whose epsilons are fixed by the plan (``explicit``, ``equal``,
    ``weights``), the totals of its ledger. For ``allocation: target``, which chooses
    the epsilons from a sample at run time, the declared budget: the run can spend no
    more (the runner refuses a ledger over its budget).

    Parameters
    ----------
    plan : Plan
        A validated plan.

    Returns
    -------
    Spend
    """
    if needs_sample(plan):
        budget = plan.budget
        return Spend(
            0.0 if budget.ldp is None else budget.ldp.epsilon,
            0.0 if budget.ldp is None else budget.ldp.delta,
            0.0 if budget.metric is None else budget.metric.epsilon,
        )
    return Spend.from_ledger(plan_ledger(allocate(plan)))


@dataclass(frozen=True)
class DatasetBudget:
    """The most all releases of one dataset may spend together (None: no limit).

    Parameters
    ----------
    ldp_epsilon, ldp_delta : float, optional
        Local DP per record, summed over the dataset's releases.
    metric_epsilon : float, optional
        Epsilon per metre, summed over the dataset's releases.
    """

    ldp_epsilon: float | None = None
    ldp_delta: float | None = None
    metric_epsilon: float | None = None

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is not None:
                object.__setattr__(self, field.name, _check_amount(f"budget.{field.name}", value))


@dataclass(frozen=True)
class LedgerEntry:
    """One release's line in its dataset's ledger.

    Attributes
    ----------
    key : str
        What the line is for (the platform's job or release id).
    spend : Spend
        Reserved or spent figures.
    state : {"reserved", "spent"}
        Reserved while the run is pending; spent once the release is committed.
    """

    key: str
    spend: Spend
    state: EntryState

    def __post_init__(self) -> None:
        if self.state not in ("reserved", "spent"):
            raise BudgetError(f"entry.state: must be 'reserved' or 'spent', got {self.state!r}")


_FIGURES = ("ldp_epsilon", "ldp_delta", "metric_epsilon")
_UNITS = {"ldp_epsilon": "per record", "ldp_delta": "per record", "metric_epsilon": "per metre"}


class DatasetLedger:
    """The sum of a dataset's releases, spent and reserved, against its budget.

    Parameters
    ----------
    budget : DatasetBudget
        The dataset's limits.
    entries : iterable of LedgerEntry
        Every release's line (reserved or spent); keys must be unique.

    Examples
    --------
    >>> ledger = DatasetLedger(
    ...     DatasetBudget(ldp_epsilon=3.0),
    ...     [LedgerEntry("r1", Spend(1.0), "spent"), LedgerEntry("r2", Spend(1.5), "reserved")],
    ... )
    >>> ledger.remaining()["ldp_epsilon"]
    0.5
    >>> ledger.can_pay(Spend(1.0))
    False
    """

    def __init__(self, budget: DatasetBudget, entries: Iterable[LedgerEntry]) -> None:
        self.budget = budget
        self.entries = tuple(entries)
        keys = [e.key for e in self.entries]
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        if repeated:
            raise BudgetError(f"entries: keys must be unique, repeated: {repeated}")

    def _sum(self, states: tuple[EntryState, ...], exclude: str | None) -> Spend:
        total = Spend()
        for entry in self.entries:
            if entry.state in states and entry.key != exclude:
                total = total + entry.spend
        return total

    def spent(self) -> Spend:
        """What committed releases spent."""
        return self._sum(("spent",), None)

    def reserved(self) -> Spend:
        """What pending runs have reserved."""
        return self._sum(("reserved",), None)

    def remaining(self, *, exclude: str | None = None) -> dict[str, float | None]:
        """Budget left after every entry (but ``exclude``'s): None where unlimited."""
        used = self._sum(("reserved", "spent"), exclude)
        left: dict[str, float | None] = {}
        for name in _FIGURES:
            limit = getattr(self.budget, name)
            left[name] = None if limit is None else max(0.0, limit - getattr(used, name))
        return left

    def shortfalls(self, spend: Spend, *, exclude: str | None = None) -> list[str]:
        """One line per figure ``spend`` exceeds what remains (empty when it can pay)."""
        left = self.remaining(exclude=exclude)
        problems = []
        for name in _FIGURES:
            limit = left[name]
            wanted = getattr(spend, name)
            if limit is not None and wanted > limit * (1 + _TOLERANCE) + 1e-15:
                problems.append(
                    f"dataset budget {name}: the plan needs {wanted:g} {_UNITS[name]}, but "
                    f"only {limit:g} of {getattr(self.budget, name):g} remains after the "
                    "dataset's other releases (spent and reserved)"
                )
        return problems

    def can_pay(self, spend: Spend, *, exclude: str | None = None) -> bool:
        """Whether what remains covers ``spend``."""
        return not self.shortfalls(spend, exclude=exclude)

    def check(self, spend: Spend, *, exclude: str | None = None) -> None:
        """Refuse a spend the remaining budget cannot pay for.

        Raises
        ------
        PolicyError
            One line per figure over what remains, naming the figure, the need and what
            is left.
        """
        problems = self.shortfalls(spend, exclude=exclude)
        if problems:
            raise PolicyError(
                "plan refused by the dataset's ledger (nothing was read):\n  "
                + "\n  ".join(problems)
            )

    def policy(self, base: Policy | None, *, exclude: str | None = None) -> Policy:
        """``base`` with its ``remaining_*`` limits set to what this ledger leaves.

        ``exclude`` is the run's own reservation (it must not count against itself).
        The tighter of ``base``'s own remaining limits and this ledger's is kept.
        """
        base = base if base is not None else Policy()
        left = self.remaining(exclude=exclude)

        def tighter(a: float | None, b: float | None) -> float | None:
            if a is None:
                return b
            return a if b is None else min(a, b)

        return dataclasses.replace(
            base,
            remaining_ldp_epsilon=tighter(base.remaining_ldp_epsilon, left["ldp_epsilon"]),
            remaining_ldp_delta=tighter(base.remaining_ldp_delta, left["ldp_delta"]),
            remaining_metric_epsilon=tighter(base.remaining_metric_epsilon, left["metric_epsilon"]),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary: budget, spent, reserved and remaining."""
        return {
            "composition": "sequential across releases, per record (per metre for metric)",
            "budget": dataclasses.asdict(self.budget),
            "spent": self.spent().to_dict(),
            "reserved": self.reserved().to_dict(),
            "remaining": self.remaining(),
        }
