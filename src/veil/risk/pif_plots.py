"""Figures of a PIF assessment: the CSF heat map and PIF bars (OptimShare, Figs. 6 and 8).

matplotlib is imported when a figure is drawn (the ``release`` or ``geo`` extra installs
it). Figures are bare :class:`matplotlib.figure.Figure` objects on the Agg canvas, so
drawing never touches pyplot's state or the caller's backend; a figure given a ``path``
is written atomically (:func:`veil.atomic.write_atomic`).

The figures show values computed from the raw records; they are for the data custodian
and carry no privacy guarantee.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from veil.atomic import write_atomic
from veil.errors import DataTypeError, ParameterError
from veil.risk.pif import PifAssessment

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["csf_heatmap", "pif_bars", "pif_figure"]

_FORMATS = (".png", ".svg", ".pdf")
_HIGHLIGHT = "#d62728"
_PLAIN = "#4c72b0"
_SERIES = ("#4c72b0", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd")


def _check_path(path: str | os.PathLike[str] | None) -> str | None:
    if path is None:
        return None
    suffix = Path(os.fspath(path)).suffix.lower()
    if suffix not in _FORMATS:
        raise ParameterError(f"path: must end in {', '.join(_FORMATS)}; got {os.fspath(path)!r}")
    return suffix[1:]


def _new_figure(width: float, height: float, ncols: int = 1) -> tuple[Figure, list[Axes]]:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise ImportError("PIF figures need matplotlib: pip install 'veil[release]'") from exc
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, ncols, squeeze=False)[0]
    return figure, list(axes)


def _save(figure: Figure, path: str | os.PathLike[str] | None, fmt: str | None) -> None:
    if path is not None and fmt is not None:
        write_atomic(path, lambda tmp: figure.savefig(tmp, format=fmt, metadata=_metadata(fmt)))


def _metadata(fmt: str) -> dict[str, Any]:
    # No software or date stamps: the same assessment gives the same bytes.
    if fmt == "png":
        return {"Software": None}
    if fmt == "svg":
        return {"Date": None}
    return {"CreationDate": None}


def _label(value: Hashable) -> str:
    return str(value).replace("$", r"\$")


def _csf_frame(data: PifAssessment | pd.DataFrame) -> pd.DataFrame:
    if isinstance(data, PifAssessment):
        return data.csf
    if isinstance(data, pd.DataFrame):
        return data
    raise DataTypeError(
        f"assessment: expected a PifAssessment or a frame of CSFs; got {type(data).__name__}"
    )


def _draw_heatmap(ax: Axes, csf: pd.DataFrame, title: str | None) -> None:
    values = csf.to_numpy(dtype=np.float64)
    image = ax.imshow(
        values,
        aspect="auto",
        cmap="RdYlGn_r",
        vmin=0.0,
        vmax=1.0,
        interpolation="nearest",
    )
    ax.set_xticks(range(values.shape[1]))
    ax.set_xticklabels([_label(c) for c in csf.columns], rotation=60, ha="right")
    ax.set_ylabel(f"record (1-{values.shape[0]})")
    ax.set_title(title or "Cell surprise factor (CSF)")
    ax.figure.colorbar(image, ax=ax, label="CSF = |P(x | cohort) - P(x)|")


def csf_heatmap(
    assessment: PifAssessment | pd.DataFrame,
    *,
    title: str | None = None,
    path: str | os.PathLike[str] | None = None,
) -> Figure:
    """The CSF of every cell as a heat map (OptimShare Fig. 6a): green 0, red 1.

    Parameters
    ----------
    assessment : PifAssessment or pandas.DataFrame
        An assessment from :func:`veil.risk.assess_pif`, or its ``csf`` frame.
    title : str, optional
        The axes title.
    path : str or path-like, optional
        Write the figure there (``.png``, ``.svg`` or ``.pdf``), atomically.

    Returns
    -------
    matplotlib.figure.Figure
        Records top to bottom, attributes left to right.
    """
    fmt = _check_path(path)
    csf = _csf_frame(assessment)
    width = min(max(4.0, 0.45 * csf.shape[1] + 2.5), 16.0)
    figure, (ax,) = _new_figure(width, 5.0)
    _draw_heatmap(ax, csf, title)
    _save(figure, path, fmt)
    return figure


def _bar_frame(values: PifAssessment | pd.Series | pd.DataFrame) -> pd.DataFrame:
    if isinstance(values, PifAssessment):
        return values.pif_a.to_frame("PIF_A")
    if isinstance(values, pd.Series):
        return values.to_frame(values.name if values.name is not None else "PIF")
    if isinstance(values, pd.DataFrame):
        return values
    raise DataTypeError(
        "values: expected a PifAssessment, a Series or a DataFrame of PIF values; got "
        f"{type(values).__name__}"
    )


def _bars_and_highlight(
    values: PifAssessment | pd.Series | pd.DataFrame, highlight: Iterable[Hashable]
) -> tuple[pd.DataFrame, set[Hashable]]:
    frame = _bar_frame(values)
    chosen = set(highlight)
    unknown = [a for a in chosen if a not in frame.index]
    if unknown:
        raise ParameterError(f"highlight: {unknown!r} are not among the attributes drawn")
    return frame, chosen


def _draw_bars(
    ax: Axes,
    frame: pd.DataFrame,
    highlight: set[Hashable],
    title: str | None,
    ylabel: str,
) -> None:
    numbers = frame.to_numpy(dtype=np.float64)
    positions = np.arange(frame.shape[0], dtype=np.float64)
    width = 0.8 / max(frame.shape[1], 1)
    for j, series in enumerate(frame.columns):
        offset = (j - (frame.shape[1] - 1) / 2.0) * width
        if frame.shape[1] == 1:
            colours = [_HIGHLIGHT if a in highlight else _PLAIN for a in frame.index]
            ax.bar(positions + offset, numbers[:, j], width, color=colours)
        else:
            ax.bar(
                positions + offset,
                numbers[:, j],
                width,
                color=_SERIES[j % len(_SERIES)],
                label=_label(series),
            )
    ax.set_xticks(positions)
    ax.set_xticklabels([_label(a) for a in frame.index], rotation=60, ha="right")
    for tick, attribute in zip(ax.get_xticklabels(), frame.index, strict=True):
        if attribute in highlight:
            tick.set_color(_HIGHLIGHT)
            tick.set_fontweight("bold")
    finite = numbers[np.isfinite(numbers)]
    if finite.size and float(finite.max()) <= 1.0 and float(finite.min()) >= 0.0:
        ax.set_ylim(0.0, 1.0)
    ax.set_ylabel(ylabel)
    ax.set_title(title or "Personal information factor per attribute")
    if frame.shape[1] > 1:
        ax.legend()
    ax.grid(axis="y", alpha=0.3)


def pif_bars(
    values: PifAssessment | pd.Series | pd.DataFrame,
    *,
    highlight: Iterable[Hashable] = (),
    title: str | None = None,
    ylabel: str = "PIF_A (mean CSF)",
    path: str | os.PathLike[str] | None = None,
) -> Figure:
    """PIF per attribute as bars (OptimShare Figs. 6b-d and 8).

    Parameters
    ----------
    values : PifAssessment, pandas.Series or pandas.DataFrame
        An assessment (its PIF_A), one value per attribute, or a frame with one column
        per series drawn side by side (for example QPIF and QSPIF).
    highlight : iterable of attribute names
        Attributes drawn in red, as the paper marks its quasi-identifiers.
    title, ylabel : str, optional
        Axes title and y label.
    path : str or path-like, optional
        Write the figure there (``.png``, ``.svg`` or ``.pdf``), atomically.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fmt = _check_path(path)
    frame, chosen = _bars_and_highlight(values, highlight)
    width = min(max(4.0, 0.45 * frame.shape[0] * max(frame.shape[1], 1) + 2.0), 16.0)
    figure, (ax,) = _new_figure(width, 4.5)
    _draw_bars(ax, frame, chosen, title, ylabel)
    _save(figure, path, fmt)
    return figure


def pif_figure(
    assessment: PifAssessment,
    *,
    highlight: Iterable[Hashable] = (),
    path: str | os.PathLike[str] | None = None,
) -> Figure:
    """The CSF heat map and the PIF_A bars of one assessment side by side (Fig. 6a-b).

    Parameters
    ----------
    assessment : PifAssessment
        From :func:`veil.risk.assess_pif`.
    highlight : iterable of attribute names
        Attributes drawn in red in the bars.
    path : str or path-like, optional
        Write the figure there (``.png``, ``.svg`` or ``.pdf``), atomically.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fmt = _check_path(path)
    if not isinstance(assessment, PifAssessment):
        raise DataTypeError(
            f"assessment: expected a PifAssessment; got {type(assessment).__name__}"
        )
    frame, chosen = _bars_and_highlight(assessment, highlight)
    width = min(max(8.0, 0.9 * frame.shape[0] + 4.0), 20.0)
    figure, (left, right) = _new_figure(width, 5.0, ncols=2)
    _draw_heatmap(left, assessment.csf, None)
    _draw_bars(right, frame, chosen, None, "PIF_A (mean CSF)")
    _save(figure, path, fmt)
    return figure
