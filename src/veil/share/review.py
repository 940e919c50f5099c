"""What a custodian reviews before publishing a partially perturbed table.

:func:`review_share` measures, on the raw records and the release of one OptimShare
search, the figures of the paper's review: PIF_A of every released attribute before and
after (Figs. 6b-d), QPIF and QSPIF of each exact attribute (Fig. 8), the Table 2
comparison of the original, the chosen model sampled whole ("fully synthetic", every
column from the DP model) and the release, and the release's residual linkage. Numeric
columns are binned by their public domain's bins, so no binning is read from the records.

Table 2's classifier figures depend on the random fold draw (and the fully synthetic
column on its sample): on NHANES the original's RMSE is about 0.40 with one draw and
0.53 with another. The review therefore repeats the comparison over ``repeats`` draws
and gives each figure's mean with its spread (standard deviation, minimum, maximum).

The linkage figures are the raw ones: ``L``, the fraction of records whose own released
row is the most similar to their original S within their group of identical Q
(:func:`veil.share.linkable_records`, a record alone in its group counting as linkable),
beside the scaled score ``P_N = min(1, ε L / T_ε)`` the search ranks by. ``P_N`` can be
small while most records are linkable (the paper's wine Q: 61-62 % linkable), so both
are given.

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
from veil.share.encoding import record_vectors
from veil.share.linkage import linkable_records, normalized_leak, similarity_groups
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


def _linkage(
    original: pd.DataFrame,
    released: pd.DataFrame,
    q: Sequence[str],
    s: Sequence[str],
    domain: TableDomain,
    epsilon: float | None,
    t_epsilon: float | None,
) -> dict[str, Any]:
    """The raw linkable fraction L of the release, and P_N when ε and T_ε are known."""
    groups = similarity_groups(original, q)
    linked = linkable_records(
        record_vectors(original, domain, s), record_vectors(released, domain, s), groups
    )
    n = len(original)
    sizes = np.bincount(groups)
    fraction = float(np.count_nonzero(linked)) / n
    p_n = (
        None
        if epsilon is None or t_epsilon is None
        else normalized_leak(epsilon, fraction, t_epsilon)
    )
    return {
        "records": n,
        "linkable_records": int(np.count_nonzero(linked)),
        "linkable_fraction": fraction,
        "groups": int(np.count_nonzero(sizes)),
        "alone": int(np.count_nonzero(sizes[groups] == 1)),
        "epsilon": epsilon,
        "t_epsilon": t_epsilon,
        "p_n": p_n,
    }


def _spread(draws: list[pd.DataFrame]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The mean of each Table 2 figure over the draws, and its spread."""
    stacked = np.stack([d.to_numpy(dtype=np.float64) for d in draws])
    first = draws[0]
    mean: dict[str, Any] = {}
    spread: dict[str, Any] = {}
    for i, row in enumerate(first.index):
        mean[str(row)] = {}
        spread[str(row)] = {}
        for j, column in enumerate(first.columns):
            values = stacked[:, i, j]
            mean[str(row)][str(column)] = float(values.mean())
            spread[str(row)][str(column)] = {
                "mean": float(values.mean()),
                "sd": float(values.std(ddof=1)) if values.size > 1 else 0.0,
                "min": float(values.min()),
                "max": float(values.max()),
                "values": [float(v) for v in values],
            }
    return mean, spread


def review_share(
    original: pd.DataFrame,
    released: pd.DataFrame,
    *,
    q: Sequence[str],
    s: Sequence[str],
    label: str,
    domain: TableDomain,
    model: SynthModel | None = None,
    repeats: int = 5,
    epsilon: float | None = None,
    t_epsilon: float | None = None,
    rng: RngLike = None,
) -> dict[str, Any]:
    """PIF before and after, QPIF and QSPIF, Table 2 with its spread, and the linkage.

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
    repeats : int, default 5
        Table 2 is measured this many times, each with its own fold draw (and whole
        sample of the model), from ``rng``.
    epsilon, t_epsilon : float, optional
        The chosen pair's ε and the search's ``T_ε``: with both, the linkage gives
        ``P_N`` from the raw ``L`` (under the private selection the search table's
        ``P_N`` is computed from a noisy count).
    rng : None, int or numpy.random.Generator
        Randomness of the whole samples and of the classifier's folds (:mod:`veil.rng`).

    Returns
    -------
    dict
        ``pif``: ``columns``, ``q``, PIF_A ``before`` and ``after`` per column, ``qpif``
        (each Q attribute on the Q-only table) and ``qspif`` (on Q ∪ S); ``bins``: the
        public edges used; ``comparison``: Table 2 as ``{row: {table: mean over the
        draws}}``; ``comparison_spread``: ``{row: {table: {mean, sd, min, max,
        values}}}``; ``repeats``; ``linkage``: ``records``, ``linkable_records``,
        ``linkable_fraction`` (L), ``groups``, ``alone`` (records alone on their Q),
        ``epsilon``, ``t_epsilon`` and ``p_n`` (None without ε and T_ε);
        ``fully_synthetic`` says whether that column could be drawn (and why not).

    Raises
    ------
    veil.errors.ParameterError
        If the two tables differ in length, ``repeats`` is not an integer >= 1, or a
        value lies outside its public bins.
    """
    columns = [*q, *s]
    if len(original) != len(released):
        raise ParameterError(
            f"released: has {len(released)} rows, the original {len(original)}; "
            "the review pairs them row by row"
        )
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise ParameterError(f"repeats: must be an integer >= 1, got {repeats!r}")
    before_frame = original[columns].reset_index(drop=True)
    after_frame = released[columns].reset_index(drop=True)
    bins = public_bins(domain)
    before = _pif_a(before_frame, bins)
    q_only = _pif_a(before_frame[list(q)], bins)
    draws: list[pd.DataFrame] = []
    drawn_whole = False
    for stream in spawn(resolve_rng(rng), int(repeats)):
        sample_rng, fold_rng = spawn(stream, 2)
        whole = (
            None if model is None else _fully_synthetic(model, columns, len(original), sample_rng)
        )
        tables = {"OptimShare": after_frame}
        if whole is not None:
            tables = {"Fully synthetic": whole, **tables}
            drawn_whole = True
        draws.append(
            comparison_table(before_frame, tables, q=q, label=label, domain=domain, rng=fold_rng)
        )
    comparison, spread = _spread(draws)
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
        "comparison": comparison,
        "comparison_spread": spread,
        "repeats": int(repeats),
        "linkage": _linkage(before_frame, after_frame, q, s, domain, epsilon, t_epsilon),
        "fully_synthetic": (
            "the chosen model sampled whole (post-processing, never released)"
            if drawn_whole
            else "not drawn: the model does not hold every released column (paper merge)"
        ),
    }
