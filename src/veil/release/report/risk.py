"""The re-identification risk of the release report, measured on what an attacker can
match: risk before and after, the equivalence-class size profile and attribute
disclosure, with base-rate homogeneity told apart from real disclosure.

After release, the classes are formed by the quasi-identifiers an attacker can match
exactly: those released as they are or generalized. A noised quasi-identifier (local
DP) is not a class key: an attacker who knows a person's true age does not find it in a
noised column, and counting noised values as exact would report as "unique" records
that are unique only on their noise. Its protection is the local-DP guarantee, shown in
the ledger; the report says how often the noise left the value unchanged (a channel
that keeps most values is nearly exact, and flagged). A pseudonymized or redacted
quasi-identifier is no key either (its values are not the ones the attacker knows).
"""

from __future__ import annotations

import html
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import pandas as pd

from veil.release.report.context import _Context
from veil.release.report.glossary import _explained, _term
from veil.release.report.page import _attempt, _names, _p, _pct, _share, _table, _text
from veil.release.report.plots import _ORIGINAL_COLOUR, _RELEASED_COLOUR, _figure, _img
from veil.risk import RiskSummary, attribute_disclosure, record_risk
from veil.risk import summary as risk_summary

_RISK_THRESHOLD: Final[float] = 0.2
_DISCLOSURE_THRESHOLD: Final[float] = 0.8
# A homogeneous class is real disclosure when its value's share exceeds the value's
# share in the whole table by at least this much (else it repeats the base rate).
_DISCLOSURE_GAIN: Final[float] = 0.2
# A noised quasi-identifier that keeps at least this share of its values unchanged is
# nearly exact: an attacker matching on it exactly succeeds for nearly every record.
_NEARLY_EXACT: Final[float] = 0.9
_CLASS_SIZE_EDGES: Final[tuple[int, ...]] = (1, 2, 3, 5, 10, 20)
_EXAMPLES: Final[int] = 3


@dataclass
class _Disclosure:
    """Homogeneous classes of one sensitive column, before and after release."""

    column: Hashable
    majority: Any = None
    majority_share: float = float("nan")
    before: tuple[int, int, int] = (0, 0, 0)  # records, real-disclosure classes, records
    after: tuple[int, int, int] | None = None
    examples: list[str] = field(default_factory=list)
    note: str | None = None


@dataclass
class _RiskReview:
    """The risk figures of a release, computed once for the verdict and the section."""

    qis: list[Hashable]
    keys: list[Hashable]
    noised: list[Hashable]
    pseudonymized: list[Hashable]
    missing: list[Hashable]
    uncovered: list[Hashable]
    k: int | None
    before: RiskSummary | None = None
    after: RiskSummary | None = None
    as_exact: RiskSummary | None = None
    kept: dict[Hashable, float] = field(default_factory=dict)
    disclosure: list[_Disclosure] = field(default_factory=list)
    error: str | None = None
    synthesized: list[Hashable] = field(default_factory=list)

    @property
    def nearly_exact(self) -> list[Hashable]:
        return [q for q, share in self.kept.items() if share >= _NEARLY_EXACT]


def _review_risk(ctx: _Context, qis: list[Hashable], sensitive: list[Hashable]) -> _RiskReview:
    """Risk before (on every quasi-identifier) and after (on the attacker's keys)."""
    released = [q for q in qis if q in ctx.released.columns]
    noised = [q for q in released if ctx.noised(q)]
    pseudonymized = [q for q in released if ctx.pseudonymized(q)]
    # A synthesized quasi-identifier (the share step's S) is drawn from a DP model: its
    # released value is not the person's own, so it is no class key either.
    synthesized = [q for q in released if ctx.synthesized(q)]
    keys = [q for q in released if q not in noised + pseudonymized + synthesized]
    anonymized = ctx.anonymized()
    uncovered = [q for q in keys if anonymized and str(q) not in anonymized]
    review = _RiskReview(
        qis,
        keys,
        noised,
        pseudonymized,
        [q for q in qis if q not in released],
        uncovered,
        ctx.k() if anonymized else None,
        synthesized=synthesized,
    )
    if not qis:
        return review
    try:
        review.before = risk_summary(ctx.original, qis, threshold=_RISK_THRESHOLD)
        if keys and len(ctx.released):
            review.after = risk_summary(ctx.released, keys, threshold=_RISK_THRESHOLD)
        if noised and len(ctx.released):
            exact = keys + noised
            review.as_exact = risk_summary(ctx.released, exact, threshold=_RISK_THRESHOLD)
        review.kept = _kept_shares(ctx, noised)
        review.disclosure = [_disclosure(ctx, qis, keys, column) for column in sensitive]
    except (ValueError, TypeError) as exc:
        review.error = str(exc)
    return review


def _kept_shares(ctx: _Context, noised: list[Hashable]) -> dict[Hashable, float]:
    """Per noised quasi-identifier, the share of records whose value the noise kept."""
    matched = ctx.matched() if noised else None
    if matched is None:
        return {}
    before, after = matched
    shares: dict[Hashable, float] = {}
    for column in noised:
        same = (before[column] == after[column]) | (before[column].isna() & after[column].isna())
        shares[column] = float(same.mean()) if len(same) else float("nan")
    return shares


def _homogeneous(
    frame: pd.DataFrame, keys: list[Hashable], column: Hashable
) -> tuple[tuple[int, int, int], pd.DataFrame]:
    """(records in homogeneous classes, real-disclosure classes, their records) and them."""
    classes = attribute_disclosure(frame, keys, column, threshold=_DISCLOSURE_THRESHOLD)
    base = frame[column].value_counts(normalize=True, dropna=False)
    rates = base.reindex(pd.Index(classes["sensitive_value"])).to_numpy(dtype=np.float64)
    real = classes[classes["share"].to_numpy(dtype=np.float64) - rates >= _DISCLOSURE_GAIN]
    figures = (int(classes["size"].sum()), len(real), int(real["size"].sum()))
    return figures, real


def _disclosure(
    ctx: _Context, qis: list[Hashable], keys: list[Hashable], column: Hashable
) -> _Disclosure:
    if column in qis:
        return _Disclosure(column, note="is a quasi-identifier")
    counts = ctx.original[column].value_counts(normalize=True, dropna=False)
    result = _Disclosure(column, counts.index[0], float(counts.iloc[0]))
    result.before, _ = _homogeneous(ctx.original, qis, column)
    if column not in ctx.released.columns:
        result.note = "not released"
        return result
    if not keys or not len(ctx.released):
        result.note = "no quasi-identifier an attacker can match is released"
        return result
    if ctx.noised(column):
        result.note = "noised: a released value is not the person's own"
        return result
    if ctx.synthesized(column):
        result.note = "DP synthetic: a released value is not the person's own"
        return result
    result.after, real = _homogeneous(ctx.released, keys, column)
    for row in real.head(_EXAMPLES).to_dict("records"):
        where = ", ".join(f"{k} {_text(row[k])}" for k in keys)
        result.examples.append(
            f"{column} = {_text(row['sensitive_value'])} for {_share(float(row['share']))} of "
            f"the {int(row['size']):,} records with {where}"
        )
    return result


# ----------------------------------------------------------------------------- section


def _risk_section(ctx: _Context, review: _RiskReview) -> str:
    if not review.qis:
        return _p("No quasi-identifiers were declared: re-identification risk is not measured.")
    parts = [_p("Quasi-identifiers (facts an attacker may know): " + _names(review.qis) + ".")]
    parts.append(_p(_keys_sentence(review)))
    if review.error is not None:
        return "".join(parts) + _p(f"Not computed: {review.error}", "error")
    parts.append(_risk_table(review))
    if review.as_exact is not None:
        parts.append(
            _p(
                "Counting the noised values as if they were exact (which an attacker cannot "
                f"match) would give {review.as_exact.sample_uniques:,} sample uniques "
                f"({_pct(review.as_exact.sample_uniqueness)}): records unique only on the "
                "noise drawn for them. They are not the risk; the noised columns' "
                "protection is their local-DP guarantee.",
                "muted",
            )
        )
    if review.uncovered and review.k is not None:
        parts.append(
            _p(
                f"{_names(review.uncovered)} {'is' if len(review.uncovered) == 1 else 'are'} "
                "released exactly or generalized on their own, outside the table "
                f"anonymization: its k = {review.k} covers {_names(_covered(review))} only, "
                "so classes on every key can be smaller than k.",
                "muted",
            )
        )
    parts.append(_attempt(lambda: _class_size_figure(ctx, review)))
    if review.disclosure:
        parts.append("<h3>Attribute disclosure</h3>")
        parts.append(_disclosure_table(review))
    return "".join(parts)


def _covered(review: _RiskReview) -> list[Hashable]:
    return [q for q in review.keys if q not in review.uncovered]


def _keys_sentence(review: _RiskReview) -> str:
    if review.keys:
        text = (
            "After release, the classes are formed by what an attacker can match exactly: "
            + _names(review.keys)
            + "."
        )
    else:
        text = (
            "No quasi-identifier is released as it is or generalized: an attacker has "
            "nothing to match exactly, so no class is formed after release."
        )
    if review.noised:
        kept = [
            f"{q} ({_share(review.kept[q])} of values unchanged by the noise)"
            if q in review.kept
            else str(q)
            for q in review.noised
        ]
        text += (
            " Noised under local DP, so not class keys: " + _names(kept) + ": their "
            "protection is the local-DP guarantee (see the ledger)."
        )
    if review.synthesized:
        text += (
            " Replaced by DP synthetic values (the share step), so not class keys: "
            + _names(review.synthesized)
            + "."
        )
    if review.pseudonymized:
        text += (
            " Pseudonymized or redacted, so not matchable on the values an attacker knows: "
            + _names(review.pseudonymized)
            + "."
        )
    if review.missing:
        text += " Not released: " + _names(review.missing) + "."
    return text


def _risk_table(review: _RiskReview) -> str:
    before, after = review.before, review.after

    def cell(attr: str, pct: bool = False) -> tuple[Any, Any]:
        b = None if before is None else getattr(before, attr)
        a = None if after is None else getattr(after, attr)
        return (_pct(b), _pct(a)) if pct else (b, a)

    rows = [
        ("records", "", *cell("n_records")),
        (
            _term("class", "equivalence classes"),
            "groups of records sharing their values",
            *cell("n_classes"),
        ),
        (_term("sample-uniques"), "records alone in their class", *cell("sample_uniques")),
        (
            "sample uniqueness",
            "the same, as a share of the records",
            *cell("sample_uniqueness", pct=True),
        ),
        (
            _term("prosecutor", "prosecutor risk, highest"),
            "1 / the smallest class",
            *cell("prosecutor_highest"),
        ),
        (
            _term("prosecutor", "prosecutor risk, average"),
            "mean over records of 1 / their class size",
            *cell("prosecutor_average"),
        ),
        (
            f"records with prosecutor risk > {_RISK_THRESHOLD:g}",
            f"records in classes of fewer than {round(1 / _RISK_THRESHOLD)}",
            *cell("records_above_threshold", pct=True),
        ),
        (
            _term("journalist", "journalist risk, highest"),
            "needs a sampling fraction: not measured",
            *cell("journalist_highest"),
        ),
        (
            _term("marketer", "marketer risk"),
            "expected share of records re-identified by linking them all",
            *cell("marketer", pct=True),
        ),
    ]
    header = [
        "measure",
        "what it means",
        "before (every quasi-identifier)",
        "after (attacker's keys)",
    ]
    return _table(header, rows, full=True) + _explained(
        ["class", "sample-uniques", "prosecutor", "journalist", "marketer"]
    )


def _class_size_figure(ctx: _Context, review: _RiskReview) -> str:
    edges = np.array([*_CLASS_SIZE_EDGES, np.inf])
    labels = ["1", "2", "3-4", "5-9", "10-19", "20+"]
    samples = [(ctx.original, review.qis, "original", _ORIGINAL_COLOUR)]
    if review.keys and len(ctx.released):
        samples.append((ctx.released, review.keys, "released", _RELEASED_COLOUR))
    fig = _figure(6.0, 2.6, constrained=False)
    fig.subplots_adjust(left=0.12, right=0.97, bottom=0.2, top=0.95)
    ax = fig.subplots()
    x = np.arange(len(labels))
    width = 0.8 / len(samples)
    for j, (frame, columns, label, colour) in enumerate(samples):
        sizes = np.rint(1.0 / record_risk(frame, columns).to_numpy(dtype=np.float64))
        bucket = np.searchsorted(edges, sizes, side="right") - 1
        shares = np.bincount(bucket, minlength=len(labels))[: len(labels)] / max(sizes.size, 1)
        ax.bar(
            x + (j - (len(samples) - 1) / 2) * width, shares, width=width, color=colour, label=label
        )
    ax.set_xticks(x, labels)
    ax.set_xlabel("size of the record's equivalence class")
    ax.set_ylabel("share of records")
    ax.legend(fontsize=8)
    return f"<figure>{_img(fig, 'records by equivalence-class size, before and after')}</figure>"


def _disclosure_table(review: _RiskReview) -> str:
    rows: list[tuple[Any, ...]] = []
    examples: list[str] = []
    for d in review.disclosure:
        if d.note == "is a quasi-identifier":
            rows.append((d.column, "is a quasi-identifier", None, None, None, None))
            continue
        majority = f"{_text(d.majority)} ({_share(d.majority_share)})"
        after: tuple[Any, Any] = (d.note, None) if d.after is None else _split(d.after)
        rows.append((d.column, majority, *_split(d.before), *after))
        examples.extend(d.examples)
    header = [
        "sensitive column",
        "most common value (share of all records)",
        "records in homogeneous classes, before",
        "of which real disclosure, before",
        "records in homogeneous classes, after",
        "of which real disclosure, after",
    ]
    parts = [_table(header, rows, full=True)]
    if examples:
        parts.append(
            "<p>Real disclosure after release, for example:</p><ul>"
            + "".join(f"<li>{html.escape(e)}</li>" for e in examples)
            + "</ul>"
        )
    parts.append(
        _p(
            f"A class is homogeneous when one sensitive value covers at least "
            f"{_DISCLOSURE_THRESHOLD:.0%} of its records (a class of one record always is). "
            "When that value is the one most records hold anyway (95 % of all records have "
            "stroke = 0, say), the class tells an attacker no more than the table as a "
            f"whole: only classes where the value's share exceeds its overall share by "
            f"{_DISCLOSURE_GAIN * 100:.0f} points or more count as real disclosure.",
            "muted",
        )
    )
    return "".join(parts) + _explained(["homogeneity"])


def _split(figures: tuple[int, int, int]) -> tuple[int, str]:
    records, classes, real = figures
    if not classes:
        return records, "none"
    return records, f"{real:,} records in {classes:,} class{'es' if classes != 1 else ''}"
