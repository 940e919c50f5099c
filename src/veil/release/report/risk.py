"""The re-identification risk section of the release report: risk measures before
and after, the equivalence-class size profile and attribute disclosure.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Final

import numpy as np

from veil.release.report.context import _Context
from veil.release.report.page import _attempt, _p, _pct, _table
from veil.release.report.plots import _ORIGINAL_COLOUR, _RELEASED_COLOUR, _figure, _img
from veil.risk import attribute_disclosure, record_risk
from veil.risk import summary as risk_summary

_RISK_THRESHOLD: Final[float] = 0.2
_DISCLOSURE_THRESHOLD: Final[float] = 0.8
_CLASS_SIZE_EDGES: Final[tuple[int, ...]] = (1, 2, 3, 5, 10, 20)


def _risk_section(ctx: _Context, qis: list[Hashable], sensitive: list[Hashable]) -> str:
    if not qis:
        return _p("No quasi-identifiers were declared: re-identification risk is not measured.")
    after_qis = [q for q in qis if q in ctx.released.columns]
    parts = [
        _p(
            "Quasi-identifiers: " + ", ".join(map(str, qis)) + ". A record's prosecutor risk "
            "is 1 / the size of its equivalence class (records sharing its quasi-identifier "
            "values)."
        )
    ]
    missing = [q for q in qis if q not in after_qis]
    if missing:
        parts.append(
            _p("Not released, so not linkable after release: " + ", ".join(map(str, missing)))
        )

    def build() -> str:
        before = risk_summary(ctx.original, qis, threshold=_RISK_THRESHOLD)
        after = (
            risk_summary(ctx.released, after_qis, threshold=_RISK_THRESHOLD)
            if after_qis and len(ctx.released)
            else None
        )

        def cell(attr: str, pct: bool = False) -> tuple[Any, Any]:
            b = getattr(before, attr)
            a = None if after is None else getattr(after, attr)
            return (_pct(b), _pct(a)) if pct else (b, a)

        rows = [
            ("records", *cell("n_records")),
            ("equivalence classes", *cell("n_classes")),
            ("sample uniques (records alone in their class)", *cell("sample_uniques")),
            ("sample uniqueness", *cell("sample_uniqueness", pct=True)),
            ("prosecutor risk, highest", *cell("prosecutor_highest")),
            ("prosecutor risk, average", *cell("prosecutor_average")),
            (
                f"records with prosecutor risk > {_RISK_THRESHOLD:g}",
                *cell("records_above_threshold", pct=True),
            ),
            ("journalist risk, highest", *cell("journalist_highest")),
            ("marketer risk (expected share re-identified)", *cell("marketer", pct=True)),
        ]
        table = _table(["measure", "before", "after"], rows)
        note = _p(
            "Journalist risk needs a population table or sampling fraction and is not "
            "measured here (—). After release, generalized or noisy quasi-identifier values "
            "form the classes as released.",
            "muted",
        )
        return table + note + _class_size_figure(ctx, qis, after_qis)

    parts.append(_attempt(build))
    if sensitive:
        parts.append("<h3>Attribute disclosure</h3>")
        parts.append(_attempt(lambda: _disclosure_table(ctx, qis, after_qis, sensitive)))
    return "".join(parts)


def _class_size_figure(ctx: _Context, qis: list[Hashable], after_qis: list[Hashable]) -> str:
    edges = np.array([*_CLASS_SIZE_EDGES, np.inf])
    labels = ["1", "2", "3-4", "5-9", "10-19", "20+"]
    samples = [(ctx.original, qis, "original", _ORIGINAL_COLOUR)]
    if after_qis and len(ctx.released):
        samples.append((ctx.released, after_qis, "released", _RELEASED_COLOUR))
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


def _disclosure_table(
    ctx: _Context, qis: list[Hashable], after_qis: list[Hashable], sensitive: list[Hashable]
) -> str:
    rows: list[tuple[Any, ...]] = []
    for column in sensitive:
        if column in qis:
            rows.append((column, "is a quasi-identifier", None, None, None))
            continue
        before = attribute_disclosure(ctx.original, qis, column, threshold=_DISCLOSURE_THRESHOLD)
        b_share = float(before["size"].sum()) / max(len(ctx.original), 1)
        if column in ctx.released.columns and after_qis and len(ctx.released):
            after = attribute_disclosure(
                ctx.released, after_qis, column, threshold=_DISCLOSURE_THRESHOLD
            )
            a_classes: Any = len(after)
            a_share = _pct(float(after["size"].sum()) / len(ctx.released))
        else:
            a_classes, a_share = None, "not released"
        rows.append((column, len(before), _pct(b_share), a_classes, a_share))
    table = _table(
        [
            "sensitive column",
            "homogeneous classes before",
            "records in them before",
            "homogeneous classes after",
            "records in them after",
        ],
        rows,
    )
    return table + _p(
        f"A class is homogeneous when one sensitive value covers at least "
        f"{_DISCLOSURE_THRESHOLD:.0%} of it: knowing someone is in it reveals that value "
        "(classes of one record always are).",
        "muted",
    )
