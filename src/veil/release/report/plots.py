"""The matplotlib figures of the release report: Agg figures embedded as PNG
``data:`` URIs, histograms and category bars of one column before and after.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.release.report.page import _e

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

FloatArray = npt.NDArray[np.float64]

# Categories drawn per categorical column; the rest are summed into one bar.
_TOP_CATEGORIES: Final[int] = 12
# Bars drawn for values in their own order (codes, intervals); the rest form one bar.
_ORDERED_BARS: Final[int] = 30
_HISTOGRAM_BINS: Final[int] = 30
_DPI: Final[int] = 80
_ORIGINAL_COLOUR: Final[str] = "#7f7f7f"
_RELEASED_COLOUR: Final[str] = "#d62728"


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


class _Missing:
    """The one label of missing values in a table of shares.

    pandas keeps ``None`` and ``NaN`` apart in an object index but merges them when it
    aligns an object index with a string one (pandas 3), after which a label taken from
    one side no longer finds its row. One sentinel object compares equal to itself only.
    """

    def __repr__(self) -> str:
        return "(missing)"


_MISSING: Final[_Missing] = _Missing()


def _label(value: Any, width: int = 28) -> str:
    """Text safe for a matplotlib label: short, and no mathtext ($)."""
    if value is None or value is _MISSING or (isinstance(value, float) and math.isnan(value)):
        text = "(missing)"
    elif isinstance(value, (float, np.floating)) and float(value).is_integer():
        text = str(int(value))  # a code read as a float: 1.0 -> 1
    else:
        text = str(value)
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


def _category_shares(series: pd.Series[Any]) -> pd.Series[Any]:
    """The share of rows per value; missing values (None, NaN, NA) under ``_MISSING``."""
    counts = series.value_counts(dropna=True)
    counts.index = pd.Index(counts.index.to_list(), dtype=object)
    missing = int(series.isna().sum())
    if missing:
        counts = pd.concat([counts, pd.Series([missing], index=pd.Index([_MISSING], dtype=object))])
    return counts / max(len(series), 1)


def _bars(
    ax: Axes,
    samples: Sequence[tuple[pd.Series[Any], str, str]],
    order: Sequence[Any] | None = None,
) -> None:
    """Horizontal bars per category, side by side per sample.

    Without ``order``, the most frequent categories come first; with it (codes in value
    order, intervals in interval order) the values keep that order.
    """
    shares = pd.concat([s for s, _, _ in samples], axis=1).fillna(0.0)
    if order is None:
        ranked = shares.max(axis=1).sort_values(ascending=False, kind="stable").index
        top, rest = list(ranked[:_TOP_CATEGORIES]), ranked[_TOP_CATEGORIES:]
    else:
        listed = [v for v in order if v in shares.index]
        listed += [v for v in shares.index if v not in set(listed)]  # missing, unmatched
        top, rest = listed[:_ORDERED_BARS], pd.Index(listed[_ORDERED_BARS:])
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
