"""The Dask engine: partitions processed in parallel, streamed into the release file,
shuffled across every partition."""

from __future__ import annotations

import contextlib
import copy
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from veil.frames import merge_masking, shuffle_rows
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
    partitions_text,
    run_steps,
    step_keys,
    unique_index,
)
from veil.release.engine.inputs import (
    check_layout,
    csv_options,
    frame_digest,
    input_digest,
    read_pandas,
)
from veil.release.engine.scheduler import check_scheduler
from veil.release.errors import LedgerMismatchError, PlanError
from veil.release.plan import InputSpec
from veil.release.progress import Reporter
from veil.release.steps.base import RECORDS, Counted, Step
from veil.rng import spawn


@dataclass(frozen=True)
class PartitionedRows:
    """Row steps to run over the partitions, in each pass, from copies of the streams."""

    data: InputData
    steps: tuple[Step, ...]
    streams: tuple[np.random.Generator, ...]


def _partition(
    p: int,
    part: pd.DataFrame,
    steps: Sequence[Step],
    streams: Sequence[np.random.Generator],
    finish: Finisher | None,
    probe: Probe | None,
    keep: bool,
    assigner: tuple[np.random.Generator, int] | None = None,
) -> tuple[pd.DataFrame | None, Any, Recorded, Any, int]:
    """One partition through the steps (from copies of its streams), finish and probe.

    With ``assigner`` (a stream and a number of buckets), each output record also gets
    a uniformly random bucket (the first half of the shuffle, see :meth:`_spill`).
    """
    if not part.index.is_unique:
        # The probe pairs output records with their originals by label.
        part = part.reset_index(drop=True)
    copies = [copy.deepcopy(s) for s in streams]
    out, recorded, _ = run_steps(part, steps, copies)
    if finish is not None:
        out = finish(out)
    buckets = None
    if assigner is not None:
        stream, n_buckets = assigner
        buckets = copy.deepcopy(stream).integers(0, n_buckets, len(out))
    probed = probe(p, part, out) if probe is not None else None
    return (out if keep else None), buckets, recorded, probed, len(out)


def _clean_index(frame: pd.DataFrame) -> pd.DataFrame:
    """A default range index (partitions each start theirs at 0)."""
    return frame.reset_index(drop=True)


def _merged(first: Recorded | None, other: Recorded) -> Recorded:
    """What the partitions recorded, as the whole table's.

    Every partition must record the same privacy costs (the ledger is per record). The
    masking entries are merged: the records each partition dropped or swapped add up
    (:func:`veil.frames.merge_masking`), so the custodian's counts are the table's.
    """
    if first is None:
        return other
    if other.privacy != first.privacy:
        raise LedgerMismatchError(
            "partitions recorded different privacy costs: "
            f"{other.privacy} and {first.privacy}; nothing was written"
        )
    return Recorded(first.privacy, merge_masking(first.masking, other.masking))


class DaskEngine:
    """Partitions processed in parallel with Dask (threads by default).

    Parameters
    ----------
    scheduler : str, default "threads"
        A local Dask scheduler (``"threads"``, ``"synchronous"``, ``"processes"``),
        ``"local"`` for a :class:`distributed.LocalCluster` of worker processes started
        for the run, or the address of a running scheduler (``"tcp://host:8786"``).
    blocksize : str or int, default "64MB"
        CSV block size per partition.
    npartitions : int, optional
        Repartition the input into this many partitions after reading.
    workers : int, optional
        Worker processes of the ``"local"`` cluster (default: Dask's choice).
    batch : int, optional
        Partitions computed at once when the release is streamed to its file
        (:meth:`stream`); default the number of CPUs.
    connect_timeout : float, default 10
        Seconds a running scheduler has to answer (:func:`check_scheduler`, then the
        client's connection): a peer that is not a Dask scheduler is refused in bounded
        time.

    Notes
    -----
    With worker processes (``"processes"``, ``"local"``, an address) the steps travel to
    the workers by pickling: keys of ``hmac`` and ``token`` treatments are pickled with
    them (never to storage), and ``ff1`` treatments, whose cipher refuses pickling, need
    a threaded scheduler.
    """

    name = "dask"

    _WHERE: Mapping[str, str] = {
        "row": "per partition",
        "counts": "distributed",
        "table": "gathered in memory: this step needs the whole table and is not distributed",
        "gathered": "gathered in memory: the table was gathered for another table step",
        "input": (
            "gathered in memory: the input was read whole to draw the sample the utility "
            "target is measured on"
        ),
        "order": (
            "shuffled with the CSPRNG across every partition (each record sent to a "
            "uniformly random bucket, each bucket permuted): every order of the records "
            "is equally likely"
        ),
    }

    def __init__(
        self,
        scheduler: str = "threads",
        *,
        blocksize: str | int = "64MB",
        npartitions: int | None = None,
        workers: int | None = None,
        batch: int | None = None,
        connect_timeout: float = 10.0,
    ) -> None:
        self.scheduler = scheduler
        self.blocksize = blocksize
        self.npartitions = npartitions
        self.workers = workers
        self.batch = batch
        self.connect_timeout = connect_timeout
        self._client: Any = None

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """Connect to (or start) the distributed scheduler for the run, if one is used.

        Text columns keep the types pandas reads them with (Dask's conversion to Arrow
        strings is off for the run), so a missing value is the same on both engines
        (``nan``, not ``<NA>``, which hierarchies and domains would see apart).
        """
        import dask

        with contextlib.ExitStack() as stack:
            stack.enter_context(dask.config.set({"dataframe.convert-string": False}))
            if self.scheduler != "local" and "://" not in self.scheduler:
                yield
                return
            from distributed import Client, LocalCluster

            if self.scheduler == "local":
                cluster = stack.enter_context(
                    LocalCluster(  # type: ignore[no-untyped-call]
                        n_workers=self.workers,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                    )
                )
                client = stack.enter_context(Client(cluster))  # type: ignore[no-untyped-call]
            else:
                check_scheduler(self.scheduler, self.connect_timeout)
                client = stack.enter_context(
                    Client(self.scheduler, timeout=self.connect_timeout)  # type: ignore[no-untyped-call]
                )
            self._client = client
            try:
                yield
            finally:
                self._client = None

    def _compute(self, *items: Any) -> Any:
        from dask.base import compute

        if self._client is not None:
            return tuple(self._client.compute(list(items), sync=True))
        if self.scheduler == "local" or "://" in self.scheduler:
            raise PlanError(
                f"engine: the Dask scheduler {self.scheduler!r} needs an open session "
                "(use the engine inside `with engine.session():`)"
            )
        return compute(*items, scheduler=self.scheduler)  # type: ignore[no-untyped-call]

    def read(self, spec: InputSpec) -> InputData:
        """Hash the input and open it lazily as Dask partitions."""
        import dask.dataframe as dd

        digest, source = input_digest(spec)
        if spec.dataset is not None:
            table = dd.from_pandas(  # type: ignore[no-untyped-call]
                read_pandas(spec), npartitions=self.npartitions or 1
            )
        else:
            assert spec.path is not None
            check_layout(spec)
            try:
                if spec.file_format() == "parquet":
                    table = dd.read_parquet(spec.path, columns=spec.columns)
                else:
                    table = dd.read_csv(
                        os.fspath(spec.path), blocksize=self.blocksize, **csv_options(spec)
                    )
            except ValueError as exc:
                raise PlanError(f"input: cannot read {os.fspath(spec.path)!r}: {exc}") from None
            if self.npartitions is not None:
                table = table.repartition(npartitions=self.npartitions)
        (rows,) = self._compute(table.shape[0])
        return InputData(table, int(rows), digest, source, tuple(map(str, table.columns)))

    def adopt(self, frame: pd.DataFrame, source: str) -> InputData:
        """The caller's frame as the input, split into ``npartitions`` (default 1)."""
        import dask.dataframe as dd

        table = dd.from_pandas(  # type: ignore[no-untyped-call]
            unique_index(frame), npartitions=self.npartitions or 1
        )
        return InputData(
            table, len(frame), frame_digest(frame), source, tuple(map(str, frame.columns))
        )

    def original(self, data: InputData) -> pd.DataFrame:
        """All partitions gathered into one pandas frame."""
        (frame,) = self._compute(data.table)
        return _clean_index(frame)

    def sample(self, data: InputData, rows: int) -> pd.DataFrame:
        """The first rows of evenly spaced partitions, at most ``rows`` in all."""
        parts = data.table.to_delayed()
        chosen = sorted({round(i) for i in np.linspace(0, len(parts) - 1, min(len(parts), 8))})
        each = max(1, rows // len(chosen))
        heads = self._compute(*(parts[p].head(each) for p in chosen))
        return _clean_index(pd.concat(list(heads)))

    def partitions(self, data: InputData) -> int:
        """The number of partitions of the input."""
        return int(data.table.npartitions)

    def where(self, kind: Where) -> str:
        """Row steps per partition, counts distributed, whole-table steps gathered."""
        return self._WHERE[kind]

    def rows(
        self,
        data: InputData,
        steps: Sequence[Step],
        streams: Sequence[np.random.Generator],
        reporter: Reporter,
    ) -> PartitionedRows:
        """Nothing runs yet: each later pass runs the steps per partition."""
        return PartitionedRows(data, tuple(steps), tuple(streams))

    def count(
        self, rows: PartitionedRows, counted: Mapping[str, Counted], reporter: Reporter
    ) -> tuple[dict[str, pd.DataFrame], dict[str, float]]:
        """A first pass: class counts per partition, summed on the client.

        Only the row steps that write a counted column run in this pass, each on its
        own stream: the counted values are those the writing pass releases.
        """
        start = time.perf_counter()
        needed = {c for spec in counted.values() for c in spec.keys}
        useful = [
            i for i, step in enumerate(rows.steps) if not step.columns or needed & set(step.columns)
        ]
        scan = PartitionedRows(
            rows.data,
            tuple(rows.steps[i] for i in useful),
            tuple(rows.streams[i] for i in useful),
        )
        sums = {name: _Counts(list(spec.keys)) for name, spec in counted.items()}

        def collect(_p: int, found: dict[str, pd.DataFrame]) -> None:
            for name, counts in found.items():
                sums[name].add(counts)

        keys = step_keys(counted)
        result = self._pass(
            scan, None, reporter, probe=lambda _p, _o, part: counts_of(part, keys), collect=collect
        )
        timing = {
            f"class counts ({partitions_text(result.partitions)})": time.perf_counter() - start
        }
        return {name: s.frame() for name, s in sums.items()}, timing

    def gather(self, rows: PartitionedRows, reporter: Reporter) -> Gathered:
        """Run the steps over every partition and concatenate the outputs."""
        from dask.delayed import delayed

        parts = rows.data.table.to_delayed()
        reporter.step("protect", f"{len(rows.steps)} row steps on {partitions_text(len(parts))}")
        per_step = [spawn(copy.deepcopy(s), len(parts)) for s in rows.streams]
        tasks = [
            delayed(run_steps)(part, rows.steps, [children[p] for children in per_step])
            for p, part in enumerate(parts)
        ]
        start = time.perf_counter()
        results = self._compute(*tasks)
        elapsed = time.perf_counter() - start
        reporter.check("the whole-table steps")
        frame = _clean_index(pd.concat([r[0] for r in results]))
        first: Recorded | None = None
        for _, recorded, _ in results:
            first = _merged(first, recorded)
        recorded = first or Recorded()
        timings = {f"row steps ({partitions_text(len(parts))})": elapsed}
        return Gathered(frame, recorded.privacy, recorded.masking, timings)

    def stream(
        self,
        rows: PartitionedRows,
        sink: Sink,
        reporter: Reporter,
        *,
        finish: Finisher | None = None,
        probe: Probe | None = None,
        collect: Callable[[int, Any], None] | None = None,
        order: np.random.Generator | None = None,
    ) -> StreamResult:
        """Run the steps per partition and hand each result to ``sink``.

        Partitions are computed ``batch`` at a time, in parallel, and released to the
        sink before the next batch starts: memory holds one batch of partitions, never
        the whole table. With ``order``, the records are shuffled across every
        partition (:class:`_Shuffle`: spilled to the sink's scratch folder in random
        buckets, each bucket permuted), so the release order is a uniformly random
        permutation of all its records.
        """
        return self._pass(
            rows, sink, reporter, finish=finish, probe=probe, collect=collect, order=order
        )

    def _pass(
        self,
        rows: PartitionedRows,
        sink: Sink | None,
        reporter: Reporter,
        *,
        finish: Finisher | None = None,
        probe: Probe | None = None,
        collect: Callable[[int, Any], None] | None = None,
        order: np.random.Generator | None = None,
    ) -> StreamResult:
        """One pass over the partitions, a batch at a time (see :meth:`stream`)."""
        from dask.delayed import delayed

        parts = rows.data.table.to_delayed()
        # Children are derived from copies of the step streams: every pass over the
        # input (one to count classes, one to write) gets the same children, so the
        # records the search counted are the records released.
        per_step = [spawn(copy.deepcopy(s), len(parts)) for s in rows.streams]
        shuffle = _Shuffle(order, len(parts), sink) if order is not None and sink else None
        batch = self.batch or os.cpu_count() or 1
        total = 0
        first: Recorded | None = None
        phase: Literal["protect", "write"] = "protect" if sink is None else "write"
        start = time.perf_counter()
        for begin in range(0, len(parts), batch):
            reporter.check("the next partitions")
            chosen = range(begin, min(begin + batch, len(parts)))
            tasks = [
                delayed(_partition)(
                    p,
                    parts[p],
                    rows.steps,
                    [children[p] for children in per_step],
                    finish,
                    probe,
                    sink is not None,
                    None if shuffle is None else shuffle.assigner(p),
                )
                for p in chosen
            ]
            for p, (frame, buckets, recorded, probed, count) in zip(
                chosen, self._compute(*tasks), strict=True
            ):
                first = _merged(first, recorded)
                total += count
                if collect is not None:
                    collect(p, probed)
                if shuffle is not None and frame is not None:
                    shuffle.spill(p, frame, buckets)
                elif sink is not None and frame is not None:
                    sink.write(frame)
            reporter.partitions(phase, None, chosen.stop, len(parts), total)
        if shuffle is not None:
            shuffle.drain(reporter)
        elapsed = time.perf_counter() - start
        recorded = first or Recorded()
        what = "row steps and write" if sink is not None else "row steps and counts"
        return StreamResult(
            total,
            len(parts),
            recorded.privacy,
            recorded.masking,
            {f"{what}, streamed ({partitions_text(len(parts))})": elapsed},
        )


class _Shuffle:
    """A uniform shuffle of records across every partition, in memory of one partition.

    Each released record goes to one of ``n`` buckets, uniformly at random and
    independently of the others (on the worker, from the partition's own stream); the
    client spills every partition's pieces to the sink's scratch folder; then each
    bucket, gathered from every partition, is permuted uniformly and written. For any
    bucket sizes, every arrangement of the records into positions is then equally
    likely, so the release order is a uniformly random permutation of all its records,
    as on pandas: a record's position says nothing of its input partition.
    """

    def __init__(self, order: np.random.Generator, buckets: int, sink: Sink) -> None:
        assign, permute = spawn(copy.deepcopy(order), 2)
        self._assigners = spawn(assign, buckets)
        self._permuters = spawn(permute, buckets)
        self._sink = sink
        scratch = sink.scratch
        if scratch is None:
            raise PlanError("engine: a shuffle across partitions needs a scratch folder")
        self._folder = scratch
        self.buckets = buckets

    def assigner(self, p: int) -> tuple[np.random.Generator, int]:
        """Partition ``p``'s bucket stream and the number of buckets."""
        return self._assigners[p], self.buckets

    def spill(self, p: int, frame: pd.DataFrame, buckets: Any) -> None:
        """Partition ``p``'s records, one file per bucket they went to."""
        codes = np.asarray(buckets, dtype=np.int64)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(self.buckets + 1))
        for b in range(self.buckets):
            rows = order[bounds[b] : bounds[b + 1]]
            if len(rows):
                frame.iloc[rows].to_pickle(self._folder / f"{b:06d}-{p:06d}.pkl")

    def drain(self, reporter: Reporter) -> None:
        """Each bucket gathered, permuted and written; its spilled pieces removed."""
        empty: pd.DataFrame | None = None
        for b in range(self.buckets):
            reporter.check("the next bucket")
            files = sorted(self._folder.glob(f"{b:06d}-*.pkl"))
            if not files:
                continue
            pieces = [pd.read_pickle(f) for f in files]
            for f in files:
                f.unlink()
            frame = pd.concat(pieces) if len(pieces) > 1 else pieces[0]
            if len(frame) == 0:
                empty = frame
                continue
            self._sink.write(shuffle_rows(frame, self._permuters[b]))
            empty = None
        if empty is not None:
            self._sink.write(empty)


class _Counts:
    """Class counts summed over partitions: the reduce side of a distributed group-by."""

    def __init__(self, columns: list[str]) -> None:
        self.columns = columns
        self._parts: list[pd.DataFrame] = []

    def add(self, part: pd.DataFrame) -> None:
        self._parts.append(part)
        if len(self._parts) >= 32:
            self._parts = [self.frame()]

    def frame(self) -> pd.DataFrame:
        if not self._parts:
            return pd.DataFrame({**{c: [] for c in self.columns}, RECORDS: []})
        both = pd.concat(self._parts, ignore_index=True)
        summed = both.groupby(self.columns, dropna=False, observed=True, sort=False)[RECORDS]
        return summed.sum().reset_index()
