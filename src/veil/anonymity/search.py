"""Optimal full-domain generalization over the lattice of hierarchy levels.

A *node* picks one hierarchy level per quasi-identifier (QI). At a node every class of
records sharing the generalized QI values is checked by each privacy model; the records
of rejected classes are suppressed, and the node is feasible when the suppressed share
is at most ``max_suppression`` (ARX's semantics [1]_). :func:`anonymize` returns the
feasible node of lowest metric.

The search runs bottom-up by level sum on integer codes. A node's (class, sensitive
value) counts are rolled up from an evaluated finer node's table through the coarser
hierarchy mapping, not recomputed from the records. Nodes are skipped, without a pass
over anything, when (a) the metric's lower bound (:func:`metrics.lower_bound`) exceeds
the best value found, or (b) with no suppression allowed and monotone models, a finer
node is feasible: the metric can only grow by generalizing then.

References
----------
.. [1] F. Kohlmayer, F. Prasser, C. Eckert, A. Kemper, K. A. Kuhn, "Flash: efficient,
   stable and optimal k-anonymity", SocialCom/PASSAT 2012.
"""

from __future__ import annotations

import heapq
import math
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.anonymity import metrics as _metrics
from veil.anonymity.hierarchy import Hierarchy
from veil.anonymity.lattice import FEASIBLE, INFEASIBLE, MATERIALIZE_LIMIT, UNKNOWN, Lattice
from veil.anonymity.models import PrivacyModel, _Classes, _Pairs
from veil.errors import ColumnError, DataTypeError, ParameterError, VeilError

__all__ = [
    "AnonymizationResult",
    "NoSolutionError",
    "SearchBudgetWarning",
    "anonymize",
    "evaluate",
]

_Ints = npt.NDArray[np.int64]
_Floats = npt.NDArray[np.float64]
_Matrix = npt.NDArray[np.int64]
_KEY_LIMIT = 2**62
_SUPPRESSION = ("remove", "mark")


class NoSolutionError(VeilError, ValueError):
    """No node of the lattice satisfies the models within the suppression limit."""


class SearchBudgetWarning(UserWarning):
    """The search stopped at its time limit: the result is not proven optimal."""


@dataclass(frozen=True)
class AnonymizationResult:
    """A released table and how it was obtained.

    Attributes
    ----------
    data : pandas.DataFrame
        The table with each QI generalized (labels as text); suppressed records removed
        or, with ``suppression="mark"``, their QIs set to ``"*"``.
    levels : dict of str to int
        The hierarchy level chosen per QI.
    suppressed : int
        Number of suppressed records.
    metrics : dict of str to float
        Every metric of :mod:`veil.anonymity.metrics` at the chosen node.
    lattice : pandas.DataFrame
        One row per node of the lattice (of the evaluated nodes when the lattice is
        searched lazily), by level sum: the levels, ``feasible`` (NA when never
        decided: pruned by the bound), ``suppressed`` (NA when not known),
        ``evaluated`` (False when decided by tagging, without a pass over the data)
        and the metric values (NaN when not evaluated or infeasible).
    optimal : bool
        False when the search stopped at its time limit.
    """

    data: pd.DataFrame
    levels: dict[str, int]
    suppressed: int
    metrics: dict[str, float]
    lattice: pd.DataFrame
    optimal: bool = True


def _combine(columns: Sequence[_Ints], radices: Sequence[int]) -> tuple[_Ints, int]:
    """Mixed-radix key of the columns and its span, re-coded whenever it would overflow."""
    if not columns:
        return np.zeros(0, dtype=np.int64), 1
    key = columns[0].astype(np.int64, copy=True)
    span = max(radices[0], 1)
    for column, radix in zip(columns[1:], radices[1:], strict=True):
        radix = max(radix, 1)
        if span * radix >= _KEY_LIMIT:
            key, span, _ = _factorize(key, span, first=False)
        key *= radix
        key += column
        span *= radix
    return key, span


def _key(
    columns: _Matrix, radices: Sequence[int], replaced: Mapping[int, _Ints] | None = None
) -> tuple[_Ints, int]:
    """Mixed-radix key of the rows of ``columns``, row ``j`` read from ``replaced[j]``.

    One matrix product when the key cannot overflow, plus a correction per replaced row.
    """
    replaced = replaced or {}
    span = math.prod(max(r, 1) for r in radices)
    if span >= _KEY_LIMIT:
        rows = [replaced.get(j, column) for j, column in enumerate(columns.T)]
        return _combine(rows, radices)
    weights = np.ones(len(radices), dtype=np.int64)
    for j in range(len(radices) - 2, -1, -1):
        weights[j] = weights[j + 1] * max(radices[j + 1], 1)
    for j in replaced:
        weights[j] = 0
    key: _Ints = columns @ weights
    stride = 1
    for j in range(len(radices) - 1, -1, -1):
        if j in replaced:
            key += replaced[j] * stride
        stride *= max(radices[j], 1)
    return key, span


def _factorize(key: _Ints, span: int, first: bool = True) -> tuple[_Ints, int, _Ints]:
    """Dense codes of ``key`` (values in [0, span)), their number, each code's first row.

    The first rows are left empty unless ``first``.

    A lookup table when the span is small next to the keys, else a hash table: both
    linear, unlike sorting.
    """
    m = len(key)
    if span <= 4 * m + 4096:
        present = np.zeros(span, dtype=np.int64)
        present[key] = 1
        lookup = np.cumsum(present) - 1
        codes = lookup[key]
        k = int(lookup[-1]) + 1 if span else 0
    else:
        raw, uniques = pd.factorize(key)
        codes = np.asarray(raw, dtype=np.int64)
        k = len(uniques)
    rows = np.empty(k if first else 0, dtype=np.int64)
    if first:
        rows[codes[::-1]] = np.arange(m - 1, -1, -1, dtype=np.int64)
    return codes, k, rows


@dataclass
class _Table:
    """A transformation's classes and its distinct (class, sensitive values) rows.

    ``classes`` holds the generalized QI codes of each class (classes x QIs) and
    ``size`` its records; each row is a distinct (class ``cls``, combined sensitive
    code ``sens``) pair with its record ``count``. Without sensitive attributes the rows
    are the classes. Coarser nodes are rolled up class by class, so the per-row work
    is two integer passes whatever the number of QIs.
    """

    classes: _Matrix
    size: _Ints
    cls: _Ints
    sens: _Ints
    count: _Ints

    def __len__(self) -> int:
        return len(self.count)


def _pairs(
    cls: _Ints, value: _Ints, count: _Ints, n_classes: int, n_values: int
) -> tuple[_Ints, _Ints, _Ints]:
    """Distinct (class, value) pairs with summed counts (in no particular order)."""
    span = n_classes * n_values
    key = cls * n_values + value
    if span <= 2 * len(key) + 4096:
        summed = np.bincount(key, weights=count, minlength=span)
        keys = np.flatnonzero(summed)
        totals = summed[keys].astype(np.int64)
    else:
        codes, k, first = _factorize(key, span)
        totals = np.bincount(codes, weights=count, minlength=k).astype(np.int64)
        keys = key[first]
        if not totals.all():
            keys, totals = keys[totals > 0], totals[totals > 0]
    return keys // n_values, keys % n_values, totals


@dataclass
class _Outcome:
    """One evaluated transformation."""

    table: _Table
    suppressed: int
    monotone_suppressed: int  # by the models that stay monotone with suppression
    values: dict[str, float] | None
    kept: npt.NDArray[np.bool_]  # per class of ``table``


class _Cache:
    """Tables of evaluated nodes, to roll coarser nodes up from the smallest finer one."""

    def __init__(self, base: _Table, d: int, budget_rows: int = 3_000_000) -> None:
        self.base = base
        self.budget = budget_rows
        self.tables: dict[tuple[int, ...], _Table] = {}
        self.levels = np.zeros((64, d), dtype=np.int16)
        self.rows = np.zeros(64, dtype=np.int64)
        self.keys: list[tuple[int, ...]] = []
        self.total = 0
        self.oldest = 0  # first slot that may still hold a table

    def put(self, node: tuple[int, ...], table: _Table) -> None:
        if node in self.tables or len(table) >= len(self.base):
            return
        if len(self.keys) == len(self.rows):
            self.levels = np.concatenate([self.levels, np.zeros_like(self.levels)])
            self.rows = np.concatenate([self.rows, np.zeros_like(self.rows)])
        slot = len(self.keys)
        self.keys.append(node)
        self.levels[slot] = node
        self.rows[slot] = len(table)
        self.tables[node] = table
        self.total += len(table)
        while self.total > self.budget and self.oldest < slot:
            if self.rows[self.oldest]:
                self.total -= int(self.rows[self.oldest])
                self.rows[self.oldest] = 0
                del self.tables[self.keys[self.oldest]]
            self.oldest += 1

    def source(self, node: tuple[int, ...]) -> tuple[tuple[int, ...] | None, _Table]:
        """The smallest cached table of a node finer than ``node`` (None: the records).

        Tables only shrink upwards, so the immediate predecessors, when cached, hold
        the smallest ones; the other cached nodes are scanned only when none is.
        """
        near = [
            finer
            for j in range(len(node))
            if node[j] > 0 and (finer := (*node[:j], node[j] - 1, *node[j + 1 :])) in self.tables
        ]
        if near:
            finer = min(near, key=lambda f: len(self.tables[f]))
            return finer, self.tables[finer]
        count = len(self.keys)
        if count:
            usable = np.all(self.levels[:count] <= np.asarray(node), axis=1) & (
                self.rows[:count] > 0
            )
            if usable.any():
                slot = int(np.flatnonzero(usable)[np.argmin(self.rows[:count][usable])])
                return self.keys[slot], self.tables[self.keys[slot]]
        return None, self.base


class _Problem:
    def __init__(
        self,
        df: pd.DataFrame,
        hierarchies: Mapping[str, Hierarchy],
        models: Sequence[PrivacyModel],
        max_suppression: float,
        metric: str,
        sensitive: str | Sequence[str] | None,
        weights: str | None = None,
    ) -> None:
        if not isinstance(df, pd.DataFrame):
            raise DataTypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
        if not isinstance(hierarchies, Mapping) or not hierarchies:
            raise ParameterError("hierarchies must map at least one QI column to a Hierarchy")
        for name, h in hierarchies.items():
            if name not in df.columns:
                raise ColumnError(f"hierarchies names column {name!r}, absent from df")
            if not isinstance(h, Hierarchy):
                raise DataTypeError(
                    f"hierarchies[{name!r}] must be a Hierarchy, got {type(h).__name__}"
                )
        if isinstance(models, PrivacyModel):
            models = [models]
        models = list(models)
        if not models or not all(isinstance(m, PrivacyModel) for m in models):
            raise ParameterError(
                f"models must be a non-empty list of privacy models, got {models!r}"
            )
        if isinstance(max_suppression, bool) or not isinstance(max_suppression, (int, float)):
            raise ParameterError(
                f"max_suppression must be a number in [0, 1], got {max_suppression!r}"
            )
        if not 0 <= max_suppression <= 1:
            raise ParameterError(f"max_suppression must be in [0, 1], got {max_suppression!r}")
        if metric not in _metrics.METRICS:
            raise ParameterError(f"metric must be one of {_metrics.METRICS}, got {metric!r}")
        if len(df) == 0:
            raise ParameterError("df must hold at least one record")
        self.qis = list(hierarchies)
        self.hierarchies = [hierarchies[q] for q in self.qis]
        attrs = list(dict.fromkeys(m.attribute for m in models if m.attribute is not None))
        declared = [sensitive] if isinstance(sensitive, str) else list(sensitive or [])
        for att in (*attrs, *declared):
            if att not in df.columns:
                raise ColumnError(f"sensitive attribute {att!r} is absent from df")
            if att in hierarchies:
                raise ParameterError(f"sensitive attribute {att!r} is also a quasi-identifier")
        if sensitive is not None:
            undeclared = [a for a in attrs if a not in declared]
            if undeclared:
                raise ParameterError(
                    f"models read {undeclared}, not declared in sensitive={declared!r}"
                )
        self.df = df
        self.models = models
        self.metric = metric
        self.rows = len(df)
        self.weight = self._weights(df, weights, [*self.qis, *attrs, *declared])
        self.n = int(self.weight.sum())
        self.max_out = math.floor(max_suppression * self.n + 1e-9)
        self.monotone = all(m.monotone(self.max_out > 0) for m in models)
        # Models whose suppressed set shrinks as nodes coarsen, even with suppression:
        # their suppressed count alone exceeding the limit makes every finer node
        # infeasible too.
        self.monotone_models = [m.monotone(True) for m in models]
        self.heights = [h.levels - 1 for h in self.hierarchies]
        self.level0 = [
            h.encode(df[q]).astype(np.int64)
            for q, h in zip(self.qis, self.hierarchies, strict=True)
        ]
        self.attrs = attrs
        self.sens: list[_Ints] = []
        self.n_values: list[int] = []
        self.prior: list[npt.NDArray[np.float64]] = []
        for att in attrs:
            codes, uniques = pd.factorize(df[att], sort=True, use_na_sentinel=False)
            values = np.asarray(codes, dtype=np.int64)
            self.sens.append(values)
            self.n_values.append(len(uniques))
            prior = np.bincount(values, weights=self.weight, minlength=len(uniques)) / self.n
            self.prior.append(prior)
            for model in models:
                if model.attribute == att:
                    model._prepare(pd.Index(uniques))
        # Classes smaller than this are rejected by some model: suppressing them is
        # monotone, whether or not the model is.
        priors = dict(zip(attrs, self.prior, strict=True))
        self.min_size = max(
            m._minimum_size(priors[m.attribute] if m.attribute else np.zeros(0)) for m in models
        )
        # Rows carry one code for all sensitive values (mixed radix, first attribute
        # most significant); class x code keys must fit in 63 bits.
        self.sens_span = math.prod(self.n_values)
        if self.sens_span * max(self.rows, 1) >= _KEY_LIMIT:
            raise ParameterError(
                f"the sensitive attributes {attrs} have {self.sens_span} combinations of "
                "values: too many to check together; use fewer sensitive attributes"
            )
        # Per QI and level: group count, maps between levels, loss and log2 count per
        # group, and the QI's loss and entropy when nothing is suppressed.
        self.groups: list[list[int]] = []
        self.maps: list[dict[tuple[int, int], _Ints]] = []
        self.group_loss: list[list[_Floats]] = []
        self.group_log_count: list[list[_Floats]] = []
        self.entropy_offset: list[float] = []
        self.gen_loss: list[_Floats] = []
        self.gen_entropy: list[_Floats] = []
        for h, codes0 in zip(self.hierarchies, self.level0, strict=True):
            leaves = len(h.codes(0))
            hist = np.bincount(codes0, weights=self.weight, minlength=leaves)
            offset = float(hist @ np.log2(np.maximum(hist, 1)))
            level_codes = [h.codes(level).astype(np.int64) for level in range(h.levels)]
            groups, losses, logs, gen, ent = [], [], [], [], []
            for c in level_codes:
                g = int(c.max()) + 1
                groups.append(g)
                size = np.bincount(c, minlength=g)
                loss = (size - 1) / (leaves - 1) if leaves > 1 else np.zeros(g)
                log_count = np.log2(np.maximum(np.bincount(c, weights=hist, minlength=g), 1))
                losses.append(loss)
                logs.append(log_count)
                gen.append(float(hist @ loss[c]) / self.n)
                ent.append(float(hist @ log_count[c]) - offset)
            maps: dict[tuple[int, int], _Ints] = {}
            for lo in range(h.levels):
                for hi in range(lo + 1, h.levels):
                    up = np.zeros(groups[lo], dtype=np.int64)
                    up[level_codes[lo]] = level_codes[hi]
                    maps[lo, hi] = up
            self.groups.append(groups)
            self.maps.append(maps)
            self.group_loss.append(losses)
            self.group_log_count.append(logs)
            self.entropy_offset.append(offset)
            self.gen_loss.append(np.array(gen))
            self.gen_entropy.append(np.array(ent))

    @staticmethod
    def _weights(df: pd.DataFrame, weights: str | None, roles: list[str]) -> _Ints:
        """Records per row: 1, or the non-negative integers of column ``weights``."""
        if weights is None:
            return np.ones(len(df), dtype=np.int64)
        if not isinstance(weights, str) or weights not in df.columns:
            raise ColumnError(f"weights must name a column of df, got {weights!r}")
        if weights in roles:
            raise ParameterError(
                f"weights column {weights!r} is also a quasi-identifier or sensitive attribute"
            )
        column = df[weights]
        if not pd.api.types.is_numeric_dtype(column) or column.isna().any():
            raise DataTypeError(
                f"weights column {weights!r} must hold record counts (integers >= 0), "
                f"got dtype {column.dtype} with {int(column.isna().sum())} missing"
            )
        values = column.to_numpy(dtype=np.float64)
        if (values < 0).any() or (values != np.round(values)).any() or values.sum() < 1:
            raise ParameterError(
                f"weights column {weights!r} must hold integer record counts >= 0 "
                "summing to at least 1"
            )
        return values.astype(np.int64)

    def base(self) -> _Table:
        """The records grouped by original QI and sensitive values."""
        return self.roll_up(self.records(), None, (0,) * len(self.qis))[0]

    def records(self) -> _Table:
        """One class and one row per record (of positive weight), at the original levels."""
        positive = np.flatnonzero(self.weight > 0)
        classes = np.array(self.level0, dtype=np.int64).T[positive]
        sens, _ = _combine([s[positive] for s in self.sens], self.n_values)
        if not self.attrs:
            sens = np.zeros(len(positive), dtype=np.int64)
        rows = np.arange(len(positive), dtype=np.int64)
        weight = self.weight[positive]
        return _Table(classes, weight, rows, sens, weight)

    def roll_up(
        self, source: _Table, source_node: tuple[int, ...] | None, node: tuple[int, ...]
    ) -> tuple[_Table, int]:
        """Generalize ``source`` (a table at ``source_node``, finer) to ``node``.

        Returns the table and its number of classes.
        """
        start = source_node or (0,) * len(node)
        mapped = {
            j: self.maps[j][a, b][source.classes[:, j]]
            for j, (a, b) in enumerate(zip(start, node, strict=True))
            if b > a
        }
        radices = [self.groups[j][lv] for j, lv in enumerate(node)]
        key, span = _key(source.classes, radices, mapped)
        merged, n_classes, first = _factorize(key, span)
        classes = np.take(source.classes, first, axis=0)  # faster than [first] on 2-D
        for j, codes in mapped.items():
            classes[:, j] = codes[first]
        size = np.bincount(merged, weights=source.size, minlength=n_classes).astype(np.int64)
        if self.attrs:
            cls, sens, count = _pairs(
                merged[source.cls], source.sens, source.count, n_classes, self.sens_span
            )
        else:
            cls, sens, count = np.arange(n_classes, dtype=np.int64), source.sens[first], size
        return _Table(classes, size, cls, sens, count), n_classes

    def lower_bounds(self, nodes: npt.NDArray[np.integer]) -> _Floats:
        return _metrics.lower_bounds(
            self.metric, nodes, self.heights, self.gen_loss, self.gen_entropy
        )

    def evaluate(
        self,
        source: _Table,
        source_node: tuple[int, ...] | None,
        node: tuple[int, ...],
        *,
        with_metrics: bool = True,
    ) -> _Outcome:
        """Generalize ``source`` (a table at ``source_node``, finer) to ``node``, check it.

        Metrics are computed when ``with_metrics`` or the node is feasible.
        """
        table, n_classes = self.roll_up(source, source_node, node)
        sizes = table.size
        classes = _Classes(n_classes, sizes)
        stride = self.sens_span
        for i, att in enumerate(self.attrs):
            stride //= self.n_values[i]
            if len(self.attrs) == 1:
                pair_cls, pair_value, pair_count = table.cls, table.sens, table.count
            else:
                pair_cls, pair_value, pair_count = _pairs(
                    table.cls,
                    table.sens // stride % self.n_values[i],
                    table.count,
                    n_classes,
                    self.n_values[i],
                )
            classes.pairs[att] = _Pairs(
                pair_cls, pair_value, pair_count, self.n_values[i], self.prior[i]
            )
        ok = np.ones(n_classes, dtype=bool)
        monotone_ok = np.ones(n_classes, dtype=bool)
        for model, monotone in zip(self.models, self.monotone_models, strict=True):
            accepted = model._accepts(classes)
            ok &= accepted
            if monotone:
                monotone_ok &= accepted
        suppressed = int(sizes[~ok].sum())
        if self.min_size > 1:
            monotone_ok &= sizes >= self.min_size
        values = None
        if with_metrics or suppressed <= self.max_out:
            values = _metrics.compute(
                n=self.n,
                levels=node,
                heights=self.heights,
                group_loss=[self.group_loss[j][lv] for j, lv in enumerate(node)],
                group_log_count=[self.group_log_count[j][lv] for j, lv in enumerate(node)],
                entropy_offset=self.entropy_offset,
                row_codes=list(table.classes.T),
                row_count=sizes,
                row_kept=ok,
                kept_sizes=sizes[ok],
            )
        return _Outcome(table, suppressed, int(sizes[~monotone_ok].sum()), values, ok)

    def release(self, node: tuple[int, ...], suppression: str) -> tuple[pd.DataFrame, int]:
        out = self.df.copy()
        outcome = self.evaluate(self.records(), None, node, with_metrics=False)
        # One row per record: map each record to its row of the aggregated table.
        generalized = [
            self.maps[j][0, lv][codes] if lv else codes
            for j, (codes, lv) in enumerate(zip(self.level0, node, strict=True))
        ]
        kept = self._record_kept(generalized, outcome)
        for j, q in enumerate(self.qis):
            labels = self.hierarchies[j].labels(node[j])
            out[q] = np.asarray(labels, dtype=object)[generalized[j]]
        if suppression == "remove":
            out = out.loc[kept]
        else:
            out.loc[~kept, self.qis] = "*"
        return out, int(self.weight[~kept].sum())

    def _record_kept(self, generalized: list[_Ints], outcome: _Outcome) -> npt.NDArray[np.bool_]:
        """Whether each record's class is released, from the node's class rows."""
        radices = [int(c.max(initial=0)) + 1 for c in generalized]
        both = [
            np.concatenate([g, t])
            for g, t in zip(generalized, outcome.table.classes.T, strict=True)
        ]
        key, _ = _combine(both, radices)
        kept: npt.NDArray[np.bool_] = np.isin(
            key[: self.rows], key[self.rows :][outcome.kept]
        )
        return kept


def _node(problem: _Problem, levels: Mapping[str, int]) -> tuple[int, ...]:
    if not isinstance(levels, Mapping) or set(levels) != set(problem.qis):
        raise ParameterError(f"levels must map every QI {problem.qis} to a level, got {levels!r}")
    node = []
    for j, q in enumerate(problem.qis):
        lv = levels[q]
        if isinstance(lv, bool) or not isinstance(lv, (int, np.integer)):
            raise ParameterError(f"levels[{q!r}] must be an integer, got {lv!r}")
        if not 0 <= lv <= problem.heights[j]:
            raise ParameterError(f"levels[{q!r}] must be in 0..{problem.heights[j]}, got {lv!r}")
        node.append(int(lv))
    return tuple(node)


_METRIC_COLUMNS = ("loss", "loss_mean", *_metrics.METRICS[1:], "classes")


class _Search:
    """State shared by the search strategies: the problem, cached tables, the best node."""

    def __init__(self, problem: _Problem, time_limit: float | None) -> None:
        self.problem = problem
        self.cache = _Cache(problem.base(), len(problem.qis))
        self.deadline = None if time_limit is None else time.perf_counter() + time_limit
        self.best: tuple[float, int, tuple[int, ...], dict[str, float]] | None = None
        self.timed_out = False
        # Per evaluated node: suppressed count, feasibility, metrics (None if infeasible).
        self.seen: dict[tuple[int, ...], tuple[int, bool, dict[str, float] | None]] = {}

    def out_of_time(self) -> bool:
        if self.deadline is not None and time.perf_counter() > self.deadline:
            self.timed_out = True
        return self.timed_out

    def evaluate(self, node: tuple[int, ...]) -> _Outcome:
        source_node, source = self.cache.source(node)
        outcome = self.problem.evaluate(source, source_node, node, with_metrics=False)
        self.cache.put(node, outcome.table)
        feasible = outcome.suppressed <= self.problem.max_out
        self.seen[node] = (outcome.suppressed, feasible, outcome.values)
        if feasible:
            assert outcome.values is not None
            self.consider(node, outcome.values)
        return outcome

    def consider(self, node: tuple[int, ...], values: dict[str, float]) -> None:
        """Keep the node if it beats the best (ties: lower level sum, then lexicographic)."""
        value = values[self.problem.metric]
        if self.best is None or value < self.best[0] - 1e-12 or (
            value <= self.best[0] + 1e-12 and (sum(node), node) < (self.best[1], self.best[2])
        ):
            self.best = (value, sum(node), node, values)

    def bound(self) -> float:
        return math.inf if self.best is None else self.best[0] + 1e-12

    def greedy_top_down(self) -> None:
        """From the top node, step to the best feasible predecessor while there is one.

        Finds a minimal feasible node in at most (sum of heights) x (QIs) evaluations:
        an incumbent when the optimal search cannot finish.
        """
        node = tuple(self.problem.heights)
        if node not in self.seen:
            self.evaluate(node)
        while self.seen[node][1]:
            options = []
            for j in range(len(node)):
                if node[j] > 0:
                    finer = (*node[:j], node[j] - 1, *node[j + 1 :])
                    if finer not in self.seen:
                        self.evaluate(finer)
                    _, ok, values = self.seen[finer]
                    if ok and values is not None:
                        options.append((values[self.problem.metric], finer))
            if not options:
                return
            node = min(options)[1]


def _search_lattice(search: _Search) -> pd.DataFrame:
    """Optimal search over a materialized lattice; returns the lattice table.

    Nodes are visited in increasing order of the metric's lower bound, so the search
    stops at the first node whose bound exceeds the best value found. An unknown node
    is settled by a binary search along a chain of unknown nodes above it, each
    evaluation tagging its whole up-set feasible or down-set infeasible (Flash). When
    some model is not monotone, the chain runs on the monotone part of the models
    (those that stay monotone, and the least class size every model needs): a node
    that part rejects is infeasible with its down-set; the others are evaluated.
    """
    problem = search.problem
    lattice = Lattice(problem.heights)
    bounds = problem.lower_bounds(lattice.nodes)
    order = np.lexsort((np.arange(lattice.size), lattice.level_sum, bounds))
    exact = problem.max_out == 0 and problem.metric in ("loss", "precision", "entropy")
    known_value: dict[int, float] = {}

    # Feasibility of the monotone part of the models (the models that stay monotone,
    # and the least class size any model accepts): the same array as the full
    # status when every model is monotone.
    mono = lattice.status if problem.monotone else np.zeros(lattice.size, dtype=np.int8)
    has_mono = problem.monotone or problem.min_size > 1 or any(problem.monotone_models)

    def settle(i: int) -> None:
        outcome = search.evaluate(lattice.levels(i))
        ok = outcome.suppressed <= problem.max_out
        # With every model monotone the full verdict tags; otherwise the monotone part.
        if ok if problem.monotone else outcome.monotone_suppressed <= problem.max_out:
            lattice.tag_feasible(i, mono)
        else:
            lattice.tag_infeasible(i, mono)
            lattice.tag_infeasible(i)
        lattice.status[i] = FEASIBLE if ok else INFEASIBLE

    def binary_search(i: int) -> None:
        """Settle ``i``'s monotone part from a chain above it (Flash)."""
        path = lattice.chain(i, bounds, mono)
        lo, hi = 0, len(path) - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            if mono[path[mid]] == UNKNOWN:
                settle(path[mid])
            if mono[path[mid]] == FEASIBLE:
                hi = mid - 1
            else:
                lo = mid + 1

    for i in order:
        i = int(i)
        if bounds[i] > search.bound() or search.out_of_time():
            break
        if lattice.status[i] == UNKNOWN and has_mono and mono[i] == UNKNOWN:
            binary_search(i)
        if lattice.status[i] == UNKNOWN and mono[i] != INFEASIBLE:
            settle(i)
        if lattice.status[i] == INFEASIBLE:
            continue
        node = lattice.levels(i)
        if lattice.status[i] == FEASIBLE and node not in search.seen:
            if exact:
                # Nothing suppressed: the metric equals its bound; no pass needed.
                known_value[i] = float(bounds[i])
                search.consider(node, dict.fromkeys(_METRIC_COLUMNS, math.nan) | {
                    problem.metric: float(bounds[i])
                })
            else:
                settle(i)
    if search.timed_out and search.best is None:
        search.greedy_top_down()
    return _lattice_table(problem, lattice, search, known_value)


def _lattice_table(
    problem: _Problem, lattice: Lattice, search: _Search, known_value: dict[int, float]
) -> pd.DataFrame:
    table = pd.DataFrame(lattice.nodes.astype(np.int64), columns=problem.qis)
    feasible = pd.array(np.where(lattice.status == FEASIBLE, True, False), dtype="boolean")
    feasible[lattice.status == UNKNOWN] = pd.NA
    suppressed = np.full(lattice.size, -1, dtype=np.int64)
    evaluated = np.zeros(lattice.size, dtype=bool)
    values = np.full((lattice.size, len(_METRIC_COLUMNS)), math.nan)
    for node, (count, ok, metrics) in search.seen.items():
        i = lattice.index(node)
        suppressed[i] = count
        evaluated[i] = True
        feasible[i] = ok
        if metrics is not None:
            values[i] = [metrics[m] for m in _METRIC_COLUMNS]
    for i, value in known_value.items():
        suppressed[i] = 0
        values[i, _METRIC_COLUMNS.index(problem.metric)] = value
    table["feasible"] = feasible
    table["suppressed"] = pd.array(suppressed, dtype="Int64")
    table.loc[suppressed < 0, "suppressed"] = pd.NA
    table["evaluated"] = evaluated
    for k, name in enumerate(_METRIC_COLUMNS):
        table[name] = values[:, k]
    order = np.lexsort((np.arange(lattice.size), lattice.level_sum))
    return table.iloc[order].reset_index(drop=True)


def _search_lazy(search: _Search) -> pd.DataFrame:
    """Best-first search of a lattice too large to hold, from the bottom node.

    A greedy top-down descent first gives an incumbent; nodes are then generated as
    successors of evaluated ones and taken in increasing order of their lower bound
    (bounds only grow upwards, so this is the global order) until the bound exceeds
    the best value: the result is then optimal. Returns the table of evaluated nodes.
    """
    problem = search.problem
    search.greedy_top_down()
    bottom = (0,) * len(problem.qis)
    heap: list[tuple[float, int, tuple[int, ...]]] = [(-math.inf, 0, bottom)]
    queued = {bottom}
    while heap and not search.out_of_time():
        bound, _, node = heapq.heappop(heap)
        if bound > search.bound():
            break
        if node in search.seen:
            ok = search.seen[node][1]
        else:
            ok = search.evaluate(node).suppressed <= problem.max_out
        if ok and problem.monotone and problem.max_out == 0:
            continue  # metrics only grow above a feasible node without suppression
        successors = [
            (*node[:j], node[j] + 1, *node[j + 1 :])
            for j in range(len(node))
            if node[j] < problem.heights[j]
        ]
        fresh = [s for s in successors if s not in queued]
        if fresh:
            bounds = problem.lower_bounds(np.array(fresh))
            for b, s in zip(bounds, fresh, strict=True):
                queued.add(s)
                heapq.heappush(heap, (float(b), sum(s), s))
    rows = [
        {
            **dict(zip(problem.qis, node, strict=True)),
            "feasible": ok,
            "suppressed": count,
            "evaluated": True,
            **{m: (metrics or {}).get(m, math.nan) for m in _METRIC_COLUMNS},
        }
        for node, (count, ok, metrics) in search.seen.items()
    ]
    table = pd.DataFrame(rows)
    table["feasible"] = table["feasible"].astype("boolean")
    table["suppressed"] = table["suppressed"].astype("Int64")
    return table


def _result(
    problem: _Problem,
    node: tuple[int, ...],
    values: dict[str, float],
    lattice: pd.DataFrame,
    suppression: str,
    optimal: bool,
) -> AnonymizationResult:
    data, suppressed = problem.release(node, suppression)
    return AnonymizationResult(
        data=data,
        levels=dict(zip(problem.qis, node, strict=True)),
        suppressed=suppressed,
        metrics=values,
        lattice=lattice,
        optimal=optimal,
    )


def _check_suppression(suppression: str) -> None:
    if suppression not in _SUPPRESSION:
        raise ParameterError(f"suppression must be one of {_SUPPRESSION}, got {suppression!r}")


def _check_time_limit(time_limit: float | None) -> None:
    if time_limit is not None and (
        isinstance(time_limit, bool)
        or not isinstance(time_limit, (int, float))
        or not time_limit > 0
    ):
        raise ParameterError(f"time_limit must be a positive number of seconds, got {time_limit!r}")


def anonymize(
    df: pd.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    models: Sequence[PrivacyModel] | PrivacyModel,
    *,
    max_suppression: float,
    metric: str = "loss",
    sensitive: str | Sequence[str] | None = None,
    suppression: str = "remove",
    time_limit: float | None = None,
    weights: str | None = None,
) -> AnonymizationResult:
    """The optimal full-domain generalization satisfying every model.

    Every released equivalence class satisfies each model (e.g. holds at least k
    records for :class:`~veil.anonymity.models.KAnonymity`); records of other classes
    are suppressed, at most ``max_suppression`` of the table. Among all feasible nodes
    of the lattice the one of lowest ``metric`` is returned (ties: lowest level sum,
    then first in lexicographic order of levels).

    Parameters
    ----------
    df : pandas.DataFrame
        The table; not modified.
    hierarchies : mapping of str to Hierarchy
        One hierarchy per quasi-identifier column; its keys are the QIs.
    models : PrivacyModel or sequence of PrivacyModel
        Privacy models, all enforced.
    max_suppression : float
        Largest share of records that may be suppressed, in [0, 1].
    metric : {"loss", "discernibility", "aecs", "precision", "entropy"}
        Objective, see :mod:`veil.anonymity.metrics`.
    sensitive : str or sequence of str, optional
        Sensitive columns; when given, every model's attribute must be among them.
    suppression : {"remove", "mark"}
        Drop suppressed records from ``data``, or keep them with every QI ``"*"``.
    time_limit : float, optional
        Seconds after which the search stops and returns the best node found so far
        (found by a greedy top-down descent if the search has none yet), with
        ``optimal=False`` and a :class:`SearchBudgetWarning`. Without it the search
        runs to the proven optimum, lazily (best-first from the bottom) when the
        lattice has more than :data:`~veil.anonymity.lattice.MATERIALIZE_LIMIT` nodes.
    weights : str, optional
        A column of record counts: each row of ``df`` then stands for that many
        records (a table aggregated by its QIs and sensitive attributes, e.g. by a
        distributed group-by); classes, suppression limit and metrics count records.
        ``data`` keeps the rows (and the column); ``suppressed`` counts records.

    Raises
    ------
    ParameterError, ColumnError, DataTypeError
        For invalid arguments (each named in the message).
    NoSolutionError
        If no node is feasible (or, with a time limit, none was found).
    """
    _check_suppression(suppression)
    _check_time_limit(time_limit)
    problem = _Problem(
        df,
        hierarchies,
        list(models) if not isinstance(models, PrivacyModel) else [models],
        max_suppression,
        metric,
        sensitive,
        weights,
    )
    search = _Search(problem, time_limit)
    size = math.prod(h + 1 for h in problem.heights)
    lattice = _search_lattice(search) if size <= MATERIALIZE_LIMIT else _search_lazy(search)
    if search.best is None:
        raise NoSolutionError(
            f"no generalization satisfies {problem.models} with max_suppression="
            f"{max_suppression}"
            + (" within the time limit" if search.timed_out else "")
            + "; allow more suppression or relax the models"
        )
    node, values = search.best[2], search.best[3]
    if node not in search.seen:
        source_node, source = search.cache.source(node)
        values = problem.evaluate(source, source_node, node).values or values
    if search.timed_out:
        warnings.warn(
            f"the search stopped after time_limit={time_limit} s: the returned "
            f"transformation {dict(zip(problem.qis, node, strict=True))} is the best "
            "found, not proven optimal",
            SearchBudgetWarning,
            stacklevel=2,
        )
    return _result(problem, node, values, lattice, suppression, not search.timed_out)


def evaluate(
    df: pd.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    levels: Mapping[str, int],
    models: Sequence[PrivacyModel] | PrivacyModel,
    *,
    max_suppression: float,
    metric: str = "loss",
    sensitive: str | Sequence[str] | None = None,
    suppression: str = "remove",
    weights: str | None = None,
) -> AnonymizationResult:
    """Apply one transformation (``levels``, one per QI) and measure it.

    Same arguments and result as :func:`anonymize`; the lattice holds the one node,
    whose ``feasible`` column says whether it meets ``max_suppression``. ``metric`` is
    validated only (every metric is reported).
    """
    _check_suppression(suppression)
    problem = _Problem(
        df,
        hierarchies,
        list(models) if not isinstance(models, PrivacyModel) else [models],
        max_suppression,
        metric,
        sensitive,
        weights,
    )
    node = _node(problem, levels)
    outcome = problem.evaluate(problem.base(), None, node)
    assert outcome.values is not None
    lattice = pd.DataFrame(
        [
            {
                **dict(zip(problem.qis, node, strict=True)),
                "feasible": outcome.suppressed <= problem.max_out,
                "suppressed": outcome.suppressed,
                "evaluated": True,
                **{m: outcome.values[m] for m in _METRIC_COLUMNS},
            }
        ]
    )
    lattice["feasible"] = lattice["feasible"].astype("boolean")
    lattice["suppressed"] = lattice["suppressed"].astype("Int64")
    return _result(problem, node, outcome.values, lattice, suppression, True)
