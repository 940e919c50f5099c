"""Budget allocation: give the randomized steps of a plan their epsilon from the total.

With ``budget.allocation: equal`` or ``weights``, local-DP treatments (and planar
Laplace location masks) that state no ``epsilon`` share what the budget of their notion
leaves after the steps that state one: equally, or in proportion to their ``weight``.
With ``allocation: target`` (:func:`target_allocate`), each open local-DP column gets
the least epsilon whose noise keeps a utility metric of :mod:`veil.metrics` within the
target, estimated on a sample by bisection. The result is an ordinary plan with every
epsilon filled in, so the ledger, the dry run and the manifest show the allocated
values. No privacy arithmetic happens here beyond the split; the cost of each step is
computed by the ledger from the mechanisms.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from veil.metrics import correlation_loss, divergence_distributions
from veil.release.errors import BudgetError, PlanError
from veil.release.plan import (
    LdpTreatment,
    LocationSpec,
    Plan,
    PlanarLaplaceMask,
)
from veil.release.steps import column_step
from veil.rng import spawn

__all__ = [
    "Privatize",
    "allocate",
    "needs_sample",
    "plan_privatizer",
    "split_budget",
    "target_allocate",
]

Privatize = Callable[[str, float, pd.DataFrame, np.random.Generator], pd.DataFrame]
"""``privatize(column, epsilon, frame, generator)``: the column's treatment at ``epsilon``."""

_BISECTIONS = 14
_FLOOR = 1e-4  # the smallest epsilon tried, as a fraction of the budget left


def split_budget(total: float, weights: dict[str, float], *, equal: bool) -> dict[str, float]:
    """Split ``total`` over the keys of ``weights``: equally, or proportionally to them.

    Parameters
    ----------
    total : float
        Budget to share, > 0.
    weights : dict of str to float
        One positive weight per recipient (ignored when ``equal``).
    equal : bool
        Equal shares instead of weighted ones.

    Returns
    -------
    dict of str to float
        The share of each recipient; the shares add up to ``total`` (up to rounding).

    Examples
    --------
    >>> split_budget(3.0, {"age": 1.0, "sex": 2.0}, equal=False)
    {'age': 1.0, 'sex': 2.0}
    >>> split_budget(1.0, {"a": 5.0, "b": 1.0}, equal=True)
    {'a': 0.5, 'b': 0.5}
    """
    if not total > 0:
        raise PlanError(f"total: must be > 0, got {total!r}")
    if not weights:
        return {}
    if equal:
        return {name: total / len(weights) for name in weights}
    # Weights relative to the largest: neither their sum nor a share can overflow.
    top = max(weights.values())
    relative = {name: w / top for name, w in weights.items()}
    weight_sum = sum(relative.values())
    return {name: total * (r / weight_sum) for name, r in relative.items()}


def allocate(plan: Plan) -> Plan:
    """Return ``plan`` with an epsilon on every randomized step.

    Parameters
    ----------
    plan : Plan
        A validated plan.

    Returns
    -------
    Plan
        A copy whose LDP treatments and planar Laplace masks without ``epsilon``
        received their share of ``budget.ldp.epsilon`` (per record) or
        ``budget.metric.epsilon`` (per metre). A planar Laplace mask of ``r`` reports
        gets ``share / r`` per report. With ``explicit`` allocation the plan is returned
        as it is, except that a lone step without an epsilon (the plan validates only
        one per notion) gets what its notion's budget leaves.

    Raises
    ------
    PlanError
        ``budget.allocation: target`` (not available yet), a missing budget for the
        notion to share, or explicit epsilons that leave nothing to share.
    """
    allocation = plan.budget.allocation
    if allocation == "explicit" and not _has_open_step(plan):
        return plan
    if allocation == "target":
        raise PlanError(
            "budget.allocation: 'target' needs a sample to measure utility on; use "
            "target_allocate(plan, sample, privatize) (veil.release.run does)"
        )
    equal = allocation == "equal"

    open_ldp = {
        name: spec.treatment.weight
        for name, spec in plan.columns.items()
        if isinstance(spec.treatment, LdpTreatment) and spec.treatment.epsilon is None
    }
    columns = dict(plan.columns)
    if open_ldp:
        if plan.budget.ldp is None:
            raise PlanError(
                f"budget.ldp.epsilon: required to allocate epsilon to columns {sorted(open_ldp)}"
            )
        stated = _stated_ldp(plan)
        left = plan.budget.ldp.epsilon - stated
        if not left > 0:
            raise PlanError(
                f"budget.ldp.epsilon: the columns that state an epsilon use {stated:g} of "
                f"{plan.budget.ldp.epsilon:g}, leaving nothing for {sorted(open_ldp)}"
            )
        for name, share in split_budget(left, open_ldp, equal=equal).items():
            spec = columns[name]
            columns[name] = spec.model_copy(
                update={"treatment": spec.treatment.model_copy(update={"epsilon": share})}
            )

    open_geo = {
        str(i): loc.mask.weight
        for i, loc in enumerate(plan.locations)
        if isinstance(loc.mask, PlanarLaplaceMask) and loc.mask.epsilon is None
    }
    locations: list[LocationSpec] = list(plan.locations)
    if open_geo:
        if plan.budget.metric is None:
            raise PlanError(
                "budget.metric.epsilon: required to allocate epsilon per metre to "
                f"locations {sorted(int(i) for i in open_geo)}"
            )
        stated = sum(
            (loc.mask.epsilon or 0.0) * loc.mask.reports
            for loc in plan.locations
            if isinstance(loc.mask, PlanarLaplaceMask)
        )
        left = plan.budget.metric.epsilon - stated
        if not left > 0:
            raise PlanError(
                f"budget.metric.epsilon: the masks that state an epsilon use {stated:g} of "
                f"{plan.budget.metric.epsilon:g} per metre, leaving nothing to allocate"
            )
        for key, share in split_budget(left, open_geo, equal=equal).items():
            loc = locations[int(key)]
            assert isinstance(loc.mask, PlanarLaplaceMask)
            mask = loc.mask.model_copy(update={"epsilon": share / loc.mask.reports})
            locations[int(key)] = loc.model_copy(update={"mask": mask})
    return plan.model_copy(update={"columns": columns, "locations": locations})


def _has_open_step(plan: Plan) -> bool:
    """Whether a randomized step of the plan states no epsilon."""
    return any(
        isinstance(s.treatment, LdpTreatment) and s.treatment.epsilon is None
        for s in plan.columns.values()
    ) or any(
        isinstance(loc.mask, PlanarLaplaceMask) and loc.mask.epsilon is None
        for loc in plan.locations
    )


def _stated_ldp(plan: Plan) -> float:
    return sum(
        spec.treatment.epsilon or 0.0
        for spec in plan.columns.values()
        if isinstance(spec.treatment, LdpTreatment)
    )


def target_allocate(
    plan: Plan,
    sample: pd.DataFrame,
    privatize: Privatize,
    rng: np.random.Generator,
) -> tuple[Plan, dict[str, dict[str, float]]]:
    """Give each open local-DP column the least epsilon that meets the utility target.

    For each column whose treatment states no epsilon, the metric of
    ``budget.target`` (TVD of the column, or the correlation loss of the features) is
    averaged over ``runs`` noisy copies of ``sample`` and the epsilon is found by
    bisection on its logarithm between ``1e-4`` and the whole budget left, keeping the
    smallest epsilon tried whose mean meets the target. Every epsilon tried reuses the
    same ``runs`` random streams (common random numbers), so the estimated curve is
    monotone up to the mechanism's own discreteness. This closes the limitation stated
    in the trasgoDP paper (epsilon chosen per column by hand).

    Parameters
    ----------
    plan : Plan
        A plan with ``budget.allocation: target`` and ``budget.ldp``.
    sample : pandas.DataFrame
        Records to estimate utility on (at most ``target.sample_size`` are drawn).
    privatize : callable
        ``privatize(column, epsilon, frame, generator)`` returns ``frame`` with the
        column treated as planned at ``epsilon``.
    rng : numpy.random.Generator
        Source of the sample draw and of the noise streams.

    Returns
    -------
    plan : Plan
        The plan with the chosen epsilons.
    chosen : dict
        Per column: ``epsilon`` and the metric's estimated ``value`` there.

    Raises
    ------
    PlanError
        No ``budget.ldp``, or a column misses the target even with the whole budget left.
    BudgetError
        The chosen epsilons add up to more than the budget left.
    """
    target = plan.budget.target
    if plan.budget.allocation != "target" or target is None:
        raise PlanError("budget.allocation: target_allocate needs allocation 'target'")
    open_columns = [
        name
        for name, spec in plan.columns.items()
        if isinstance(spec.treatment, LdpTreatment) and spec.treatment.epsilon is None
    ]
    if not open_columns:
        return plan, {}
    if plan.budget.ldp is None:
        raise PlanError(f"budget.ldp.epsilon: required to allocate epsilon to {open_columns}")
    left = plan.budget.ldp.epsilon - _stated_ldp(plan)
    if not left > 0:
        raise PlanError("budget.ldp.epsilon: the stated epsilons leave nothing to allocate")
    draw, *column_rngs = spawn(rng, len(open_columns) + 1)
    if len(sample) > target.sample_size:
        rows = np.sort(draw.choice(len(sample), target.sample_size, replace=False))
        sample = sample.iloc[rows].reset_index(drop=True)
    features = target.features or [
        *open_columns,
        *([plan.evaluation.target] if plan.evaluation.target else []),
    ]

    def measure(column: str, eps: float, streams: list[np.random.Generator]) -> float:
        values = []
        for stream in streams:
            noisy = privatize(column, eps, sample, copy.deepcopy(stream))
            if target.metric == "tvd":
                values.append(divergence_distributions(sample, noisy, column)["tvd"])
            else:
                values.append(correlation_loss(sample, noisy, features))
        return float(np.mean(values))

    chosen: dict[str, dict[str, float]] = {}
    for column, column_rng in zip(open_columns, column_rngs, strict=True):
        streams = spawn(column_rng, target.runs)
        hi, at_hi = left, measure(column, left, streams)
        if not at_hi <= target.value:
            raise PlanError(
                f"budget.target.value: columns.{column} reaches {target.metric}={at_hi:.4g} "
                f"at best (epsilon={left:g}, all the budget left), above the target "
                f"{target.value:g}; raise the budget or relax the target"
            )
        lo = left * _FLOOR
        at_lo = measure(column, lo, streams)
        if at_lo <= target.value:
            hi, at_hi = lo, at_lo
        else:
            for _ in range(_BISECTIONS):
                mid = math.sqrt(lo * hi)
                at_mid = measure(column, mid, streams)
                if at_mid <= target.value:
                    hi, at_hi = mid, at_mid
                else:
                    lo = mid
        chosen[column] = {"epsilon": hi, target.metric: at_hi}
    total = sum(c["epsilon"] for c in chosen.values())
    if total > left * (1.0 + 1e-12):
        listing = "; ".join(f"{c}: epsilon={v['epsilon']:.4g}" for c, v in chosen.items())
        raise BudgetError(
            f"budget.ldp.epsilon: reaching {target.metric} <= {target.value:g} needs "
            f"{total:.4g} per record, over the {left:g} left; columns: {listing}"
        )
    columns = dict(plan.columns)
    for column, found in chosen.items():
        spec = columns[column]
        columns[column] = spec.model_copy(
            update={"treatment": spec.treatment.model_copy(update={"epsilon": found["epsilon"]})}
        )
    return plan.model_copy(update={"columns": columns}), chosen


def needs_sample(plan: Plan) -> bool:
    """Whether allocating the plan's budget needs a sample (``allocation: target``)."""
    return plan.budget.allocation == "target" and any(
        isinstance(spec.treatment, LdpTreatment) and spec.treatment.epsilon is None
        for spec in plan.columns.values()
    )


def plan_privatizer(plan: Plan) -> Privatize:
    """The plan's own treatment of each column, run at the epsilon the search tries."""

    def privatize(
        column: str, epsilon: float, frame: pd.DataFrame, generator: np.random.Generator
    ) -> pd.DataFrame:
        treatment = plan.columns[column].treatment.model_copy(update={"epsilon": epsilon})
        step = column_step(column, treatment)
        assert step is not None and step.apply is not None
        return step.apply(frame, generator)

    return privatize
