"""Local recoding: each subset of records gets its own full-domain generalization.

A global (full-domain) generalization applies one level per quasi-identifier to every
record and suppresses the records whose classes fail the privacy models. Local recoding
in ARX's sense [1]_ [2]_ gives those records a second chance: the optimal generalization
is searched again for the suppressed records alone, the records it releases keep their
own, usually coarser, levels, and the search repeats on what is still suppressed. The
released table mixes levels: records of round 0 may show ``age`` as ``[20, 25)`` while
records of round 1 show ``[20, 40)``.

This is ARX's ``optimizeIterative`` with its default balance of generalization and
suppression: each round searches the same lattice with the same models, the same metric
and the same relative suppression limit, applied to the round's records. Rounds stop when
no record remains suppressed, when a round releases no record (no transformation of the
subset satisfies the models within the limit, or the best one suppresses everything),
or when its records, merged into the table, would make the final check below suppress
more records or lose more than without them, or after ``max_rounds``. A round never
raises the table's Loss: a released record costs at most what its suppression costs (1
per attribute), and a round that would trigger more repairs than it saves is not taken.

Privacy. Within a round, every class (records of that round with equal generalized
values) satisfies every model, as :func:`~veil.anonymity.anonymize` guarantees on that
subset. In the released table, records of different rounds that show the same values
form one class. Merging classes keeps k-anonymity, distinct and entropy l-diversity
(entropy is concave), recursive (c, l)-diversity (the l - 1 largest counts are
subadditive) and t-closeness (the EMD is convex) -- but t-closeness, like every model
that compares a class with the table's distribution, only against one reference
distribution, whereas round ``r >= 1`` measures it against its own records'. So every
model is checked again on the merged classes of the final table and a class that fails
is suppressed (counted in ``repaired``). The reference distribution of that check is,
by default (``reference="release"``), the released records' own, checked again after
each suppression until every released class passes, so the released table passes the
table checks of :mod:`veil.anonymity.checks`; with ``reference="input"`` it is the
whole input's, ARX's semantics, as :func:`anonymize` then uses. The guarantee is
therefore the global one: every class of released records satisfies every model
against the reference distribution. Values that overlap
without being equal (``[20, 25)`` and ``[20, 40)``) are different classes, each
protected on its own; knowing a target's age only points to more candidates. As for
every syntactic model, nothing is claimed about what a reader who knows the algorithm
infers from the round a record was released in (its round-0 class was too small).

With ``suppression="mark"`` suppressed records stay in the table with every
quasi-identifier ``"*"``, like records a round generalized to the top of every hierarchy;
the final check then sees them as one class, as a reader of the table does, and if that
class fails a model its released records are counted as suppressed (their rows do not
change). As for :func:`anonymize`, marked rows carry no guarantee.

References
----------
.. [1] F. Prasser, F. Kohlmayer, K. A. Kuhn, "Efficient and effective pruning
   strategies for health data de-identification", BMC Medical Informatics and Decision
   Making 16:49, 2016 ("Lightning" and local transformation in ARX).
.. [2] F. Prasser, J. Eicher, H. Spengler, R. Bild, K. A. Kuhn, "Flexible data
   anonymization using ARX -- current status and challenges ahead", Software: Practice
   and Experience 50(7), 2020.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.anonymity.hierarchy import Hierarchy
from veil.anonymity.models import PrivacyModel
from veil.anonymity.search import NoSolutionError, anonymize, evaluate
from veil.classes import class_ids
from veil.errors import DataTypeError, ParameterError
from veil.frames import output_frame

__all__ = ["LocalRecodingResult", "anonymize_local"]

_Ints = npt.NDArray[np.int64]
_Floats = npt.NDArray[np.float64]
_Objects = npt.NDArray[np.object_]
_SUPPRESSED = -1
_SUPPRESSION = ("remove", "mark")


@dataclass(frozen=True)
class LocalRecodingResult:
    """A table released with a generalization per subset of records.

    Attributes
    ----------
    data : pandas.DataFrame
        The table with each QI generalized to its record's levels (labels as text);
        suppressed records removed or, with ``suppression="mark"``, their QIs ``"*"``.
    subset : pandas.Series
        The round that released each input record (0 is the global search), ``<NA>``
        for a suppressed record; indexed like the input.
    levels : pandas.DataFrame
        Hierarchy level of each QI for each input record (nullable integers, ``<NA>``
        when suppressed); indexed like the input.
    rounds : pandas.DataFrame
        One row per round: ``round`` (the subset id), ``records`` searched, the levels
        chosen (``<NA>`` when no transformation satisfied the models), ``released``,
        ``suppressed`` (still suppressed afterwards), ``repaired`` (of the round's
        released records, those suppressed by the final check) and ``loss`` (ARX's Loss
        of the whole table after the round, before the final check).
    suppressed : int
        Number of suppressed records in the end.
    repaired : int
        Records suppressed by the final check because their merged class failed a model.
    reference : {"release", "input"}
        The distribution that t-closeness, delta-disclosure and beta-likeness compared
        classes with: the released records' or the whole input's (ARX's semantics).
    metrics : dict of str to float
        The metrics of :mod:`veil.anonymity.metrics` over the released table, computed
        per record from its own levels: ``"loss"`` and ``"loss_mean"`` (a record's loss
        on a QI is (leaves under its generalized value - 1) / (leaves - 1), 1 when
        suppressed; aggregated over QIs as ARX does), ``"precision"`` (its level /
        height, 1 when suppressed), ``"entropy"`` (non-uniform entropy, -log2 of the
        share of its generalized value's input records holding its original value;
        the root's when suppressed), and ``"discernibility"`` and ``"aecs"`` over the
        classes of the released table (records with equal released values, whatever
        their round).
    """

    data: pd.DataFrame
    subset: pd.Series
    levels: pd.DataFrame
    rounds: pd.DataFrame
    suppressed: int
    repaired: int
    metrics: dict[str, float]
    reference: str = "release"


class _Table:
    """The records' level-0 codes and, per QI and level, each group's Loss and count."""

    def __init__(self, work: pd.DataFrame, hierarchies: Mapping[str, Hierarchy]) -> None:
        self.qis = list(hierarchies)
        self.hierarchies = [hierarchies[q] for q in self.qis]
        self.n = len(work)
        self.codes = [h.encode(work[q]) for q, h in zip(self.qis, self.hierarchies, strict=True)]
        self.heights = [h.levels - 1 for h in self.hierarchies]
        self.group_loss: list[list[_Floats]] = []
        # log2 of each group's record count in the input (for the non-uniform entropy),
        # and the sum over records of log2 of their original value's count.
        self.log_count: list[list[_Floats]] = []
        self.entropy_offset: list[float] = []
        for h, codes in zip(self.hierarchies, self.codes, strict=True):
            leaves = len(h.codes(0))
            losses, logs = [], []
            for level in range(h.levels):
                size = np.bincount(h.codes(level)).astype(np.float64)
                losses.append((size - 1) / (leaves - 1) if leaves > 1 else np.zeros(len(size)))
                count = np.bincount(h.codes(level)[codes], minlength=len(size))
                logs.append(np.log2(np.maximum(count, 1)))
            self.group_loss.append(losses)
            self.log_count.append(logs)
            self.entropy_offset.append(float(logs[0][codes].sum()))

    def groups(self, j: int, level: int, rows: _Ints) -> _Ints:
        """Group id at ``level`` of QI ``j`` for the records ``rows``."""
        return self.hierarchies[j].codes(level)[self.codes[j][rows]].astype(np.int64)

    def record_loss(self, subset: _Ints, levels: list[dict[str, int]]) -> _Floats:
        """Loss of every record (rows) on every QI (columns); 1 when suppressed."""
        loss = np.ones((self.n, len(self.qis)))
        for s, chosen in enumerate(levels):
            rows = np.flatnonzero(subset == s)
            for j, q in enumerate(self.qis):
                loss[rows, j] = self.group_loss[j][chosen[q]][self.groups(j, chosen[q], rows)]
        return loss

    def entropy(self, subset: _Ints, levels: list[dict[str, int]]) -> float:
        """Non-uniform entropy: bits lost over records and QIs (root when suppressed)."""
        suppressed = int((subset == _SUPPRESSED).sum())
        bits = 0.0
        for j, q in enumerate(self.qis):
            bits += suppressed * math.log2(self.n) - self.entropy_offset[j]
            for s, chosen in enumerate(levels):
                rows = np.flatnonzero(subset == s)
                bits += float(self.log_count[j][chosen[q]][self.groups(j, chosen[q], rows)].sum())
        return max(bits, 0.0)

    def labels(self, subset: _Ints, levels: list[dict[str, int]], blank: str) -> list[_Objects]:
        """Released label of every record per QI; ``blank`` for suppressed records."""
        out = []
        for j, q in enumerate(self.qis):
            column = np.full(self.n, blank, dtype=object)
            for s, chosen in enumerate(levels):
                rows = np.flatnonzero(subset == s)
                column[rows] = self.hierarchies[j].labels(chosen[q])[
                    self.groups(j, chosen[q], rows)
                ]
            out.append(column)
        return out


def _aggregate_loss(per_attribute: _Floats) -> float:
    # ARX's default aggregation of the attributes' losses (geometric mean of 1 + loss).
    return float(np.exp(np.log1p(per_attribute).mean()) - 1.0)


def _metrics(table: _Table, subset: _Ints, levels: list[dict[str, int]]) -> dict[str, float]:
    per_record = table.record_loss(subset, levels)
    per_attribute = per_record.mean(axis=0)
    share = np.ones((table.n, len(table.qis)))
    for s, chosen in enumerate(levels):
        rows = subset == s
        share[rows] = [
            chosen[q] / h if h else 0.0 for q, h in zip(table.qis, table.heights, strict=True)
        ]
    released = np.flatnonzero(subset != _SUPPRESSED)
    suppressed = table.n - len(released)
    labels = table.labels(subset, levels, "*")
    if len(released):
        ids, n_classes = class_ids((pd.Index(col[released]) for col in labels), len(released))
        sizes = np.bincount(ids, minlength=n_classes).astype(np.float64)
    else:
        sizes = np.zeros(0)
    classes = len(sizes) + (1 if suppressed else 0)
    return {
        "loss": _aggregate_loss(per_attribute),
        "loss_mean": float(per_attribute.mean()),
        "discernibility": float(sizes @ sizes) + float(table.n) * suppressed,
        "aecs": table.n / classes,
        "precision": float(share.mean()),
        "entropy": table.entropy(subset, levels),
    }


def _check_final(
    table: _Table,
    work: pd.DataFrame,
    subset: _Ints,
    levels: list[dict[str, int]],
    models: list[PrivacyModel],
    sensitive: str | Sequence[str] | None,
    suppression: str,
    reference: str,
) -> _Ints:
    """Positions of released records whose class in the final table fails a model."""
    released = subset != _SUPPRESSED
    if not released.any():
        return np.zeros(0, dtype=np.int64)
    blank = "*"
    # With reference="release" the check sees the released records only (marked rows
    # carry no guarantee), so the models compare with their distribution, and again
    # after each suppression.
    rows = np.flatnonzero(released) if reference == "release" else np.arange(table.n)
    if suppression == "remove" and reference == "input":
        # Suppressed records are absent from the release: a label no hierarchy uses
        # keeps them out of every released class, while t-closeness still measures
        # against the whole input's distribution, as the search does.
        used = {str(x) for h in table.hierarchies for lv in range(h.levels) for x in h.labels(lv)}
        blank = "\x00suppressed"
        while blank in used:
            blank += "\x00"
    labels = [column[rows] for column in table.labels(subset, levels, blank)]
    check = pd.DataFrame(dict(zip(table.qis, labels, strict=True)))
    identity: dict[str, Hierarchy] = {}
    for q, column in zip(table.qis, labels, strict=True):
        values = pd.unique(column)
        identity[q] = Hierarchy.from_frame(pd.DataFrame({0: values, 1: ["*"] * len(values)}))
    attributes = [m.attribute for m in models if m.attribute is not None]
    declared = [sensitive] if isinstance(sensitive, str) else list(sensitive or [])
    for att in dict.fromkeys([*attributes, *declared]):
        check[att] = work[att].to_numpy()[rows]
    result = evaluate(
        check,
        identity,
        dict.fromkeys(table.qis, 0),
        models,
        max_suppression=1.0,
        sensitive=sensitive,
        reference=reference,
    )
    kept = np.zeros(table.n, dtype=bool)
    kept[rows[result.data.index.to_numpy()]] = True
    return np.flatnonzero(released & ~kept).astype(np.int64)


def anonymize_local(
    df: pd.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    models: Sequence[PrivacyModel] | PrivacyModel,
    *,
    max_suppression: float,
    metric: str = "loss",
    sensitive: str | Sequence[str] | None = None,
    suppression: str = "remove",
    max_rounds: int = 10,
    reference: str = "release",
) -> LocalRecodingResult:
    """Generalize with the optimal global transformation, then re-anonymize what it suppressed.

    Round 0 is :func:`~veil.anonymity.anonymize` on the whole table. Each further round
    runs it on the records still suppressed, with the same models, metric and
    ``max_suppression`` (a share of the round's records), and releases what it can at
    the levels it finds. Every class of the released table -- records with equal
    released values, whatever their round -- satisfies every model: classes that merge
    across rounds are checked again and suppressed if they fail (see the module notes).

    Parameters
    ----------
    df : pandas.DataFrame
        The table; not modified.
    hierarchies : mapping of str to Hierarchy
        One hierarchy per quasi-identifier; its keys are the QIs.
    models : PrivacyModel or sequence of PrivacyModel
        Privacy models, all enforced.
    max_suppression : float
        Largest share of each round's records that its search may suppress, in [0, 1].
    metric : str, default "loss"
        Objective of each round's search, one of :data:`~veil.anonymity.METRICS`.
    sensitive : str or sequence of str, optional
        Sensitive columns, as for :func:`anonymize`.
    suppression : {"remove", "mark"}
        Drop the records still suppressed at the end, or keep them with every QI ``"*"``.
    max_rounds : int, default 10
        Rounds after the global one, at least 0 (0 is :func:`anonymize` alone).
    reference : {"release", "input"}, default "release"
        What t-closeness, delta-disclosure and beta-likeness compare classes with, in
        every round and in the final check: the released records' distribution (the
        released table passes the table checks) or the whole input's (ARX's
        semantics); see :func:`anonymize`.

    Returns
    -------
    LocalRecodingResult

    Raises
    ------
    ParameterError, ColumnError, DataTypeError
        For invalid arguments (each named in the message).
    NoSolutionError
        If not even the global round finds a transformation.

    References
    ----------
    .. [1] F. Prasser, F. Kohlmayer, K. A. Kuhn, BMC Medical Informatics and Decision
       Making 16:49, 2016.

    Examples
    --------
    >>> from veil.anonymity import Hierarchy, KAnonymity
    >>> df = pd.DataFrame({"zip": ["1301", "1301", "1302", "1302", "1311", "1312"]})
    >>> h = {"zip": Hierarchy.masking(["1301", "1302", "1311", "1312"], steps=2)}
    >>> result = anonymize_local(df, h, KAnonymity(2), max_suppression=0.4)
    >>> result.data["zip"].tolist()
    ['1301', '1301', '1302', '1302', '131*', '131*']
    >>> result.subset.tolist()
    [0, 0, 0, 0, 1, 1]
    """
    if not isinstance(df, pd.DataFrame):
        raise DataTypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if suppression not in _SUPPRESSION:
        raise ParameterError(f"suppression must be one of {_SUPPRESSION}, got {suppression!r}")
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, (int, np.integer)):
        raise ParameterError(f"max_rounds must be an integer >= 0, got {max_rounds!r}")
    if max_rounds < 0:
        raise ParameterError(f"max_rounds must be an integer >= 0, got {max_rounds!r}")
    model_list = [models] if isinstance(models, PrivacyModel) else list(models)
    if not isinstance(hierarchies, Mapping):
        raise ParameterError(
            "hierarchies must map QI columns to Hierarchy objects, got "
            f"{type(hierarchies).__name__}"
        )
    declared = [sensitive] if isinstance(sensitive, str) else list(sensitive or [])
    wanted = [*hierarchies, *(getattr(m, "attribute", None) for m in model_list), *declared]
    # Positions, not labels: the searches return a table indexed 0..n-1.
    columns = [c for c in dict.fromkeys(wanted) if c is not None and c in df.columns]
    work = df[columns].reset_index(drop=True)
    options = {
        "max_suppression": max_suppression,
        "metric": metric,
        "sensitive": sensitive,
        "reference": reference,
    }
    first = anonymize(work, hierarchies, model_list, **options)  # type: ignore[arg-type]
    table = _Table(work, hierarchies)
    subset = np.full(table.n, _SUPPRESSED, dtype=np.int64)
    subset[first.data.index.to_numpy()] = 0
    levels = [first.levels]
    rows: list[dict[str, object]] = []

    def record(round_: int, searched: int, chosen: Mapping[str, int] | None, released: int) -> None:
        current = _metrics(table, subset, levels)
        rows.append(
            {
                "round": round_,
                "records": searched,
                **{q: (chosen[q] if chosen else pd.NA) for q in table.qis},
                "released": released,
                "suppressed": int((subset == _SUPPRESSED).sum()),
                "repaired": 0,
                "loss": current["loss"],
            }
        )

    def settle(candidate: _Ints, chosen: list[dict[str, int]]) -> tuple[_Ints, int, float]:
        """The final check of a table: its failing records, suppressed count and loss."""
        failed = _check_final(
            table, work, candidate, chosen, model_list, sensitive, suppression, reference
        )
        settled = candidate.copy()
        settled[failed] = _SUPPRESSED
        count = int((settled == _SUPPRESSED).sum())
        return failed, count, _metrics(table, settled, chosen)["loss"]

    record(0, table.n, first.levels, len(first.data))
    failed, suppressed, loss = settle(subset, levels)
    for round_ in range(1, max_rounds + 1):
        remaining = np.flatnonzero(subset == _SUPPRESSED)
        if len(remaining) == 0:
            break
        try:
            found = anonymize(
                work.iloc[remaining].reset_index(drop=True),
                hierarchies,
                model_list,
                **options,  # type: ignore[arg-type]
            )
        except NoSolutionError:
            record(round_, len(remaining), None, 0)
            break
        candidate = subset.copy()
        candidate[remaining[found.data.index.to_numpy()]] = round_
        outcome = settle(candidate, [*levels, found.levels])
        # A round whose records, merged into the table, would make the final check
        # suppress more or lose more (their values change the distribution the other
        # classes are compared with) is not taken: local recoding never does worse.
        if len(found.data) == 0 or outcome[1] > suppressed or outcome[2] > loss + 1e-12:
            record(round_, len(remaining), found.levels, 0)
            break
        subset = candidate
        levels.append(found.levels)
        failed, suppressed, loss = outcome
        record(round_, len(remaining), found.levels, len(found.data))
    repaired_per_round = np.bincount(subset[failed], minlength=len(rows))
    subset[failed] = _SUPPRESSED
    result = _result(df, table, subset, levels, rows, repaired_per_round, len(failed), suppression)
    return replace(result, reference=reference)


def _result(
    df: pd.DataFrame,
    table: _Table,
    subset: _Ints,
    levels: list[dict[str, int]],
    rows: list[dict[str, object]],
    repaired_per_round: _Ints,
    repaired: int,
    suppression: str,
) -> LocalRecodingResult:
    released = subset != _SUPPRESSED
    out = output_frame(df)
    for q, column in zip(table.qis, table.labels(subset, levels, "*"), strict=True):
        out[q] = column
    if suppression == "remove":
        out = out.iloc[np.flatnonzero(released)]
    per_record = pd.DataFrame(
        {
            q: pd.arrays.IntegerArray(
                np.array([lv[q] for lv in levels], dtype=np.int64)[np.maximum(subset, 0)],
                ~released,
            )
            for q in table.qis
        },
        index=df.index,
    )
    for row, count in zip(rows, repaired_per_round.tolist(), strict=True):
        row["repaired"] = count
    rounds = pd.DataFrame(rows)
    for q in table.qis:
        rounds[q] = rounds[q].astype("Int64")
    subset_series = pd.Series(
        pd.arrays.IntegerArray(np.maximum(subset, 0), ~released), index=df.index, name="subset"
    )
    return LocalRecodingResult(
        data=out,
        subset=subset_series,
        levels=per_record,
        rounds=rounds,
        suppressed=int((~released).sum()),
        repaired=repaired,
        metrics=_metrics(table, subset, levels),
    )
