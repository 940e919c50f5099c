"""Budget allocation: give the randomized steps of a plan their epsilon from the total.

With ``budget.allocation: equal`` or ``weights``, local-DP treatments (and planar
Laplace location masks) that state no ``epsilon`` share what the budget of their notion
leaves after the steps that state one: equally, or in proportion to their ``weight``.
The result is an ordinary plan with every epsilon filled in, so the ledger, the dry run
and the manifest show the allocated values. No privacy arithmetic happens here beyond
the split; the cost of each step is computed by the ledger from the mechanisms.
"""

from __future__ import annotations

from veil.release.errors import PlanError
from veil.release.plan import (
    LdpTreatment,
    LocationSpec,
    Plan,
    PlanarLaplaceMask,
)

__all__ = ["allocate", "split_budget"]


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
    weight_sum = sum(weights.values())
    return {name: total * w / weight_sum for name, w in weights.items()}


def allocate(plan: Plan) -> Plan:
    """Return ``plan`` with an epsilon on every randomized step.

    Parameters
    ----------
    plan : Plan
        A validated plan.

    Returns
    -------
    Plan
        The same plan when ``budget.allocation`` is ``explicit``; otherwise a copy whose
        LDP treatments and planar Laplace masks without ``epsilon`` received their share
        of ``budget.ldp.epsilon`` (per record) or ``budget.metric.epsilon`` (per metre).
        A planar Laplace mask of ``r`` reports gets ``share / r`` per report.

    Raises
    ------
    PlanError
        ``budget.allocation: target`` (not available yet), a missing budget for the
        notion to share, or explicit epsilons that leave nothing to share.
    """
    allocation = plan.budget.allocation
    if allocation == "explicit":
        return plan
    if allocation == "target":
        raise PlanError(
            "budget.allocation: 'target' (least epsilon reaching a utility target) is not "
            "available yet; allowed: explicit, equal, weights"
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
        stated = sum(
            spec.treatment.epsilon or 0.0
            for spec in plan.columns.values()
            if isinstance(spec.treatment, LdpTreatment)
        )
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
