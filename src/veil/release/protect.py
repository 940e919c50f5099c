"""The protect phase of a run: the plan's steps over the records, whatever the engine.

:func:`plan_steps` turns an allocated plan into its steps (keys loaded, hierarchies
read) before any record is touched, in a fixed order that fixes each step's random
stream: the row steps (columns in plan order, then the location masks that run per
record), then the steps that need the whole table. :func:`protect` then runs them:

1. the row steps, through the engine (per partition on Dask);
2. if a step needs the whole table, the rows are gathered into memory and those steps
   run there, in plan order; what follows works on that table;
3. the class counts the counted steps need (grid cells, the anonymization), by one
   group-by per step (distributed on Dask);
4. the per-partition finisher: the counted location steps' suppression, the plan's
   dropped columns, then the anonymization's generalization and suppression.

The finisher runs when the records are written (:func:`veil.release.runner.run`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from veil.frames import MASKING_ATTR, PRIVACY_ATTR
from veil.release.engine import Engine, Gathered, InputData, PandasEngine
from veil.release.errors import PlanError
from veil.release.plan import Plan
from veil.release.progress import Reporter, reporting
from veil.release.steps import ANONYMIZATION, LOCATIONS, SHARE, column_step
from veil.release.steps.base import Finished, Step
from veil.release.steps.share import STEP_FACTS

__all__ = [
    "Protected",
    "StepPlan",
    "check_columns",
    "plan_steps",
    "plan_steps_dropping",
    "protect",
]


@dataclass(frozen=True)
class StepPlan:
    """The plan's steps in the order they run.

    ``rows`` run per record (the counted location steps' rows part among them), then
    ``tables`` on the whole table; stream ``i`` of the run's step streams goes to the
    ``i``-th of ``rows + tables``. ``counted`` lists the steps that need class counts,
    in plan order; ``dropped`` the columns removed before the release is written.
    """

    rows: tuple[Step, ...]
    tables: tuple[Step, ...]
    counted: tuple[Step, ...]
    dropped: tuple[str, ...]

    @property
    def streams_needed(self) -> int:
        """Random streams the steps draw from (one per row or table step)."""
        return len(self.rows) + len(self.tables)


def plan_steps(plan: Plan, unlisted: Sequence[str] = ()) -> StepPlan:
    """The steps of an allocated plan; ``unlisted`` input columns are dropped too."""
    steps: list[Step] = [
        s for name, spec in plan.columns.items() if (s := column_step(name, spec.treatment))
    ]
    steps.extend(LOCATIONS.build(loc) for loc in plan.locations)
    if plan.anonymization is not None:
        steps.append(ANONYMIZATION.build(plan.anonymization))
    if plan.share is not None:
        steps.append(SHARE.build(plan.share))
    dropped = [n for n, s in plan.columns.items() if s.treatment.method == "drop"]
    return StepPlan(
        rows=tuple(s for s in steps if s.need != "table" and s.apply is not None),
        tables=tuple(s for s in steps if s.need == "table"),
        counted=tuple(s for s in steps if s.counted is not None),
        dropped=(*dropped, *unlisted),
    )


@dataclass
class Protected:
    """What the protect phase leaves for the writing pass.

    ``engine`` and ``rows`` are the engine that writes and its handle on the rows (the
    run's engine, or an in-memory one over a gathered table); ``finish`` is the
    per-partition finisher; ``where`` says where each step ran and ``facts`` what the
    counted steps found (the anonymization's levels and metrics).
    """

    engine: Engine
    rows: Any
    finish: Callable[[pd.DataFrame], pd.DataFrame]
    gathered: bool = False
    original: pd.DataFrame | None = None
    where: dict[str, str] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


def _table_steps(
    gathered: Gathered,
    steps: Sequence[Step],
    streams: Sequence[np.random.Generator],
    reporter: Reporter,
) -> Gathered:
    """The whole-table steps, in order, on the gathered rows."""
    frame, privacy, masking = gathered.frame, list(gathered.privacy), list(gathered.masking)
    timings = dict(gathered.timings)
    for step, stream in zip(steps, streams, strict=True):
        reporter.step("protect", step.label)
        assert step.apply is not None
        start = time.perf_counter()
        with reporting(reporter):
            out = step.apply(frame, stream)
        timings[step.label] = time.perf_counter() - start
        for key, entries in ((PRIVACY_ATTR, privacy), (MASKING_ATTR, masking)):
            old = len(frame.attrs.get(key, []))
            entries.extend(dict(e) for e in out.attrs.get(key, [])[old:])
        frame = out
    return Gathered(frame, privacy, masking, timings)


def _finisher(
    before_drop: Sequence[Finished], dropped: Sequence[str], after_drop: Sequence[Finished]
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Per partition: the counted location steps, the dropped columns, then the classes."""
    first = [f.finish for f in before_drop]
    last = [f.finish for f in after_drop]
    drop = list(dropped)

    def finish(part: pd.DataFrame) -> pd.DataFrame:
        for fn in first:
            part = fn(part)
        kept = part.drop(columns=drop)
        for fn in last:
            kept = fn(kept)
        kept.attrs = {}
        return kept

    return finish


def protect(
    engine: Engine,
    data: InputData,
    steps: StepPlan,
    streams: Sequence[np.random.Generator],
    reporter: Reporter,
) -> Protected:
    """Run the row and whole-table steps and count what the counted steps need.

    Parameters
    ----------
    engine : Engine
        Where the records are.
    data : InputData
        The input as the engine read it.
    steps : StepPlan
        From :func:`plan_steps`.
    streams : sequence of numpy.random.Generator
        One per row or table step (``steps.streams_needed``), in order.
    reporter : Reporter
        Progress and cancellation.
    """
    row_streams, table_streams = streams[: len(steps.rows)], streams[len(steps.rows) :]
    where = {s.label: engine.where("row") for s in steps.rows}
    rows = engine.rows(data, steps.rows, row_streams, reporter)
    writer: Engine = engine
    counts_where = engine.where("counts")
    protected = Protected(engine, rows, lambda part: part, where=where)
    if steps.tables:
        gathered = _table_steps(
            engine.gather(rows, reporter), steps.tables, table_streams, reporter
        )
        where.update({s.label: engine.where("table") for s in steps.tables})
        protected.facts.update(gathered.frame.attrs.get(STEP_FACTS, {}))
        in_memory = PandasEngine()
        protected.original = engine.original(data)
        protected.gathered = True
        rows = in_memory.hold(protected.original, gathered)
        protected.timings.update(gathered.timings)
        writer, counts_where = in_memory, engine.where("gathered")
    counted = {s.label: s.counted for s in steps.counted if s.counted is not None}
    finished: dict[str, Finished] = {}
    if counted:
        reporter.step("protect", "class counts")
        counts, timings = writer.count(rows, counted, reporter)
        protected.timings.update(timings)
        for label, spec in counted.items():
            reporter.step("protect", label)
            start = time.perf_counter()
            finished[label] = spec.from_counts(counts[label], data.rows)
            protected.timings[label] = time.perf_counter() - start
            where[label] = f"{counts_where}: {finished[label].detail}"
            if finished[label].facts is not None:
                protected.facts[label] = finished[label].facts
    protected.engine, protected.rows = writer, rows
    protected.finish = _finisher(
        [finished[s.label] for s in steps.counted if s.counted and not s.counted.after_drop],
        steps.dropped,
        [finished[s.label] for s in steps.counted if s.counted and s.counted.after_drop],
    )
    return protected


def check_columns(plan: Plan, columns: tuple[str, ...]) -> list[str]:
    """Plan columns must be in the input; returns the unlisted input columns to drop."""
    listed = [*plan.columns, *(c for loc in plan.locations for c in (loc.lat, loc.lon))]
    absent = [c for c in listed if c not in columns]
    if absent:
        raise PlanError(
            "columns: "
            + ", ".join(repr(c) for c in absent)
            + f" not in the input (its columns: {list(columns)})"
        )
    unlisted = [c for c in columns if c not in set(listed)]
    if unlisted and plan.unlisted == "error":
        raise PlanError(
            f"columns: the input has columns the plan does not list: {unlisted}; give each a "
            "role and a treatment, or set unlisted: drop"
        )
    return unlisted


def plan_steps_dropping(steps: StepPlan, unlisted: list[str]) -> StepPlan:
    """``steps`` with the unlisted input columns dropped as well."""
    return StepPlan(steps.rows, steps.tables, steps.counted, (*steps.dropped, *unlisted))
