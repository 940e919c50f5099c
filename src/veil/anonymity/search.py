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

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.anonymity import metrics as _metrics
from veil.anonymity.hierarchy import Hierarchy
from veil.anonymity.models import PrivacyModel, _Classes, _Pairs
from veil.errors import ColumnError, DataTypeError, ParameterError, VeilError

__all__ = ["AnonymizationResult", "NoSolutionError", "anonymize", "evaluate"]

_Ints = npt.NDArray[np.int64]
_KEY_LIMIT = 2**62
_SUPPRESSION = ("remove", "mark")


class NoSolutionError(VeilError, ValueError):
    """No node of the lattice satisfies the models within the suppression limit."""


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
        One row per node the search considered: the levels, ``feasible`` (NA when
        pruned by the bound), ``suppressed``, ``evaluated`` (False when decided without
        evaluation) and the metric values (NaN when not evaluated).
    """

    data: pd.DataFrame
    levels: dict[str, int]
    suppressed: int
    metrics: dict[str, float]
    lattice: pd.DataFrame


def _combine(columns: Sequence[_Ints], radices: Sequence[int]) -> _Ints:
    """Mixed-radix key of the columns, re-factorized whenever it would overflow."""
    key = np.zeros(len(columns[0]) if columns else 0, dtype=np.int64)
    span = 1
    for column, radix in zip(columns, radices, strict=True):
        if span * radix >= _KEY_LIMIT:
            uniques, key = np.unique(key, return_inverse=True)
            key = key.astype(np.int64).ravel()
            span = len(uniques)
        key = key * radix + column
        span *= max(radix, 1)
    return key


@dataclass
class _Table:
    """Rows of distinct (generalized QI codes, sensitive codes) with record counts."""

    qi: list[_Ints]
    sens: list[_Ints]
    count: _Ints


class _Problem:
    def __init__(
        self,
        df: pd.DataFrame,
        hierarchies: Mapping[str, Hierarchy],
        models: Sequence[PrivacyModel],
        max_suppression: float,
        metric: str,
        sensitive: str | Sequence[str] | None,
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
        self.n = len(df)
        self.max_out = math.floor(max_suppression * self.n + 1e-9)
        self.monotone = all(m.monotone(self.max_out > 0) for m in models)
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
            self.prior.append(np.bincount(values, minlength=len(uniques)) / self.n)
        # Per QI and level: group counts, map from the previous level, and loss per group.
        self.groups: list[list[int]] = []
        self.step: list[list[_Ints]] = []
        self.leaf_loss: list[list[npt.NDArray[np.float64]]] = []
        self.gen_loss: list[npt.NDArray[np.float64]] = []
        for h, codes0 in zip(self.hierarchies, self.level0, strict=True):
            leaves = len(h.codes(0))
            hist = np.bincount(codes0, minlength=leaves)
            groups, steps, losses, gen = [], [], [], []
            for level in range(h.levels):
                c = h.codes(level).astype(np.int64)
                g = int(c.max()) + 1
                groups.append(g)
                size = np.bincount(c, minlength=g)
                loss = (size - 1) / (leaves - 1) if leaves > 1 else np.zeros(g)
                losses.append(loss)
                gen.append(float(hist @ loss[c]) / self.n)
                if level:
                    up = np.zeros(groups[level - 1], dtype=np.int64)
                    up[h.codes(level - 1)] = c
                    steps.append(up)
                else:
                    steps.append(np.zeros(0, dtype=np.int64))
            self.groups.append(groups)
            self.step.append(steps)
            self.leaf_loss.append(losses)
            self.gen_loss.append(np.array(gen))

    def base(self) -> _Table:
        return self._aggregate(
            list(self.level0), list(self.sens), np.ones(self.n, np.int64), (0,) * len(self.qis)
        )

    def _aggregate(
        self, qi: list[_Ints], sens: list[_Ints], count: _Ints, node: tuple[int, ...]
    ) -> _Table:
        radices = [self.groups[j][lv] for j, lv in enumerate(node)] + self.n_values
        key = _combine([*qi, *sens], radices)
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        summed = np.bincount(inverse.ravel(), weights=count).astype(np.int64)
        return _Table([c[first] for c in qi], [s[first] for s in sens], summed)

    def roll_up(self, table: _Table, finer: tuple[int, ...], node: tuple[int, ...]) -> _Table:
        qi = list(table.qi)
        for j, (a, b) in enumerate(zip(finer, node, strict=True)):
            for level in range(a + 1, b + 1):
                qi[j] = self.step[j][level][qi[j]]
        return self._aggregate(qi, table.sens, table.count, node)

    def evaluate(
        self, table: _Table, node: tuple[int, ...]
    ) -> tuple[int, dict[str, float], npt.NDArray[np.bool_]]:
        radices = [self.groups[j][lv] for j, lv in enumerate(node)]
        _, row_cls = np.unique(_combine(table.qi, radices), return_inverse=True)
        row_cls = row_cls.astype(np.int64).ravel()
        n_classes = int(row_cls.max()) + 1
        sizes = np.bincount(row_cls, weights=table.count, minlength=n_classes).astype(np.int64)
        classes = _Classes(n_classes, sizes)
        for i, att in enumerate(self.attrs):
            pair_key = row_cls * self.n_values[i] + table.sens[i]
            uniq, inv = np.unique(pair_key, return_inverse=True)
            counts = np.bincount(inv.ravel(), weights=table.count).astype(np.int64)
            classes.pairs[att] = _Pairs(
                uniq // self.n_values[i],
                uniq % self.n_values[i],
                counts,
                self.n_values[i],
                self.prior[i],
            )
        ok = np.ones(n_classes, dtype=bool)
        for model in self.models:
            ok &= model._accepts(classes)
        suppressed = int(sizes[~ok].sum())
        values = _metrics.compute(
            n=self.n,
            levels=node,
            heights=self.heights,
            leaf_loss=[self.leaf_loss[j][lv] for j, lv in enumerate(node)],
            row_codes=table.qi,
            row_count=table.count,
            row_kept=ok[row_cls],
            kept_sizes=sizes[ok],
        )
        return suppressed, values, ok[row_cls]

    def lower_bound(self, node: tuple[int, ...]) -> float:
        gen = np.array([self.gen_loss[j][lv] for j, lv in enumerate(node)])
        return _metrics.lower_bound(self.metric, node, self.heights, gen)

    def release(self, node: tuple[int, ...], suppression: str) -> tuple[pd.DataFrame, int]:
        out = self.df.copy()
        generalized = self.records_at(node)
        _, _, kept = self.evaluate(generalized, node)
        for j, q in enumerate(self.qis):
            labels = self.hierarchies[j].labels(node[j])
            out[q] = np.asarray(labels, dtype=object)[generalized.qi[j]]
        if suppression == "remove":
            out = out.loc[kept]
        else:
            out.loc[~kept, self.qis] = "*"
        return out, int((~kept).sum())

    def records_at(self, node: tuple[int, ...]) -> _Table:
        """One row per record (not aggregated), QIs generalized to ``node``."""
        qi = [
            self.hierarchies[j].codes(lv).astype(np.int64)[self.level0[j]]
            for j, lv in enumerate(node)
        ]
        return _Table(qi, list(self.sens), np.ones(self.n, np.int64))


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


def _row(problem: _Problem, node: tuple[int, ...], **fields: object) -> dict[str, object]:
    return {**dict(zip(problem.qis, node, strict=True)), **fields}


def _result(
    problem: _Problem,
    node: tuple[int, ...],
    values: dict[str, float],
    rows: list[dict[str, object]],
    suppression: str,
) -> AnonymizationResult:
    data, suppressed = problem.release(node, suppression)
    lattice = pd.DataFrame(rows)
    lattice["feasible"] = lattice["feasible"].astype("boolean")
    lattice["suppressed"] = lattice["suppressed"].astype("Int64")
    return AnonymizationResult(
        data=data,
        levels=dict(zip(problem.qis, node, strict=True)),
        suppressed=suppressed,
        metrics=values,
        lattice=lattice,
    )


def _check_suppression(suppression: str) -> None:
    if suppression not in _SUPPRESSION:
        raise ParameterError(f"suppression must be one of {_SUPPRESSION}, got {suppression!r}")


def anonymize(
    df: pd.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    models: Sequence[PrivacyModel] | PrivacyModel,
    *,
    max_suppression: float,
    metric: str = "loss",
    sensitive: str | Sequence[str] | None = None,
    suppression: str = "remove",
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
    metric : {"loss", "discernibility", "aecs", "precision"}
        Objective, see :mod:`veil.anonymity.metrics`.
    sensitive : str or sequence of str, optional
        Sensitive columns; when given, every model's attribute must be among them.
    suppression : {"remove", "mark"}
        Drop suppressed records from ``data``, or keep them with every QI ``"*"``.

    Raises
    ------
    ParameterError, ColumnError, DataTypeError
        For invalid arguments (each named in the message).
    NoSolutionError
        If no node is feasible.
    """
    _check_suppression(suppression)
    problem = _Problem(
        df,
        hierarchies,
        list(models) if not isinstance(models, PrivacyModel) else [models],
        max_suppression,
        metric,
        sensitive,
    )
    ranges = [range(h + 1) for h in problem.heights]
    order = sorted(itertools.product(*ranges), key=sum)
    feasible: dict[tuple[int, ...], bool] = {}
    previous: dict[tuple[int, ...], _Table] = {}
    current: dict[tuple[int, ...], _Table] = {}
    base = problem.base()
    rows: list[dict[str, object]] = []
    best: tuple[float, tuple[int, ...], dict[str, float]] | None = None
    nan_metrics = dict.fromkeys(("loss", "loss_mean", *_metrics.METRICS[1:]), math.nan)
    level_sum = 0
    for node in order:
        if sum(node) != level_sum:
            level_sum = sum(node)
            previous, current = current, {}
        finer = [(*node[:j], node[j] - 1, *node[j + 1 :]) for j in range(len(node)) if node[j] > 0]
        if problem.monotone and problem.max_out == 0 and any(feasible.get(f) for f in finer):
            # No suppression, monotone models: feasible, and every metric can only grow.
            feasible[node] = True
            rows.append(
                _row(problem, node, feasible=True, suppressed=0, evaluated=False, **nan_metrics)
            )
            continue
        if best is not None and problem.lower_bound(node) > best[0] + 1e-12:
            rows.append(
                _row(problem, node, feasible=None, suppressed=None, evaluated=False, **nan_metrics)
            )
            continue
        sources = [f for f in finer if f in previous]
        if sources:
            source = min(sources, key=lambda f: len(previous[f].count))
            table = problem.roll_up(previous[source], source, node)
        else:
            table = problem.roll_up(base, (0,) * len(node), node)
        current[node] = table
        suppressed, values, _ = problem.evaluate(table, node)
        ok = suppressed <= problem.max_out
        feasible[node] = ok
        rows.append(
            _row(problem, node, feasible=ok, suppressed=suppressed, evaluated=True, **values)
        )
        if ok and (best is None or values[metric] < best[0] - 1e-12):
            best = (values[metric], node, values)
    if best is None:
        raise NoSolutionError(
            f"no generalization satisfies {problem.models} with max_suppression="
            f"{max_suppression}; allow more suppression or relax the models"
        )
    return _result(problem, best[1], best[2], rows, suppression)


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
    )
    node = _node(problem, levels)
    suppressed, values, _ = problem.evaluate(problem.records_at(node), node)
    row = _row(
        problem,
        node,
        feasible=suppressed <= problem.max_out,
        suppressed=suppressed,
        evaluated=True,
        **values,
    )
    return _result(problem, node, values, [row], suppression)
