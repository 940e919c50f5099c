"""What an attack found: its success rate, its baseline, its advantage, and what to change.

Every attack returns :class:`AttackResult` objects (one per variant: univariate and
multivariate singling out, each sensitive column's inference, each location); a battery
gathers them in a :class:`BatteryResult`. Both turn into plain JSON-ready dictionaries with
``to_dict()``. They are computed from raw records, so they belong to the custodian's side
(the confidential record), never to a public manifest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from veil.attacks.stats import Rate, advantage

__all__ = [
    "DEFAULT_MARGIN",
    "AttackResult",
    "BaselineKind",
    "BatteryResult",
    "distinctness",
    "driving_columns",
]

# An attack is a finding when the lower end of its advantage's 95 % interval exceeds this
# margin: it beats its baseline, with confidence, by more than 5 % of the room above it.
DEFAULT_MARGIN = 0.05

BaselineKind = Literal["control", "chance", "single release"]


def _round(value: float) -> float:
    return float(round(value, 6))


@dataclass(frozen=True)
class AttackResult:
    """One attack's outcome.

    Attributes
    ----------
    attack : str
        ``"singling_out"``, ``"linkability"``, ``"inference"``, ``"location"``,
        ``"membership"`` or ``"intersection"``.
    variant : str
        Which form of it (``"multivariate"``, the secret column, ``"alone: lat/lon"``).
    success : Rate
        The share of targets (or predicates) on which the attack succeeded.
    baseline : Rate
        What the same attacker achieves without the information the release leaks about
        its records; ``baseline_kind`` says how it was measured.
    baseline_kind : {"control", "chance", "single release"}
        ``"control"``: the same attack on held-out records that are not in the release;
        ``"chance"``: a random guess; ``"single release"``: the best of the two releases
        attacked alone (intersection).
    advantage : (float, float, float)
        ``(value, low, high)``: the advantage over the baseline and its 95 % interval.
    n_targets : int
        Targets (or predicates) attacked.
    columns : tuple of str
        The columns that made the attack succeed, most telling first.
    suggestion : str
        An edit to the plan that would stop the attack.
    details : mapping
        Attack-specific figures (JSON-ready).
    """

    attack: str
    variant: str
    success: Rate
    baseline: Rate
    baseline_kind: BaselineKind
    n_targets: int
    columns: tuple[str, ...] = ()
    suggestion: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def advantage(self) -> tuple[float, float, float]:
        """``(value, low, high)`` of the advantage over the baseline (see :mod:`.stats`)."""
        return advantage(self.success, self.baseline)

    def is_finding(self, margin: float = DEFAULT_MARGIN) -> bool:
        """Whether the attack beats its baseline, at 95 % confidence, by more than ``margin``."""
        return self.advantage[1] > margin

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON types."""
        value, low, high = self.advantage
        return {
            "attack": self.attack,
            "variant": self.variant,
            "success_rate": _round(self.success.value),
            "success_ci": [_round(self.success.low), _round(self.success.high)],
            "baseline": _round(self.baseline.value),
            "baseline_ci": [_round(self.baseline.low), _round(self.baseline.high)],
            "baseline_kind": self.baseline_kind,
            "advantage": _round(value),
            "advantage_ci": [_round(low), _round(high)],
            "n_targets": int(self.n_targets),
            "finding": self.is_finding(),
            "columns": list(self.columns),
            "suggestion": self.suggestion,
            "details": dict(self.details),
        }


@dataclass(frozen=True)
class BatteryResult:
    """Every attack of a battery on one release.

    Attributes
    ----------
    results : tuple of AttackResult
    shadow : bool
        The attacked release is a shadow release (the plan run on part of the records,
        the rest held out as control), not the one published.
    n_records, n_released_records, n_control : int
        Raw records, records given to the release, held-out control records.
    seconds : mapping of str to float
        Wall time of the shadow release (``"release"``) and of each attack.
    skipped : mapping of str to str
        Attacks asked for that did not apply, with the reason.
    """

    results: tuple[AttackResult, ...]
    shadow: bool
    n_records: int
    n_released_records: int
    n_control: int
    seconds: Mapping[str, float] = field(default_factory=dict)
    skipped: Mapping[str, str] = field(default_factory=dict)

    def findings(self, margin: float = DEFAULT_MARGIN) -> tuple[AttackResult, ...]:
        """The results that beat their baseline by more than ``margin`` (see ``is_finding``)."""
        return tuple(r for r in self.results if r.is_finding(margin))

    def to_dict(self) -> dict[str, Any]:
        """The battery as plain JSON types."""
        return {
            "shadow": self.shadow,
            "n_records": int(self.n_records),
            "n_released_records": int(self.n_released_records),
            "n_control": int(self.n_control),
            "margin": DEFAULT_MARGIN,
            "results": [r.to_dict() for r in self.results],
            "seconds": {k: _round(v) for k, v in self.seconds.items()},
            "skipped": dict(self.skipped),
        }


def distinctness(release: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """For each encoded column, the chance that two random released rows differ on it.

    ``1 - sum p_v^2`` over the column's values ``v`` (Gini-Simpson): near 1 for a column
    that tells people apart (a date of birth), near 0 for one most people share.
    """
    out = np.empty(release.shape[1])
    for j in range(release.shape[1]):
        x = np.nan_to_num(release[:, j], nan=-np.inf)
        _, counts = np.unique(x, return_counts=True)
        p = counts / max(len(x), 1)
        out[j] = 1.0 - float(np.sum(p * p))
    return out


def driving_columns(
    columns: Sequence[str],
    agree_success: npt.NDArray[np.bool_],
    agree_failure: npt.NDArray[np.bool_],
    distinct: npt.NDArray[np.float64],
    most: int = 3,
) -> tuple[tuple[str, ...], dict[str, float]]:
    """The columns that made an attack succeed.

    A column counts when the matched released row agrees with the target on it at least
    as often in the successful attacks as in the failed ones; its score is how often it
    agrees in the successful attacks times its distinctness (:func:`distinctness`), so
    that a column reproduced exactly and telling people apart ranks first. The columns of
    positive score, highest first (at most ``most``), are returned with every column's
    score.

    Returns
    -------
    (columns, score per column)
    """
    n_cols = len(columns)
    hit = agree_success.mean(axis=0) if len(agree_success) else np.zeros(n_cols)
    miss = agree_failure.mean(axis=0) if len(agree_failure) else np.zeros(n_cols)
    score = np.where(hit >= miss, hit * distinct, 0.0)
    order = np.argsort(-score, kind="stable")
    chosen = tuple(columns[i] for i in order[:most] if score[i] > 0)
    return chosen, {c: _round(float(v)) for c, v in zip(columns, score, strict=True)}
