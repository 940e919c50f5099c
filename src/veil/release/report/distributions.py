"""The distribution sections of the release report: each column drawn before and
after, and the divergences between its two distributions.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from typing import Final

from veil.metrics import divergence_distributions
from veil.release.report.context import _Context, _is_number
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
        if ctx.identifier_like(column):
            hidden.append(
                (
                    column,
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
            "<h3>Identifier-like columns (values not shown)</h3>"
            + _table(["column", "distinct before", "distinct after"], hidden)
        )
    if not columns:
        parts.append(_p("No column is present in both tables."))
    return "".join(parts)


def _distribution_figure(ctx: _Context, column: Hashable) -> str:
    before, after = ctx.original[column], ctx.released[column]
    kinds = (_is_number(before), _is_number(after))
    fig = _figure(5.6, 2.9, constrained=kinds[0] != kinds[1])
    if kinds == (True, True):
        fig.subplots_adjust(left=0.13, right=0.97, bottom=0.17, top=0.87)
        b, a = _finite(before), _finite(after)
        ax = fig.subplots()
        _histogram(
            ax, [(b, "original", _ORIGINAL_COLOUR), (a, "released", _RELEASED_COLOUR)], _edges(b, a)
        )
        ax.legend(fontsize=8)
    elif kinds == (False, False):
        fig.subplots_adjust(left=0.33, right=0.97, bottom=0.17, top=0.87)
        ax = fig.subplots()
        _bars(
            ax,
            [
                (_category_shares(before, False), "original", _ORIGINAL_COLOUR),
                (_category_shares(after, False), "released", _RELEASED_COLOUR),
            ],
        )
        ax.legend(fontsize=8)
    else:
        left, right = fig.subplots(1, 2)
        for ax, series, number, label, colour in (
            (left, before, kinds[0], "original", _ORIGINAL_COLOUR),
            (right, after, kinds[1], "released", _RELEASED_COLOUR),
        ):
            if number:
                values = _finite(series)
                _histogram(ax, [(values, label, colour)], _edges(values))
            else:
                _bars(ax, [(_category_shares(series, False), label, colour)])
            ax.set_title(label, fontsize=9)
    fig.suptitle(_label(column, 60), fontsize=10)
    treatment = ctx.treatments.get(str(column))
    caption = _e(column) + (f' <span class="muted">({_e(treatment)})</span>' if treatment else "")
    missing = (int(before.isna().sum()), int(after.isna().sum()))
    if any(missing):
        caption += (
            f' <span class="muted">missing: {missing[0]:,} before, {missing[1]:,} after</span>'
        )
    image = _img(fig, f"distribution of {column}")
    return f"<figure>{image}<figcaption>{caption}</figcaption></figure>"


def _divergence_section(ctx: _Context) -> str:
    def build() -> str:
        rows = []
        skipped = []
        for column in ctx.shared:
            if column in ctx.location_columns:
                continue
            before, after = ctx.original[column], ctx.released[column]
            if len(before) == 0 or len(after) == 0:
                skipped.append(f"{column} (no rows)")
                continue
            if _is_number(before) != _is_number(after):
                skipped.append(f"{column} (numeric on one side only, e.g. generalized)")
                continue
            d = divergence_distributions(ctx.original, ctx.released, column)
            rows.append((column, d["tvd"], d["js"], d["kl"], d.get("wasserstein")))
        parts = []
        if rows:
            parts.append(
                _table(["column", "TVD", "Jensen-Shannon (nats)", "KL (nats)", "Wasserstein"], rows)
            )
            parts.append(
                _p(
                    "TVD, Jensen-Shannon and Kullback-Leibler compare the frequencies of exact "
                    "values (0 = unchanged; KL is ∞ when the release never takes a value the "
                    "original takes); Wasserstein, numeric columns only, is in the column's "
                    "unit and accounts for how far values moved. A generalized column shares "
                    "few values with the original, so its TVD is near 1 by construction.",
                    "muted",
                )
            )
        if skipped:
            parts.append(_p("Not comparable: " + "; ".join(map(str, skipped)) + "."))
        return "".join(parts) or _p("No column is present in both tables.")

    return _attempt(build)
