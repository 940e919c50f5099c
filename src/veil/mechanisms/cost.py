"""The privacy cost every randomized step reports."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Literal

from veil.errors import ParameterError

__all__ = ["NEIGHBOURING", "Notion", "PrivacyCost", "PrivacyLedger"]

Notion = Literal["ldp", "metric", "dp-central", "dp-synthetic", "syntactic"]
_NOTIONS: tuple[str, ...] = ("ldp", "metric", "dp-central", "dp-synthetic", "syntactic")

NEIGHBOURING: dict[str, str] = {
    "ldp": (
        "any two values of one record's input (local model: each record is randomized on "
        "its own, so the guarantee holds against whoever sees the released value)"
    ),
    "metric": (
        "any two locations x, x' of one record: their outputs' probabilities differ by "
        "at most a factor exp(epsilon * d(x, x')), d in metres"
    ),
    "dp-central": "two tables that differ by adding or removing one record",
    "dp-synthetic": (
        "two tables that differ by adding or removing one record (central model: the "
        "whole synthetic dataset is the output)"
    ),
    "syntactic": (
        "none: a property of the released table (k, l, t), not a differential privacy "
        "guarantee; it bounds what matching on the quasi-identifiers can single out"
    ),
}
"""What two neighbouring inputs are, for each notion: the relation an epsilon is over.

A differential privacy guarantee is a budget *and* a neighbouring relation (Dwork and
Roth 2014, Definition 2.4; Desfontaines and Pejó 2020 on the choice of relation):
the same epsilon means different things over different relations."""


@dataclass(frozen=True)
class PrivacyCost:
    """What one randomized step spends.

    Parameters
    ----------
    epsilon : float
        Privacy-loss bound actually guaranteed by the step (not the budget the caller
        asked for when the two differ). For ``notion="metric"`` it is per metre.
    delta : float
        Failure probability of an (epsilon, delta) guarantee; 0 for pure DP.
    notion : {"ldp", "metric", "dp-central", "dp-synthetic", "syntactic"}
        ``ldp``: local DP per record; ``metric``: geo-indistinguishability, epsilon per
        metre; ``dp-central``: central DP on an aggregate; ``dp-synthetic``: central DP
        for a whole synthetic dataset; ``syntactic``: k/l/t models (no epsilon).
    unit : str
        What epsilon is counted per (``"record"``, ``"metre"``, ``"dataset"``).
    scope : str
        What the step touched, for example the column name.
    mechanism : str
        Name of the mechanism and calibration that produced the cost.

    Notes
    -----
    Sequential composition: the costs of steps applied to the same record add up
    (epsilons and deltas sum), see Dwork and Roth (2014), Theorem 3.16.
    """

    epsilon: float
    delta: float = 0.0
    notion: Notion = "ldp"
    unit: str = "record"
    scope: str = ""
    mechanism: str = ""

    def __post_init__(self) -> None:
        for name in ("epsilon", "delta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ParameterError(f"{name}: must be a real number, got {value!r}")
            object.__setattr__(self, name, float(value))
        if not (math.isfinite(self.epsilon) and self.epsilon >= 0):
            raise ParameterError(f"epsilon: must be finite and >= 0, got {self.epsilon!r}")
        if not (0.0 <= self.delta < 1.0):
            raise ParameterError(f"delta: must be in [0, 1), got {self.delta!r}")
        if self.notion not in _NOTIONS:
            raise ParameterError(f"notion: must be one of {_NOTIONS}, got {self.notion!r}")

    def __add__(self, other: PrivacyCost) -> PrivacyCost:
        """Sequential composition of two costs of the same notion and unit."""
        if (other.notion, other.unit) != (self.notion, self.unit):
            raise ParameterError(
                f"other: cannot compose a {other.notion}/{other.unit} cost with a "
                f"{self.notion}/{self.unit} cost"
            )
        scope = ", ".join(s for s in (self.scope, other.scope) if s)
        mechanism = " + ".join(m for m in (self.mechanism, other.mechanism) if m)
        return PrivacyCost(
            self.epsilon + other.epsilon,
            min(self.delta + other.delta, math.nextafter(1.0, 0.0)),
            self.notion,
            self.unit,
            scope,
            mechanism,
        )


class PrivacyLedger:
    """Running record of the privacy spent on the same records.

    Every veil function that randomizes data takes ``ledger=`` and appends its
    :class:`PrivacyCost`. Costs of the same notion and unit compose sequentially:
    :meth:`total` adds them up (basic composition), which is what a release spends on
    each record when every step touches every record.
    """

    def __init__(self) -> None:
        self.entries: list[PrivacyCost] = []

    def record(self, cost: PrivacyCost) -> None:
        """Append one step's cost."""
        self.entries.append(cost)

    def total(self, notion: Notion = "ldp", unit: str = "record") -> PrivacyCost:
        """Sequential composition of every entry of one notion and unit."""
        total = PrivacyCost(0.0, 0.0, notion, unit)
        for entry in self.entries:
            if (entry.notion, entry.unit) == (notion, unit):
                total = total + entry
        return total

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        return f"PrivacyLedger({self.entries!r})"
