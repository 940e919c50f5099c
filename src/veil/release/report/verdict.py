"""The verdict that opens the release report: one screen in plain words.

What was protected and how, what it cost per record, what is left at risk, what is not
protected, and the findings that need attention (each with what to change). Everything
in it is read from the manifest and from the figures the sections below show.
"""

from __future__ import annotations

import html
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Final

from veil.release.report.attacks import _attack_risks, _AttackReview
from veil.release.report.context import _NOISE, _PSEUDONYMS, _Context
from veil.release.report.findings import _Finding
from veil.release.report.glossary import _term
from veil.release.report.maps import _LocationReview
from veil.release.report.page import _e, _fmt, _link, _names, _pct, _share, _text
from veil.release.report.risk import _RiskReview
from veil.release.report.treatments import _MASK_NAMES, _how

_NOT_PROTECTED: Final[dict[str, str]] = {
    "columns_kept_as_is": "Released exactly, with no guarantee (whoever finds a person's "
    "record or class reads these values): {}.",
    "quasi_identifiers_generalized_only": "Protected by generalization only (a syntactic "
    "guarantee, no ε): {}.",
    "missingness_released_as_is": "Whether a value is missing is released as it is: {}.",
    "masked_without_formal_guarantee": "Changed, but with no formal guarantee: {}.",
    "released_exactly_not_covered_by_dp": "Released exactly and NOT covered by differential "
    "privacy (the share step's exact columns; whoever knows a person's values finds the "
    "records that share them): {}.",
    "carriers_acknowledged": "Carriers of a masked location the plan acknowledges, released "
    "as they are: {}.",
}
# Kinds of the manifest's not_protected that name nothing left unprotected in the release.
_NOT_A_GAP: Final[frozenset[str]] = frozenset({"unlisted_columns_dropped"})


def _model_words(model: Mapping[str, Any]) -> str:
    name = _text(model.get("model"))
    attribute = _text(model.get("attribute"))
    if name == "k_anonymity":
        return f"every combination of values is shared by at least {model.get('k')} records"
    if name.endswith("l_diversity"):
        kind = name.removesuffix("_l_diversity").replace("_", " ")
        return f"each class holds at least {model.get('l')} {kind} {attribute} values"
    if name == "t_closeness":
        return (
            f"each class's {attribute} distribution is within {model.get('t')} of the whole table's"
        )
    rest = ", ".join(f"{k} = {_text(v)}" for k, v in model.items() if k != "model")
    return f"{name.replace('_', ' ')} ({rest})"


def _anonymization_item(ctx: _Context, columns: list[Hashable]) -> str:
    section = ctx.plan.get("anonymization")
    models = section.get("models") if isinstance(section, Mapping) else None
    rule = "; ".join(_model_words(m) for m in models or [] if isinstance(m, Mapping))
    how = "; ".join(f"{c} {_how(ctx, c).split(': ', 1)[-1]}" for c in columns)
    text = f"Generalized together ({_term('k-anonymity')}"
    text += f"): {html.escape(rule)}. " if rule else "). "
    text += html.escape(how) + "."
    suppressed = ctx.suppressed()
    if suppressed:
        share = suppressed / max(ctx.rows_in(), 1)
        text += f" {suppressed:,} records ({_share(share)}) were suppressed."
    return text


def _protected(ctx: _Context) -> list[str]:
    groups: dict[str, list[Hashable]] = {}
    for column in ctx.steps:
        method = ctx.method(column)
        kind = (
            "noise"
            if method in _NOISE
            else "pseudonym"
            if method in _PSEUDONYMS
            else "location"
            if method in _MASK_NAMES
            else method
        )
        groups.setdefault(kind, []).append(column)
    items = []
    if groups.get("drop"):
        items.append(html.escape(f"Removed: {_names(groups['drop'])}."))
    if groups.get("pseudonym"):
        named = [f"{c} ({ctx.method(c)})" for c in groups["pseudonym"]]
        items.append(
            html.escape(
                f"Pseudonymized or redacted: {_names(named)}; keyed pseudonyms stay linkable "
                "by whoever holds the key (personal data, not anonymous)."
            )
        )
    if groups.get("quasi-identifier"):
        items.append(_anonymization_item(ctx, groups["quasi-identifier"]))
    if groups.get("generalize"):
        named = [f"{c} {_how(ctx, c).split(': ', 1)[-1]}" for c in groups["generalize"]]
        items.append(
            html.escape(f"Generalized on their own, with no k guarantee: {'; '.join(named)}.")
        )
    if groups.get("noise"):
        named = [f"{c} ({_how(ctx, c)})" for c in groups["noise"]]
        items.append(
            f"Noised under {_term('ldp', 'local DP')}: " + html.escape("; ".join(named)) + "."
        )
    if groups.get("location"):
        named = [f"{c}: {_how(ctx, c)}" for c in groups["location"]]
        dropped = [
            f"{d.count:,} records whose {_names(list(d.columns))} lie outside the projection "
            "were dropped"
            for d in ctx.dropped()
        ]
        items.append("Locations: " + html.escape("; ".join(named + dropped)) + ".")
    known = {"drop", "pseudonym", "quasi-identifier", "generalize", "noise", "location", "keep"}
    others = [c for kind, columns in groups.items() if kind not in known for c in columns]
    for other in map(str, others):
        if other == "table (anonymization)":
            continue
        guarantee = _text(ctx.steps[other].get("guarantee")) or ctx.method(other)
        items.append(html.escape(f"{other} ({ctx.method(other)}): {guarantee}."))
    if not items and not ctx.manifest:
        return ["No manifest was given: what was done to each column is not known here."]
    return items or ["The manifest records no treatment."]


def _cost(ctx: _Context) -> str:
    totals = ctx.manifest.get("totals")
    totals = totals if isinstance(totals, Mapping) else {}
    parts = []
    ldp = totals.get("ldp")
    if isinstance(ldp, Mapping) and float(ldp.get("epsilon") or 0.0) > 0:
        text = f"ε = {_fmt(ldp['epsilon'])} per record"
        if ldp.get("delta"):
            text += f", δ = {_fmt(ldp['delta'])}"
        if ldp.get("budget_epsilon") is not None:
            text += f" (budget {_fmt(ldp['budget_epsilon'])})"
        parts.append(
            f"{html.escape(text)} under {_term('ldp', 'local DP')}, summed over the "
            f"noised columns by {_term('composition', 'sequential composition')}"
        )
    metric = totals.get("metric")
    if isinstance(metric, Mapping) and float(metric.get("epsilon") or 0.0) > 0:
        parts.append(
            f"ε = {_e(_fmt(metric['epsilon']))} per metre for the locations "
            f"({_term('geo-ind', 'geo-indistinguishability')})"
        )
    synthetic = totals.get("synthetic")
    if isinstance(synthetic, Mapping) and float(synthetic.get("epsilon") or 0.0) > 0:
        text = f"ε = {_fmt(synthetic['epsilon'])}"
        if synthetic.get("delta"):
            text += f", δ = {_fmt(synthetic['delta'])}"
        parts.append(html.escape(text + " per dataset for the DP synthetic part (central DP)"))
    syntactic = totals.get("syntactic")
    if syntactic:
        parts.append(f"{_e(_text_list(syntactic))} (syntactic: no ε)")
    if not parts and not totals:
        return "Not known: no manifest was given, so no cost and no guarantee is claimed."
    if not parts:
        return "Nothing is randomized and no syntactic model is applied: no guarantee is claimed."
    return "; ".join(parts) + "."


def _text_list(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "; ".join(_text(v) for v in value)
    return _text(value)


def _at_risk(
    ctx: _Context,
    risk: _RiskReview | None,
    places: Sequence[_LocationReview],
    attacks: _AttackReview | None = None,
) -> list[str]:
    """What is left at risk, the largest share of records first.

    Each measure that the sections below show gives one item with the share of the
    records it puts at risk: records alone in their class or above the risk threshold,
    records whose class reveals a sensitive value, records a nearest-location attacker
    re-identifies, the share of an attack's targets it wins beyond its baseline (an attack
    on the shadow release that beats its baseline by more than the margin). Ranking by
    those shares puts the main risk first, whatever it is.
    """
    ranked: list[tuple[float, str]] = [(share, text) for share, text in _location_risks(places)]
    ranked.extend(_attack_risks(attacks))
    if risk is None:
        ranked.append(
            (
                -1.0,
                "Re-identification risk on the quasi-identifiers is not measured (the "
                "plan's evaluation.metrics leaves out risk).",
            )
        )
    elif not risk.qis:
        text = "No column is declared a quasi-identifier: linkage on exact values is not measured"
        text += "; the locations are measured above." if places else "."
        ranked.append((-1.0, html.escape(text)))
    elif risk.error is not None:
        ranked.append((2.0, f"The risk could not be computed: {_e(risk.error)}."))
    else:
        ranked.extend(_class_risks(ctx, risk))
    ranked.sort(key=lambda item: -item[0])
    return [text for _, text in ranked]


def _location_risks(places: Sequence[_LocationReview]) -> list[tuple[float, str]]:
    out = []
    for review in places:
        if review.error is not None:
            out.append((2.0, html.escape(f"{review.name}: linkage not measured ({review.error}).")))
            continue
        rate = review.reid_rate
        if rate is None:
            continue
        k_low = review.measures.get("k_below_5_share")
        text = (
            f"{review.name}: a nearest-location attacker who holds the true locations "
            f"re-identifies {_pct(rate)} of the released records"
        )
        if k_low is not None:
            text += f"; {_pct(float(k_low))} hide among fewer than 5 true locations"
        out.append((rate, html.escape(text) + " (" + _link("maps", "Locations") + ")."))
    return out


def _class_risks(ctx: _Context, risk: _RiskReview) -> list[tuple[float, str]]:
    items: list[tuple[float, str]] = []
    after, before = risk.after, risk.before
    if after is not None and before is not None:
        smallest = round(1.0 / after.prosecutor_highest) if after.prosecutor_highest else 0
        text = (
            html.escape(
                f"On {_names(risk.keys)}, what an attacker can match: the smallest class "
                f"holds {smallest:,} record{'s' if smallest != 1 else ''} (highest "
            )
            + _term("prosecutor", "prosecutor risk")
            + html.escape(
                f" {after.prosecutor_highest:.3g}), {after.sample_uniques:,} records are alone "
                f"in their class (before release: {before.sample_uniques:,}, highest risk "
                f"{before.prosecutor_highest:.3g})."
            )
        )
        items.append((float(after.records_above_threshold), text))
    else:
        items.append(
            (
                0.0,
                "No quasi-identifier is released exactly: no record can be matched on exact "
                "values.",
            )
        )
    if risk.noised:
        items.append(
            (
                0.0,
                html.escape(
                    f"{_names(risk.noised)}: noised, not matchable exactly; protected by their ε."
                ),
            )
        )
    if risk.synthesized:
        items.append(
            (
                0.0,
                html.escape(
                    f"{_names(risk.synthesized)}: DP synthetic values, not a person's own; "
                    "not matchable, covered by the synthetic ε."
                ),
            )
        )
    items.extend(_disclosure_risks(ctx, risk))
    return items


def _disclosure_risks(ctx: _Context, risk: _RiskReview) -> list[tuple[float, str]]:
    real = [(d.column, d.after[2]) for d in risk.disclosure if d.after is not None and d.after[2]]
    if real:
        named = [f"{c} ({n:,} records)" for c, n in real]
        share = max(n for _, n in real) / max(len(ctx.released), 1)
        return [
            (
                share,
                _term("homogeneity", "Attribute disclosure")
                + html.escape(f": classes reveal {_names(named)} beyond the base rate."),
            )
        ]
    if not risk.disclosure:
        return []
    majority = [
        f"{d.column} = {_text(d.majority)} for {_share(d.majority_share)} of all records"
        for d in risk.disclosure
        if d.after is not None and d.after[0] and d.majority_share >= 0.8
    ]
    text = "No class reveals a sensitive value beyond its base rate"
    if majority:
        text += (
            f" (homogeneous classes on majority values, such as {majority[0]}, repeat "
            "what the whole table shows)"
        )
    return [(0.0, html.escape(text + "."))]


def _not_protected(ctx: _Context) -> list[str]:
    value = ctx.manifest.get("not_protected", ctx.manifest.get("unprotected"))
    items = []
    if isinstance(value, Mapping):
        for kind, columns in value.items():
            if not columns or kind in _NOT_A_GAP:
                continue
            listed = columns if isinstance(columns, (list, tuple)) else [columns]
            # A kind this report does not know still says what it lists, never "covered".
            words = _NOT_PROTECTED.get(kind, str(kind).replace("_", " ").capitalize() + ": {}.")
            items.append(words.format(_names(listed)))
    exact = [c for c in ctx.exact_share() if not any(c in i for i in items)]
    if exact:
        items.append(_NOT_PROTECTED["released_exactly_not_covered_by_dp"].format(_names(exact)))
    leaks = ctx.manifest.get("leaks")
    if isinstance(leaks, (list, tuple)) and leaks:
        items.append("Leaks the plan accepts: " + "; ".join(_text(x) for x in leaks) + ".")
    if not items and not ctx.manifest:
        return ["Not known: no manifest was given, so no column is known to be covered."]
    return [html.escape(i) for i in items] or ["Every released column is covered by a treatment."]


def _flags(findings: Sequence[_Finding]) -> str:
    if not findings:
        return (
            '<div class="ok">Nothing needs attention: no noised column is stuck at its bounds '
            "or far from its distribution, no quasi-identifier is generalized to *, no record "
            "is singled out on what an attacker can match, no class reveals a sensitive value "
            "beyond its base rate, no attack the run made beats its baseline by more than "
            "the margin, and the run raised no privacy warning.</div>"
        )
    items = "".join(
        f'<li class="flag"><b>{_e(f.subject)}</b>: {_e(f.what)}'
        f'<span class="change"><b>What to change:</b> {_e(f.change)} '
        f"{_link(f.anchor, 'details')}</span></li>"
        for f in findings
    )
    return f'<ul class="flags">{items}</ul>'


def _findings_section(findings: Sequence[_Finding]) -> str:
    """The findings, each with what to change and a link to the figures behind it."""
    return _flags(findings)


def _verdict_section(
    ctx: _Context,
    risk: _RiskReview | None,
    places: Sequence[_LocationReview],
    findings: Sequence[_Finding],
    attacks: _AttackReview | None = None,
) -> str:
    count = len(findings)
    where = _link("attention", "Needs attention")
    if count:
        s, verb = ("s", "need") if count != 1 else ("", "needs")
        headline = f"{count} finding{s} {verb} attention, each with what to change: see {where}."
    else:
        headline = f"Nothing needs attention: every check passed (see {where})."
    blocks = [
        ("What was protected, and how", _protected(ctx)),
        ("Cost, per record, per metre or per dataset", [_cost(ctx)]),
        ("What is left at risk, the largest first", _at_risk(ctx, risk, places, attacks)),
        ("What is not protected", _not_protected(ctx)),
    ]
    body = "".join(
        f"<h3>{html.escape(title)}</h3><ul>{''.join(f'<li>{i}</li>' for i in items)}</ul>"
        for title, items in blocks
    )
    return f'<div class="verdict"><p><b>{headline}</b></p>{body}</div>'
