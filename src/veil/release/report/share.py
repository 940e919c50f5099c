"""The partially perturbed sharing section of the release report (OptimShare).

Read from the share step's facts in the manifest (the custodian's part: the candidates'
scores and the review measured on the raw records): what stays exact and what is
synthetic, at what cost and under which selection; the paper's Fig. 7 (utility and
effectiveness of every candidate), Fig. 6 (the CSF heat map of the original, PIF_A
before and after), Fig. 8 (QPIF beside QSPIF) and Table 2 (the original, the chosen
model sampled whole and the release, each figure with its spread over the fold draws);
the release's raw linkable fraction L beside the scaled score P_N; and the data-dependent
choices listed as leaks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from veil.release.report.context import _Context
from veil.release.report.glossary import _explained
from veil.release.report.page import _attempt, _e, _fmt, _names, _p, _pct, _table
from veil.release.report.plots import _img

# Records drawn in the CSF heat map (a systematic sample beyond this keeps it legible).
_HEATMAP_ROWS = 2_000


def _guarantee(share: Mapping[str, Any]) -> str:
    cost = share.get("cost", {})
    model = share.get("model", {})
    chosen = share.get("chosen", {})
    method = model.get("method", share.get("settings", {}).get("synthesizer", "a DP model"))
    return (
        f"{_names(share.get('q', []))} are released exactly and are NOT covered by "
        f"differential privacy. {_names(share.get('s', []))} are drawn from {method} "
        f"fitted at epsilon {_fmt(chosen.get('epsilon'))}, delta {_fmt(chosen.get('delta'))}; "
        f"releasing them costs epsilon {_fmt(cost.get('epsilon'))}, delta "
        f"{_fmt(cost.get('delta'))} per dataset under the {share.get('selection', '?')} "
        "selection (every candidate's fit is counted). OptimShare's Theorem 3.2 is not "
        "claimed."
    )


def _search_summary(share: Mapping[str, Any], table: pd.DataFrame) -> str:
    """How many models the search fitted and how many instances it drew from each.

    The counts come from what the run recorded: the settings' ``instances`` (t) and the
    private selection's ``runs`` (each run draws one pair and fits one model, so a pair
    may be fitted twice); the paper's rule fits each listed pair once.
    """
    chosen = share.get("chosen", {})
    settings = share.get("settings", {})
    details = share.get("details", {})
    tried = int(table["pair"].nunique()) if "pair" in table else 0
    listed = settings.get("pairs")
    runs = details.get("runs") if isinstance(details, Mapping) else None
    fits = runs if isinstance(runs, int) and not isinstance(runs, bool) else tried
    instances = settings.get("instances")
    if not isinstance(instances, int) or isinstance(instances, bool):
        instances = len(table) // max(fits, 1)
    passing = int(table["qualifies"].sum()) if "qualifies" in table else 0
    threshold = _fmt(settings.get("e_threshold"))
    of = f" of the {len(listed)} listed" if isinstance(listed, list) else ""
    how = (
        f"{fits} run{'s' if fits != 1 else ''} of the private selection, each fitting one "
        "model to a pair drawn from the list"
        if isinstance(runs, int)
        else "one model per pair"
    )
    return (
        f"The search fitted {fits} model{'s' if fits != 1 else ''} ({how}; {tried} distinct "
        f"(epsilon, delta) pair{'s' if tried != 1 else ''}{of}) and drew {instances} "
        f"instance{'s' if instances != 1 else ''} from each (sampling costs nothing more): "
        f"{len(table)} candidates, {passing} with e at least E^T = {threshold}. Released: "
        f"pair {_fmt(chosen.get('pair'))}, instance {_fmt(chosen.get('instance'))}."
    )


def _candidates(share: Mapping[str, Any], table: pd.DataFrame) -> str:
    from veil.share import candidates_figure

    threshold = share.get("settings", {}).get("e_threshold")
    figure = candidates_figure(table, e_threshold=None if threshold is None else float(threshold))
    return _img(figure, "utility and effectiveness of every candidate, pair by pair") + _explained(
        ["share-utility", "effectiveness"]
    )


def _pif(ctx: _Context, review: Mapping[str, Any]) -> str:
    from veil.risk.pif import assess_pif
    from veil.risk.pif_plots import csf_heatmap, pif_bars

    pif = review["pif"]
    q = list(pif["q"])
    parts = []
    columns = [c for c in pif["columns"] if c in ctx.original.columns]
    if columns:
        frame = ctx.original[columns]
        step = max(1, len(frame) // _HEATMAP_ROWS)
        bins = {c: e for c, e in review.get("bins", {}).items() if c in columns}
        cells = assess_pif(frame, bins=bins, default_bins="exact")
        sample = cells.csf.iloc[::step]
        title = f"CSF of {len(sample)} original records" + (
            f" (every {step}th of the report's {len(frame)})" if step > 1 else ""
        )
        parts.append(_img(csf_heatmap(sample, title=title), "CSF heat map of the original"))
    bars = pd.DataFrame({"original": pif["before"], "released": pif["after"]})
    parts.append(
        _img(
            pif_bars(bars, highlight=q, title="PIF_A before and after (exact columns in red)"),
            "PIF per attribute before and after the release",
        )
    )
    parts.append(
        _img(
            pif_bars(
                pd.DataFrame({"QPIF": pif["qpif"], "QSPIF": pif["qspif"]}),
                title="exact columns: QPIF and QSPIF",
            ),
            "QPIF and QSPIF of each exact column",
        )
    )
    return "".join(parts) + _explained(["csf", "pif"])


def _spread_text(spread: Any) -> str | None:
    """A Table 2 figure over the fold draws: ``mean ± sd (min to max)``, or None."""
    if not isinstance(spread, Mapping):
        return None
    values = [spread.get(k) for k in ("mean", "sd", "min", "max")]
    numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(numbers) != len(values):
        return None
    mean, sd, low, high = numbers
    return f"{mean:.4g} ± {sd:.2g} ({low:.4g} to {high:.4g})"


def _comparison(review: Mapping[str, Any]) -> str:
    """Table 2, each figure with its spread over the fold draws when the review has it."""
    comparison: Mapping[str, Mapping[str, float]] = review["comparison"]
    spread = review.get("comparison_spread")
    spread = spread if isinstance(spread, Mapping) else {}
    tables = list(next(iter(comparison.values())).keys()) if comparison else []
    rows = []
    for row, values in comparison.items():
        draws = spread.get(row)
        cells = [
            _spread_text(draws.get(t) if isinstance(draws, Mapping) else None) or values.get(t)
            for t in tables
        ]
        rows.append([row, *cells])
    repeats = review.get("repeats")
    over = (
        f" Each figure is the mean over {repeats} draws of the folds (and of the whole "
        "sample of the model), ± its standard deviation, with the lowest and highest draw "
        "in brackets: one run can land anywhere in that range."
        if spread and isinstance(repeats, int)
        else ""
    )
    note = _p(
        "Means and standard deviations of the numeric exact columns, and GaussianNB "
        "trained on each table and tested on held-out original records (RMSE on the "
        f"label's codes, precision and recall weighted by class). Fully synthetic: "
        f"{review.get('fully_synthetic', '')}.{over}"
    )
    return _table(["", *tables], rows) + note


def _linkage(review: Mapping[str, Any]) -> str:
    """The release's raw linkable fraction L beside the scaled score P_N."""
    linkage = review.get("linkage")
    if not isinstance(linkage, Mapping):
        return ""
    fraction = linkage.get("linkable_fraction")
    p_n = linkage.get("p_n")
    rows: list[list[Any]] = [
        ["records", linkage.get("records")],
        ["groups of records with identical exact values (Q)", linkage.get("groups")],
        ["records alone in their group (linkable by their Q alone)", linkage.get("alone")],
        ["linkable records", linkage.get("linkable_records")],
        [
            "linkable fraction L",
            _pct(float(fraction)) if isinstance(fraction, (int, float)) else None,
        ],
        [
            f"P_N = min(1, ε L / T_ε), with ε = {_fmt(linkage.get('epsilon'))} and "
            f"T_ε = {_fmt(linkage.get('t_epsilon'))}",
            p_n,
        ],
    ]
    note = _p(
        "A record is linkable when, among the released rows with its exact values, its own "
        "row is the most similar to its original synthesized values: whoever holds a "
        "person's record finds their released row. L is that share of the records; P_N "
        "scales it by ε / T_ε to rank the candidates, so a small P_N does not mean that few "
        "records are linkable."
    )
    return _table(["linkage", "value"], rows) + note + _explained(["effectiveness"])


def _share_section(ctx: _Context) -> str | None:
    """The OptimShare section, or None when the release has no share step."""
    share = ctx.manifest.get("share")
    if not isinstance(share, Mapping):
        return None
    table = pd.DataFrame(share.get("candidates", []))
    parts = [_p(_guarantee(share))]
    if len(table):
        parts.append(_p(_search_summary(share, table)))
        parts.append(_attempt(lambda: _candidates(share, table)))
    review = share.get("review")
    if isinstance(review, Mapping) and "error" in review:
        parts.append(_p(f"The review was not measured: {review['error']}", "error"))
    elif isinstance(review, Mapping):
        parts.append(_attempt(lambda: _pif(ctx, review)))
        parts.append(_attempt(lambda: _comparison(review)))
        parts.append(_attempt(lambda: _linkage(review)))
    leaks = share.get("leaks", [])
    if leaks:
        items = "".join(f"<li>{_e(leak)}</li>" for leak in leaks)
        parts.append(_p("Choices read from the records (not covered by the cost):"))
        parts.append(f"<ul>{items}</ul>")
    return "".join(parts)
