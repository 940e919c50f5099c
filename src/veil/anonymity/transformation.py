"""Encoded tables and the evaluation of one generalization (a lattice node).

:class:`Problem` encodes a table once: each quasi-identifier as integer codes per
hierarchy level, each sensitive attribute as codes with its table-wide distribution,
per QI and level the information loss and entropy of every group. A node's
:class:`Table` holds its equivalence classes (generalized QI codes and sizes) and its
distinct (class, sensitive values) rows; it is rolled up from any finer node's table
class by class, never from the records again. :meth:`Problem.evaluate` then runs every
privacy model on the classes (suppressing the classes some model rejects) and the
metrics of :mod:`veil.anonymity.metrics`.

Keys are mixed-radix integers grouped by a presence table or a hash table (linear,
unlike sorting); the search (:mod:`veil.anonymity.search`) decides which nodes to
evaluate.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.anonymity import metrics as _metrics
from veil.anonymity.hierarchy import Hierarchy
from veil.anonymity.models import PrivacyModel, _Classes, _PairCounts, _Pairs
from veil.errors import ColumnError, DataTypeError, ParameterError
from veil.frames import arrow_strings, copy_on_write, default_string_dtype

__all__ = ["REFERENCES", "Outcome", "Problem", "Table", "TableCache", "node_of"]

#: What the models that compare a class with the table's distribution compare it with:
#: the released records' distribution, or the whole input's (ARX's semantics).
REFERENCES = ("release", "input")

_Ints = npt.NDArray[np.int64]
_Floats = npt.NDArray[np.float64]
_Matrix = npt.NDArray[np.int64]
_KEY_LIMIT = 2**62
# Without sensitive attributes a table's rows are its classes: no (class, value) pairs.
_NO_PAIRS = np.zeros(0, dtype=np.int64)
# Below this many rows one matrix product builds a key faster than a pass per column.
_SMALL = 1024
# Rounding allowance when a floor on suppressed records is rounded up to whole records.
_FLOOR_ROUNDING = 1e-6
# Codes of the base table's classes kept per (QI, level), at most (32 MB).
_BASE_CODES_BUDGET = 4_000_000


def _combine(columns: Sequence[_Ints], radices: Sequence[int]) -> tuple[_Ints, int]:
    """Mixed-radix key of the columns (the first most significant) and its span.

    Horner's scheme, one multiply-add per column; columns of radix 1 (a single group)
    add nothing and are skipped. The key is re-coded to dense codes whenever the next
    column would overflow it.
    """
    if not columns:
        return np.zeros(0, dtype=np.int64), 1
    key: _Ints | None = None
    span = 1
    for column, radix in zip(columns, radices, strict=True):
        if radix <= 1:
            continue
        if key is None:
            key = column.astype(np.int64, copy=True)
            span = radix
            continue
        if span * radix >= _KEY_LIMIT:
            key, span, _ = _factorize(key, span, first=False)
        key *= radix
        key += column
        span *= radix
    if key is None:
        return np.zeros(len(columns[0]), dtype=np.int64), 1
    return key, span


def _node_key(
    classes: _Matrix, radices: Sequence[int], mapped: Mapping[int, _Ints]
) -> tuple[_Ints, int]:
    """Mixed-radix key of the columns of ``classes`` (QIs x rows), row ``j`` read from
    ``mapped[j]`` when given, and its span.

    Small tables take one matrix product (plus a multiply-add per mapped row), larger
    ones Horner's scheme over contiguous rows (faster per element); the keys are the
    same.
    """
    span = math.prod(radices)
    if classes.shape[1] < _SMALL and span < _KEY_LIMIT:
        weights = [1] * len(radices)
        for j in range(len(radices) - 2, -1, -1):
            weights[j] = weights[j + 1] * radices[j + 1]
        key: _Ints = (
            np.array([0 if j in mapped else w for j, w in enumerate(weights)], dtype=np.int64)
            @ classes
        )
        for j, column in mapped.items():
            key += column * weights[j]
        return key, span
    return _combine([mapped.get(j, row) for j, row in enumerate(classes)], radices)


def _factorize(key: _Ints, span: int, first: bool = True) -> tuple[_Ints, int, _Ints]:
    """Dense codes of ``key`` (values in [0, span)), their number, a row of each code.

    The rows are left empty unless ``first``. Codes follow the order of the keys when
    the span is small next to the keys (a presence table), else their first
    appearance (a hash table): both linear, unlike sorting.
    """
    m = len(key)
    if span <= 4 * m + 4096:
        present = np.zeros(span, dtype=bool)
        present[key] = True
        keys = np.flatnonzero(present)
        lookup = np.empty(span, dtype=np.int64)
        lookup[keys] = np.arange(len(keys), dtype=np.int64)
        codes = lookup[key]
        k = len(keys)
    else:
        raw, uniques = pd.factorize(key)
        codes = np.asarray(raw, dtype=np.int64)
        k = len(uniques)
    rows = np.empty(k if first else 0, dtype=np.int64)
    if first:
        # Every row of a code has the same key, so any of them will do.
        rows[codes] = np.arange(m, dtype=np.int64)
    return codes, k, rows


@dataclass
class Table:
    """A transformation's classes and its distinct (class, sensitive values) rows.

    ``classes`` holds the generalized QI codes of each class (QIs x classes: one
    contiguous row per QI, as the roll-ups read them) and
    ``size`` its records; each row of ``pairs`` is a distinct (class ``cls``, combined
    sensitive code ``sens``) pair with its record ``count``. Without sensitive
    attributes the rows are the classes (``count`` is ``size``; ``cls`` and ``sens``
    are empty). Coarser nodes are rolled up class by class, so the per-row work is two
    integer passes whatever the number of QIs.
    """

    classes: _Matrix
    size: _Ints
    pairs: _PairCounts

    @property
    def cls(self) -> _Ints:
        return self.pairs.arrays[0]

    @property
    def sens(self) -> _Ints:
        return self.pairs.arrays[1]

    @property
    def count(self) -> _Ints:
        return self.pairs.arrays[2]

    def __len__(self) -> int:
        return self.pairs.rows


def _pairs(cls: _Ints, value: _Ints, count: _Ints, n_classes: int, n_values: int) -> _PairCounts:
    """Distinct (class, value) pairs with summed counts (in no particular order)."""
    span = n_classes * n_values
    # Summing into every possible pair beats hashing the pairs up to a wide span: a
    # class holds a few of the sensitive values, so the span is several times the rows.
    # The sums are the (value x class) matrix; the pairs' arrays come from it on demand.
    if span <= 16 * len(cls) + 65536:
        key = value * n_classes + cls
        summed = np.bincount(key, weights=count, minlength=span).astype(np.float64, copy=False)
        return _PairCounts(dense=summed.reshape(n_values, n_classes))
    key = cls * n_values + value
    codes, k, first = _factorize(key, span)
    totals = np.bincount(codes, weights=count, minlength=k).astype(np.int64)
    keys = key[first]
    if not totals.all():
        keys, totals = keys[totals > 0], totals[totals > 0]
    pair_cls, pair_value = np.divmod(keys, n_values)
    return _PairCounts((pair_cls, pair_value, totals))


@dataclass
class Outcome:
    """One evaluated transformation."""

    table: Table
    suppressed: int
    least_suppressed: int  # a floor on the suppressed records of every finer node
    values: dict[str, float] | None
    kept: npt.NDArray[np.bool_]  # per class of ``table``
    source_class: _Ints  # per row of the source table, its class in ``table``


class TableCache:
    """Tables of evaluated nodes, to roll coarser nodes up from the smallest finer one."""

    def __init__(self, base: Table, d: int, budget_rows: int = 3_000_000) -> None:
        self.base = base
        self.budget = budget_rows
        self.tables: dict[tuple[int, ...], Table] = {}
        self.sizes: dict[tuple[int, ...], int] = {}  # rows of each cached table
        self.levels = np.zeros((64, d), dtype=np.int16)
        self.rows = np.zeros(64, dtype=np.int64)
        self.keys: list[tuple[int, ...]] = []
        self.total = 0
        self.oldest = 0  # first slot that may still hold a table

    def put(self, node: tuple[int, ...], table: Table) -> None:
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
        self.sizes[node] = len(table)
        self.total += len(table)
        while self.total > self.budget and self.oldest < slot:
            if self.rows[self.oldest]:
                self.total -= int(self.rows[self.oldest])
                self.rows[self.oldest] = 0
                del self.tables[self.keys[self.oldest]]
                del self.sizes[self.keys[self.oldest]]
            self.oldest += 1

    def source(self, node: tuple[int, ...]) -> tuple[tuple[int, ...] | None, Table]:
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
            finer = min(near, key=self.sizes.__getitem__)
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


def _checked_arguments(
    df: pd.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    models: Sequence[PrivacyModel] | PrivacyModel,
    max_suppression: float,
    metric: str,
    reference: str,
) -> list[PrivacyModel]:
    """The models as a list, once every argument of :class:`Problem` is checked."""
    if reference not in REFERENCES:
        raise ParameterError(
            f'reference must be one of {REFERENCES} ("release": models compare '
            'classes with the released records\' distribution; "input": with the '
            f"whole input's, as ARX does), got {reference!r}"
        )
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
        raise ParameterError(f"models must be a non-empty list of privacy models, got {models!r}")
    if isinstance(max_suppression, bool) or not isinstance(max_suppression, (int, float)):
        raise ParameterError(f"max_suppression must be a number in [0, 1], got {max_suppression!r}")
    if not 0 <= max_suppression <= 1:
        raise ParameterError(f"max_suppression must be in [0, 1], got {max_suppression!r}")
    if metric not in _metrics.METRICS:
        raise ParameterError(f"metric must be one of {_metrics.METRICS}, got {metric!r}")
    if len(df) == 0:
        raise ParameterError("df must hold at least one record")
    return models


def _sensitive_columns(
    df: pd.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    models: Sequence[PrivacyModel],
    sensitive: str | Sequence[str] | None,
) -> tuple[list[str], list[str]]:
    """The attributes the models read, and those declared sensitive, once checked."""
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
    return attrs, declared


class Problem:
    def __init__(
        self,
        df: pd.DataFrame,
        hierarchies: Mapping[str, Hierarchy],
        models: Sequence[PrivacyModel] | PrivacyModel,
        max_suppression: float,
        metric: str,
        sensitive: str | Sequence[str] | None,
        weights: str | None = None,
        reference: str = "release",
    ) -> None:
        models = _checked_arguments(df, hierarchies, models, max_suppression, metric, reference)
        attrs, declared = _sensitive_columns(df, hierarchies, models, sensitive)
        self.qis = list(hierarchies)
        self.hierarchies = [hierarchies[q] for q in self.qis]
        self.df = df
        self.models = models
        self.reference = reference
        # Models whose verdict depends on the reference distribution: with
        # reference="release" they are checked again once suppression changes it.
        self.recheck = (
            [m for m in models if m.compares_distribution] if reference == "release" else []
        )
        self.metric = metric
        self.rows = len(df)
        self._base: Table | None = None
        # Per record, its class in the base table (None while the base is not built,
        # or when some record has weight 0 and is not in it).
        self._record_class: _Ints | None = None
        self._base_level_codes: dict[tuple[int, int], _Ints] = {}
        self.weight = self._weights(df, weights, [*self.qis, *attrs, *declared])
        # One record per row: counts need no float weights.
        self.unit_weights = weights is None
        self.n = int(self.weight.sum())
        self.max_out = math.floor(max_suppression * self.n + 1e-9)
        self.monotone = all(m.monotone(self.max_out > 0) for m in models)
        # Nothing may be suppressed and the metric's lower bound is its value with every
        # record released: a feasible node's objective is its bound, known unmeasured.
        self.exact = self.max_out == 0 and metric in _metrics.BOUND_IS_VALUE
        # Models whose suppressed set shrinks as nodes coarsen, even with suppression:
        # their suppressed count alone exceeding the limit makes every finer node
        # infeasible too.
        self.monotone_models = [m.monotone(True) for m in models]
        self.heights = [h.levels - 1 for h in self.hierarchies]
        # Level-0 codes, one row per QI: the records' class table as it is.
        self.codes0 = np.empty((len(self.qis), self.rows), dtype=np.int64)
        for j, (q, h) in enumerate(zip(self.qis, self.hierarchies, strict=True)):
            self.codes0[j] = h.encode(df[q])
        self.level0 = list(self.codes0)
        self.attrs = attrs
        self._encode_sensitive(df)
        self._group_tables()

    def _encode_sensitive(self, df: pd.DataFrame) -> None:
        """Codes, value counts and table-wide distribution of each sensitive attribute."""
        self.sens: list[_Ints] = []
        self.n_values: list[int] = []
        self.prior: list[npt.NDArray[np.float64]] = []
        for att in self.attrs:
            codes, uniques = pd.factorize(df[att], sort=True, use_na_sentinel=False)
            values = np.asarray(codes, dtype=np.int64)
            self.sens.append(values)
            self.n_values.append(len(uniques))
            prior = np.bincount(values, weights=self.weight, minlength=len(uniques)) / self.n
            self.prior.append(prior)
            for model in self.models:
                if model.attribute == att:
                    model._prepare(pd.Index(uniques))
        # Classes smaller than this are rejected by some model: suppressing them is
        # monotone, whether or not the model is.
        priors = dict(zip(self.attrs, self.prior, strict=True))
        self.min_size = max(
            m._minimum_size(priors[m.attribute] if m.attribute else np.zeros(0))
            for m in self.models
        )
        # Rows carry one code for all sensitive values (mixed radix, first attribute
        # most significant); class x code keys must fit in 63 bits.
        self.sens_span = math.prod(self.n_values)
        if self.sens_span * max(self.rows, 1) >= _KEY_LIMIT:
            raise ParameterError(
                f"the sensitive attributes {self.attrs} have {self.sens_span} combinations "
                "of values: too many to check together; use fewer sensitive attributes"
            )

    def _group_tables(self) -> None:
        """Per QI and level: group count, maps between levels, loss and log2 count per
        group, and the QI's loss and entropy when nothing is suppressed."""
        self.groups: list[list[int]] = []
        self.maps: list[Mapping[tuple[int, int], _Ints]] = []
        self.group_loss: list[list[_Floats]] = []
        self.group_log_count: list[list[_Floats]] = []
        self.entropy_offset: list[float] = []
        self.gen_loss: list[_Floats] = []
        self.gen_entropy: list[_Floats] = []
        for h, codes0 in zip(self.hierarchies, self.level0, strict=True):
            structure = h._level_structure()
            leaves = structure.groups[0]
            hist = (
                np.bincount(codes0, minlength=leaves)
                if self.unit_weights
                else np.bincount(codes0, weights=self.weight, minlength=leaves)
            )
            offset = float(hist @ np.log2(np.maximum(hist, 1)))
            losses, logs, gen, ent = [], [], [], []
            for c, g, size in zip(structure.codes, structure.groups, structure.leaves, strict=True):
                loss = (size - 1) / (leaves - 1) if leaves > 1 else np.zeros(g)
                log_count = np.log2(np.maximum(np.bincount(c, weights=hist, minlength=g), 1))
                losses.append(loss)
                logs.append(log_count)
                gen.append(float(hist @ loss[c]) / self.n)
                ent.append(float(hist @ log_count[c]) - offset)
            self.groups.append(list(structure.groups))
            self.maps.append(structure.maps)
            self.group_loss.append(losses)
            self.group_log_count.append(logs)
            self.entropy_offset.append(offset)
            self.gen_loss.append(np.array(gen))
            self.gen_entropy.append(np.array(ent))
        # Every QI's per-group loss and log2 count, all levels in one array each, and
        # where each (QI, level) starts in them: the metrics of a node read all QIs
        # with one lookup.
        per_group = [(lv, j) for j, losses in enumerate(self.group_loss) for lv in losses]
        self.loss_table = np.concatenate([lv for lv, _ in per_group])
        self.log_count_table = np.concatenate([lv for logs in self.group_log_count for lv in logs])
        starts = list(itertools.accumulate([len(lv) for lv, _ in per_group], initial=0))
        self.table_start: list[list[int]] = []
        k = 0
        for losses in self.group_loss:
            self.table_start.append([int(x) for x in starts[k : k + len(losses)]])
            k += len(losses)

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

    def base(self) -> Table:
        """The records grouped by original QI and sensitive values (computed once)."""
        if self._base is None:
            records = self.records()
            self._base, _, merged = self.roll_up(records, None, (0,) * len(self.qis))
            if len(records) == self.rows:
                self._record_class = merged
        return self._base

    def _base_codes(self, j: int, level: int) -> _Ints:
        """QI ``j`` of every base class at ``level`` (cached: nodes without a cached
        finer table all roll up from the base, many of them at the same levels)."""
        codes = self._base_level_codes.get((j, level))
        if codes is None:
            assert self._base is not None
            codes = self.maps[j][0, level][self._base.classes[j]]
            if len(codes) * (len(self._base_level_codes) + 1) <= _BASE_CODES_BUDGET:
                self._base_level_codes[j, level] = codes
        return codes

    def records(self) -> Table:
        """One class and one row per record (of positive weight), at the original levels."""
        classes = self.codes0
        weight = self.weight
        sens = _combine(self.sens, self.n_values)[0] if self.attrs else _NO_PAIRS
        if not bool((weight > 0).all()):
            positive = np.flatnonzero(weight > 0)
            classes, weight = classes[:, positive], weight[positive]
            if self.attrs:
                sens = sens[positive]
        rows = np.arange(len(weight), dtype=np.int64) if self.attrs else _NO_PAIRS
        return Table(classes, weight, _PairCounts((rows, sens, weight)))

    def roll_up(
        self, source: Table, source_node: tuple[int, ...] | None, node: tuple[int, ...]
    ) -> tuple[Table, int, _Ints]:
        """Generalize ``source`` (a table at ``source_node``, finer) to ``node``.

        Returns the table, its number of classes and the class of each source row.
        """
        start = source_node or (0,) * len(node)
        if source is self._base:
            mapped = {j: self._base_codes(j, b) for j, b in enumerate(node) if b}
        else:
            mapped = {
                j: self.maps[j][a, b][source.classes[j]]
                for j, (a, b) in enumerate(zip(start, node, strict=True))
                if b > a
            }
        key, span = _node_key(
            source.classes, [self.groups[j][lv] for j, lv in enumerate(node)], mapped
        )
        merged, n_classes, first = _factorize(key, span)
        classes = np.take(source.classes, first, axis=1)
        for j, column in mapped.items():
            classes[j] = column[first]
        if source.size is self.weight and self.unit_weights:
            size = np.bincount(merged, minlength=n_classes)  # the records, one each
        else:
            size = np.bincount(merged, weights=source.size, minlength=n_classes).astype(np.int64)
        if self.attrs:
            pairs = _pairs(merged[source.cls], source.sens, source.count, n_classes, self.sens_span)
        else:
            pairs = _PairCounts((_NO_PAIRS, _NO_PAIRS, size))
        return Table(classes, size, pairs), n_classes, merged

    def lower_bounds(self, nodes: npt.NDArray[np.integer[Any]]) -> _Floats:
        return _metrics.lower_bounds(
            self.metric, nodes, self.heights, self.gen_loss, self.gen_entropy
        )

    def evaluate(
        self,
        source: Table,
        source_node: tuple[int, ...] | None,
        node: tuple[int, ...],
        *,
        with_metrics: bool = True,
    ) -> Outcome:
        """Generalize ``source`` (a table at ``source_node``, finer) to ``node``, check it.

        Metrics are computed when ``with_metrics``, or when the node is feasible and
        its objective is not its bound (:attr:`exact`).
        """
        table, n_classes, source_class = self.roll_up(source, source_node, node)
        sizes = table.size
        classes = _Classes(n_classes, sizes)
        stride = self.sens_span
        for i, att in enumerate(self.attrs):
            stride //= self.n_values[i]
            if len(self.attrs) == 1:
                counts = table.pairs
            else:
                counts = _pairs(
                    table.cls,
                    table.sens // stride % self.n_values[i],
                    table.count,
                    n_classes,
                    self.n_values[i],
                )
            classes.pairs[att] = _Pairs(counts, self.n_values[i], self.prior[i])
        verdicts, floors = zip(*(model._verdicts(classes) for model in self.models), strict=True)
        ok = _all_of(list(verdicts), n_classes)
        monotone_ok = _all_of(
            [v for v, m in zip(verdicts, self.monotone_models, strict=True) if m], n_classes
        )
        suppressed = 0 if ok.all() else int(sizes[~ok].sum())
        if self.recheck and 0 < suppressed <= self.max_out:
            ok, suppressed = self._recheck(classes, ok)
        if self.min_size > 1:
            monotone_ok &= sizes >= self.min_size
        least = _least_suppressed(sizes, monotone_ok, [f for f in floors if f is not None])
        values = None
        if with_metrics or (suppressed <= self.max_out and not self.exact):
            values = _metrics.compute(
                n=self.n,
                levels=node,
                heights=self.heights,
                loss_table=self.loss_table,
                log_count_table=self.log_count_table,
                table_start=[self.table_start[j][lv] for j, lv in enumerate(node)],
                entropy_offset=self.entropy_offset,
                row_codes=table.classes,
                row_count=sizes,
                row_kept=ok,
            )
        return Outcome(table, suppressed, least, values, ok, source_class)

    def _recheck(
        self, classes: _Classes, ok: npt.NDArray[np.bool_]
    ) -> tuple[npt.NDArray[np.bool_], int]:
        """Check the kept classes again against the released records' distribution.

        Suppression changes the distribution the released table is measured against;
        classes that fail against it are suppressed too, and the check repeats until no
        class fails (each pass suppresses at least one more class, so it ends) or the
        suppressed records exceed the limit (the node is then infeasible and the count
        is where the passes stopped). Every kept class then passes every model against
        the released distribution: what the table checks measure on the release.
        """
        sizes = classes.sizes
        while True:
            suppressed = int(sizes[~ok].sum())
            if suppressed == 0 or suppressed > self.max_out or suppressed == self.n:
                return ok, suppressed
            released = _Classes(classes.n_classes, sizes)
            for att, pairs in classes.pairs.items():
                keep = ok[pairs.cls]
                cls, value, count = pairs.cls[keep], pairs.value[keep], pairs.count[keep]
                prior = np.bincount(value, weights=count, minlength=pairs.n_values)
                released.pairs[att] = _Pairs(
                    _PairCounts((cls, value, count)), pairs.n_values, prior / prior.sum()
                )
            accepted = ok.copy()
            for model in self.recheck:
                accepted &= model._accepts(released)
            if np.array_equal(accepted, ok):
                return ok, suppressed
            ok = accepted

    def release(
        self, node: tuple[int, ...], suppression: str, outcome: Outcome | None = None
    ) -> tuple[pd.DataFrame, int]:
        """The records generalized to ``node``, and the records suppressed.

        ``outcome`` is the node's evaluation from the base table, when already made.
        """
        if outcome is None:
            outcome = self.evaluate(self.base(), None, node, with_metrics=False)
        if self._record_class is not None:
            # Each record's class at the node, through its class in the base table.
            record_node_class = outcome.source_class[self._record_class]
            kept = outcome.kept[record_node_class]
            generalized = None
        else:
            generalized = self._generalized(node)
            kept = self._record_kept(generalized, outcome)
        everyone = bool(kept.all())
        rows = None if everyone or suppression != "remove" else np.flatnonzero(kept)
        if generalized is None:
            at = record_node_class if rows is None else record_node_class[rows]
            # int32: the codes Arrow takes labels with, in one pass per QI.
            class_codes = outcome.table.classes.astype(np.int32)
        elif rows is not None:
            generalized = [codes[rows] for codes in generalized]
        strings = default_string_dtype()
        arrow = isinstance(strings, pd.StringDtype) and strings.storage == "pyarrow"
        labelled: dict[Hashable, Any] = {}
        for j, q in enumerate(self.qis):
            if everyone and node[j] == 0 and self._verbatim(q, strings):
                labelled[q] = _values(self.df[q])
                continue
            labels = self.hierarchies[j].labels(node[j])
            codes = class_codes[j][at] if generalized is None else generalized[j]
            if suppression != "remove" and not everyone:
                # Suppressed records show "*" in every QI: one more label.
                labels = np.append(labels, "*")
                codes = np.where(kept, codes, len(labels) - 1)
            labelled[q] = (
                arrow_strings(codes, labels, strings)
                if arrow
                else np.asarray(labels, dtype=object)[codes]
            )
        return self._assemble(labelled, rows), int(self.weight[~kept].sum())

    def _verbatim(self, q: str, strings: Any) -> bool:
        """Whether QI ``q`` at level 0, every record released, is the input's column.

        Its values are then its level-0 labels: strings of the dtype a release gives its
        QIs (a string matches only the label equal to it), none missing (whose label is
        the text ``"nan"``). The column is shared, not copied: only under copy-on-write.
        """
        column = self.df[q]
        if not (isinstance(strings, pd.StringDtype) and column.dtype == strings):
            return False
        if not copy_on_write():
            return False
        if strings.storage == "pyarrow":
            import pyarrow as pa

            return bool(pa.array(column.array).null_count == 0)  # counted by Arrow
        return not column.hasnans

    def _assemble(self, labelled: dict[Hashable, Any], rows: _Ints | None) -> pd.DataFrame:
        """The input's other columns (its ``rows``, or all) with the ``labelled`` QI
        columns, in the input's column order."""
        if not self.df.columns.is_unique:
            out = self.df.drop(columns=self.qis)
            if rows is not None:
                out = out.take(rows)
            for i, c in enumerate(self.df.columns):
                if c in labelled:
                    out.insert(i, c, labelled[c])
            return out
        if rows is None and copy_on_write():
            rest = self.df  # its columns are shared, not copied
        else:
            rest = self.df.drop(columns=self.qis)
            if rows is not None:
                rest = rest.take(rows)
        # One frame built from all its columns: inserting them one by one costs more.
        columns = {c: labelled[c] if c in labelled else _values(rest[c]) for c in self.df.columns}
        out = pd.DataFrame(columns, index=rest.index, copy=False)
        out.columns = self.df.columns
        out.attrs = copy.deepcopy(self.df.attrs)  # as pandas carries them through take
        return out.set_flags(allows_duplicate_labels=self.df.flags.allows_duplicate_labels)

    def _generalized(self, node: tuple[int, ...]) -> list[_Ints]:
        """Each record's group at ``node``, per QI."""
        return [
            self.maps[j][0, lv][codes] if lv else codes
            for j, (codes, lv) in enumerate(zip(self.level0, node, strict=True))
        ]

    def _record_kept(self, generalized: list[_Ints], outcome: Outcome) -> npt.NDArray[np.bool_]:
        """Whether each record's class is released, from the node's class rows."""
        radices = [int(c.max(initial=0)) + 1 for c in generalized]
        both = [
            np.concatenate([g, t]) for g, t in zip(generalized, outcome.table.classes, strict=True)
        ]
        key, _ = _combine(both, radices)
        kept: npt.NDArray[np.bool_] = np.isin(key[: self.rows], key[self.rows :][outcome.kept])
        return kept


def _least_suppressed(
    sizes: _Ints, monotone_ok: npt.NDArray[np.bool_], floors: Sequence[_Floats]
) -> int:
    """Records that a node and every finer node suppress at least.

    A class that a model monotone with suppression rejects (or smaller than every
    model allows) is suppressed whole at every finer node; of the others, at least the
    largest share that a model's floor names (:meth:`PrivacyModel._verdicts`). Each
    class's suppressed records are a whole number, so its floor is rounded up (past a
    rounding allowance).
    """
    if not floors:
        return 0 if monotone_ok.all() else int(sizes[~monotone_ok].sum())
    share = floors[0] if len(floors) == 1 else np.maximum.reduce(floors)
    share = np.where(monotone_ok, share, 1.0)
    return int(np.ceil(sizes * share - _FLOOR_ROUNDING).sum())


def _all_of(verdicts: list[npt.NDArray[np.bool_]], n: int) -> npt.NDArray[np.bool_]:
    """A new array, True where every verdict is (all True when there is none).

    Pairwise ``&``: ``np.logical_and.reduce`` of a list first stacks it into a new 2-D
    array.
    """
    if not verdicts:
        return np.ones(n, dtype=bool)
    out = verdicts[0].copy()
    for verdict in verdicts[1:]:
        out &= verdict
    return out


def _values(column: pd.Series) -> Any:
    """The column's values as a frame takes them without a pass over them: the NumPy
    array of a NumPy-backed column (pandas 2 scans every value of its
    ``NumpyExtensionArray`` for missing ones), else the extension array."""
    if isinstance(column.dtype, np.dtype):
        return column.to_numpy()
    return column.array


def node_of(problem: Problem, levels: Mapping[str, int]) -> tuple[int, ...]:
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
