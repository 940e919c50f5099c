"""The pandas engine: the table held in memory, each row step run once over it."""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from veil.frames import shuffle_rows
from veil.release.engine.base import (
    Finisher,
    Gathered,
    InputData,
    Probe,
    Recorded,
    Sink,
    StreamResult,
    Where,
    counts_of,
    run_steps,
    step_keys,
    unique_index,
)
from veil.release.engine.inputs import frame_digest, input_digest, read_pandas
from veil.release.plan import InputSpec
from veil.release.progress import Reporter
from veil.release.steps.base import Counted, Step
from veil.rng import spawn


@dataclass(frozen=True)
class HeldRows:
    """Rows held in memory: the input and the row steps' output (pandas)."""

    original: pd.DataFrame
    frame: pd.DataFrame
    recorded: Recorded
    timings: dict[str, float]


class PandasEngine:
    """The table in memory; each row step runs once over the whole frame."""

    name = "pandas"

    def session(self) -> contextlib.AbstractContextManager[None]:
        """Nothing to set up."""
        return contextlib.nullcontext()

    def read(self, spec: InputSpec) -> InputData:
        """Hash the input and read it with pandas (the read options of ``spec``)."""
        digest, source = input_digest(spec)
        frame = unique_index(read_pandas(spec))
        return InputData(frame, len(frame), digest, source, tuple(map(str, frame.columns)))

    def adopt(self, frame: pd.DataFrame, source: str) -> InputData:
        """The caller's frame as the input (not copied: the steps never modify it)."""
        held = unique_index(frame)
        return InputData(
            held, len(held), frame_digest(frame), source, tuple(map(str, held.columns))
        )

    def original(self, data: InputData) -> pd.DataFrame:
        """The frame read."""
        frame: pd.DataFrame = data.table
        return frame

    def sample(self, data: InputData, rows: int) -> pd.DataFrame:
        """The frame read (the checks that use a sample space their rows themselves)."""
        return self.original(data)

    def partitions(self, data: InputData) -> int:
        """One: the whole table."""
        return 1

    def where(self, kind: Where) -> str:
        """Everything runs in memory; the rows are shuffled as one table."""
        if kind == "order":
            return "shuffled with the CSPRNG (a uniformly random permutation)"
        return "in memory"

    def rows(
        self,
        data: InputData,
        steps: Sequence[Step],
        streams: Sequence[np.random.Generator],
        reporter: Reporter,
    ) -> HeldRows:
        """Run the steps now, in order, over the frame (one partition)."""
        children = [spawn(copy.deepcopy(s), 1)[0] for s in streams]
        frame, recorded, timings = run_steps(data.table, steps, children, reporter)
        return HeldRows(data.table, frame, recorded, timings)

    def hold(self, original: pd.DataFrame, gathered: Gathered) -> HeldRows:
        """Rows another engine gathered, held in memory for the steps after them."""
        return HeldRows(original, gathered.frame, Recorded(gathered.privacy, gathered.masking), {})

    def count(
        self, rows: HeldRows, counted: Mapping[str, Counted], reporter: Reporter
    ) -> tuple[dict[str, pd.DataFrame], dict[str, float]]:
        """A group-by of the frame per counted step."""
        start = time.perf_counter()
        counts = counts_of(rows.frame, step_keys(counted))
        return counts, {"class counts (in memory)": time.perf_counter() - start}

    def gather(self, rows: HeldRows, reporter: Reporter) -> Gathered:
        """The frame itself."""
        recorded = rows.recorded
        return Gathered(rows.frame, recorded.privacy, recorded.masking, rows.timings)

    def stream(
        self,
        rows: HeldRows,
        sink: Sink,
        reporter: Reporter,
        *,
        finish: Finisher | None = None,
        probe: Probe | None = None,
        collect: Callable[[int, Any], None] | None = None,
        order: np.random.Generator | None = None,
    ) -> StreamResult:
        """Finish the frame, shuffle it whole with ``order``, hand it to ``sink``."""
        start = time.perf_counter()
        out = rows.frame if finish is None else finish(rows.frame)
        if order is not None:
            out = shuffle_rows(out, order)
        if probe is not None and collect is not None:
            collect(0, probe(0, rows.original, out))
        reporter.check("write")
        sink.write(out)
        recorded = rows.recorded
        timings = {**rows.timings, "finish and write": time.perf_counter() - start}
        return StreamResult(len(out), 1, recorded.privacy, recorded.masking, timings, out)


# --------------------------------------------------------------------------- dask
