"""What in a release needs the custodian's attention, each finding with what to change.

The checks: a location pair a nearest-location attacker still links (5 % or more of its
records re-identified) or whose mask dropped 5 % or more of the records; a noised column
whose values pile up on a clipping bound (the noise is wide
for its bounds) or whose original values lie outside its public bounds; a column whose
distribution moved far (a high TVD); a quasi-identifier generalized to ``*``; a noised
quasi-identifier the noise leaves nearly exact; records an attacker can still single out
on the quasi-identifiers the release shows exactly; classes that reveal a sensitive
value beyond its base rate; an attack on the shadow release that beats its baseline by
more than the margin (:mod:`.attacks`); the run's privacy warnings. Each finding says what
is wrong with its figures, and what to change in the plan.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from veil.errors import VeilError
from veil.release.report.attacks import _attack_findings, _AttackReview, _location_edit
from veil.release.report.context import _Context
from veil.release.report.divergence import _DivergenceReview
from veil.release.report.kinds import _is_number
from veil.release.report.maps import _LocationReview
from veil.release.report.page import _fmt, _names, _pct, _share, _text
from veil.release.report.risk import _DISCLOSURE_GAIN, _RISK_THRESHOLD, _RiskReview
from veil.release.report.summary import _scrub
from veil.release.report.treatments import _epsilon

# Released values on a bound beyond this share (and this much above the original's
# share there) mean the noise is clipped more than it is informative.
_CLIPPED_SHARE: Final[float] = 0.10
_CLIPPED_EXCESS: Final[float] = 0.05
# Original values outside the public bounds beyond this share were moved onto them.
_OUTSIDE_SHARE: Final[float] = 0.05
# A distribution that moved by this TVD or more has lost its shape.
_HIGH_TVD: Final[float] = 0.3
# The warning categories of veil's privacy checks: each is a finding.
_PRIVACY_WARNINGS: Final[frozenset[str]] = frozenset(
    {"PrivacyWarning", "PrivacyLeakWarning", "ReproducibleNoiseWarning"}
)
_MAX_WARNING_FINDINGS: Final[int] = 10
# A location pair whose records a nearest-location attacker links at this rate or more
# is a finding; so is a mask that dropped this share of the records.
_LINKED_SHARE: Final[float] = 0.05
_DROPPED_SHARE: Final[float] = 0.05


@dataclass(frozen=True)
class _Finding:
    """One thing to look at: about what, what is wrong, what to change, where to read more.

    ``rank`` is the share of the records (or of an attack's targets) the risk measures
    put at risk, for findings about people at risk; None for the others (a distribution
    that moved, values clipped), which follow them.
    """

    subject: str
    what: str
    change: str
    anchor: str
    rank: float | None = None


def _noise_sd(ctx: _Context, column: Hashable, low: float, high: float) -> float | None:
    """The noise's standard deviation, from the mechanism the plan's parameters give."""
    from veil.mechanisms import Gaussian, Laplace

    parameters = ctx.parameters(column)
    epsilon = _epsilon(ctx, column)
    if epsilon is None:
        return None
    integer = ctx.original[column].dtype.kind in "iu"
    resolution = parameters.get("resolution")
    try:
        if ctx.method(column) == "laplace":
            mechanism: Any = Laplace(epsilon, low, high, integer=integer, resolution=resolution)
        else:
            delta = float(parameters.get("delta", 0.0))
            calibration = parameters.get("calibration", "classic")
            mechanism = Gaussian(
                epsilon,
                delta,
                low,
                high,
                calibration=calibration,
                integer=integer,
                resolution=resolution,
            )
        return math.sqrt(float(mechanism.variance()))
    except (VeilError, ValueError, TypeError):
        return None


def _bounded_columns(ctx: _Context) -> list[tuple[Hashable, float, float]]:
    out: list[tuple[Hashable, float, float]] = []
    for column in ctx.shared:
        if ctx.method(column) not in ("laplace", "gaussian"):
            continue
        bounds = ctx.parameters(column).get("bounds")
        if not (isinstance(bounds, (list, tuple)) and len(bounds) == 2):
            continue
        if _is_number(ctx.original[column]) and _is_number(ctx.released[column]):
            out.append((column, float(bounds[0]), float(bounds[1])))
    return out


def _clipping(ctx: _Context) -> list[_Finding]:
    findings = []
    for column, low, high in _bounded_columns(ctx):
        before = ctx.original[column].to_numpy(dtype=np.float64, na_value=np.nan)
        after = ctx.released[column].to_numpy(dtype=np.float64, na_value=np.nan)
        before, after = before[np.isfinite(before)], after[np.isfinite(after)]
        if not before.size or not after.size:
            continue
        tolerance = 1e-9 * (high - low)
        on = (float(np.mean(after <= low + tolerance)), float(np.mean(after >= high - tolerance)))
        was = (float(np.mean(before <= low)), float(np.mean(before >= high)))
        outside = float(np.mean((before < low) | (before > high)))
        eps = _epsilon(ctx, column)
        if sum(on) >= _CLIPPED_SHARE and sum(on) - sum(was) >= _CLIPPED_EXCESS:
            sd = _noise_sd(ctx, column, low, high)
            spread = (
                ""
                if sd is None
                else f" (standard deviation {sd:.3g}, {sd / (high - low):.2g} times the width "
                "of the bounds)"
            )
            findings.append(
                _Finding(
                    str(column),
                    f"{_share(on[0])} of the released values sit on the lower bound "
                    f"{_fmt(low)} and {_share(on[1])} on the upper bound {_fmt(high)} "
                    f"(original: {_share(was[0])} and {_share(was[1])}). The noise"
                    f"{spread} pushes values past the bounds, and the release clips them "
                    "there: the column keeps little of its distribution, and its mean is "
                    "biased towards the middle of the bounds.",
                    "Give it more epsilon (the noise shrinks as 1 / ε"
                    + ("" if eps is None else f"; ε = {_fmt(eps)} now")
                    + "), or narrower public bounds if the true values are known to fit "
                    "them; clip_output: false keeps the noised values as drawn (unbiased "
                    "means, values outside the bounds).",
                    "distributions",
                )
            )
        if outside >= _OUTSIDE_SHARE:
            findings.append(
                _Finding(
                    str(column),
                    f"{_share(outside)} of the original values lie outside the public bounds "
                    f"[{_fmt(low)}, {_fmt(high)}] and were moved onto them before the noise.",
                    "Wider public bounds: a range known without reading the data (a "
                    "published reference range, the measuring device's scale).",
                    "distributions",
                )
            )
    return findings


def _moved(ctx: _Context, divergence: _DivergenceReview, flagged: set[str]) -> list[_Finding]:
    findings = []
    for row in divergence.rows:
        if str(row.column) in flagged or row.by_construction or row.shape_tvd < _HIGH_TVD:
            continue
        measured = "on 20 bins" if row.tvd_bins is not None else "of its values"
        what = (
            f"Its distribution moved far: TVD {row.shape_tvd:.2f} {measured}, so "
            f"{_share(row.shape_tvd)} of it is elsewhere in the release."
        )
        if ctx.noised(row.column):
            eps = _epsilon(ctx, row.column)
            change = (
                "More epsilon for it"
                + ("" if eps is None else f" (ε = {_fmt(eps)} now)")
                + ": a larger weight in the budget or an explicit epsilon; or release it "
                "generalized (coarser, but exact) instead of noised."
            )
        else:
            what += " " + _removal_cause(ctx)
            change = _removal_change(ctx)
        findings.append(_Finding(str(row.column), what, change, "divergence"))
    return findings


def _removal_cause(ctx: _Context) -> str:
    """Why records are missing from the release, from what the run recorded."""
    rows = max(ctx.rows_in(), 1)
    causes = [
        f"outside: drop removed {d.count:,} of the {rows:,} records ({_pct(d.count / rows)}) "
        f"whose {_names(list(d.columns))} lie outside the projection"
        + (f" ({d.projection})" if d.projection else "")
        for d in ctx.dropped()
    ]
    if ctx.suppressed():
        suppressed = ctx.suppressed()
        causes.append(
            f"the anonymization suppressed {suppressed:,} records ({_pct(suppressed / rows)})"
        )
    if not causes:
        return "The column is released as it is: the records left out moved it."
    return "The column is released as it is; " + "; ".join(causes) + "."


def _removal_change(ctx: _Context) -> str:
    dropped = ctx.dropped()
    if dropped and sum(d.count for d in dropped) >= ctx.suppressed():
        return (
            "Keep the records a location mask drops: a centre among them, a region or crs "
            "that holds them, or one plan per region."
        )
    return (
        "Fewer suppressed records: a lower k, a higher max_suppression, or coarser "
        "levels of the other quasi-identifiers."
    )


def _located(ctx: _Context, locations: Sequence[_LocationReview]) -> list[_Finding]:
    """Location pairs a nearest-location attacker still links, and records masks dropped."""
    findings = []
    rows = max(ctx.rows_in(), 1)
    for review in locations:
        if review.dropped / rows >= _DROPPED_SHARE:
            findings.append(
                _Finding(
                    review.name,
                    f"outside: drop removed {review.dropped:,} of the {rows:,} records "
                    f"({_pct(review.dropped / rows)}): their location lies outside the "
                    "mask's projection, so they are not in the release at all.",
                    "A public centre among the records, a region or crs that holds them, or "
                    "one plan per region (each with its own centre).",
                    "maps",
                )
            )
        rate = review.reid_rate
        if rate is None or rate < _LINKED_SHARE:
            continue
        shift = review.measures.get("median_shift_m")
        change = _location_edit(ctx, review.name)
        findings.append(
            _Finding(
                review.name,
                f"A nearest-location attacker who holds the true locations re-identifies "
                f"{_pct(rate)} of the released records"
                + ("" if shift is None else f" (median displacement {shift:.0f} m)")
                + ": the mask moves points less than the distance between neighbours.",
                change[:1].upper() + change[1:] + ".",
                "maps",
                rate,
            )
        )
    return findings


def _to_star(ctx: _Context) -> list[_Finding]:
    findings = []
    k = ctx.k()
    for column in ctx.shared:
        if ctx.method(column) not in ("quasi-identifier", "generalize"):
            continue
        values = ctx.released[column].dropna()
        if len(values) and bool((values.astype(str) == "*").all()):
            change = (
                "A higher max_suppression, a hierarchy with more levels before *, or fewer "
                "quasi-identifiers in the anonymization (each one makes the classes "
                "smaller); or drop the column."
            )
            if k is not None:
                change = f"A lower k (k = {k} now), a" + change[1:]
            findings.append(
                _Finding(
                    str(column),
                    "It is generalized to * for every record: nothing of it is released.",
                    change,
                    "distributions",
                )
            )
    return findings


def _nearly_exact(risk: _RiskReview) -> list[_Finding]:
    findings = []
    for column in risk.nearly_exact:
        exact = risk.as_exact
        counted = (
            ""
            if exact is None
            else f" Counted as exact, the release would have {exact.sample_uniques:,} sample "
            "uniques."
        )
        findings.append(
            _Finding(
                str(column),
                f"It is noised, yet the noise left {_share(risk.kept[column])} of its values "
                "unchanged: an attacker who matches on it exactly succeeds for most records, "
                "and the risk figures (which leave noised columns out of the classes) do not "
                f"count it.{counted}",
                "Less epsilon for it (more noise), or generalize it with the anonymization "
                "instead of noising it.",
                "risk",
            )
        )
    return findings


def _singled_out(ctx: _Context, risk: _RiskReview) -> list[_Finding]:
    after = risk.after
    if after is None:
        return []
    limit = 1.0 / risk.k if risk.k is not None else _RISK_THRESHOLD
    if after.sample_uniques == 0 and after.prosecutor_highest <= limit + 1e-12:
        return []
    what = (
        f"After release, {after.sample_uniques:,} records are alone in their class and "
        f"{_share(after.records_above_threshold)} have a prosecutor risk above "
        f"{_RISK_THRESHOLD:g} (highest {after.prosecutor_highest:.3g}) on "
        f"{_names(risk.keys)}, the values an attacker can match."
    )
    if risk.uncovered:
        what += (
            f" {_names(risk.uncovered)} {'is' if len(risk.uncovered) == 1 else 'are'} "
            "released outside the table anonymization, so its k does not cover "
            f"{'it' if len(risk.uncovered) == 1 else 'them'}."
        )
        change = (
            f"Add {_names(risk.uncovered)} to anonymization.quasi_identifiers (with a "
            "hierarchy), or drop or noise them."
        )
    elif ctx.exact_share():
        change = (
            f"Move some of {_names(ctx.exact_share())} from share.quasi_identifiers (exact) "
            "to share.synthesized, or raise share.min_k."
        )
    elif ctx.anonymized():
        change = "A larger k, or coarser hierarchies for the quasi-identifiers."
    else:
        change = (
            "Add an anonymization over these quasi-identifiers (for example "
            "models: [{k_anonymity: 5}]), or noise or drop some of them."
        )
    return [_Finding("re-identification", what, change, "risk", after.records_above_threshold)]


def _disclosed(ctx: _Context, risk: _RiskReview) -> list[_Finding]:
    findings = []
    diverse = _diverse_attributes(ctx)
    for d in risk.disclosure:
        if d.after is None or d.after[2] == 0:
            continue
        _, classes, records = d.after
        example = f" For example, {d.examples[0]}." if d.examples else ""
        change = (
            f"A larger l or t-closeness on {d.column} (t_closeness: {{attribute: {d.column}, "
            "t: 0.2}), or coarser quasi-identifiers."
            if str(d.column) in diverse
            else f"l-diversity on {d.column} in the anonymization (distinct_l_diversity: "
            f"{{attribute: {d.column}, l: 2}}) or t-closeness, or coarser quasi-identifiers."
        )
        findings.append(
            _Finding(
                str(d.column),
                f"{records:,} records are in {classes:,} class{'es' if classes != 1 else ''} "
                "where one value covers at "
                f"least 80 % of the class and exceeds its share in the whole table by "
                f"{_DISCLOSURE_GAIN * 100:.0f} points or more: knowing that someone is in "
                f"such a class reveals their {d.column}.{example}",
                change,
                "risk",
                records / max(len(ctx.released), 1),
            )
        )
    return findings


def _diverse_attributes(ctx: _Context) -> set[str]:
    section = ctx.plan.get("anonymization")
    models = section.get("models") if isinstance(section, Mapping) else None
    return {
        str(m["attribute"])
        for m in (models if isinstance(models, list) else [])
        if isinstance(m, Mapping) and "attribute" in m
    }


def _privacy_warnings(warnings: Sequence[Any]) -> list[_Finding]:
    findings = []
    for item in warnings:
        if isinstance(item, Mapping) and _text(item.get("category")) in _PRIVACY_WARNINGS:
            findings.append(
                _Finding(
                    _text(item.get("category")),
                    _scrub(_text(item.get("message"))),
                    "The warning names what to change; if it is accepted on purpose, say "
                    "so where the release is documented.",
                    "warnings",
                )
            )
    return findings[:_MAX_WARNING_FINDINGS]


def _attacked(ctx: _Context, attacks: _AttackReview | None) -> list[_Finding]:
    """Each attack that beats its baseline by more than the margin (:mod:`.attacks`)."""
    return [
        _Finding(subject, what, change, "attacks", rank)
        for rank, (subject, what, change) in _attack_findings(ctx, attacks)
    ]


def _findings(
    ctx: _Context,
    risk: _RiskReview | None,
    divergence: _DivergenceReview | None,
    locations: Sequence[_LocationReview],
    warnings: Sequence[Any],
    attacks: _AttackReview | None = None,
) -> list[_Finding]:
    """Every finding of the release, in the order the verdict lists them.

    The findings about people at risk come first, ranked by the share of records (or of
    an attack's targets beyond its baseline) each puts at risk, as the verdict ranks what
    is left at risk; the others follow in the order of the checks.
    """
    found = _located(ctx, locations) + _clipping(ctx) + _to_star(ctx)
    if divergence is not None:
        found += _moved(ctx, divergence, {f.subject for f in found})
    if risk is not None and risk.error is None:
        found += _singled_out(ctx, risk) + _nearly_exact(risk) + _disclosed(ctx, risk)
    found += _attacked(ctx, attacks)
    ranked = sorted((f for f in found if f.rank is not None), key=lambda f: -(f.rank or 0.0))
    return ranked + [f for f in found if f.rank is None] + _privacy_warnings(warnings)
