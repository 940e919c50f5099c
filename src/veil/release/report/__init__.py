"""The HTML report of a release: one self-contained page to review before publishing.

:func:`build_report` compares the original table with its release and reads the run's
manifest: summary, privacy ledger, re-identification risk before and after, per-column
distributions, divergences, correlation loss, machine-learning utility, location maps,
warnings and what is not protected. Plots are PNG images embedded as ``data:`` URIs
(matplotlib, Agg backend) and the style sheet is inline, so the page needs no network
and no other file. :func:`write_report` writes it atomically.
"""

from __future__ import annotations

import base64
import functools
import html
import io
import json
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype

from veil.atomic import write_text_atomic
from veil.errors import ColumnError, DataTypeError, ParameterError, VeilError
from veil.metrics import correlation_loss, divergence_distributions

# From the submodule, as the geo tests do: pytest's importlib mode, collecting the module
# for its doctests, rebinds the package attribute ``veil.metrics.ml_utility`` to it.
from veil.metrics.ml_utility import ml_utility
from veil.risk import attribute_disclosure, record_risk
from veil.risk import summary as risk_summary
from veil.rng import RngLike, resolve_rng

if TYPE_CHECKING:
    import os

    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["build_report", "write_report"]

FloatArray = npt.NDArray[np.float64]

# Categories drawn per categorical column; the rest are summed into one bar.
_TOP_CATEGORIES: Final[int] = 12
_HISTOGRAM_BINS: Final[int] = 30
# Points per panel of a location figure (a systematic sample beyond this).
_MAP_POINTS: Final[int] = 5_000
# Columns drawn in the distribution section and correlated in the correlation section.
_MAX_PLOTTED_COLUMNS: Final[int] = 60
_MAX_CORRELATED_COLUMNS: Final[int] = 30
# Original records the ML utility is measured on (a systematic sample beyond this), so
# that two classifier fits stay around a second.
_ML_ROWS: Final[int] = 20_000
# A column with more distinct values than this share of its rows (and more than 50) is
# identifier-like: its values are never drawn, only counted.
_IDENTIFIER_SHARE: Final[float] = 0.5
_IDENTIFIER_MIN_VALUES: Final[int] = 50
_RISK_THRESHOLD: Final[float] = 0.2
_DISCLOSURE_THRESHOLD: Final[float] = 0.8
_CLASS_SIZE_EDGES: Final[tuple[int, ...]] = (1, 2, 3, 5, 10, 20)
_METRICS: Final[tuple[str, ...]] = (
    "risk",
    "distributions",
    "divergence",
    "correlation",
    "ml_utility",
    "maps",
)
# Location figures and measures keep the points within this distance of the median
# original location: one local projection in metres holds them, and (0, 0) placeholders
# or other far outliers do not squash the map.
_REGION_KM: Final[float] = 500.0
_DPI: Final[int] = 80
_ORIGINAL_COLOUR: Final[str] = "#7f7f7f"
_RELEASED_COLOUR: Final[str] = "#d62728"

_CSS: Final[str] = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;
background:#fafafa;line-height:1.45}
header{background:#263238;color:#fff;padding:1.2em 2em}
header h1{margin:0 0 .2em 0;font-size:1.6em}
nav{background:#eceff1;padding:.5em 2em;position:sticky;top:0;border-bottom:1px solid #cfd8dc}
nav a{margin-right:1.1em;color:#263238;text-decoration:none;font-size:.92em}
main{padding:0 2em 3em 2em;max-width:1200px}
section{margin-top:2em}
h2{border-bottom:2px solid #cfd8dc;padding-bottom:.2em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em;background:#fff}
th,td{border:1px solid #cfd8dc;padding:.3em .6em;text-align:left;vertical-align:top}
th{background:#eceff1}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.notice{background:#fff8e1;border-left:4px solid #ffb300;padding:.6em 1em;margin-top:1.2em}
.error{color:#b71c1c}
.muted{color:#607d8b;font-size:.9em}
.grid{display:flex;flex-wrap:wrap;gap:1em}
figure{margin:0;background:#fff;border:1px solid #cfd8dc;padding:.4em}
figcaption{font-size:.88em;color:#37474f;max-width:480px}
img{max-width:100%;height:auto;display:block}
code{background:#eceff1;padding:0 .2em}
"""


def build_report(
    original: pd.DataFrame,
    released: pd.DataFrame,
    *,
    manifest: Mapping[str, Any],
    quasi_identifiers: Sequence[Hashable],
    sensitive: Sequence[Hashable],
    locations: Sequence[tuple[Hashable, Hashable]],
    target: Hashable | None,
    rng: RngLike = None,
    title: str = "Release report",
    metrics: Sequence[str] | None = None,
) -> str:
    """Build the self-contained HTML report of a release.

    The page compares ``original`` with ``released`` and reads ``manifest``; a section
    whose inputs are absent is left out, and a measure that cannot be computed shows
    why instead of failing the report. The report is computed from the original
    records: it shows their distributions, risk figures and (in the maps) locations, so
    it is as confidential as the original data until reviewed. Values of
    identifier-like columns (more distinct values than half the rows, and more than 50)
    are never drawn. Building the report spends no privacy budget.

    Sections: summary (rows and columns in and out, input hash, totals per privacy
    notion, timings); the privacy ledger (per column: treatment, parameters, cost);
    re-identification risk before and after (:func:`veil.risk.summary` on the
    quasi-identifiers, class-size profile, attribute disclosure of each sensitive
    column); distributions before and after (histogram for numeric columns, top
    categories for the others); divergences (:func:`veil.metrics.divergence_distributions`
    where a column has the same kind before and after); correlation loss
    (:func:`veil.metrics.correlation_loss` with both correlation matrices); machine
    learning utility (:func:`veil.metrics.ml_utility`, if ``target`` is given); a map per
    location pair (original and released points, a zoom on the densest area, and
    :func:`veil.geo.evaluate`'s linkage and utility measures); the manifest's warnings;
    what is not protected.

    Parameters
    ----------
    original : pandas.DataFrame
        The table before protection. Not modified.
    released : pandas.DataFrame
        The released table. Not modified. Its rows are matched to original rows (for
        correlations, ML utility and location measures) by index label when it keeps
        the original's labels (records suppressed or removed), else by position when
        both have as many rows; otherwise those measures say the rows cannot be matched.
        A release with records removed and its index reset to ``0..m-1`` cannot be
        matched (its labels would name the wrong records): keep the original's labels.
    manifest : mapping
        The run's manifest (see :mod:`veil.release.manifest`). Read keys, each optional:
        ``"input"`` (``sha256``, ``rows``, ``source``), ``"veil_version"``,
        ``"columns"`` or ``"steps"`` (per column: ``treatment`` or ``step``,
        ``parameters``, ``cost``, ``role``, ``guarantee``), ``"totals"`` (per notion),
        ``"anonymization"``, ``"warnings"`` (``{"category", "message"}`` or text),
        ``"unprotected"`` or ``"not_protected"`` (a list, or lists by kind),
        ``"timings"`` or ``"timings_s"``. Unknown keys are ignored.
    quasi_identifiers : sequence of column labels
        Columns of ``original`` an attacker can link on; the risk after release uses
        those still present in ``released``. May be empty (no risk section figures).
    sensitive : sequence of column labels
        Sensitive columns of ``original``, checked for attribute disclosure.
    locations : sequence of (lat, lon) column-label pairs
        Coordinate columns (degrees) of ``original``; one map each.
    target : column label or None
        Class column for the machine-learning utility section; None leaves it out.
    rng : None, int or numpy.random.Generator
        Source of the train/test split of the ML utility and of the location measures'
        probe points (see :mod:`veil.rng`). Drawn only when those sections are built.
    title : str, default "Release report"
        The page title.
    metrics : sequence of str, optional
        The measured sections to build, among ``"risk"``, ``"distributions"``,
        ``"divergence"``, ``"correlation"``, ``"ml_utility"`` and ``"maps"`` (the names of
        a plan's ``evaluation.metrics``); default all. The summary, ledger, warnings and
        what is not protected are always shown.

    Returns
    -------
    str
        The HTML page. Every string that comes from the data or the manifest is escaped.

    Raises
    ------
    veil.errors.DataTypeError
        If a table is not a DataFrame or ``manifest`` is not a mapping.
    veil.errors.ColumnError
        If a quasi-identifier, sensitive column, location column or the target is not a
        column of ``original``.
    veil.errors.ParameterError
        If a location is not a pair of column labels, or ``metrics`` names an unknown
        section.

    Notes
    -----
    Histograms and bars are computed from every row. Samples are systematic (every k-th
    row in table order), so the same data give the same page: the location figures draw
    at most 5 000 points per panel, and the ML utility uses at most 20 000 original
    records (with their released versions), which keeps a 50 000-row report to a few
    seconds. At most 60 columns are drawn and 30 correlated (in table order); columns
    constant before or after are left out of the correlations. Categorical bars show the
    12 categories most frequent before or after; the rest form one bar.

    Examples
    --------
    >>> from veil.datasets import load_adult
    >>> from veil.release.report import build_report
    >>> adult = load_adult().head(500)
    >>> page = build_report(
    ...     adult, adult.drop(columns=["fnlwgt"]), manifest={},
    ...     quasi_identifiers=["age", "sex"], sensitive=[], locations=[], target=None,
    ... )
    >>> page.startswith("<!DOCTYPE html>"), "://" in page
    (True, False)
    """
    for name, frame in (("original", original), ("released", released)):
        if not isinstance(frame, pd.DataFrame):
            raise DataTypeError(f"{name}: must be a pandas DataFrame, got {type(frame).__name__}")
    if not isinstance(manifest, Mapping):
        raise DataTypeError(f"manifest: must be a mapping, got {type(manifest).__name__}")
    qis = _columns_of(original, quasi_identifiers, "quasi_identifiers")
    sensitive_columns = _columns_of(original, sensitive, "sensitive")
    pairs = _location_pairs(original, locations)
    if target is not None:
        _columns_of(original, [target], "target")
    wanted = _check_metrics(metrics)

    context = _Context(original, released, manifest, pairs)
    with_ml = target is not None and "ml_utility" in wanted
    with_maps = bool(pairs) and "maps" in wanted
    needs_rng = with_ml or (
        with_maps and any(lat in released.columns and lon in released.columns for lat, lon in pairs)
    )
    generator = resolve_rng(rng) if needs_rng else None

    sections: list[tuple[str, str, str]] = [
        ("summary", "Summary", _summary_section(context)),
    ]
    ledger = _ledger_section(manifest)
    if ledger is not None:
        sections.append(("ledger", "Privacy ledger", ledger))
    if "risk" in wanted:
        sections.append(
            ("risk", "Re-identification risk", _risk_section(context, qis, sensitive_columns))
        )
    if "distributions" in wanted:
        sections.append(("distributions", "Distributions", _distribution_section(context)))
    if "divergence" in wanted:
        sections.append(("divergence", "Divergences", _divergence_section(context)))
    if "correlation" in wanted:
        sections.append(("correlation", "Correlation loss", _correlation_section(context)))
    if with_ml and target is not None and generator is not None:
        sections.append(
            ("ml-utility", "Machine-learning utility", _ml_section(context, target, generator))
        )
    if with_maps:
        sections.append(("maps", "Locations", _map_section(context, generator)))
    warnings_html = _warnings_section(manifest)
    if warnings_html is not None:
        sections.append(("warnings", "Warnings", warnings_html))
    unprotected = _unprotected_section(manifest)
    if unprotected is not None:
        sections.append(("unprotected", "What is not protected", unprotected))
    return _page(title, sections)


def write_report(path: str | os.PathLike[str], html_text: str) -> None:
    """Write a report page to ``path`` atomically (UTF-8).

    Parameters
    ----------
    path : str or os.PathLike
        The target file; a crash leaves any previous file intact.
    html_text : str
        The page, as :func:`build_report` returns it.

    Raises
    ------
    veil.errors.DataTypeError
        If ``html_text`` is not a string.
    """
    if not isinstance(html_text, str):
        raise DataTypeError(f"html_text: must be a str, got {type(html_text).__name__}")
    write_text_atomic(path, html_text)


# --- inputs ------------------------------------------------------------------------------


class _Context:
    """The two tables, their shared columns and how their rows match."""

    def __init__(
        self,
        original: pd.DataFrame,
        released: pd.DataFrame,
        manifest: Mapping[str, Any],
        pairs: list[tuple[Hashable, Hashable]],
    ) -> None:
        self.original = original
        self.released = released
        self.manifest = manifest
        self.location_columns = {c for pair in pairs for c in pair}
        self.pairs = pairs
        self.shared = [c for c in original.columns if c in released.columns]
        self.treatments = _treatments(manifest)
        self._identifier: dict[Hashable, bool] = {}
        self._matched: tuple[pd.DataFrame, pd.DataFrame] | None = None
        self._matched_done = False

    def identifier_like(self, column: Hashable) -> bool:
        if column not in self._identifier:
            flags = []
            for frame in (self.original, self.released):
                if column in frame.columns and len(frame) > 0:
                    distinct = int(frame[column].nunique(dropna=True))
                    flags.append(
                        distinct > _IDENTIFIER_MIN_VALUES
                        and distinct > _IDENTIFIER_SHARE * len(frame)
                        and not _is_number(frame[column])
                    )
            self._identifier[column] = any(flags)
        return self._identifier[column]

    def matched(self) -> tuple[pd.DataFrame, pd.DataFrame] | None:
        """Original and released rows in matching order (fresh indexes), or None."""
        if not self._matched_done:
            self._matched = _match_rows(self.original, self.released)
            self._matched_done = True
        return self._matched


def _check_metrics(metrics: Sequence[str] | None) -> set[str]:
    if metrics is None:
        return set(_METRICS)
    if isinstance(metrics, (str, bytes)):
        raise ParameterError(f"metrics: expected a sequence of section names, got {metrics!r}")
    unknown = [m for m in metrics if m not in _METRICS]
    if unknown:
        raise ParameterError(f"metrics: unknown sections {unknown!r}; allowed: {list(_METRICS)!r}")
    return set(metrics)


def _columns_of(df: pd.DataFrame, columns: Sequence[Hashable], parameter: str) -> list[Hashable]:
    if isinstance(columns, (str, bytes)):
        raise ParameterError(
            f"{parameter}: expected a sequence of column labels, got the string {columns!r}"
        )
    selected = list(columns)
    missing = [c for c in selected if c not in df.columns]
    if missing:
        raise ColumnError(f"{parameter}: columns {missing!r} are not in original")
    return selected


def _location_pairs(
    df: pd.DataFrame, locations: Sequence[tuple[Hashable, Hashable]]
) -> list[tuple[Hashable, Hashable]]:
    pairs: list[tuple[Hashable, Hashable]] = []
    for pair in locations:
        if isinstance(pair, (str, bytes)) or len(pair) != 2:
            raise ParameterError(f"locations: each entry must be a (lat, lon) pair, got {pair!r}")
        lat, lon = pair
        _columns_of(df, [lat, lon], "locations")
        pairs.append((lat, lon))
    return pairs


def _match_rows(
    original: pd.DataFrame, released: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    if len(released) == 0:
        return None
    if len(released) < len(original) and _fresh(released.index) and _fresh(original.index):
        # Records removed and the index reset: labels 0..m-1 would pair each kept record
        # with the wrong original one.
        return None
    if original.index.is_unique and released.index.is_unique:
        positions = original.index.get_indexer(released.index)
        if (positions >= 0).all():
            return (
                original.iloc[positions].reset_index(drop=True),
                released.reset_index(drop=True),
            )
    if len(original) == len(released):
        return original.reset_index(drop=True), released.reset_index(drop=True)
    return None


def _fresh(index: pd.Index[Any]) -> bool:
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1


def _treatments(manifest: Mapping[str, Any]) -> dict[str, str]:
    """Column name -> treatment, from the manifest's per-column entries."""
    return {
        name: _text(entry.get("treatment", entry.get("step", "")))
        for name, entry in _ledger_entries(manifest)
    }


def _ledger_entries(manifest: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    entries = manifest.get("columns", manifest.get("steps"))
    out: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(entries, Mapping):
        for name, entry in entries.items():
            out.append((str(name), entry if isinstance(entry, Mapping) else {"cost": entry}))
    elif isinstance(entries, Sequence) and not isinstance(entries, (str, bytes)):
        for entry in entries:
            if isinstance(entry, Mapping):
                name = entry.get("column", entry.get("name", entry.get("scope", "")))
                out.append((str(name), entry))
    return out


def _is_number(series: pd.Series[Any]) -> bool:
    return bool(is_numeric_dtype(series.dtype)) and not is_bool_dtype(series.dtype)


def _systematic(n: int, limit: int) -> npt.NDArray[np.int64]:
    """Every k-th position, at most ``limit`` of them: a deterministic sample."""
    if n <= limit:
        return np.arange(n, dtype=np.int64)
    return np.unique(np.linspace(0, n - 1, limit).round().astype(np.int64))


# --- HTML helpers ------------------------------------------------------------------------


def _e(value: Any) -> str:
    return html.escape(_text(value), quote=True)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (Mapping, list, tuple)):
        return json.dumps(value, default=str, ensure_ascii=False, sort_keys=False)
    return str(value)


def _fmt(value: Any) -> str:
    """A cell value as (unescaped) text."""
    if value is None:
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return "n/a"
        if math.isinf(v):
            return "∞" if v > 0 else "-∞"
        return f"{v:.4g}"
    return _text(value)


def _pct(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return f"{100.0 * value:.2f} %"


def _table(header: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = []
        for value in row:
            numeric = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
                value, (bool, np.bool_)
            )
            cls = ' class="num"' if numeric else ""
            cells.append(f"<td{cls}>{html.escape(_fmt(value), quote=True)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _p(text: str, cls: str | None = None) -> str:
    attr = f' class="{cls}"' if cls else ""
    return f"<p{attr}>{html.escape(text, quote=True)}</p>"


def _attempt(build: Callable[[], str]) -> str:
    """The section part ``build`` makes, or why it could not be computed."""
    try:
        return build()
    except (VeilError, ValueError, TypeError) as exc:
        return _p(f"Not computed: {exc}", "error")


def _page(title: str, sections: Sequence[tuple[str, str, str]]) -> str:
    nav = "".join(
        f'<a href="#{anchor}">{html.escape(heading)}</a>' for anchor, heading, _ in sections
    )
    body = "".join(
        f'<section id="{anchor}"><h2>{html.escape(heading)}</h2>{content}</section>'
        for anchor, heading, content in sections
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "img-src data:; style-src 'unsafe-inline'\">"
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{_e(title)}</h1><div>made by veil; self-contained, no network "
        "needed</div></header>"
        f"<nav>{nav}</nav><main>"
        '<div class="notice">This report is computed from the original records: it shows '
        "their distributions, risk figures and locations. Keep it as confidential as the "
        "original data; publish the release files, not this page, unless it has been "
        "reviewed.</div>"
        f"{body}</main></body></html>\n"
    )


# --- figures -----------------------------------------------------------------------------


def _figure(width: float, height: float, *, constrained: bool = True) -> Figure:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise ImportError("the release report needs matplotlib: pip install 'veil[geo]'") from exc
    # Constrained layout costs a third of the drawing time: simple figures set margins.
    fig = Figure(figsize=(width, height), dpi=_DPI, layout="constrained" if constrained else None)
    FigureCanvasAgg(fig)
    return fig


def _img(fig: Figure, alt: str) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{data}">'


def _label(value: Any, width: int = 28) -> str:
    """Text safe for a matplotlib label: short, and no mathtext ($)."""
    text = (
        "(missing)"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else str(value)
    )
    if len(text) > width:
        text = text[: width - 1] + "…"
    return text.replace("$", r"\$")


def _finite(series: pd.Series[Any]) -> FloatArray:
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    return np.asarray(values[np.isfinite(values)], dtype=np.float64)


def _edges(*samples: FloatArray) -> FloatArray:
    values = np.concatenate(samples)
    if values.size == 0:
        return np.array([0.0, 1.0])
    low, high = float(values.min()), float(values.max())
    whole = bool(np.all(values == np.round(values)))
    if whole and high - low <= 2 * _HISTOGRAM_BINS:
        return np.arange(low - 0.5, high + 1.5, 1.0)
    if high == low:
        return np.array([low - 0.5, high + 0.5])
    return np.linspace(low, high, _HISTOGRAM_BINS + 1)


def _histogram(ax: Axes, samples: Sequence[tuple[FloatArray, str, str]], edges: FloatArray) -> None:
    for i, (values, label, colour) in enumerate(samples):
        counts = np.histogram(values, bins=edges)[0].astype(np.float64)
        shares = counts / max(values.size, 1)
        if i == 0:
            ax.stairs(shares, edges, fill=True, color=colour, alpha=0.45, label=label)
        else:
            ax.stairs(shares, edges, color=colour, linewidth=1.6, label=label)
    ax.set_ylabel("share of rows")


def _category_shares(series: pd.Series[Any], as_text: bool) -> pd.Series[Any]:
    values = series.astype(str).where(series.notna(), None) if as_text else series
    counts = values.value_counts(dropna=False)
    return counts / max(len(series), 1)


def _bars(ax: Axes, samples: Sequence[tuple[pd.Series[Any], str, str]]) -> None:
    """Horizontal bars of the most frequent categories, side by side per sample."""
    shares = pd.concat([s for s, _, _ in samples], axis=1).fillna(0.0)
    order = shares.max(axis=1).sort_values(ascending=False, kind="stable").index
    top = list(order[:_TOP_CATEGORIES])
    rest = order[_TOP_CATEGORIES:]
    k = len(samples)
    height = 0.8 / k
    labels = [_label(v) for v in top]
    rows = shares.loc[top].to_numpy(dtype=np.float64)
    if len(rest):
        rows = np.vstack([rows, shares.loc[rest].sum(axis=0).to_numpy(dtype=np.float64)])
        labels.append(f"{len(rest)} others")
    y = np.arange(len(labels))
    for j, (_, label, colour) in enumerate(samples):
        ax.barh(
            y + (j - (k - 1) / 2) * height, rows[:, j], height=height, color=colour, label=label
        )
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("share of rows")


# --- sections ----------------------------------------------------------------------------


def _summary_section(ctx: _Context) -> str:
    original, released, manifest = ctx.original, ctx.released, ctx.manifest
    n_in, n_out = len(original), len(released)
    dropped = [c for c in original.columns if c not in released.columns]
    added = [c for c in released.columns if c not in original.columns]
    info = manifest.get("input")
    rows: list[tuple[str, Any]] = [
        ("rows in", n_in),
        ("rows out", n_out),
        ("rows removed", n_in - n_out if n_out <= n_in else None),
        ("columns in", len(original.columns)),
        ("columns out", len(released.columns)),
        ("columns not released", ", ".join(map(str, dropped)) or "none"),
        ("columns added", ", ".join(map(str, added)) or "none"),
    ]
    if isinstance(info, Mapping):
        for key in ("source", "rows", "sha256"):
            if key in info:
                rows.append((f"input {key}", info[key]))
    for key in ("veil_version", "engine", "created", "plan_file"):
        if manifest.get(key) is not None:
            rows.append((key.replace("_", " "), manifest[key]))
    warnings = manifest.get("warnings")
    if isinstance(warnings, Sequence) and not isinstance(warnings, str):
        rows.append(("warnings", len(warnings)))
    parts = [_table(["", "value"], rows)]

    totals = manifest.get("totals")
    if isinstance(totals, Mapping) and totals:
        parts.append("<h3>Privacy totals per notion</h3>")
        parts.append(
            _table(["notion", "total"], [(notion, _describe(v)) for notion, v in totals.items()])
        )
    anonymization = manifest.get("anonymization")
    if isinstance(anonymization, Mapping) and anonymization:
        parts.append("<h3>Table-level anonymization</h3>")
        parts.append(_table(["", "value"], [(k, _describe(v)) for k, v in anonymization.items()]))
    timings = manifest.get("timings", manifest.get("timings_s"))
    if isinstance(timings, Mapping) and timings:
        parts.append("<h3>Timings</h3>")
        parts.append(_table(["step", "seconds"], list(timings.items())))
    return "".join(parts)


def _describe(value: Any) -> str:
    """A manifest value as one line of text."""
    if isinstance(value, Mapping):
        return (
            "; ".join(
                f"{k} = {_fmt(v) if not isinstance(v, (Mapping, list)) else _text(v)}"
                for k, v in value.items()
                if v is not None
            )
            or "—"
        )
    if isinstance(value, (list, tuple)):
        return "; ".join(_describe(v) for v in value) or "none"
    return _fmt(value)


def _describe_cost(cost: Any) -> str:
    if cost is None:
        return "no formal guarantee"
    if isinstance(cost, Mapping) and "epsilon" in cost:
        notion = cost.get("notion")
        if notion == "syntactic":
            return f"syntactic: {_text(cost.get('mechanism', ''))}".rstrip(": ")
        text = f"ε = {_fmt(cost['epsilon'])}"
        if cost.get("delta"):
            text += f", δ = {_fmt(cost['delta'])}"
        if cost.get("unit"):
            text += f" per {_text(cost['unit'])}"
        if notion:
            text += f" ({_text(notion)})"
        return text
    if isinstance(cost, (list, tuple)):
        return "; ".join(_describe_cost(c) for c in cost) or "no formal guarantee"
    return _describe(cost)


def _ledger_section(manifest: Mapping[str, Any]) -> str | None:
    entries = _ledger_entries(manifest)
    if not entries:
        return None
    show_role = any("role" in e for _, e in entries)
    show_guarantee = any("guarantee" in e for _, e in entries)
    header = ["column"] + (["role"] if show_role else []) + ["treatment", "parameters", "cost"]
    header += ["guarantee"] if show_guarantee else []
    rows = []
    for name, entry in entries:
        row: list[Any] = [name]
        if show_role:
            row.append(_text(entry.get("role")) or "—")
        parameters = entry.get("parameters")
        row.append(_text(entry.get("treatment", entry.get("step"))) or "—")
        row.append(_describe(parameters) if parameters else "—")
        row.append(_describe_cost(entry.get("cost")))
        if show_guarantee:
            row.append(_text(entry.get("guarantee")) or "—")
        rows.append(row)
    return _table(header, rows) + _p(
        "Costs compose sequentially per record: the totals per notion are in the summary.",
        "muted",
    )


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


def _correlation_columns(ctx: _Context) -> list[Hashable]:
    columns: list[Hashable] = [
        c
        for c in ctx.shared
        if c not in ctx.location_columns
        and not ctx.identifier_like(c)
        and _is_number(ctx.original[c]) == _is_number(ctx.released[c])
    ]
    return columns[:_MAX_CORRELATED_COLUMNS]


def _correlation_section(ctx: _Context) -> str:
    columns = _correlation_columns(ctx)
    if len(columns) < 2:
        return _p("Fewer than two comparable columns: no correlation to compare.")
    matched = ctx.matched()
    if matched is None:
        return _p(
            "The released rows cannot be matched to original rows (the release has no row, "
            "or fewer rows without the original's index labels): correlations are not "
            "compared.",
            "error",
        )
    before, after = matched
    # A constant column has no correlation: it would make the loss undefined.
    constant = [c for c in columns if before[c].nunique() < 2 or after[c].nunique() < 2]
    columns = [c for c in columns if c not in constant]
    note = (
        _p("Constant before or after, so left out: " + ", ".join(map(str, constant)) + ".")
        if constant
        else ""
    )
    if len(columns) < 2:
        return note + _p("Fewer than two non-constant columns: no correlation to compare.")

    def build() -> str:
        loss = correlation_loss(before, after, features=columns)
        return _table(["measure", "value"], [("correlation loss (%)", loss)]) + _p(
            "Mean absolute change of the pairwise Pearson correlations, as a percentage "
            "of their mean absolute value in the original (0 = preserved, 200 = every "
            "sign flipped). Categorical columns enter as codes of first appearance "
            "(trasgoDP's definition).",
            "muted",
        )

    figure = functools.partial(_correlation_figure, before, after, columns)
    return _attempt(build) + note + _attempt(figure)


def _codes(before: pd.Series[Any], after: pd.Series[Any]) -> tuple[FloatArray, FloatArray]:
    if is_numeric_dtype(before.dtype) and is_numeric_dtype(after.dtype):
        return (
            before.to_numpy(dtype=np.float64, na_value=np.nan),
            after.to_numpy(dtype=np.float64, na_value=np.nan),
        )
    codes, _ = pd.factorize(pd.concat([before, after], ignore_index=True), sort=False)
    values = codes.astype(np.float64)
    values[codes < 0] = np.nan
    return values[: len(before)], values[len(before) :]


def _correlation_figure(before: pd.DataFrame, after: pd.DataFrame, columns: list[Hashable]) -> str:
    encoded = [_codes(before[c], after[c]) for c in columns]
    names = [f"c{i}" for i in range(len(columns))]
    matrices = [
        pd.DataFrame({n: pair[side] for n, pair in zip(names, encoded, strict=True)})
        .corr()
        .to_numpy(dtype=np.float64)
        for side in (0, 1)
    ]
    size = min(4.0 + 0.22 * len(columns), 9.0)
    fig = _figure(2 * size + 1.0, size)
    axes = fig.subplots(1, 2)
    labels = [_label(c, 18) for c in columns]
    image = None
    for ax, matrix, label in zip(axes, matrices, ("original", "released"), strict=True):
        image = ax.imshow(matrix, vmin=-1.0, vmax=1.0, cmap="RdBu_r")
        ax.set_xticks(np.arange(len(columns)), labels, rotation=90, fontsize=7)
        ax.set_yticks(np.arange(len(columns)), labels, fontsize=7)
        ax.set_title(label, fontsize=10)
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.8, label="Pearson correlation")
    return f"<figure>{_img(fig, 'correlation matrices before and after')}</figure>"


def _ml_section(ctx: _Context, target: Hashable, generator: np.random.Generator) -> str:
    if target not in ctx.released.columns:
        return _p(
            f"The target {target!s} is not released: the release cannot train a classifier for it."
        )
    features = [c for c in ctx.shared if c != target and not ctx.identifier_like(c)]
    if not features:
        return _p("No feature is released besides the target.")

    def build() -> str:
        original, released, sampled = _ml_sample(ctx.original, ctx.released)
        result = ml_utility(original, released, target, features=features, rng=generator)
        rows: list[tuple[str, float | None, float | None, float | None]] = [
            ("accuracy", result.baseline_accuracy, result.released_accuracy, result.accuracy_gap),
            ("macro F1", result.baseline_f1_macro, result.released_f1_macro, result.f1_macro_gap),
        ]
        if result.baseline_auc is not None:
            rows.append(("ROC AUC", result.baseline_auc, result.released_auc, result.auc_gap))
        table = _table(
            ["measure", "trained on the original", "trained on the release", "gap"], rows
        )
        text = (
            f"A {result.model} classifier predicts {target!s} ({result.n_classes} classes) from "
            f"{len(result.features)} columns. Both models are tested on the same "
            f"{result.n_test:,} held-out original records; the baseline is trained on "
            f"{result.n_train_original:,} original records, the release model on the "
            f"{result.n_train_released:,} released versions of those records. The gap is "
            "baseline minus release: what the release lost for this task."
        )
        if sampled:
            text += (
                f" The measure uses a systematic sample of {len(original):,} of the "
                f"{len(ctx.original):,} original records (every k-th row)."
            )
        return _p(text) + table

    return _attempt(build)


def _ml_sample(
    original: pd.DataFrame, released: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame, bool]:
    """At most ``_ML_ROWS`` original rows (every k-th) and their released versions."""
    removed_and_reset = (
        len(released) < len(original) and _fresh(released.index) and _fresh(original.index)
    )
    if len(original) <= _ML_ROWS or removed_and_reset:
        # Unmatchable rows are left to ml_utility, which says why.
        return original, released, False
    picks = _systematic(len(original), _ML_ROWS)
    sample = original.iloc[picks]
    if (
        original.index.is_unique
        and released.index.is_unique
        and bool(released.index.isin(original.index).all())
    ):
        return sample, released[released.index.isin(sample.index)], True
    if len(original) == len(released):
        return sample, released.iloc[picks], True
    return original, released, False


def _map_section(ctx: _Context, generator: np.random.Generator | None) -> str:
    parts = []
    for lat, lon in ctx.pairs:
        parts.append(f"<h3>{_e(lat)}, {_e(lon)}</h3>")
        if lat not in ctx.released.columns or lon not in ctx.released.columns:
            parts.append(_p("Not released."))
            continue
        parts.append(_attempt(functools.partial(_location_figure, ctx, lat, lon)))
        if generator is not None:
            parts.append(_attempt(functools.partial(_location_measures, ctx, lat, lon, generator)))
    parts.append(
        _p(
            "The figures draw original locations: they are as confidential as the raw data.",
            "muted",
        )
    )
    return "".join(parts)


def _points(frame: pd.DataFrame, lat: Hashable, lon: Hashable) -> tuple[FloatArray, FloatArray]:
    y = frame[lat].to_numpy(dtype=np.float64, na_value=np.nan)
    x = frame[lon].to_numpy(dtype=np.float64, na_value=np.nan)
    keep = np.isfinite(x) & np.isfinite(y)
    return x[keep], y[keep]


def _location_figure(ctx: _Context, lat: Hashable, lon: Hashable) -> str:
    for frame, name in ((ctx.original, "original"), (ctx.released, "released")):
        for column in (lat, lon):
            if not _is_number(frame[column]):
                raise DataTypeError(f"{name}: coordinate column {column!r} is not numeric")
    x0, y0 = _points(ctx.original, lat, lon)
    x1, y1 = _points(ctx.released, lat, lon)
    if x0.size == 0:
        return _p("The original has no complete coordinate pair.")
    centre = (float(np.median(y0)), float(np.median(x0)))
    near0 = _within_region(y0, x0, centre)
    near1 = _within_region(y1, x1, centre)
    x0, y0, x1, y1 = x0[near0], y0[near0], x1[near1], y1[near1]
    fig = _figure(13.0, 4.4)
    axes = fig.subplots(1, 3)
    aspect = 1.0 / max(math.cos(math.radians(centre[0])), 0.01)
    s0, s1 = _systematic(x0.size, _MAP_POINTS), _systematic(x1.size, _MAP_POINTS)
    xs = np.concatenate([x0[s0], x1[s1]])
    ys = np.concatenate([y0[s0], y1[s1]])
    xlim = _padded(np.percentile(xs, [0.5, 99.5]))
    ylim = _padded(np.percentile(ys, [0.5, 99.5]))
    for ax, x, y, picks, colour, label in (
        (axes[0], x0, y0, s0, _ORIGINAL_COLOUR, f"original ({x0.size:,} points)"),
        (axes[1], x1, y1, s1, _RELEASED_COLOUR, f"released ({x1.size:,} points)"),
    ):
        ax.scatter(x[picks], y[picks], s=2.0, c=colour, linewidths=0)
        ax.set_title(label, fontsize=9)
        ax.set_xlim(*xlim)
        ax.set_ylim(*ylim)
    # Zoom on the busiest cell of a 20 x 20 grid over the central extent.
    counts, xe, ye = np.histogram2d(x0, y0, bins=20, range=[xlim, ylim])
    i, j = np.unravel_index(int(np.argmax(counts)), counts.shape)
    zx, zy = (xe[i], xe[i + 1]), (ye[j], ye[j + 1])
    for x, y, colour, size in ((x0, y0, _ORIGINAL_COLOUR, 6.0), (x1, y1, _RELEASED_COLOUR, 4.0)):
        inside = (x >= zx[0]) & (x <= zx[1]) & (y >= zy[0]) & (y <= zy[1])
        idx = np.flatnonzero(inside)
        idx = idx[_systematic(idx.size, _MAP_POINTS)]
        axes[2].scatter(x[idx], y[idx], s=size, c=colour, linewidths=0, alpha=0.8)
    axes[2].set_xlim(*zx)
    axes[2].set_ylim(*zy)
    axes[2].set_title("zoom on the busiest area: original (grey), released (red)", fontsize=9)
    for ax in axes:
        ax.set_aspect(aspect)
        ax.locator_params(nbins=4)
        ax.ticklabel_format(useOffset=False)
        ax.tick_params(labelsize=7)
        ax.set_xlabel("longitude", fontsize=8)
    axes[0].set_ylabel("latitude", fontsize=8)
    figure = f"<figure>{_img(fig, f'locations {lat}, {lon} before and after')}</figure>"
    far = (int((~near0).sum()), int((~near1).sum()))
    if any(far):
        figure += _p(
            f"Not drawn: {far[0]:,} original and {far[1]:,} released points more than "
            f"{_REGION_KM:g} km from the median original location ({centre[0]:.4f}, "
            f"{centre[1]:.4f}), such as (0, 0) placeholders.",
            "muted",
        )
    return figure


def _within_region(
    lat: FloatArray, lon: FloatArray, centre: tuple[float, float]
) -> npt.NDArray[np.bool_]:
    """Points within ``_REGION_KM`` of ``centre`` (haversine on a 6 371 km sphere)."""
    phi0, lam0 = math.radians(centre[0]), math.radians(centre[1])
    phi, lam = np.radians(lat), np.radians(lon)
    a = (
        np.sin((phi - phi0) / 2.0) ** 2
        + math.cos(phi0) * np.cos(phi) * np.sin((lam - lam0) / 2.0) ** 2
    )
    distance_km = 2.0 * 6371.0088 * np.arcsin(np.sqrt(np.clip(a, 0.0, 1.0)))
    near: npt.NDArray[np.bool_] = distance_km <= _REGION_KM
    return near


def _padded(limits: FloatArray) -> tuple[float, float]:
    low, high = float(limits[0]), float(limits[1])
    pad = 0.02 * (high - low) if high > low else 0.001
    return low - pad, high + pad


def _location_measures(
    ctx: _Context, lat: Hashable, lon: Hashable, generator: np.random.Generator
) -> str:
    from veil.geo.evaluate import evaluate

    matched = ctx.matched()
    if matched is None:
        return _p(
            "The released rows cannot be matched to original rows: linkage is not measured.",
            "error",
        )
    # evaluate takes string labels: hand it the two coordinate columns under fixed names.
    before, after = (frame[[lat, lon]].set_axis(["lat", "lon"], axis=1) for frame in matched)
    y0 = before["lat"].to_numpy(dtype=np.float64, na_value=np.nan)
    x0 = before["lon"].to_numpy(dtype=np.float64, na_value=np.nan)
    complete = np.isfinite(y0) & np.isfinite(x0)
    if not complete.any():
        return _p("The original has no complete coordinate pair: linkage is not measured.")
    centre = (float(np.median(y0[complete])), float(np.median(x0[complete])))
    # One local projection in metres must hold every point: far outliers are left out.
    keep = complete & _within_region(y0, x0, centre)
    measures = evaluate(
        before[keep].reset_index(drop=True),
        after[keep].reset_index(drop=True),
        "lat",
        "lon",
        rng=generator,
    ).summary()
    note = ""
    if not keep.all():
        note = _p(
            f"Measured on the {int(keep.sum()):,} records whose original location is "
            f"complete and within {_REGION_KM:g} km of the median original location; "
            f"{int((~keep).sum()):,} are left out.",
            "muted",
        )
    labels = {
        "reid_rate": "re-identified by a nearest-location attacker",
        "suppressed_share": "locations suppressed",
        "median_shift_m": "median displacement (m)",
        "mean_shift_m": "mean displacement (m)",
        "p95_shift_m": "95th percentile displacement (m)",
        "density_corr": "neighbourhood-density correlation",
        "k_median": "median spatial k (true points at least as close)",
        "k_below_5_share": "records with spatial k below 5",
    }
    shares = {"reid_rate", "suppressed_share", "k_below_5_share"}
    rows = [(labels.get(k, k), _pct(v) if k in shares else v) for k, v in measures.items()]
    return (
        note
        + _table(["measure", "value"], rows)
        + _p(
            "Measured against an attacker who holds the true locations and links each "
            "released point to the nearest one (veil.geo.evaluate).",
            "muted",
        )
    )


def _warnings_section(manifest: Mapping[str, Any]) -> str | None:
    warnings = manifest.get("warnings")
    if not isinstance(warnings, Sequence) or isinstance(warnings, str) or not warnings:
        return None
    rows = []
    for item in warnings:
        if isinstance(item, Mapping):
            rows.append((_text(item.get("category")) or "—", _text(item.get("message"))))
        else:
            rows.append(("—", _text(item)))
    return _table(["category", "message"], rows)


def _unprotected_section(manifest: Mapping[str, Any]) -> str | None:
    value = manifest.get("unprotected", manifest.get("not_protected"))
    if value is None or (isinstance(value, (Mapping, list, tuple)) and not value):
        return None
    if isinstance(value, Mapping):
        items = [
            f"<li><b>{_e(str(kind).replace('_', ' '))}</b>: {_e(_describe(v))}</li>"
            for kind, v in value.items()
        ]
    elif isinstance(value, (list, tuple)):
        items = [f"<li>{_e(_describe(v))}</li>" for v in value]
    else:
        items = [f"<li>{_e(value)}</li>"]
    return "<ul>" + "".join(items) + "</ul>"
