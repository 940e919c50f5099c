"""What every engine shares: the primitives the runner sees (:class:`Engine`), what
they return, and running row steps over one frame."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
import pandas as pd

from veil.frames import MASKING_ATTR, PRIVACY_ATTR
from veil.release.plan import InputSpec
from veil.release.progress import Reporter
from veil.release.steps.base import Counted, Step, record_counts

Where = Literal["row", "counts", "table", "gathered", "input", "order"]
"""Kinds of work an engine describes: a row step, a counted step, a whole-table step,
a counted step on a table gathered for a whole-table step, the input read whole, and
how the released rows are shuffled."""

Finisher = Callable[[pd.DataFrame], pd.DataFrame]
Probe = Callable[[int, pd.DataFrame, pd.DataFrame], Any]
"""``probe(p, original, output)``: a small summary of partition ``p`` (on the worker)."""


class Sink(Protocol):
    """Where released partitions go (the staged release file), in the order written.

    ``scratch`` is a private folder for intermediate files (a shuffle's spilled
    buckets), removed with the staged outputs.
    """

    scratch: Path | None

    def write(self, part: pd.DataFrame) -> None:
        """Append one partition (or the whole table)."""
        ...


@dataclass(frozen=True)
class InputData:
    """What an engine read: the engine's table, its row count, digest and column names."""

    table: Any
    rows: int
    sha256: str
    source: str
    columns: tuple[str, ...]


@dataclass
class Recorded:
    """What the row steps recorded: new ``veil.privacy`` and ``veil.masking`` entries."""

    privacy: list[dict[str, Any]] = field(default_factory=list)
    masking: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Gathered:
    """The rows' output as one pandas frame, with what the steps recorded."""

    frame: pd.DataFrame
    privacy: list[dict[str, Any]]
    masking: list[dict[str, Any]]
    timings: dict[str, float]


@dataclass(frozen=True)
class StreamResult:
    """What a stream handed to its sink, and what the steps recorded.

    ``frame`` is the released table when the engine held it in memory (None when the
    partitions were streamed into the file and never held together).
    """

    rows: int
    partitions: int
    privacy: list[dict[str, Any]]
    masking: list[dict[str, Any]]
    timings: dict[str, float]
    frame: pd.DataFrame | None = None


class Engine(Protocol):
    """The primitives the runner needs from an engine (see the module docstring)."""

    name: str

    def session(self) -> contextlib.AbstractContextManager[None]:
        """Set up (and finally tear down) what the engine needs for one run."""
        ...

    def read(self, spec: InputSpec) -> InputData:
        """Open the input (hash it, count its rows)."""
        ...

    def adopt(self, frame: pd.DataFrame, source: str) -> InputData:
        """Records the caller holds in memory, as this engine's input (nothing read)."""
        ...

    def original(self, data: InputData) -> pd.DataFrame:
        """The input as one pandas frame."""
        ...

    def sample(self, data: InputData, rows: int) -> pd.DataFrame:
        """At most ``rows`` records of the input, spread over it, as a pandas frame."""
        ...

    def partitions(self, data: InputData) -> int:
        """How many partitions the input has (1 in memory)."""
        ...

    def where(self, kind: Where) -> str:
        """Where a kind of work runs on this engine, in words (custodian record)."""
        ...

    def rows(
        self,
        data: InputData,
        steps: Sequence[Step],
        streams: Sequence[np.random.Generator],
        reporter: Reporter,
    ) -> Any:
        """The row steps over the input (run now, or in each later pass)."""
        ...

    def count(
        self, rows: Any, counted: Mapping[str, Counted], reporter: Reporter
    ) -> tuple[dict[str, pd.DataFrame], dict[str, float]]:
        """Records per combination of each counted step's keys, over the whole table."""
        ...

    def gather(self, rows: Any, reporter: Reporter) -> Gathered:
        """The rows' output as one pandas frame."""
        ...

    def stream(
        self,
        rows: Any,
        sink: Sink,
        reporter: Reporter,
        *,
        finish: Finisher | None = None,
        probe: Probe | None = None,
        collect: Callable[[int, Any], None] | None = None,
        order: np.random.Generator | None = None,
    ) -> StreamResult:
        """The rows' output, finished, shuffled with ``order``, into ``sink``."""
        ...


def unique_index(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame, renumbered from 0 when its index repeats a label."""
    if not frame.index.is_unique:
        # Released records are paired with their originals by label (the report).
        frame = frame.reset_index(drop=True)
    return frame


def _new_entries(before: pd.DataFrame, after: pd.DataFrame, key: str) -> list[dict[str, Any]]:
    old = len(before.attrs.get(key, []))
    return [dict(e) for e in after.attrs.get(key, [])[old:]]


def run_steps(
    frame: pd.DataFrame,
    steps: Sequence[Step],
    streams: Sequence[np.random.Generator],
    reporter: Reporter | None = None,
) -> tuple[pd.DataFrame, Recorded, dict[str, float]]:
    """The steps in order over one frame, step ``i`` drawing from ``streams[i]``."""
    recorded = Recorded()
    timings: dict[str, float] = {}
    for step, stream in zip(steps, streams, strict=True):
        if reporter is not None:
            reporter.step("protect", step.label)
        assert step.apply is not None, f"{step.label}: a row step without rows part"
        start = time.perf_counter()
        out = step.apply(frame, stream)
        recorded.privacy.extend(_new_entries(frame, out, PRIVACY_ATTR))
        recorded.masking.extend(_new_entries(frame, out, MASKING_ATTR))
        timings[step.label] = time.perf_counter() - start
        frame = out
    return frame, recorded, timings


StepKeys = dict[str, tuple[list[str], bool]]
"""Per counted step: its keys and whether only records with every key present count."""


def step_keys(counted: Mapping[str, Counted]) -> StepKeys:
    """What a counting probe needs of the counted steps (it travels to the workers)."""
    return {name: (list(c.keys), c.present_only) for name, c in counted.items()}


def counts_of(frame: pd.DataFrame, keys: StepKeys) -> dict[str, pd.DataFrame]:
    """Records per combination of each step's keys (of present keys, where asked)."""
    return {
        name: record_counts(frame[columns].dropna() if present else frame, columns)
        for name, (columns, present) in keys.items()
    }


def partitions_text(n: int) -> str:
    """``"1 partition"``, ``"4 partitions"``."""
    return f"{n} partition{'s' if n != 1 else ''}"


# ------------------------------------------------------------------------- pandas
