"""The attacks section of the release report, and what the attacks tell the verdict.

A run whose plan names ``evaluation.attacks`` attacks its own release before publishing
it (:mod:`veil.release.attack`): the plan runs again, in memory, on a random part of the
records (the *shadow release*, never written), and :mod:`veil.attacks` attacks it with the
rest held out as the control. The results are in the custodian record under ``attacks``
(:meth:`veil.attacks.BatteryResult.to_dict`). This module reads them
(:func:`_review_attacks`), shows each attack with its success rate, baseline, advantage
(each with its 95 % interval), targets, the columns that made it succeed and the edit the
attack suggests (:func:`_attack_section`), gives the verdict one ranked item per attack
that beats its baseline by more than the documented margin
(``veil.attacks.DEFAULT_MARGIN``, ``finding`` in the results; :func:`_attack_risks`), and
turns each such attack into a finding with the plan edit that would stop it
(:func:`_attack_finding`).

Nothing here measures anything: every figure is the custodian record's, so the section,
the verdict and the record cannot disagree.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from veil.attacks import LABELS
from veil.release.report.context import _Context
from veil.release.report.glossary import _explained, _term
from veil.release.report.page import _e, _fmt, _link, _names, _p, _pct, _Raw, _share, _table
from veil.release.report.treatments import _epsilon

# Each attack's name in words, and the definition it links to.
_LABELS: Final = LABELS
_TERMS: Final[dict[str, str]] = {
    "singling_out": "singling-out",
    "linkability": "linkability",
    "inference": "attribute-inference",
    "location": "location-attack",
    "membership": "membership",
    "intersection": "intersection",
}
# What the baseline is, by its kind ("against 8.78 % ...").
_BASELINES: Final[dict[str, str]] = {
    "control": "for the same attack on held-out records",
    "chance": "by chance",
    "single release": "with either release alone",
}
# The location masks whose strength is an epsilon per metre.
_METRIC_MASKS: Final[frozenset[str]] = frozenset({"planar_laplace"})
# A value that reads as a date with a time of day: an exact time.
_TIME: Final[re.Pattern[str]] = re.compile(r"^\s*\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}")
_TIME_SAMPLE: Final[int] = 20


@dataclass(frozen=True)
class _Attacked:
    """One attack's result, as the custodian record holds it."""

    attack: str
    variant: str
    success: float
    success_ci: tuple[float, float]
    baseline: float
    baseline_kind: str
    advantage: float
    advantage_ci: tuple[float, float]
    n_targets: int
    finding: bool
    columns: tuple[str, ...]
    suggestion: str
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The attack and its variant in words: "Location re-identification (alone: a/b)"."""
        return f"{_LABELS.get(self.attack, self.attack)} ({self.variant})"

    @property
    def unit(self) -> str:
        """What its targets are: singling out counts attempts, the others people."""
        return "attempts" if self.attack == "singling_out" else "targets"

    @property
    def gain(self) -> float:
        """The share of targets the attack wins beyond its baseline (its rank in the verdict)."""
        return max(0.0, self.success - self.baseline)


@dataclass(frozen=True)
class _Battery:
    """Every attack of the run, on its shadow release."""

    results: tuple[_Attacked, ...]
    shadow: bool
    n_records: int
    n_released: int
    n_control: int
    margin: float
    skipped: Mapping[str, str]

    def findings(self) -> list[_Attacked]:
        """The attacks that beat their baseline by more than the margin, largest gain first."""
        return sorted((r for r in self.results if r.finding), key=lambda r: -r.gain)


@dataclass(frozen=True)
class _AttackReview:
    """What the run's facts say of its attacks.

    ``battery`` is None when the run attacked nothing; ``error`` says why the recorded
    results could not be read.
    """

    battery: _Battery | None
    error: str | None = None


def _number(record: Mapping[str, Any], key: str) -> float:
    value = record.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ValueError(f"{key}: expected a number, got {value!r}")
    return float(value)


def _count(record: Mapping[str, Any], key: str) -> int:
    value = record.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{key}: expected a count, got {value!r}")
    return value


def _interval(record: Mapping[str, Any], key: str) -> tuple[float, float]:
    value = record.get(key)
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise ValueError(f"{key}: expected [low, high], got {value!r}")
    low, high = (_number({key: v}, key) for v in value)
    return low, high


def _result(record: Any) -> _Attacked:
    if not isinstance(record, Mapping):
        raise ValueError(f"results: expected an attack's record, got {record!r}")
    columns = record.get("columns")
    details = record.get("details")
    return _Attacked(
        attack=str(record.get("attack", "")),
        variant=str(record.get("variant", "")),
        success=_number(record, "success_rate"),
        success_ci=_interval(record, "success_ci"),
        baseline=_number(record, "baseline"),
        baseline_kind=str(record.get("baseline_kind", "")),
        advantage=_number(record, "advantage"),
        advantage_ci=_interval(record, "advantage_ci"),
        n_targets=_count(record, "n_targets"),
        finding=record.get("finding") is True,
        columns=tuple(str(c) for c in columns) if isinstance(columns, list) else (),
        suggestion=str(record.get("suggestion") or ""),
        details=details if isinstance(details, Mapping) else {},
    )


def _read(battery: Mapping[str, Any]) -> _Battery:
    results = battery.get("results")
    if not isinstance(results, list):
        raise ValueError(f"results: expected a list, got {results!r}")
    skipped = battery.get("skipped")
    return _Battery(
        results=tuple(_result(r) for r in results),
        shadow=battery.get("shadow") is True,
        n_records=_count(battery, "n_records"),
        n_released=_count(battery, "n_released_records"),
        n_control=_count(battery, "n_control"),
        margin=_number(battery, "margin"),
        skipped={str(k): str(v) for k, v in skipped.items()}
        if isinstance(skipped, Mapping)
        else {},
    )


def _review_attacks(ctx: _Context) -> _AttackReview | None:
    """The run's attacks, or None when its facts do not say whether it attacked anything.

    A bare report, or one built from the public manifest alone, knows nothing of the
    attacks: they are measured on the raw records and live in the custodian record.
    """
    if not ctx.attacks_recorded():
        return None
    battery = ctx.attacks()
    if battery is None:
        return _AttackReview(None)
    try:
        return _AttackReview(_read(battery))
    except ValueError as exc:
        return _AttackReview(None, str(exc))


# ------------------------------------------------------------------ the section


def _shadow_words(ctx: _Context, battery: _Battery) -> str:
    """How the attacked release was made, with its numbers of records."""
    if not battery.shadow:
        return (
            f"Measured on the release itself, made from all {battery.n_records:,} records, "
            f"with {battery.n_control:,} held-out control records."
        )
    read = ctx.rows_in()
    drawn = (
        f" (an evenly spread sample of the {read:,} records read)"
        if battery.n_records < read
        else ""
    )
    return (
        f"Measured on a shadow release, not on the published one: the plan was run again, "
        f"in memory, on {battery.n_released:,} records drawn at random from "
        f"{battery.n_records:,}{drawn}; the other {battery.n_control:,} were held out as "
        "the control, and the shadow release was never written. Its figures describe a "
        f"release of {battery.n_released:,} records."
    )


def _cells(r: _Attacked) -> list[Any]:
    low, high = r.success_ci
    kind = {"control": "held-out records", "single release": "either release alone"}.get(
        r.baseline_kind, r.baseline_kind
    )
    a_low, a_high = r.advantage_ci
    return [
        _Raw(
            _term(_TERMS.get(r.attack, "attack-advantage"), _LABELS.get(r.attack, r.attack))
            + html.escape(f" ({r.variant})")
        ),
        f"{_pct(r.success)} ({_pct(low)} to {_pct(high)})",
        f"{_pct(r.baseline)} ({kind})",
        f"{r.advantage:.3f} ({a_low:.3f} to {a_high:.3f})",
        r.n_targets,
        _names(r.columns) or "—",
        "yes" if r.finding else "no",
        r.suggestion or "—",
    ]


def _detail(r: _Attacked) -> str:
    """What else the attack measured, in words ("" when nothing)."""
    details = r.details
    parts = []
    alone = details.get("matching_alone_rate")
    if isinstance(alone, (int, float)):
        parts.append(f"matching on the exact columns and cells alone finds {_pct(alone)}")
    candidates = details.get("mean_candidates")
    single = details.get("single_candidate_share")
    if isinstance(candidates, (int, float)) and isinstance(alone, (int, float)):
        text = f"{candidates:,.1f} candidates on average"
        if isinstance(single, (int, float)):
            text += f", a single one for {_pct(single)} of the targets"
        parts.append(text)
    moved = details.get("median_displacement_m")
    if isinstance(moved, (int, float)):
        parts.append(f"the mask moved the points by {moved:,.0f} m (median)")
    examples = details.get("examples")
    if isinstance(examples, list) and examples:
        parts.append(f"for example, {_fmt(examples[0])} isolates one person")
    return "; ".join(parts)


def _attack_section(ctx: _Context, review: _AttackReview) -> str:
    """Each attack of the battery, its figures, and what they rest on."""
    if review.error is not None:
        return _p(f"The attack results could not be read: {review.error}", "error")
    battery = review.battery
    if battery is None:
        return _p("The plan's evaluation.attacks names no attack: the release was not attacked.")
    parts = [_p(_shadow_words(ctx, battery))]
    header = [
        "attack",
        _Raw(_term("attack-success", "success rate") + " (95 % interval)"),
        _Raw(_term("attack-baseline", "baseline")),
        _Raw(_term("attack-advantage", "advantage") + " (95 % interval)"),
        "targets",
        "columns that made it succeed",
        _Raw(_term("attack-finding", "finding")),
        "suggested edit",
    ]
    rows = [_cells(r) for r in battery.results]
    parts.append(_table(header, rows, widths=[15, 12, 10, 11, 9, 14, 8, 21]))
    notes = [
        f"<li><b>{_e(r.label)}</b>: {_e(_detail(r))}.</li>"
        for r in battery.results
        if r.finding and _detail(r)
    ]
    if notes:
        parts.append(f"<ul>{''.join(notes)}</ul>")
    parts.append(
        _p(
            f"An attack is a finding when the low end of its advantage's 95 % interval is "
            f"above {_share(battery.margin)}: it beats its baseline, with confidence, by more "
            "than that share of the room above it. The figures are measured on the raw "
            "records: they belong to the custodian, never to the public manifest."
        )
    )
    if battery.skipped:
        skipped = "; ".join(f"{name}: {why}" for name, why in battery.skipped.items())
        parts.append(_p(f"Asked for but not applicable: {skipped}."))
    keys = ["shadow-release", "attack-success", "attack-baseline", "attack-advantage"]
    keys += [_TERMS[r.attack] for r in battery.results if r.attack in _TERMS]
    return "".join(parts) + _explained([*keys, "attack-finding"])


# ------------------------------------------------------------------ the verdict


def _claim(r: _Attacked, battery: _Battery) -> str:
    """One attack's figures in words (plain text), as the verdict and its finding say them."""
    low, high = r.advantage_ci
    return (
        f"the attack succeeds for {_pct(r.success)} of {r.n_targets:,} {r.unit}, against "
        f"{_pct(r.baseline)} {_BASELINES.get(r.baseline_kind, r.baseline_kind)}; advantage "
        f"{r.advantage:.3f} (95 % interval {low:.3f} to {high:.3f}), above the "
        f"{_share(battery.margin)} margin"
    )


def _attack_risks(review: _AttackReview | None) -> list[tuple[float, str]]:
    """The verdict's items on the attacks, each with its rank (the share won beyond the
    baseline), as ``(rank, html)``.

    One item per attack that is a finding, and one for the attacks that are not; a run
    that attacked nothing says so.
    """
    if review is None:
        return []
    if review.error is not None:
        return [(2.0, _e(f"The attack results could not be read: {review.error}."))]
    battery = review.battery
    if battery is None:
        return [
            (
                -1.0,
                "No attack was run on this release: the plan's evaluation.attacks names "
                "none (a battery on a shadow release measures what an attacker achieves).",
            )
        ]
    where = " (" + _link("attacks", "Attacks") + ")."
    items = []
    for r in battery.findings():
        through = f"; it succeeds through {_names(r.columns)}" if r.columns else ""
        text = f"{r.label} on a shadow release: {_claim(r, battery)}{through}"
        items.append((r.gain, html.escape(text) + where))
    others = len(battery.results) - len(battery.findings())
    if not battery.results:
        text = "No attack of the battery applied to this release"
        items.append((0.0, _e(text) + where))
    elif not battery.findings():
        text = (
            f"No attack on the shadow release ({others} run, on {battery.n_released:,} of "
            f"{battery.n_records:,} records) beats its baseline by more than the "
            f"{_share(battery.margin)} margin"
        )
        items.append((0.0, _e(text) + where))
    elif others:
        margin = f"the {_share(battery.margin)} margin of"
        text = (
            f"The other attack on the shadow release stays within {margin} its baseline"
            if others == 1
            else f"The other {others} attacks on the shadow release stay within {margin} "
            "their baselines"
        )
        items.append((0.0, _e(text) + where))
    return items


# ------------------------------------------------------------------ the findings


def _is_time(ctx: _Context, column: str) -> bool:
    """Whether the original column holds exact times (a datetime, or text like one)."""
    if column not in ctx.original.columns:
        return False
    values = ctx.original[column]
    if values.dtype.kind == "M":
        return True
    sample = values.dropna().head(_TIME_SAMPLE)
    if not len(sample) or values.dtype.kind in "biufc":
        return False
    return bool(sample.astype(str).str.match(_TIME).all())


def _location_edit(ctx: _Context, step: str) -> str:
    """The plan edit that masks a location pair (its step: ``"lat, lon"``) more strongly."""
    method = ctx.method(step)
    parameters = ctx.parameters(step)
    if method in _METRIC_MASKS:
        epsilon = _epsilon(ctx, step)
        now = "" if epsilon is None else f"; ε = {_fmt(epsilon)} per metre now"
        return (
            f"mask {step} more strongly: a smaller epsilon per metre (the displacement grows "
            f"as 1 / ε{now}), or mask: {{method: grid, cell_m: ...}} or {{method: cloak, k: 5}}"
        )
    if method == "grid":
        cell = parameters.get("cell_m")
        now = "" if cell is None else f" (cell_m: {_fmt(cell)} now)"
        return f"larger cells for {step}{now}, or mask: {{method: cloak, k: 5}}"
    if method == "cloak":
        k = parameters.get("k")
        return f"a larger k for {step}" + ("" if k is None else f" (k: {_fmt(k)} now)")
    return f"mask {step} more strongly (a smaller epsilon per metre, larger cells or cloaking)"


def _kept(ctx: _Context, column: str) -> bool:
    """Whether ``column`` is released exactly as read, outside any generalization."""
    return (
        ctx.method(column) == "keep"
        and column not in ctx.exact_share()
        and not _is_time(ctx, column)
    )


def _column_edit(ctx: _Context, column: str) -> str:
    """The plan edit that stops ``column`` from helping an attacker, from its treatment."""
    if "/" in column and column.replace("/", ", ") in ctx.steps:
        return _location_edit(ctx, column.replace("/", ", "))
    method = ctx.method(column)
    if column in ctx.exact_share():
        return f"move {column} from share.quasi_identifiers (exact) to share.synthesized"
    if method in ("keep", "") and _is_time(ctx, column):
        return f"drop the exact time {column} (treatment: drop), or release it coarsened"
    if method == "quasi-identifier":
        return f"coarser levels for {column} in the anonymization (a larger k, or a hierarchy)"
    if method == "generalize":
        return f"generalize {column} further (a higher level)"
    if ctx.noised(column):
        epsilon = _epsilon(ctx, column)
        now = "" if epsilon is None else f"; ε = {_fmt(epsilon)} now"
        return f"more noise on {column} (a smaller epsilon{now})"
    if ctx.pseudonymized(column):
        return f"drop {column}: its pseudonyms link a person's records"
    return f"generalize, perturb or drop {column}"


def _kept_edit(columns: list[str]) -> str:
    """One edit for the columns released exactly: generalize them or drop them."""
    one = len(columns) == 1
    return (
        f"generalize {_names(columns)} (treatment: {{method: generalize, hierarchy: ..., "
        f"level: ...}}, or add {'it' if one else 'them'} to the anonymization's "
        f"quasi-identifiers) or drop {'it' if one else 'them'} (treatment: drop)"
    )


def _edit(ctx: _Context, r: _Attacked) -> str:
    """What to change in the plan to stop ``r``: an edit for the columns that made it succeed.

    Each column gets the edit its treatment calls for (a location's mask made stronger,
    an exact time dropped, a noised column given less epsilon); the columns released
    exactly share one edit (generalize or drop them). When matching on the exact columns
    alone does most of a location attack's work (``matching_alone_rate`` at least half
    its success), a stronger mask would not stop it: their edits come first, and the
    text says so.
    """
    columns = list(dict.fromkeys(r.columns))
    lead = ""
    alone = r.details.get("matching_alone_rate")
    exact = [c for c in columns if "/" not in c]
    exact_led = isinstance(alone, (int, float)) and alone >= 0.5 * r.success
    if r.attack == "location" and exact and exact_led:
        columns = exact + [c for c in columns if c not in exact]
        candidates = r.details.get("mean_candidates")
        many = (
            f" to {candidates:,.1f} records on average"
            if isinstance(candidates, (int, float))
            else ""
        )
        lead = (
            f"Matching on {_names(exact)} alone narrows a person's candidates{many}, so a "
            "stronger mask alone would not stop it: "
        )
    kept = [c for c in columns if _kept(ctx, c)]
    edits = []
    for column in columns:
        if column not in kept:
            edits.append(_column_edit(ctx, column))
        elif column == kept[0]:
            edits.append(_kept_edit(kept))
    if not edits:
        text = r.suggestion or "see the attack's figures"
        return text[:1].upper() + text[1:] + "."
    text = "; ".join(edits) + "."
    return lead + (text if lead else text[:1].upper() + text[1:])


def _attack_finding(ctx: _Context, battery: _Battery, r: _Attacked) -> tuple[str, str, str]:
    """One attack that beats its baseline, as a finding: ``(subject, what, change)``."""
    what = (
        f"On a shadow release of {battery.n_released:,} records ({battery.n_control:,} held "
        f"out), {_claim(r, battery)}."
    )
    if r.columns:
        what += f" The columns that made it succeed: {_names(r.columns)}."
    detail = _detail(r)
    if detail:
        what += f" {detail[:1].upper()}{detail[1:]}."
    return r.label, what, _edit(ctx, r)


def _attack_findings(
    ctx: _Context, review: _AttackReview | None
) -> list[tuple[float, tuple[str, str, str]]]:
    """Each attack that is a finding, ``(rank, (subject, what, change))``, largest first."""
    if review is None or review.battery is None:
        return []
    battery = review.battery
    return [(r.gain, _attack_finding(ctx, battery, r)) for r in battery.findings()]
