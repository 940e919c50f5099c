"""A release's attack results, on the custodian's side of the platform, and the policy's
limits on them.

A run whose plan names ``evaluation.attacks``, or whose operator policy limits an
attack's success rate (``max_attack_success``), attacks a shadow release of the plan
before anything is written (:mod:`veil.release.attack`), and the library refuses the run
when an attack beats its limit (:func:`veil.release.policy.check_attack_limits`). The
results are measured on the raw records, so they live in the release's confidential
custodian record (``custodian.json``), never in its public manifest.

This module reads them for the release's review page, which only the dataset's curator
and the reviewers assigned to it see (:func:`veil.server.access.release_for_review`):
never the catalogue, a data user or an operator. At publication the same library check
runs again on the recorded results under the policy of that moment
(:func:`check_publishable`), so that a limit set or lowered after the run still holds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from veil.attacks import LABELS
from veil.release import PolicyError
from veil.release.policy import check_attack_limits
from veil.server.budget import release_policy
from veil.server.errors import Conflict
from veil.server.models import OperatorPolicy, Release

__all__ = ["ATTACK_LABELS", "attack_view", "check_publishable", "recorded_attacks"]

ATTACK_LABELS = LABELS
"""Each attack of :mod:`veil.attacks` as the pages name it (:data:`veil.attacks.LABELS`)."""

_BASELINES = {
    "control": "held-out records",
    "chance": "a random guess",
    "single release": "either release alone",
}


def recorded_attacks(custodian: Path) -> dict[str, Any] | None:
    """The attack results in the custodian folder's record (None when nothing was attacked).

    Parameters
    ----------
    custodian : pathlib.Path
        The release's custodian folder (``custodian.json`` inside).
    """
    path = custodian / "custodian.json"
    if not path.exists():
        return None
    record = json.loads(path.read_text(encoding="utf-8"))
    attacks = record.get("attacks")
    return attacks if isinstance(attacks, dict) else None


def _percent(value: Any) -> str:
    return f"{100 * float(value):.1f} %"


def _interval(bounds: Any) -> str:
    low, high = bounds
    return f"{100 * float(low):.1f} to {100 * float(high):.1f} %"


def _row(result: dict[str, Any], limits: dict[str, float]) -> dict[str, Any]:
    attack = str(result["attack"])
    limit = limits.get(attack)
    rate = float(result["success_rate"])
    return {
        "attack": attack,
        "label": ATTACK_LABELS.get(attack, attack),
        "variant": str(result.get("variant", "")),
        "success_rate": rate,
        "success": f"{_percent(rate)} ({_interval(result['success_ci'])})",
        "baseline": (
            f"{_percent(result['baseline'])} "
            f"({_BASELINES.get(str(result.get('baseline_kind')), result.get('baseline_kind'))})"
        ),
        "advantage": f"{_percent(result['advantage'])} ({_interval(result['advantage_ci'])})",
        "n_targets": int(result.get("n_targets", 0)),
        "finding": bool(result.get("finding")),
        "columns": [str(c) for c in result.get("columns") or []],
        "suggestion": str(result.get("suggestion") or "").rstrip("."),
        "limit": None if limit is None else _percent(limit),
        "over": limit is not None and rate > limit,
    }


def attack_view(battery: dict[str, Any] | None, row: OperatorPolicy) -> dict[str, Any]:
    """The attack results as the review page shows them, beside the policy's limits.

    Returns
    -------
    dict
        ``attacked`` (whether the run attacked its release), ``results`` (one row per
        attack and variant: rates as percentages with their 95 % intervals, the baseline
        and what it is, the advantage, the targets, whether it is a finding, the columns
        that made it succeed, the edit that would stop it, the policy's limit and whether
        the rate is over it), ``skipped`` (attacks that did not apply, with the reason),
        ``missing`` (attacks the policy limits now that the run did not make), and the
        shadow release's records (``n_records``, ``n_released_records``, ``n_control``).
    """
    limits = dict(row.max_attack_success or {})
    if battery is None:
        return {"attacked": False, "results": [], "skipped": [], "missing": _missing(None, limits)}
    return {
        "attacked": True,
        "shadow": bool(battery.get("shadow")),
        "n_records": battery.get("n_records"),
        "n_released_records": battery.get("n_released_records"),
        "n_control": battery.get("n_control"),
        "results": [_row(r, limits) for r in battery.get("results", [])],
        "skipped": [
            {"attack": a, "label": ATTACK_LABELS.get(a, a), "reason": str(why)}
            for a, why in (battery.get("skipped") or {}).items()
        ],
        "missing": _missing(battery, limits),
    }


def _missing(battery: dict[str, Any] | None, limits: dict[str, float]) -> list[str]:
    """The attacks the policy limits that the run neither made nor found inapplicable."""
    made = set()
    if battery is not None:
        made = {str(r["attack"]) for r in battery.get("results", [])}
        made |= set(battery.get("skipped") or {})
    return sorted(set(limits) - made)


def check_publishable(
    release: Release, battery: dict[str, Any] | None, row: OperatorPolicy
) -> None:
    """Refuse to publish a release whose attacks beat the policy's limits of this moment.

    The run was refused when it beat the limits of its own time; this holds a limit set
    or lowered since: the recorded rates are checked again by the library's rule, and an
    attack the policy now limits that the run did not make is named.

    Raises
    ------
    Conflict
        Naming each attack, its rate and the limit (or the attacks not made).
    """
    try:
        check_attack_limits(release_policy(row), battery or {})
    except PolicyError as exc:
        why = str(exc).removesuffix("; nothing was written")
        raise Conflict(
            f"release {release.id}: cannot be published: {why}",
            field="release",
        ) from None
    missing = _missing(battery, dict(row.max_attack_success or {}))
    if missing:
        raise Conflict(
            f"release {release.id}: cannot be published: the policy limits the success of "
            f"{', '.join(missing)}, which its run did not attack (it was made before the "
            "limit); run its plan again",
            field="release",
        )
