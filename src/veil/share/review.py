"""What a custodian reviews before publishing a partially perturbed table.

:func:`review_share` measures, on the raw records and the release of one OptimShare
search, the figures of the paper's review: PIF_A of every released attribute before and
after (Figs. 6b-d), QPIF and QSPIF of each exact attribute (Fig. 8), and the Table 2
comparison of the original, the chosen model sampled whole ("fully synthetic", every
column from the DP model) and the release. Numeric columns are binned by their public
domain's bins, so no binning is read from the records.

Every figure is computed from the raw records: it is for the custodian's report and
carries no privacy guarantee. Sampling the model whole is post-processing and costs
nothing; the sample is never released.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil.errors import ParameterError
from veil.risk.pif import assess_pif
from veil.rng import RngLike, resolve_rng, spawn
from veil.share.plots import comparison_table
from veil.synth import NumericColumn, SynthModel, TableDomain

__all__ = ["public_bins", "review_share"]


def public_bins(domain: TableDomain) -> dict[Hashable, list[float]]:
    """PIF's bins of the numeric columns: the edges of their public domain."""
    return {
        name: [float(e) for e in column.edges]
        for name, column in domain.columns.items()
        if isinstance(column, NumericColumn)
    }


def _pif_a(frame: pd.DataFrame, bins: dict[Hashable, list[float]]) -> dict[str, float]:
    wanted = {c: b for c, b in bins.items() if c in frame.columns}
    result = assess_pif(frame, bins=wanted, default_bins="exact")
    return {str(k): float(v) for k, v in result.pif_a.items()}


def _fully_synthetic(
    model: SynthModel, columns: Sequence[str], n: int, rng: np.random.Generator
) -> pd.DataFrame | None:
    """The model sampled whole, or None when it does not model every released column."""
    if any(c not in model.domain.columns for c in columns):
        return None
    drawn = model.sample(n, rng=rng)
    return drawn[list(columns)].reset_index(drop=True)


def review_share(
    original: pd.DataFrame,
    released: pd.DataFrame,
    *,
    q: Sequence[str],
    s: Sequence[str],
    label: str,
    domain: TableDomain,
    model: SynthModel | None = None,
    rng: RngLike = None,
) -> dict[str, Any]:
    """PIF before and after, QPIF and QSPIF, and the Table 2 comparison of one release.

    Parameters
    ----------
    original, released : pandas.DataFrame
        The records and their release (row ``i`` of one standing for row ``i`` of the
        other), each with the columns of ``q`` and ``s``. Not modified.
    q, s : sequence of str
        The exact and the synthesized columns.
    label : str
        The class column of the Table 2 classifier.
    domain : TableDomain
        The public domain of ``q`` and ``s`` (the bins of numeric columns).
    model : SynthModel, optional
        The model ``released``'s S was drawn from; sampled whole for the "Fully
        synthetic" column when it models every column of ``q`` and ``s``.
    rng : None, int or numpy.random.Generator
        Randomness of the whole sample and of the classifier's folds (:mod:`veil.rng`).

    Returns
    -------
    dict
        ``pif``: ``columns``, ``q``, PIF_A ``before`` and ``after`` per column, ``qpif``
        (each Q attribute on the Q-only table) and ``qspif`` (on Q ∪ S); ``bins``: the
        public edges used; ``comparison``: Table 2 as ``{row: {table: value}}``, with
        ``fully_synthetic`` saying whether that column could be drawn (and why not).

    Raises
    ------
    veil.errors.ParameterError
        If the two tables differ in length, or a value lies outside its public bins.
    """
    columns = [*q, *s]
    if len(original) != len(released):
        raise ParameterError(
            f"released: has {len(released)} rows, the original {len(original)}; "
            "the review pairs them row by row"
        )
    before_frame = original[columns].reset_index(drop=True)
    after_frame = released[columns].reset_index(drop=True)
    bins = public_bins(domain)
    before = _pif_a(before_frame, bins)
    q_only = _pif_a(before_frame[list(q)], bins)
    sample_rng, fold_rng = spawn(resolve_rng(rng), 2)
    whole = None if model is None else _fully_synthetic(model, columns, len(original), sample_rng)
    tables = {"OptimShare": after_frame}
    if whole is not None:
        tables = {"Fully synthetic": whole, **tables}
    table = comparison_table(before_frame, tables, q=q, label=label, domain=domain, rng=fold_rng)
    return {
        "pif": {
            "columns": columns,
            "q": list(q),
            "before": before,
            "after": _pif_a(after_frame, bins),
            "qpif": {c: q_only[c] for c in q},
            "qspif": {c: before[c] for c in q},
        },
        "bins": {str(c): edges for c, edges in bins.items() if c in columns},
        "comparison": {
            str(row): {str(k): float(v) for k, v in values.items()}
            for row, values in table.to_dict("index").items()
        },
        "fully_synthetic": (
            "the chosen model sampled whole (post-processing, never released)"
            if whole is not None
            else "not drawn: the model does not hold every released column (paper merge)"
        ),
    }
