"""Optimal full-domain generalization over the lattice of hierarchy levels.

A *node* picks one hierarchy level per quasi-identifier (QI). At a node every class of
records sharing the generalized QI values is checked by each privacy model; the records
of rejected classes are suppressed, and the node is feasible when the suppressed share
is at most ``max_suppression`` (ARX's semantics [1]_). :func:`anonymize` returns the
feasible node of lowest metric.

Models that compare a class with the table's distribution (t-closeness, delta-disclosure,
beta-likeness) are, by default (``reference="release"``), checked again against the
distribution of the records a node releases, suppressing further classes until every
released class passes: the released table then passes the table checks of
:mod:`veil.anonymity.checks`. With ``reference="input"`` they compare with the whole
input's distribution, as ARX does; after suppression the released table may then fail
those checks. Either way feasibility is not monotone once records are suppressed, and
only a floor on the suppressed records prunes the lattice: the classes that a model
monotone with suppression rejects, and for t-closeness and entropy l-diversity a share
of each class that its EMD or its entropy forces out of any split of it (the EMD is
convex and the entropy concave in the class's distribution, see
:meth:`~veil.anonymity.models.TCloseness._verdicts`). A node whose floor exceeds the
limit is infeasible with every finer node.

Nodes are visited in increasing order of the metric's lower bound
(:func:`metrics.lower_bounds`), so the search ends at the first node that cannot beat
the best found; unknown nodes are settled by binary searches along chains of the
lattice whose verdicts tag whole regions (Flash [1]_, :mod:`veil.anonymity.lattice`).
Each evaluation rolls up the smallest cached table of a finer node
(:mod:`veil.anonymity.transformation`). Lattices too large to hold are searched lazily,
best-first from the bottom after a greedy top-down descent, and a time limit turns any
search into a best-effort one that says so.

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
from veil.anonymity.models import PrivacyModel
from veil.anonymity.transformation import Outcome, Problem, TableCache, node_of
from veil.errors import ParameterError, SearchBudgetWarning, VeilError

__all__ = [
    "AnonymizationResult",
    "NoSolutionError",
    "SearchBudgetWarning",
    "anonymize",
    "evaluate",
]

_SUPPRESSION = ("remove", "mark")
_Floats = npt.NDArray[np.float64]


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
        One row per node of the lattice (of the evaluated nodes when the lattice is
        searched lazily), by level sum: the levels, ``feasible`` (NA when never
        decided: pruned by the bound), ``suppressed`` (NA when not known),
        ``evaluated`` (False when decided by tagging, without a pass over the data)
        and the metric values (NaN when not evaluated or infeasible; when nothing may
        be suppressed and ``metric`` is loss, precision or entropy, a feasible node
        shows its objective alone, which is then its lower bound).
    optimal : bool
        False when the search stopped at its time limit.
    reference : {"release", "input"}
        The distribution the distribution-comparing models were checked against: the
        released records' (the released table passes the table checks) or the whole
        input's (ARX's semantics).
    """

    data: pd.DataFrame
    levels: dict[str, int]
    suppressed: int
    metrics: dict[str, float]
    lattice: pd.DataFrame
    optimal: bool = True
    reference: str = "release"


_METRIC_COLUMNS = ("loss", "loss_mean", *_metrics.METRICS[1:], "classes")


def _slack(value: float) -> float:
    """How far two metric values may differ and still tie: relative, past 1.

    A bound and the measured value of the same node are sums in different orders; at
    an entropy of 25,000 bits they differ in the last places, beyond any absolute
    1e-12, and the node of the documented tie-break would go unvisited.
    """
    return 1e-12 * max(1.0, abs(value))


class _Search:
    """State shared by the search strategies: the problem, cached tables, the best node."""

    def __init__(self, problem: Problem, time_limit: float | None) -> None:
        self.problem = problem
        self.cache = TableCache(problem.base(), len(problem.qis))
        self.deadline = None if time_limit is None else time.perf_counter() + time_limit
        self.best: tuple[float, int, tuple[int, ...], dict[str, float]] | None = None
        self.timed_out = False
        # Per evaluated node: suppressed count, feasibility, metrics (None if infeasible).
        self.seen: dict[tuple[int, ...], tuple[int, bool, dict[str, float] | None]] = {}

    def out_of_time(self) -> bool:
        if self.deadline is not None and time.perf_counter() > self.deadline:
            self.timed_out = True
        return self.timed_out

    def evaluate(self, node: tuple[int, ...], bound: float | None = None) -> Outcome:
        """Evaluate ``node`` (whose metric's lower bound is ``bound``, when known)."""
        source_node, source = self.cache.source(node)
        outcome = self.problem.evaluate(source, source_node, node, with_metrics=False)
        self.cache.put(node, outcome.table)
        feasible = outcome.suppressed <= self.problem.max_out
        values = outcome.values
        if feasible and values is None:  # an exact problem: the objective is the bound
            if bound is None:
                bound = float(self.problem.lower_bounds(np.array([node]))[0])
            values = self.bound_values(node, bound)
        self.seen[node] = (outcome.suppressed, feasible, values)
        if feasible:
            assert values is not None
            self.consider(node, values)
        return outcome

    def bound_values(self, node: tuple[int, ...], bound: float) -> dict[str, float]:
        """The metrics of a feasible node known only by its bound: the objective alone."""
        return dict.fromkeys(_METRIC_COLUMNS, math.nan) | {self.problem.metric: bound}

    def consider(self, node: tuple[int, ...], values: dict[str, float]) -> None:
        """Keep the node if it beats the best (ties: lower level sum, then lexicographic)."""
        value = values[self.problem.metric]
        if self.best is None:
            self.best = (value, sum(node), node, values)
            return
        best, slack = self.best[0], _slack(self.best[0])
        if value < best - slack or (
            value <= best + slack and (sum(node), node) < (self.best[1], self.best[2])
        ):
            self.best = (value, sum(node), node, values)

    def bound(self) -> float:
        """The largest lower bound a node may have and still tie or beat the best."""
        return math.inf if self.best is None else self.best[0] + _slack(self.best[0])

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


class _Chains:
    """Settles nodes of a materialized lattice by evaluations along chains (Flash).

    ``mono`` holds the verdicts of the monotone part of the models: whether the floor
    on the records that a node and every finer one suppress (the classes that a model
    monotone with suppression rejects or that are smaller than every model allows,
    and the shares that t-closeness or entropy l-diversity forces out of the others)
    is within the limit. It is the lattice's own status when every model is monotone.
    An unknown node is settled by a search along a chain of unknown nodes above it,
    each evaluation tagging its up-set feasible or
    its down-set infeasible.

    The chain is split where its boundary was found on average so far (half way at
    first, at most nine tenths up): on tables whose few feasible nodes sit high in the
    lattice the boundary is near the top of each chain, and a halving search spends
    its evaluations below it. Without suppression (``climb``) the search must prove
    infeasible everything below the optimum: from the chain's highest infeasible node
    it climbs through infeasible successors to a maximal one, whose down-set tags the
    most, for as long as at least half of the climbing evaluations find infeasible
    nodes. On ARX's Adult (k = 5, no suppression) this takes 72 evaluations where a
    halving search takes 118.
    """

    def __init__(self, search: _Search, lattice: Lattice, bounds: _Floats, climb: bool) -> None:
        problem = search.problem
        self.search = search
        self.lattice = lattice
        self.bound_of = bounds.tolist()
        self.bounds = bounds
        self.monotone = problem.monotone
        self.max_out = problem.max_out
        self.mono = lattice.status if problem.monotone else np.zeros(lattice.size, dtype=np.int8)
        self.climb = climb
        self.boundaries: list[float] = []  # where each chain's boundary was, 0..1
        self.climbed = 0  # evaluations made while climbing
        self.climbed_infeasible = 0

    def settle(self, i: int) -> bool:
        """Evaluate node ``i`` and tag what its verdict implies; True if infeasible."""
        lattice, mono = self.lattice, self.mono
        outcome = self.search.evaluate(lattice.levels(i), self.bound_of[i])
        ok = outcome.suppressed <= self.max_out
        # With every model monotone the full verdict tags; otherwise the floor on what
        # this node and every finer one suppress.
        if ok if self.monotone else outcome.least_suppressed <= self.max_out:
            lattice.tag_feasible(i, mono)
        else:
            lattice.tag_infeasible(i, mono)
            if mono is not lattice.status:
                lattice.tag_infeasible(i)
        lattice.status[i] = FEASIBLE if ok else INFEASIBLE
        return bool(mono[i] == INFEASIBLE)

    def binary_search(self, i: int) -> None:
        """Settle ``i``'s monotone part from a chain above it."""
        mono = self.mono
        path = self.lattice.chain(i, self.bounds, mono)
        split = (
            min(max(sum(self.boundaries) / len(self.boundaries), 0.5), 0.9)
            if (self.boundaries)
            else 0.5
        )
        lo, hi = 0, len(path) - 1
        while lo <= hi:
            mid = lo + int((hi - lo) * split)
            if mono[path[mid]] == UNKNOWN:
                self.settle(path[mid])
            if mono[path[mid]] == FEASIBLE:
                hi = mid - 1
            else:
                lo = mid + 1
        if len(path) > 1:
            self.boundaries.append(min(lo / (len(path) - 1), 1.0))
        if (
            self.climb
            and lo > 0
            and (self.climbed < 4 or 2 * self.climbed_infeasible >= self.climbed)
        ):
            self.climb_from(path[lo - 1])

    def climb_from(self, i: int) -> None:
        """From infeasible ``i``, step up to infeasible successors while there are any."""
        mono = self.mono
        while True:
            above = sorted(
                (s for s in self.lattice.successors(i) if mono[s] != FEASIBLE),
                key=lambda s: (self.bound_of[s], s),
            )
            for s in above:
                if mono[s] == UNKNOWN:
                    self.climbed += 1
                    self.climbed_infeasible += self.settle(s)
                if mono[s] == INFEASIBLE:
                    i = s
                    break
            else:
                return


def _search_lattice(search: _Search) -> pd.DataFrame:
    """Optimal search over a materialized lattice; returns the lattice table.

    Nodes are visited in increasing order of the metric's lower bound, so the search
    stops at the first node whose bound exceeds the best value found. An unknown node
    is settled along a chain of unknown nodes above it (:class:`_Chains`); a node that
    the monotone part of the models rejects is infeasible with its down-set; the
    others are evaluated.
    """
    problem = search.problem
    lattice = Lattice(problem.heights)
    bounds = problem.lower_bounds(lattice.nodes)
    order = np.lexsort((np.arange(lattice.size), lattice.level_sum, bounds))
    exact = problem.exact
    chains = _Chains(search, lattice, bounds, climb=exact and problem.monotone)
    mono, status = chains.mono, lattice.status
    has_mono = (
        problem.monotone
        or problem.min_size > 1
        or any(problem.monotone_models)
        or any(m.floors_refinements for m in problem.models)
    )
    known_value: dict[int, float] = {}

    def visit(i: int) -> None:
        if status[i] == UNKNOWN and has_mono and mono[i] == UNKNOWN:
            chains.binary_search(i)
        if status[i] == UNKNOWN and mono[i] != INFEASIBLE:
            chains.settle(i)
        if status[i] == INFEASIBLE:
            return
        node = lattice.levels(i)
        if status[i] == FEASIBLE and node not in search.seen:
            if exact:
                # Nothing suppressed: the metric equals its bound; no pass needed.
                known_value[i] = float(bounds[i])
                search.consider(node, search.bound_values(node, float(bounds[i])))
            else:
                chains.settle(i)

    bound_of = chains.bound_of
    visiting = order.tolist()
    pos = 0
    while pos < lattice.size:
        i = visiting[pos]
        if bound_of[i] > search.bound() or search.out_of_time():
            break
        if status[i] == INFEASIBLE:
            # Most nodes were tagged by an earlier evaluation: skip their run at once.
            run = status[order[pos : pos + 256]] != INFEASIBLE
            pos += int(run.argmax()) if run.any() else len(run)
            continue
        visit(i)
        pos += 1
    if search.timed_out and search.best is None:
        search.greedy_top_down()
    return _lattice_table(problem, lattice, search, known_value)


def _lattice_table(
    problem: Problem, lattice: Lattice, search: _Search, known_value: dict[int, float]
) -> pd.DataFrame:
    suppressed = np.full(lattice.size, -1, dtype=np.int64)
    evaluated = np.zeros(lattice.size, dtype=bool)
    feasible = lattice.status == FEASIBLE
    decided = lattice.status != UNKNOWN
    values = np.full((lattice.size, len(_METRIC_COLUMNS)), math.nan)
    if search.seen:
        seen = list(search.seen.items())
        rows = np.array([node for node, _ in seen], dtype=np.int64) @ lattice.strides
        suppressed[rows] = [count for _, (count, _, _) in seen]
        evaluated[rows] = True
        feasible[rows] = [ok for _, (_, ok, _) in seen]
        decided[rows] = True
        with_values = [
            (i, m) for i, (_, (_, _, m)) in zip(rows.tolist(), seen, strict=True) if m is not None
        ]
        if with_values:
            values[[i for i, _ in with_values]] = [
                [m[name] for name in _METRIC_COLUMNS] for _, m in with_values
            ]
    for i, value in known_value.items():
        suppressed[i] = 0
        values[i, _METRIC_COLUMNS.index(problem.metric)] = value
    # Rows by level sum (ties: lexicographic order of the levels).
    order = np.lexsort((np.arange(lattice.size), lattice.level_sum))
    columns: dict[str, object] = {
        q: lattice.nodes[order, j].astype(np.int64) for j, q in enumerate(problem.qis)
    }
    columns["feasible"] = pd.arrays.BooleanArray(feasible[order], ~decided[order])
    columns["suppressed"] = pd.arrays.IntegerArray(suppressed[order], suppressed[order] < 0)
    columns["evaluated"] = evaluated[order]
    for k, name in enumerate(_METRIC_COLUMNS):
        columns[name] = values[order, k]
    return pd.DataFrame(columns, copy=False)  # every column is a fresh array


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
    problem: Problem,
    node: tuple[int, ...],
    values: dict[str, float],
    lattice: pd.DataFrame,
    suppression: str,
    optimal: bool,
    outcome: Outcome,
) -> AnonymizationResult:
    data, suppressed = problem.release(node, suppression, outcome)
    return AnonymizationResult(
        data=data,
        levels=dict(zip(problem.qis, node, strict=True)),
        suppressed=suppressed,
        metrics=values,
        lattice=lattice,
        optimal=optimal,
        reference=problem.reference,
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
    reference: str = "release",
) -> AnonymizationResult:
    """The optimal full-domain generalization satisfying every model.

    Every released equivalence class satisfies each model (e.g. holds at least k
    records for :class:`~veil.anonymity.models.KAnonymity`); records of other classes
    are suppressed, at most ``max_suppression`` of the table. Among all feasible nodes
    of the lattice the one of lowest ``metric`` is returned (ties: lowest level sum,
    then first in lexicographic order of levels).

    With the default ``reference="release"`` the guarantee holds for the released table
    itself: models that compare a class with the table's distribution (t-closeness,
    delta-disclosure, beta-likeness) are checked again against the released records'
    distribution after suppression (failing classes are suppressed too, within the
    limit), so the released records pass the table checks of
    :mod:`veil.anonymity.checks` for the models' parameters (up to 1e-12 for
    t-closeness's EMD). With ``suppression="mark"`` that is the records not marked.

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
    reference : {"release", "input"}, default "release"
        What t-closeness, delta-disclosure and beta-likeness compare each class with:
        the distribution of the records the node releases, or the whole input's
        (ARX's semantics: ARX's optima are reproduced, but after suppression the
        released table may fail the table checks). Without suppression both are the
        same.

    Raises
    ------
    ParameterError, ColumnError, DataTypeError
        For invalid arguments (each named in the message).
    NoSolutionError
        If no node is feasible (or, with a time limit, none was found).
    """
    _check_suppression(suppression)
    _check_time_limit(time_limit)
    problem = Problem(
        df, hierarchies, models, max_suppression, metric, sensitive, weights, reference
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
    # From the base table, as the release needs; with the metrics if the search only
    # knew the node's bound.
    measured = node in search.seen and not problem.exact
    outcome = problem.evaluate(problem.base(), None, node, with_metrics=not measured)
    if not measured:
        values = outcome.values or values
    if search.timed_out:
        warnings.warn(
            f"the search stopped after time_limit={time_limit} s: the returned "
            f"transformation {dict(zip(problem.qis, node, strict=True))} is the best "
            "found, not proven optimal",
            SearchBudgetWarning,
            stacklevel=2,
        )
    return _result(problem, node, values, lattice, suppression, not search.timed_out, outcome)


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
    reference: str = "release",
) -> AnonymizationResult:
    """Apply one transformation (``levels``, one per QI) and measure it.

    Same arguments and result as :func:`anonymize`; the lattice holds the one node,
    whose ``feasible`` column says whether it meets ``max_suppression``. ``metric`` is
    validated only (every metric is reported). With ``reference="release"`` the
    classes are checked again against the released distribution while the suppressed
    share stays within ``max_suppression``; beyond it the node is infeasible and
    ``suppressed`` counts what the checks had suppressed when they stopped.
    """
    _check_suppression(suppression)
    problem = Problem(
        df, hierarchies, models, max_suppression, metric, sensitive, weights, reference
    )
    node = node_of(problem, levels)
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
    return _result(problem, node, outcome.values, lattice, suppression, True, outcome)
