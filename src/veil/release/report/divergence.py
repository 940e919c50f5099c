"""The divergence section of the release report: how far each column's distribution
moved, compared as its type.

Exact values are compared for codes and categories; a generalized column is compared
with the original counted into the released intervals, or, for categories grouped by a
hierarchy, with the original values mapped onto their released groups (so
generalization alone costs nothing, suppression shows); an infinite KL divergence says
how many original values the release never shows; a numeric column is also compared on
20 bins over its public bounds (or the original's range), because noise moves every
value and the TVD of exact values is then near 1 whatever the noise. Pseudonymized and
identifier-like columns are not compared: their values are keys, not data.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import pandas as pd

from veil.metrics import divergence_distributions
from veil.release.report.context import _Context
from veil.release.report.glossary import _explained, _term
from veil.release.report.kinds import _drawn
from veil.release.report.page import _p, _table

_BINS: Final[int] = 20


@dataclass(frozen=True)
class _Divergence:
    """The divergences of one column; ``tvd_bins`` for numbers only."""

    column: Hashable
    compared: str
    tvd: float
    js: float
    kl: float
    wasserstein: float | None
    tvd_bins: float | None
    # Generalized labels that cannot be tied to the values: the measure does not apply.
    by_construction: bool = False

    @property
    def shape_tvd(self) -> float:
        """The TVD that says how far the distribution's shape moved."""
        return self.tvd if self.tvd_bins is None else self.tvd_bins


@dataclass(frozen=True)
class _DivergenceReview:
    rows: list[_Divergence]
    skipped: list[str]
    # Per compared column: original values the release never shows (why KL is infinite).
    absent: dict[Hashable, int] = field(default_factory=dict)


def _bin_edges(ctx: _Context, column: Hashable, before: pd.Series[Any]) -> np.ndarray[Any, Any]:
    bounds = ctx.parameters(column).get("bounds")
    if isinstance(bounds, (list, tuple)) and len(bounds) == 2:
        low, high = float(bounds[0]), float(bounds[1])
    else:
        values = before.to_numpy(dtype=np.float64, na_value=np.nan)
        values = values[np.isfinite(values)]
        low, high = (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
    if high <= low:
        high = low + 1.0
    return np.linspace(low, high, _BINS + 1)


def _binned(series: pd.Series[Any], edges: np.ndarray[Any, Any]) -> pd.DataFrame:
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    slots = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2)
    labels = pd.Series(slots, dtype="float64").where(~np.isnan(values))
    return pd.DataFrame({"bin": labels})


def _compare(ctx: _Context, column: Hashable) -> _Divergence | str:
    """The column's divergences, or why it is not compared."""
    before, after = ctx.original[column], ctx.released[column]
    if len(before) == 0 or len(after) == 0:
        return f"{column} (no rows)"
    drawn = _drawn(before, after)
    if drawn.kind == "mixed":
        return f"{column} (numeric on one side only)"
    if drawn.kind == "intervals":
        d = divergence_distributions(
            pd.DataFrame({"v": drawn.before}), pd.DataFrame({"v": drawn.after}), "v"
        )
        compared = "original counted into the released intervals"
        return _Divergence(column, compared, d["tvd"], d["js"], d["kl"], None, None)
    d = divergence_distributions(ctx.original, ctx.released, column)
    if drawn.kind != "numbers":
        generalized = ctx.method(column) in ("quasi-identifier", "generalize") and bool(
            d["tvd"] > 0.0 and not ctx.released[column].isin(ctx.original[column].unique()).all()
        )
        if generalized:
            return _on_groups(ctx, column)
        return _Divergence(column, "exact values", d["tvd"], d["js"], d["kl"], None, None)
    edges = _bin_edges(ctx, column, before)
    bins = divergence_distributions(_binned(before, edges), _binned(after, edges), "bin")
    where = "the public bounds" if "bounds" in ctx.parameters(column) else "the original's range"
    compared = f"exact values; bins: {_BINS} over {where}"
    wasserstein = d.get("wasserstein")
    return _Divergence(column, compared, d["tvd"], d["js"], d["kl"], wasserstein, bins["tvd"])


def _on_groups(ctx: _Context, column: Hashable) -> _Divergence:
    """A column generalized into groups of its values, compared on the groups.

    Each original value is mapped to the released label most of its matched records
    carry (the group its hierarchy put it in), so the original is counted on the
    generalized domain and only what the release lost (suppressed records) shows. Without
    matched rows the labels cannot be tied to values: the measure does not apply.
    """
    matched = ctx.matched()
    if matched is None:
        nan = float("nan")
        compared = (
            "not applicable: the released labels are groups of the values, and the rows "
            "cannot be matched to map the values onto them"
        )
        return _Divergence(column, compared, nan, nan, nan, None, None, by_construction=True)
    pairs = pd.DataFrame(
        {"value": matched[0][column].to_numpy(), "group": matched[1][column].to_numpy()}
    ).dropna()
    counts = pairs.value_counts().reset_index()
    groups = counts.drop_duplicates(subset="value").set_index("value")["group"]
    mapped = ctx.original[column].map(groups)
    d = divergence_distributions(
        pd.DataFrame({"v": mapped.to_numpy()}), pd.DataFrame({"v": ctx.released[column]}), "v"
    )
    compared = "original mapped onto the released groups (the generalized domain)"
    return _Divergence(column, compared, d["tvd"], d["js"], d["kl"], None, None)


def _kl_cell(row: _Divergence, absent: int) -> Any:
    """The KL divergence, or why it is infinite (values the release never shows)."""
    if math.isinf(row.kl) and absent:
        return f"∞ ({absent:,} original value{'s' if absent != 1 else ''} never released)"
    return row.kl


def _absent(ctx: _Context, row: _Divergence) -> int:
    """Original values (or original intervals) the release never shows."""
    if not math.isinf(row.kl):
        return 0
    before, after = ctx.original[row.column], ctx.released[row.column]
    drawn = _drawn(before, after)
    if drawn.kind == "intervals":
        before, after = drawn.before, drawn.after
    seen = set(pd.unique(after.dropna()))
    return int(sum(1 for v in pd.unique(before.dropna()) if v not in seen))


def _review_divergence(ctx: _Context) -> _DivergenceReview:
    rows: list[_Divergence] = []
    skipped: list[str] = []
    for column in ctx.shared:
        if column in ctx.location_columns:
            continue
        if ctx.pseudonymized(column):
            skipped.append(f"{column} ({ctx.method(column)}: its values are keys, not data)")
            continue
        if ctx.identifier_like(column):
            skipped.append(f"{column} (identifier-like)")
            continue
        compared = _compare(ctx, column)
        if isinstance(compared, str):
            skipped.append(compared)
        else:
            rows.append(compared)
    return _DivergenceReview(rows, skipped, {r.column: _absent(ctx, r) for r in rows})


def _divergence_section(review: _DivergenceReview) -> str:
    parts = []
    if review.rows:
        header = [
            "column",
            "compared as",
            _term("tvd", "TVD"),
            _term("binned-tvd", "TVD on bins"),
            _term("js", "Jensen-Shannon (nats)"),
            _term("kl", "KL (nats)"),
            _term("wasserstein", "Wasserstein (column's unit)"),
        ]
        rows = [
            (
                r.column,
                r.compared,
                r.tvd,
                r.tvd_bins,
                r.js,
                _kl_cell(r, review.absent.get(r.column, 0)),
                r.wasserstein,
            )
            for r in review.rows
        ]
        parts.append(_table(header, rows, full=True))
        parts.append(_explained(["tvd", "binned-tvd", "js", "kl", "wasserstein"]))
    if review.skipped:
        parts.append(_p("Not compared: " + "; ".join(review.skipped) + "."))
    return "".join(parts) or _p("No column is present in both tables.")
