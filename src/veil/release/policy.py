"""Operator policy: limits a release plan must meet, whoever wrote the plan.

A :class:`Policy` is set by an operator of the platform (or by a script) and checked by
:func:`check_policy` against a plan's ledger before any record is read, when the plan is
validated and again when it runs: curators cannot override it. It caps what one release
spends (epsilon and delta per record for local DP, epsilon per metre for location
masks) and what is left of a dataset's budget across its releases (the caller keeps
that ledger and passes the remainder), sets the least ``k`` of every k-anonymity model
and cloaking, lists the treatments allowed, and says whether choices made from the
data (a projection, an allocation measured on the private input, the input's row
order: the manifest's ``leaks``) are allowed at all.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, get_args

from veil.release.errors import PlanError
from veil.release.ledger import ReleaseLedger
from veil.release.plan import AttackName, CloakMask, KAnonymitySpec, Plan

__all__ = [
    "Policy",
    "PolicyError",
    "check_attack_limits",
    "check_policy",
    "plan_leaks",
    "plan_methods",
]

_TOLERANCE = 1e-9
_ATTACKS: tuple[str, ...] = get_args(AttackName)


class PolicyError(PlanError):
    """The plan breaks the operator's policy (nothing was read or written)."""


@dataclass(frozen=True)
class Policy:
    """Limits set by an operator.

    Parameters
    ----------
    max_ldp_epsilon, max_ldp_delta : float, optional
        The most one release may spend per record under local DP.
    max_metric_epsilon : float, optional
        The most one release may spend per metre on location masks.
    remaining_ldp_epsilon, remaining_ldp_delta, remaining_metric_epsilon : float, optional
        What is left of the dataset's budget after its earlier releases (sequential
        composition across releases of the same records).
    min_k : int, optional
        The least k of every k-anonymity model and every cloaking mask in the plan.
    allowed_methods : iterable of str, optional
        The treatments, masks and ``"anonymization"`` a plan may use (None: any).
    allow_leaks : bool, default False
        Allow choices made from the data (the manifest's ``leaks``).
    max_attack_success : mapping of str to float, optional
        The largest success rate allowed per attack of :mod:`veil.attacks`
        (``{"location": 0.05}``): the named attacks run on every release, whatever its
        plan asks, and a release above a limit is not written
        (:func:`check_attack_limits`).
    """

    max_ldp_epsilon: float | None = None
    max_ldp_delta: float | None = None
    max_metric_epsilon: float | None = None
    remaining_ldp_epsilon: float | None = None
    remaining_ldp_delta: float | None = None
    remaining_metric_epsilon: float | None = None
    min_k: int | None = None
    allowed_methods: frozenset[str] | None = None
    allow_leaks: bool = False
    max_attack_success: Mapping[str, float] | None = None

    def __post_init__(self) -> None:
        for name in (
            "max_ldp_epsilon",
            "max_ldp_delta",
            "max_metric_epsilon",
            "remaining_ldp_epsilon",
            "remaining_ldp_delta",
            "remaining_metric_epsilon",
        ):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value >= 0):
                raise PolicyError(f"policy.{name}: must be a finite number >= 0, got {value!r}")
        if self.min_k is not None and (isinstance(self.min_k, bool) or self.min_k < 1):
            raise PolicyError(f"policy.min_k: must be an integer >= 1, got {self.min_k!r}")
        if self.allowed_methods is not None:
            object.__setattr__(self, "allowed_methods", frozenset(self.allowed_methods))
        for attack, limit in (self.max_attack_success or {}).items():
            if attack not in _ATTACKS:
                raise PolicyError(
                    f"policy.max_attack_success: unknown attack {attack!r}; allowed: "
                    + ", ".join(_ATTACKS)
                )
            if isinstance(limit, bool) or not (0.0 <= float(limit) <= 1.0):
                raise PolicyError(
                    f"policy.max_attack_success.{attack}: must be a rate in [0, 1], got {limit!r}"
                )


def plan_methods(plan: Plan) -> set[str]:
    """Every treatment, mask and table step a plan uses."""
    methods: set[str] = {spec.treatment.method for spec in plan.columns.values()}
    methods.update(loc.mask.method for loc in plan.locations)
    if plan.anonymization is not None:
        methods.add("anonymization")
    return methods


def _plan_ks(plan: Plan) -> list[tuple[str, int]]:
    ks = [
        (f"locations.{i}.mask.k", loc.mask.k)
        for i, loc in enumerate(plan.locations)
        if isinstance(loc.mask, CloakMask)
    ]
    if plan.anonymization is not None:
        ks.extend(
            (f"anonymization.models.{i}.k", m.k)
            for i, m in enumerate(plan.anonymization.models)
            if isinstance(m, KAnonymitySpec)
        )
    return ks


def plan_leaks(plan: Plan) -> list[str]:
    """What the plan lets depend on the raw records, or otherwise lets through, by design."""
    leaks: list[str] = []
    for loc in plan.locations:
        if not loc.public_projection:
            leaks.append(
                f"locations {loc.name}: the projection is chosen from the data "
                "(projection: data); its choice depends on the records"
            )
    target = plan.budget.target
    if plan.budget.allocation == "target" and target is not None and target.sample is None:
        leaks.append(
            "budget.allocation target: the epsilons were chosen from utility measured on "
            "the private input (allow_data_dependent_allocation); that choice is not "
            "covered by the ledger"
        )
    if plan.output.keep_order:
        leaks.append("output.keep_order: records keep the input's order")
    return leaks


def _over(spent: float, limit: float | None) -> bool:
    return limit is not None and spent > limit * (1 + _TOLERANCE) + 1e-15


def check_policy(
    plan: Plan, ledger: ReleaseLedger, leaks: Iterable[str], policy: Policy | None
) -> None:
    """Refuse a plan that breaks ``policy`` (no check when ``policy`` is None).

    Raises
    ------
    PolicyError
        One line per breach, naming the plan's figure and the policy's limit.
    """
    if policy is None:
        return
    problems: list[str] = []
    ldp, metric = ledger.total("ldp"), ledger.total("metric")
    for label, spent, limit in (
        ("max_ldp_epsilon", ldp.epsilon, policy.max_ldp_epsilon),
        ("max_ldp_delta", ldp.delta, policy.max_ldp_delta),
        ("max_metric_epsilon", metric.epsilon, policy.max_metric_epsilon),
        ("remaining_ldp_epsilon", ldp.epsilon, policy.remaining_ldp_epsilon),
        ("remaining_ldp_delta", ldp.delta, policy.remaining_ldp_delta),
        ("remaining_metric_epsilon", metric.epsilon, policy.remaining_metric_epsilon),
    ):
        if _over(spent, limit):
            problems.append(f"policy.{label}: the plan spends {spent:g}, over the limit {limit:g}")
    if policy.min_k is not None:
        problems.extend(
            f"policy.min_k: {where} is {k}, below the least k {policy.min_k}"
            for where, k in _plan_ks(plan)
            if k < policy.min_k
        )
    if policy.allowed_methods is not None:
        refused = sorted(plan_methods(plan) - policy.allowed_methods)
        if refused:
            problems.append(
                f"policy.allowed_methods: the plan uses {refused}; allowed: "
                f"{sorted(policy.allowed_methods)}"
            )
    if not policy.allow_leaks:
        problems.extend(f"policy.allow_leaks: not allowed: {leak}" for leak in leaks)
    if problems:
        raise PolicyError(
            "plan refused by the policy (nothing was read):\n  " + "\n  ".join(problems)
        )


def check_attack_limits(policy: Policy | None, battery: Mapping[str, Any]) -> None:
    """Refuse a release whose attacks succeed more often than the policy allows.

    Parameters
    ----------
    policy : Policy or None
        Its ``max_attack_success`` (nothing is checked without one).
    battery : mapping
        :meth:`veil.attacks.BatteryResult.to_dict` of the run's attack phase.

    Raises
    ------
    PolicyError
        A result's success rate is above its attack's limit (the message names each:
        attack, variant, rate and limit); the run then writes nothing.
    """
    limits = {} if policy is None else dict(policy.max_attack_success or {})
    over = [
        f"{r['attack']} ({r['variant']}): success rate {float(r['success_rate']):.3f} above "
        f"{float(limits[r['attack']]):g}"
        for r in battery.get("results", [])
        if r["attack"] in limits and float(r["success_rate"]) > float(limits[r["attack"]])
    ]
    if over:
        raise PolicyError(
            "policy.max_attack_success: the release's attacks beat the operator's limits: "
            + "; ".join(over)
            + "; nothing was written"
        )
