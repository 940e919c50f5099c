"""OptimShare's figures: utility and effectiveness per candidate, and the Table 2 comparison.

* :func:`candidates_figure`: the paper's Fig. 7, the utility (``1 - U_l``) and the
  effectiveness (``e``) of every candidate of a search, pair by pair, with the
  threshold E^T and the released candidate marked.
* :func:`comparison_table`: the paper's Table 2, the original against a fully synthetic
  table and the OptimShare release: mean and standard deviation of the numeric Q
  columns, and GaussianNB's RMSE (on the label's public codes), precision and recall
  (weighted by class support), each table's classifier trained on its rows of the
  training folds and tested on the held-out original records (the original
  cross-validated against itself).

Both read raw records (the table, the search's scores): they are for the custodian and
carry no privacy guarantee. matplotlib (``pip install 'veil[release]'``) is imported
only when a figure is drawn.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from veil.atomic import write_atomic
from veil.errors import ColumnError, ParameterError
from veil.rng import RngLike, resolve_rng
from veil.share.encoding import record_vectors
from veil.share.utility import UtilityReference
from veil.synth import TableDomain

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from veil.share.result import ShareResult

__all__ = ["candidates_figure", "comparison_table"]


_FORMATS = (".png", ".svg", ".pdf")


def _new_figure() -> tuple[Figure, Any]:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(
            "veil.share's figures need matplotlib: pip install 'veil[release]'", name="matplotlib"
        ) from exc
    figure = Figure(figsize=(11, 3.8), layout="constrained")
    FigureCanvasAgg(figure)
    return figure, figure.subplots(1, 2, sharey=True)


def _save(figure: Figure, path: str | os.PathLike[str]) -> None:
    suffix = Path(os.fspath(path)).suffix.lower()
    if suffix not in _FORMATS:
        raise ParameterError(f"path: must end in {', '.join(_FORMATS)}; got {os.fspath(path)!r}")
    write_atomic(path, lambda tmp: figure.savefig(tmp, format=suffix[1:]))


def candidates_figure(
    result: ShareResult | pd.DataFrame,
    *,
    e_threshold: float | None = None,
    path: str | os.PathLike[str] | None = None,
) -> Figure:
    """Utility and effectiveness of every candidate (paper Fig. 7).

    Parameters
    ----------
    result : ShareResult or pandas.DataFrame
        A search result, or its ``table``.
    e_threshold : float, optional
        E^T drawn as a line (default: the result's setting; none for a bare table).
    path : path-like, optional
        Also save the figure there (format from the suffix).

    Returns
    -------
    matplotlib.figure.Figure
        Two panels, (a) utility and (b) effectiveness; x is the candidate, grouped by
        pair and labelled by its ε; the released candidate is circled.
    """
    table = result if isinstance(result, pd.DataFrame) else result.table
    if e_threshold is None and not isinstance(result, pd.DataFrame):
        e_threshold = float(result.settings["e_threshold"])
    missing = [c for c in ("pair", "epsilon", "utility", "e", "chosen") if c not in table.columns]
    if missing:
        raise ColumnError(f"result: the table lacks {missing!r} (not a search table)")
    fig, axes = _new_figure()
    x = np.arange(len(table))
    chosen = table["chosen"].to_numpy(dtype=bool)
    for ax, column, title in (
        (axes[0], "utility", "(a) utility 1 - U_l"),
        (axes[1], "e", "(b) effectiveness e = 1 - E_l"),
    ):
        ax.bar(x, table[column].to_numpy(dtype=float), color="#4c78a8", width=0.8)
        if chosen.any():
            ax.scatter(
                x[chosen],
                table.loc[chosen, column],
                s=90,
                facecolors="none",
                edgecolors="#d62728",
                linewidths=2,
                zorder=3,
                label="released",
            )
        if e_threshold is not None and column == "e":
            ax.axhline(
                e_threshold,
                color="#d62728",
                linestyle="--",
                linewidth=1,
                label=f"E^T = {e_threshold:g}",
            )
        starts = np.flatnonzero(
            np.r_[True, table["pair"].to_numpy()[1:] != table["pair"].to_numpy()[:-1]]
        )
        ax.set_xticks(starts)
        ax.set_xticklabels(
            [f"{table['epsilon'].iloc[i]:.2g}" for i in starts], rotation=90, fontsize=7
        )
        ax.set_xlabel("candidate (first of each pair labelled by its epsilon)")
        ax.set_title(title)
        ax.set_ylim(0, 1.05)
        if chosen.any() or column == "e":
            ax.legend(loc="lower right", fontsize=8)
    axes[0].set_ylabel("score")
    if path is not None:
        _save(fig, path)
    return fig


def _nb_metrics(
    reference: UtilityReference,
    frame: pd.DataFrame | None,
    domain: TableDomain,
    features: Sequence[str],
    label: str,
) -> dict[str, float]:
    if frame is None:
        predicted = reference.predictions()
    else:
        predicted = reference.predictions(
            record_vectors(frame, domain, features), domain.encode(frame, [label])[label]
        )
    truth = reference.labels
    k = int(max(truth.max(), predicted.max())) + 1
    support = np.bincount(truth, minlength=k).astype(np.float64)
    hits = np.bincount(truth[predicted == truth], minlength=k).astype(np.float64)
    called = np.bincount(predicted, minlength=k).astype(np.float64)
    precision = np.divide(hits, called, out=np.zeros(k), where=called > 0)
    return {
        "NB_RMSE": float(np.sqrt(np.mean((predicted - truth).astype(np.float64) ** 2))),
        # weighted by class support, as scikit-learn's average="weighted" (0 for a class
        # never predicted); the weighted recall is the accuracy
        "NB_precision": float(np.sum(support * precision) / truth.size),
        "NB_recall": float(hits.sum() / truth.size),
    }


def comparison_table(
    original: pd.DataFrame,
    tables: Mapping[str, pd.DataFrame],
    *,
    q: Sequence[str],
    label: str,
    domain: TableDomain | Mapping[str, Any],
    features: Sequence[str] | None = None,
    folds: int = 5,
    rng: RngLike = None,
) -> pd.DataFrame:
    """The paper's Table 2: the original beside synthetic tables of the same records.

    Parameters
    ----------
    original : pandas.DataFrame
        The records.
    tables : mapping of str to pandas.DataFrame
        Each compared table (for example ``{"Fully synthetic": ..., "OptimShare": ...}``),
        row ``i`` standing for record ``i`` of ``original``.
    q : sequence of str
        Columns whose mean and standard deviation are compared (numeric ones only).
    label : str
        The class column.
    domain : TableDomain or plan-like mapping
        Public domain of the features and the label.
    features : sequence of str, optional
        The classifier's features (default: every column of ``original`` in the domain
        but the label).
    folds : int, default 5
        Folds (from ``rng``, :func:`veil.share.record_folds`) shared by every classifier.
    rng : None, int or numpy.random.Generator
        Randomness of the folds, see :mod:`veil.rng`.

    Returns
    -------
    pandas.DataFrame
        Rows ``<q>_mean``, ``<q>_std`` per numeric Q column, then ``NB_RMSE``,
        ``NB_precision``, ``NB_recall``; columns ``Original`` and the keys of ``tables``.
    """
    table_domain = TableDomain.from_dict(domain) if not isinstance(domain, TableDomain) else domain
    cols = (
        [c for c in original.columns if c in table_domain.columns and c != label]
        if features is None
        else list(features)
    )
    if not cols:
        raise ParameterError("features: no column of the domain besides the label")
    for name, frame in tables.items():
        if len(frame) != len(original):
            raise ParameterError(
                f"tables[{name!r}]: has {len(frame)} rows, the original {len(original)}"
            )
    labels = table_domain.encode(original, [label])[label]
    reference = UtilityReference.build(
        record_vectors(original, table_domain, cols), labels, folds, resolve_rng(rng)
    )
    numeric = [c for c in q if pd.api.types.is_numeric_dtype(original[c])]
    out: dict[str, dict[str, float]] = {}
    for name, frame in {"Original": original, **tables}.items():
        values: dict[str, float] = {}
        for c in numeric:
            values[f"{c}_mean"] = float(frame[c].mean())
            values[f"{c}_std"] = float(frame[c].std())
        values.update(
            _nb_metrics(reference, None if frame is original else frame, table_domain, cols, label)
        )
        out[name] = values
    return pd.DataFrame(out)
