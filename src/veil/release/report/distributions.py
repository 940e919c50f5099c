"""The distribution section of the release report: each column drawn before and after,
as its type (see :mod:`veil.release.report.kinds`), with what was done to it in words.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from typing import Final

from veil.release.report.context import _Context
from veil.release.report.kinds import _drawn, _is_number
from veil.release.report.page import _attempt, _e, _p, _table
from veil.release.report.plots import (
    _ORIGINAL_COLOUR,
    _RELEASED_COLOUR,
    _bars,
    _category_shares,
    _edges,
    _figure,
    _finite,
    _histogram,
    _img,
    _label,
)
from veil.release.report.treatments import _how

# Columns drawn in the distribution section.
_MAX_PLOTTED_COLUMNS: Final[int] = 60


def _distribution_section(ctx: _Context) -> str:
    columns = [c for c in ctx.shared if c not in ctx.location_columns]
    parts: list[str] = []
    dropped = [c for c in ctx.original.columns if c not in ctx.released.columns]
    if dropped:
        parts.append(_p("Not released: " + ", ".join(map(str, dropped)) + "."))
    if len(columns) > _MAX_PLOTTED_COLUMNS:
        parts.append(
            _p(f"Only the first {_MAX_PLOTTED_COLUMNS} of {len(columns)} columns are drawn.")
        )
        columns = columns[:_MAX_PLOTTED_COLUMNS]
    figures = []
    hidden = []
    for column in columns:
        if ctx.identifier_like(column) or ctx.pseudonymized(column):
            hidden.append(
                (
                    column,
                    _how(ctx, column) or "—",
                    int(ctx.original[column].nunique()),
                    int(ctx.released[column].nunique()) if len(ctx.released) else 0,
                )
            )
            continue
        figures.append(_attempt(functools.partial(_distribution_figure, ctx, column)))
    if figures:
        parts.append('<div class="grid">' + "".join(figures) + "</div>")
    if hidden:
        parts.append(
            "<h3>Identifiers and pseudonyms (values not shown)</h3>"
            + _table(["column", "treatment", "distinct before", "distinct after"], hidden)
        )
    if not columns:
        parts.append(_p("No column is present in both tables."))
    return "".join(parts)


def _distribution_figure(ctx: _Context, column: Hashable) -> str:
    drawn = _drawn(ctx.original[column], ctx.released[column])
    fig = _figure(5.6, 2.9, constrained=drawn.kind == "mixed")
    if drawn.kind == "numbers":
        fig.subplots_adjust(left=0.13, right=0.97, bottom=0.17, top=0.87)
        b, a = _finite(drawn.before), _finite(drawn.after)
        ax = fig.subplots()
        _histogram(
            ax, [(b, "original", _ORIGINAL_COLOUR), (a, "released", _RELEASED_COLOUR)], _edges(b, a)
        )
        ax.legend(fontsize=8)
    elif drawn.kind != "mixed":
        fig.subplots_adjust(left=0.33, right=0.97, bottom=0.17, top=0.87)
        ax = fig.subplots()
        _bars(
            ax,
            [
                (_category_shares(drawn.before), "original", _ORIGINAL_COLOUR),
                (_category_shares(drawn.after), "released", _RELEASED_COLOUR),
            ],
            drawn.order,
        )
        ax.legend(fontsize=8)
    else:
        left, right = fig.subplots(1, 2)
        for ax, series, label, colour in (
            (left, drawn.before, "original", _ORIGINAL_COLOUR),
            (right, drawn.after, "released", _RELEASED_COLOUR),
        ):
            if _is_number(series):
                values = _finite(series)
                _histogram(ax, [(values, label, colour)], _edges(values))
            else:
                _bars(ax, [(_category_shares(series), label, colour)])
            ax.set_title(label, fontsize=9)
    fig.suptitle(_label(column, 60), fontsize=10)
    how = _how(ctx, column)
    caption = _e(column) + (f' <span class="muted">({_e(how)})</span>' if how else "")
    if drawn.note:
        caption += f' <span class="muted">{_e(drawn.note)}</span>'
    missing = (int(ctx.original[column].isna().sum()), int(ctx.released[column].isna().sum()))
    if any(missing):
        caption += (
            f' <span class="muted">missing: {missing[0]:,} before, {missing[1]:,} after</span>'
        )
    image = _img(fig, f"distribution of {column}")
    return f'<figure data-kind="{drawn.kind}">{image}<figcaption>{caption}</figcaption></figure>'
